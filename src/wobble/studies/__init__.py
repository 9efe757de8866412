"""The studies and their registry. A study is a package ``wobble.studies.<name>`` whose ``spec.py``
declares ``SPEC`` (a :class:`wobble.report.spec.StudySpec`); registering it is one line below. The
Snakefile, ``rules/common.smk``, ``rules/report.smk``, the config schema and validation all loop over
this registry (modelled on lm-evaluation-harness's task registry: the shared code knows a study only
through what it declares)."""

from __future__ import annotations

import importlib
import importlib.util
from functools import lru_cache
from pathlib import Path
from typing import Any, Mapping

from wobble.report.spec import OutputSpec, StudySpec

#: study name -> module holding its ``SPEC``. Adding a study = one line here.
STUDIES: dict[str, str] = {
    "instructions": "wobble.studies.instructions.spec",
    "first_token": "wobble.studies.first_token.spec",
    "icl_bias": "wobble.studies.icl_bias.spec",
    "followup": "wobble.studies.followup.spec",
}


@lru_cache(maxsize=None)
def _load(name: str, module: str) -> StudySpec:
    spec = importlib.import_module(module).SPEC
    if spec.name != name:
        raise ValueError(f"{module}.SPEC is named {spec.name!r}, registered as {name!r}")
    return spec


def registry() -> dict[str, StudySpec]:
    """Every registered study's spec, in registration order."""
    return {name: _load(name, module) for name, module in STUDIES.items()}


def get(name: str) -> StudySpec:
    if name not in STUDIES:
        raise KeyError(f"unknown study {name!r}; registered: {sorted(STUDIES)}")
    return _load(name, STUDIES[name])


#: The shared code (under src/wobble) every study's tables, figures and ledger are built with, besides its own.
RENDER_CODE = ("report", "stats.py", "metrics")


def render_code_digest(name: str) -> str:
    """A digest of the code study ``name``'s outputs are rendered with: its own package (the package of its
    registered spec module; a lone module: that file), wherever it is installed, and :data:`RENDER_CODE`
    (``wobble.provenance.source_digest``). The render rules' ``code`` param: a changed builder re-renders."""
    from wobble.provenance import source_digest

    if name not in STUDIES:
        raise KeyError(f"unknown study {name!r}; registered: {sorted(STUDIES)}")
    module = STUDIES[name]
    own = Path(importlib.util.find_spec(module).origin)
    if "." in module:
        own = own.parent
    wobble_dir = Path(__file__).resolve().parents[1]
    return source_digest(own.parent, [own.name]) + source_digest(wobble_dir, RENDER_CODE)


def disabled_reason(config: Mapping[str, Any], name: str) -> str | None:
    """Why study ``name`` does not run with ``config`` (None = it runs).

    A study runs when the config's ``studies:`` (if any) names it, its section is present, ``enabled`` is not false
    and every source it needs is in ``data.sources``.
    """
    spec = get(name)
    chosen = config.get("studies")
    if chosen is not None and name not in chosen:
        return f"it is not in studies: {list(chosen)}"
    section = config.get(name)
    if section is None:
        return f"the config has no '{name}:' section"
    if isinstance(section, Mapping) and section.get("enabled", True) is False:
        return f"{name}.enabled is false"
    have = set(config.get("data", {}).get("sources", []))
    missing = [s for s in spec.sources if s not in have]
    if missing:
        return f"it needs source(s) {missing}, which data.sources leaves out"
    return None


def enabled(config: Mapping[str, Any]) -> dict[str, StudySpec]:
    """The studies that run with ``config``, in registration order."""
    return {name: spec for name, spec in registry().items() if disabled_reason(config, name) is None}


def declared_outputs(kind: str) -> list[OutputSpec]:
    """Every registered study's tables (``kind="table"``) or figures (``"figure"``)."""
    return [o for spec in registry().values() for o in spec.outputs if o.kind == kind]
