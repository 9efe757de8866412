"""The ``icl_bias`` study: Si et al. 2023, "Measuring Inductive Biases of In-Context Learning with
Underspecified Demonstrations".

Pure functions only (no model calls): :mod:`.features` (the feature functions h(x)), :mod:`.pairs`
(the 22 dataset / feature pairs and where their splits come from), :mod:`.pools` (raw pools from the
prepared data), :mod:`.splits` (demonstration pools, disambiguating test sets, prompt sets),
:mod:`.prompts` (the paper's prompt format), :mod:`.interventions` (verbalizers, instructions and
explanations read from the paper's Tables 6-10), :mod:`.requests` (every condition's prompts for a
runner), :mod:`.answers` (calibrated labels from the model's outputs), :mod:`.metrics` (contextual
calibration, h-accuracy, intervention effects with bootstrap intervals), :mod:`.summary` (the tidy
numbers at the paper's levels: pair, table row, dataset, all).
"""
