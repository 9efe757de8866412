"""The ``first_token`` study: Wang et al. 2024, "My Answer is C": first-token probabilities do not
match text answers in instruction-tuned language models.

The house layout of a study (docs/layout.md):

* :mod:`.spec` — the study declared once (config section, tables, figures, claims ledger, scorecard);
* :mod:`.layout` — paths, runs, rule inputs and the config's cross-field checks;
* its own steps: :mod:`.prompts` / :mod:`.sampling` (the constraint-level prompts of Table 1 and the shuffled
  prompt set), :mod:`.answers` (first-token and text answers of one model, resumable, through the runner),
  :mod:`.classify` / :mod:`.classifiers` / :mod:`.judge` (text -> option mapping and the evaluators of Tables 2
  and 4), :mod:`.metrics` / :mod:`.aggregate` (mismatch, refusal, choice distributions, consistency entropy with
  question-level bootstrap intervals, and the paper's per-shuffle summary);
* :mod:`.tables` / :mod:`.figures` — Tables 1-5 and Figures 2, 3, 4, 7 beside the paper's (Figure 4 in
  :mod:`.figure_temperature`); the pieces they share in :mod:`.table_parts`;
* :mod:`.claims` — the paper's headline claims and the ledger (:mod:`.claims_counts`, :mod:`.claims_measure`:
  how each is measured);
* :mod:`.scorecard` — the study's rows in each model's scorecard.
"""
