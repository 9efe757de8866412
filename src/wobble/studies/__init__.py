"""The studies and their registry. A study is a package ``wobble.studies.<name>`` whose ``spec.py``
declares ``SPEC`` (a :class:`wobble.report.spec.StudySpec`); registering it is one line below. The
Snakefile, ``rules/common.smk``, the config schema and validation all loop over this registry."""

from __future__ import annotations

import importlib
from functools import lru_cache

from wobble.report.spec import StudySpec

#: study name -> module holding its ``SPEC``. Adding a study = one line here.
STUDIES: dict[str, str] = {
    "instructions": "wobble.studies.instructions.spec",
    "first_token": "wobble.studies.first_token.spec",
}


@lru_cache(maxsize=None)
def _load(name: str) -> StudySpec:
    spec = importlib.import_module(STUDIES[name]).SPEC
    if spec.name != name:
        raise ValueError(f"{STUDIES[name]}.SPEC is named {spec.name!r}, registered as {name!r}")
    return spec


def registry() -> dict[str, StudySpec]:
    """Every registered study's spec, in registration order."""
    return {name: _load(name) for name in STUDIES}


def get(name: str) -> StudySpec:
    if name not in STUDIES:
        raise KeyError(f"unknown study {name!r}; registered: {sorted(STUDIES)}")
    return _load(name)
