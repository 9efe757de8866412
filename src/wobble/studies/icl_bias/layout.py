"""Where the icl_bias workflow keeps its files, and the config helpers its rules and spec need (light:
imported when the workflow is parsed).

Under the study's folder ``root`` (:func:`wobble.paths.study_root`, ``results/icl_bias`` in the default run):
``{splits,requests}/<pair>.json``, ``{predictions,scores}/<model>/<pair>.jsonl``, ``scores/<model>/summary.csv``;
tables and figures under ``{tables,figures}``.
"""

from __future__ import annotations

from typing import Any, Mapping

from wobble.errors import ConfigError
from wobble.studies.icl_bias.pairs import PAIRS, get_pair, split_source
from wobble.studies.icl_bias.pools import POOL_DATASETS
from wobble.studies.icl_bias.splits import SplitParams

def run_pairs(section: Mapping[str, Any]) -> list[str]:
    """The pairs of this run: ``icl_bias.pairs`` or all 22 in the registry's order."""
    return list(section.get("pairs") or PAIRS)


def check_section(section: Mapping[str, Any]) -> None:
    """Cross-field checks before any job: known pairs, paper models among the run's models."""
    for i, key in enumerate(section.get("pairs") or []):
        get_pair(key, f"icl_bias.pairs[{i}]")
    models = list(section.get("models", []))
    for key in section.get("paper_models", {}):
        if key not in models:
            raise ConfigError(f"icl_bias.paper_models.{key}", f"a model of icl_bias.models {models}, got {key!r}")


def split_config(section: Mapping[str, Any]) -> dict[str, Any]:
    """The ``icl_bias.splits`` block as the split rule's params, in the block's order (its keys are
    :class:`SplitParams`' names, ``prefer`` besides)."""
    return dict(section["splits"])


def split_params_from(sp: Mapping[str, Any]) -> SplitParams:
    """:class:`SplitParams` from the split rule's params (:func:`split_config`; ``prefer`` is not a size)."""
    return SplitParams(shots=sp["shots"], n_sets=sp["n_sets"], n_test_per_cell=sp["n_test_per_cell"],
                       min_test_per_cell=sp["min_test_per_cell"], seed=sp["seed"], max_words=sp["max_words"])


def split_datasets(pair: str, prefer: str) -> list[str]:
    """The prepared datasets a pair's split reads (none when it is unavailable here)."""
    source, _ = split_source(PAIRS[pair], prefer)
    if source is None:
        return []
    return ["ambigprompt"] if source == "authors" else list(POOL_DATASETS[source])


def split_path(root: str, pair: str) -> str:
    return f"{root}/splits/{pair}.json"


def requests_path(root: str, pair: str) -> str:
    return f"{root}/requests/{pair}.json"


def predictions_path(root: str, model: str, pair: str) -> str:
    return f"{root}/predictions/{model}/{pair}.jsonl"


def scores_path(root: str, model: str, pair: str) -> str:
    return f"{root}/scores/{model}/{pair}.jsonl"


def summary_path(root: str, model: str) -> str:
    return f"{root}/scores/{model}/summary.csv"
