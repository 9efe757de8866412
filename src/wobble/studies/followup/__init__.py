"""Study ``followup``: *Ask Again, Then Fail: Large Language Models' Vacillations in Judgement* (ICLR 2024
submission). After the model's initial answer the same conversation goes on with a closed-ended,
open-ended or leading follow-up question (Direct Form: one of them; Progressive Form: all three in
order) and the answer is read after every round; metrics M. and M. Rate (Appendix A.1).

The house layout of a study (docs/layout.md):

* :mod:`.spec` — the study declared once (config section, tables, figures, claims ledger, scorecard);
* :mod:`.layout` — paths, runs, run groups, rule inputs and the config's cross-field checks;
* its own steps: :mod:`.prompts` (benchmarks, paper prompt texts, messages), :mod:`.mechanism` ({MA} drawing,
  dialogue plans, the next user turn), :mod:`.fewshot` (held-out demonstrations), :mod:`.extractors` (answers
  per answer type), :mod:`.metrics` (M., M. Rate, Error Rate, E→R with bootstrap intervals), :mod:`.judge`
  (Figure 5's error analysis), :mod:`.pipeline` (the workflow steps behind the rules' scripts);
* :mod:`.tables` / :mod:`.figures` — the paper's tables and figures beside ours; the pieces they share in
  :mod:`.table_parts`;
* :mod:`.claims` — the paper's headline claims and the ledger (:mod:`.claims_measure`, :mod:`.claims_wording`:
  how each is measured; :mod:`.claims_chance`: the above-chance precondition; :mod:`.claims_paper`: the paper's effects);
* :mod:`.scorecard` — the study's rows in each model's scorecard.
"""
