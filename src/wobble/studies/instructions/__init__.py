"""The ``instructions`` study (Gu et al. 2023, *Robustness of Learning from Task Instructions*).

The house layout of a study (docs/layout.md):

* :mod:`.spec` — the study declared once (config section, tables, figure, claims ledger, scorecard);
* :mod:`.layout` — which runs it makes, their paths, each rule's inputs and params;
* its own steps: :mod:`.perturb` / :mod:`.insert_replace` / :mod:`.proposers` (seeded word-, sentence- and
  instruction-level perturbations, insert / replace words and their word proposers), :mod:`.conditions` (the
  condition registry, ``apply_condition``), :mod:`.prompts` (the Tk-Instruct source encoding, INSTRU-WO-EXAM /
  INSTRU-W-EXAM), :mod:`.splits` / :mod:`.pipeline` (task selection, splits, training pairs, scoring);
* :mod:`.tables` / :mod:`.figures` — Tables 1-11 and the drop figure beside the paper's (the table builders in
  :mod:`.tables_text`, :mod:`.tables_conditions`, :mod:`.tables_para`, :mod:`.tables_diverse`); the pieces they
  share in :mod:`.table_parts`;
* :mod:`.claims` — the paper's headline claims and the ledger (:mod:`.claims_measure`: how each is measured;
  :mod:`.claims_robust`: the two-sided 'keeps the performance' statistic and its per-task floor);
* :mod:`.scorecard` — the study's rows in each model's scorecard.
"""
