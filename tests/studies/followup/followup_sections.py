"""The followup config section the workflow and config tests build on, validated through the real schema with the
study registered for the test."""

from __future__ import annotations

from pathlib import Path

import yaml

import wobble.studies
from wobble.config import validate_config

REPO = Path(__file__).resolve().parents[3]
ROOT = "results/followup"  # the study's folder in the default run
DATASETS = ("multiarith", "strategyqa", "coin_flip", "csqa")


def section(**overrides) -> dict:
    """A small followup section on model 'student' (four datasets, eight items each), ``overrides`` on top."""
    sec = {"models": ["student"], "datasets": list(DATASETS), "n_items": 8, "n_heldout": 4, "bootstrap": {"n": 50},
           "max_new_tokens": 16, "judge_model": "student", "n_judge_examples": 3, **overrides}
    return sec


def validated(sec: dict, monkeypatch, model_keys: tuple[str, ...] = ("student",)) -> dict:
    """configs/smoke.yaml with ``sec`` as its followup section and tiny models ``model_keys``, validated."""
    monkeypatch.setitem(wobble.studies.STUDIES, "followup", "wobble.studies.followup.spec")
    cfg = yaml.safe_load((REPO / "configs" / "smoke.yaml").read_text())
    for key in model_keys:
        cfg["models"][key] = {"source": "tiny", "kind": "causal", "seed": 0, "chat_template": True}
    cfg["followup"] = sec
    return validate_config(cfg, REPO / "schemas" / "config.schema.yaml")
