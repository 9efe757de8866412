"""Study ``icl_bias`` declared once: Si et al. 2023, *Measuring Inductive Biases of In-Context Learning
with Underspecified Demonstrations* (config section ``icl_bias``, schema
``schemas/studies/icl_bias.schema.yaml``, rules ``rules/icl_bias.smk``)."""

from __future__ import annotations

from typing import Any, Mapping

from wobble.models.describe import model_label
from wobble.paths import study_root
from wobble.report.spec import FindingsSpec, OutputSpec, ScorecardSpec, StudySpec
from wobble.studies.icl_bias.layout import (check_section, predictions_path, run_pairs, scores_path, split_path,
                                            summary_path)

NAME = "icl_bias"
_B = "wobble.studies.icl_bias"


def _splits(config: Mapping[str, Any]) -> list[str]:
    return [split_path(study_root(config, NAME), p) for p in run_pairs(config[NAME])]


def _summaries(config: Mapping[str, Any], paper_model: str | None = None) -> list[str]:
    sec = config[NAME]
    models = [m for m in sec["models"] if paper_model is None or sec["paper_models"].get(m) == paper_model]
    return [summary_path(study_root(config, NAME), m) for m in models]


def _with_summaries(paper_model: str | None = None):
    return lambda config: {"summaries": _summaries(config, paper_model), "splits": _splits(config)}


def context(config: Mapping[str, Any]) -> dict[str, Any]:
    """What every footnote states: models and the paper models they stand in for, scale, sizes, scoring. Its keys
    are the render rules' params; a size keeps its config name (``n_test_per_cell``)."""
    sec = config[NAME]
    sp = sec["splits"]
    return {"models": list(sec["models"]), "paper_models": dict(sec["paper_models"]),
            "model_labels": {m: model_label(config["models"], m) for m in sec["models"]},
            "pairs": run_pairs(sec), "shots": sp["shots"], "n_sets": sp["n_sets"],
            "n_test_per_cell": sp["n_test_per_cell"], "split_prefer": sp["prefer"], "max_words": sp["max_words"],
            "calibrate": sec["calibrate"], "scale": config.get("scale", "")}


_READ = (" Ours beside the paper's; intervals are 95% bootstrap intervals over test items; the footnotes say "
         "which model stands in for which paper model and which pairs have no numbers here and why.")

