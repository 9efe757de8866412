"""The ``icl_bias`` study: Si et al. 2023, "Measuring Inductive Biases of In-Context Learning with
Underspecified Demonstrations".

The house layout of a study (docs/layout.md):

* :mod:`.spec` — the study declared once (config section, tables, figures, claims ledger, scorecard);
* :mod:`.layout` — paths, runs and the config helpers of the rules;
* its own steps: :mod:`.pipeline` (the workflow steps behind ``rules/icl_bias.smk``) and pure functions (no
  model calls): :mod:`.features` (the feature functions h(x)), :mod:`.pairs` (the 22 dataset / feature pairs
  and where their splits come from), :mod:`.pools` (raw pools from the prepared data), :mod:`.splits`
  (demonstration pools, disambiguating test sets, prompt sets), :mod:`.prompts` (the paper's prompt format),
  :mod:`.interventions` (verbalizers, instructions and explanations read from the paper's Tables 6-10),
  :mod:`.requests` (every condition's prompts for a runner), :mod:`.answers` (calibrated labels from the model's
  outputs), :mod:`.metrics` (contextual calibration, h-accuracy, intervention effects with bootstrap
  intervals), :mod:`.summary` (the tidy numbers at the paper's levels: pair, table row, dataset, all);
* :mod:`.tables` / :mod:`.figures` — Tables 1-5 and Figures 2-3 beside the paper's; the pieces they share in
  :mod:`.table_parts`;
* :mod:`.claims` — the paper's headline claims declared for the measurement engine and their unit tables
  (:mod:`.claims_measure`: the statistics and tables; :mod:`.claims_checks`: the gates and preconditions;
  :mod:`.claims_changes`: Table 2's changes; :mod:`.claims_report`: the ledger); :mod:`.calibration` —
  wobble's calibration sensitivity (content-free vs none vs batch mean, from the stored probabilities);
* :mod:`.scorecard` — the study's rows in each model's scorecard.
"""
