"""AmbigPrompt's feature table (``feature_definitions.tsv``): a curated table that ships with wobble.

No upstream file holds it. Its row keys and order, both verbalizer prefixes and the two words of the second
feature come from AmbigPrompt's ``run.py`` (NoviScl/AmbigPrompt@40dbb04: ``subset_mappings``,
``z1_label_prefix_map``, ``z2_instruction_map``); the source dataset, the task label, the feature's description
and its definition are written by hand for the mirror, and ``status_in_this_mirror`` describes the mirror's
snapshot. Carrying that text in code would be the table in disguise, so the table itself is package data
(``ambigprompt_features.data.tsv`` beside this module), pinned like any other file by its sha256.
"""

from __future__ import annotations

from importlib import resources
from pathlib import Path
from typing import Mapping

TABLE = "ambigprompt_features.data.tsv"


def build(inputs: Mapping[str, Path]) -> dict[str, bytes]:
    """The packaged table, as ``feature_definitions.tsv`` (no inputs)."""
    return {"feature_definitions.tsv": resources.files(__package__).joinpath(TABLE).read_bytes()}