OUTPUTS = (
    OutputSpec(NAME, "table1", "table", lambda config: {"splits": _splits(config)}, f"{_B}.tables:build_table1",
               "Datasets and features (Table 1 of the paper): h1 is the dataset's label, h2 the alternative feature. "
               "For each feature, the pair(s) that test it and what this mirror gives them: the authors' released "
               "split, a split rebuilt from a raw pool with our feature function, or 'unavailable here' with the "
               "reason.", paper=("table1",)),
    OutputSpec(NAME, "table2", "table", _with_summaries(), f"{_B}.tables:build_table2",
               "Average effect of each intervention (Table 2): baseline accuracy of the intended feature, then its "
               "change in points with each intervention, steering towards h1 and towards h2, per model, averaged over "
               "every pair with numbers here." + _READ, paper=("table2",)),
    OutputSpec(NAME, "table3", "table", _with_summaries(), f"{_B}.tables:build_table3",
               "MNLI per feature (Table 3), steering towards h2: baseline h2-accuracy and its change per "
               "intervention." + _READ, paper=("table3",)),
    OutputSpec(NAME, "table4", "table", _with_summaries("Davinci"), f"{_B}.tables:build_table4",
               "Full results (Table 4) for the model standing in for the base model Davinci: 'h1 / h2' accuracy per "
               "dataset, feature and intervention, steering towards h1 and towards h2. Rows where h2 is far above 50 "
               "show a bias towards the feature." + _READ, paper=("table4",)),
    OutputSpec(NAME, "table5", "table", _with_summaries("Text-Davinci-002"), f"{_B}.tables:build_table5",
               "Full results (Table 5) for the model standing in for the instruction-tuned Text-Davinci-002."
               + _READ, paper=("table5",)),
    OutputSpec(NAME, "figure2", "figure", _with_summaries(), f"{_B}.figures:build_figure2",
               "Feature bias (Figure 2): baseline h1- and h2-accuracy per dataset / feature pair and model; a "
               "higher h2 bar means the model generalizes by the feature rather than the label." + _READ,
               paper=("table4", "table5")),
    OutputSpec(NAME, "figure3", "figure", _with_summaries(), f"{_B}.figures:build_figure3",
               "Interventions per dataset (Figure 3): accuracy of the intended feature with each intervention, "
               "steering towards h1 (top) and h2 (bottom), per model." + _READ, paper=("table4", "table5")),
    OutputSpec(NAME, "table_calibration", "table",
               lambda config: {"scores": [scores_path(study_root(config, NAME), m, p) for m in config[NAME]["models"]
                                          for p in run_pairs(config[NAME])],
                               "predictions": [predictions_path(study_root(config, NAME), m, p)
                                               for m in config[NAME]["models"] for p in run_pairs(config[NAME])]},
               f"{_B}.calibration:build_table_calibration",
               "wobble's calibration sensitivity (not in the paper): per model, pair and condition, the share of "
               "answers '1' and the h1-accuracy under the paper's content-free calibration, under none, and under "
               "calibration by the batch's mean, recomputed from the stored label-word probabilities; C marks a "
               "constant classifier. The last columns show why content-free calibration puts whole cells on '1': "
               "per prompt set, the bracket the stored answers put on the content-free P('1') beside the items' "
               "P('1'), and each content-free input's own P('1') from the stored log-probs."),
)

def _findings_inputs(config: Mapping[str, Any]) -> dict[str, Any]:
    """Per-item scores of every model that stands in for one of the paper's, on every pair run, their predictions
    (the content-free inputs' log-probs), and the paper's tables the claims' paper effects are computed from."""
    sec = config[NAME]
    root = study_root(config, NAME)
    return {"scores": [scores_path(root, m, p) for m in sec["paper_models"] for p in run_pairs(sec)],
            "predictions": [predictions_path(root, m, p) for m in sec["paper_models"] for p in run_pairs(sec)],
            **{f"paper_{t}": f"paper/{NAME}/{t}.csv" for t in ("table4", "table5")}}


def _scorecard_inputs(config: Mapping[str, Any], model: str) -> dict[str, Any]:
    return {"table2": f"{study_root(config, NAME)}/tables/table2.csv"}


SPEC = StudySpec(
    name=NAME,
    paper="Si et al. 2023, Measuring Inductive Biases of In-Context Learning with Underspecified Demonstrations",
    sources=("ambigprompt", "icl_imdb", "icl_yelp", "icl_mnli"),
    model_refs=(("models", "*"),),
    outputs=OUTPUTS,
    context=context,
    check=check_section,
    scorecard=ScorecardSpec(models=lambda config: list(config[NAME]["models"]), inputs=_scorecard_inputs,
                            measure="wobble.studies.icl_bias.scorecard:rows"),
    findings=FindingsSpec(
        inputs=_findings_inputs,
        measure=f"{_B}.claims_report:findings",
        caption=("The paper's headline claims (§1, §4.2, §5.2, §7), each a declared statistic of per-pair "
                 "h-accuracies of the models standing in for Davinci / Text-Davinci-002, with a 95% interval over "
                 "test items within the run's pairs (demonstration draws resampled with them where there are two "
                 "or more), beside the same statistic of the paper's Tables 4-5 on the same pairs and the verdict "
                 "the paper's own number gets. The definitions were revised after earlier runs of this study had "
                 "been seen, so they are not pre-registered for those runs."),
    ),
    doc="Underspecified demonstrations (h1 = label, h2 = feature), disambiguating test sets, interventions.",
)
