"""The ``first_token`` study: Wang et al. 2024, "My Answer is C": first-token probabilities do not
match text answers in instruction-tuned language models.

* :mod:`.spec` — the study declared once (config section, tables, figures, claims ledger);
* :mod:`.layout` — paths, runs, rule inputs and the config's cross-field checks;
* :mod:`.prompts` / :mod:`.sampling` — the constraint-level prompts (Table 1) and the shuffled prompt set;
* :mod:`.answers` — first-token and text answers of one model (resumable, through the runner);
* :mod:`.classify` / :mod:`.classifiers` — text -> option mapping and the evaluators of Tables 2 and 4;
* :mod:`.metrics` / :mod:`.aggregate` — mismatch, refusal, choice distributions, consistency entropy with
  question-level bootstrap intervals, and the paper's per-shuffle summary;
* :mod:`.table_parts` / :mod:`.tables` / :mod:`.figures` — Tables 1-5 and Figures 2, 3, 4, 7 beside the paper's;
* :mod:`.claims` — the paper's headline claims and how each is measured.
"""
