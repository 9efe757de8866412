"""The ``icl_bias`` study: Si et al. 2023, "Measuring Inductive Biases of In-Context Learning with
Underspecified Demonstrations".

Declared in :mod:`.spec` (tables, figures, config check; paths and config helpers in :mod:`.layout`);
the workflow steps behind ``rules/icl_bias.smk`` are in :mod:`.pipeline`. Everything else is pure
functions (no model calls): :mod:`.features` (the feature functions h(x)), :mod:`.pairs`
(the 22 dataset / feature pairs and where their splits come from), :mod:`.pools` (raw pools from the
prepared data), :mod:`.splits` (demonstration pools, disambiguating test sets, prompt sets),
:mod:`.prompts` (the paper's prompt format), :mod:`.interventions` (verbalizers, instructions and
explanations read from the paper's Tables 6-10), :mod:`.requests` (every condition's prompts for a
runner), :mod:`.answers` (calibrated labels from the model's outputs), :mod:`.metrics` (contextual
calibration, h-accuracy, intervention effects with bootstrap intervals), :mod:`.summary` (the tidy
numbers at the paper's levels: pair, table row, dataset, all), :mod:`.tables` / :mod:`.figures`
(ours beside the paper's; shared pieces in :mod:`.table_parts`) and :mod:`.claims` (the claims ledger).
"""
