"""Declarations of a study's tables and figures, read by both the render rule's input function and the
one renderer (:mod:`wobble.report.render`).

A table or figure is *data*: its name, the named inputs it reads (a function of the validated config),
the paper CSV(s) it sits beside, a pure ``build`` function (the only per-study code: tidy inputs ->
:class:`Table` / :class:`Figure`), and the caption the Snakemake report shows for it. Modelled on HELM's
declared tables (``presentation/table.py``, ``schema_lite.yaml``) and lm-eval's task-as-data, written here.

Naming rule: table names start with ``table`` (``table4``), figure names with ``figure`` (``figure_drop``,
``figure2``); outputs live at ``<root>/<study>/tables/<name>.{md,csv,tex}`` and
``<root>/<study>/figures/<name>.{png,pdf,csv}`` (a figure's numbers also as ``tables/<name>.*``), where ``<root>``
is the run's results folder (:func:`wobble.paths.results_root`).
"""

from __future__ import annotations

import importlib
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Callable, Literal, Mapping

from wobble.paths import study_root

if TYPE_CHECKING:  # spec modules are imported when the workflow is parsed: keep them light
    import pandas as pd

#: Named inputs of one table/figure: name -> path or list of paths (Snakemake ``unpack`` form).
Inputs = Mapping[str, Any]


@dataclass(frozen=True)
class Table:
    """What a table's ``build`` returns: the displayed frame (formatted cells, ours beside the paper's),
    the tidy frame (one row per number, written as ``.csv``), the title and the footnotes."""

    title: str
    display: pd.DataFrame
    tidy: pd.DataFrame
    notes: tuple[str, ...] = ()


@dataclass(frozen=True)
class Figure:
    """What a figure's ``build`` returns: the matplotlib figure, the plotted numbers (tidy ``.csv`` beside
    the ``.png``/``.pdf``), and the table of its numbers beside the paper's (``tables/<name>.*``)."""

    figure: Any
    data: pd.DataFrame
    table: Table | None = None
    float_format: str = "%.4f"


@dataclass(frozen=True)
class OutputSpec:
    """One table or figure of a study.

    ``inputs(config)`` returns the named input paths (only what this output needs, so it re-renders alone);
    ``build`` is ``"module:function"``, called as ``build(inputs, context)`` with the paths and the study's
    footnote context, returning a :class:`Table` (kind ``table``) or :class:`Figure` (kind ``figure``).
    ``paper`` names the paper CSV stems under ``paper/<study>/`` it is compared with (documentation and
    input); ``caption`` is the report caption (reStructuredText): what it shows and how to read it.
    """

    study: str
    name: str
    kind: Literal["table", "figure"]
    inputs: Callable[[Mapping[str, Any]], dict[str, Any]]
    build: str
    caption: str
    paper: tuple[str, ...] = ()
    join_keys: tuple[str, ...] = ()

    def __post_init__(self) -> None:
        if not self.name.startswith(self.kind):
            raise ValueError(f"{self.study}: {self.kind} name {self.name!r} must start with {self.kind!r}")

    def stem(self, config: Mapping[str, Any]) -> str:
        folder = "tables" if self.kind == "table" else "figures"
        return f"{study_root(config, self.study)}/{folder}/{self.name}"

    def target(self, config: Mapping[str, Any]) -> str:
        """The file that stands for this output in targets (``.md`` of a table, ``.png`` of a figure)."""
        return self.stem(config) + (".md" if self.kind == "table" else ".png")

    def builder(self) -> Callable[[Inputs, Mapping[str, Any]], Table | Figure]:
        module, _, func = self.build.partition(":")
        return getattr(importlib.import_module(module), func)

    def paper_inputs(self) -> dict[str, str]:
        """``{"paper_<stem>": "paper/<study>/<stem>.csv"}`` for each paper CSV it sits beside."""
        return {f"paper_{p}": f"paper/{self.study}/{p}.csv" for p in self.paper}


@dataclass(frozen=True)
class FindingsSpec:
    """A study's claims ledger (``<root>/<study>/findings.{md,csv,tex}``), declared like an output.

    ``inputs(config)`` names the files the claims are measured on; ``measure`` is ``"module:function"``,
    called as ``measure(inputs, config)`` and returning a :class:`wobble.report.claims.Findings` (the
    study's declared claims, their measurements, the paper's values and footnotes). The verdicts are
    never the study's: the shared rule in :mod:`wobble.report.claims` applies them.
    """

    inputs: Callable[[Mapping[str, Any]], dict[str, Any]]
    measure: str
    caption: str

    def measurer(self) -> Callable[..., Any]:
        module, _, func = self.measure.partition(":")
        return getattr(importlib.import_module(module), func)


@dataclass(frozen=True)
class ScorecardSpec:
    """A study's rows of the per-model scorecards (``<root>/scorecard/<model>.*``, :mod:`wobble.report.scorecard`).

    ``models(config)``: the models the study scores; ``inputs(config, model)``: the files one model's rows are
    computed from; ``measure``: ``"module:function"``, called as ``measure(inputs, config, model)`` and returning
    :class:`wobble.report.scorecard.Row` s (the study's own metrics and intervals).
    """

    models: Callable[[Mapping[str, Any]], list[str]]
    inputs: Callable[[Mapping[str, Any], str], dict[str, Any]]
    measure: str

    def measurer(self) -> Callable[..., Any]:
        module, _, func = self.measure.partition(":")
        return getattr(importlib.import_module(module), func)


@dataclass(frozen=True)
class StudySpec:
    """Everything the shared layer needs to know about a study, declared once (``studies/<name>/spec.py``).

    * ``section``: its config section (``config[name]``); its JSON Schema fragment is
      ``schemas/studies/<name>.schema.yaml`` (defaults live there and nowhere else).
    * ``sources``: data sources it needs; the study is enabled when its section is present, not switched
      off (``enabled: false``) and all its sources are in ``data.sources``.
    * ``model_refs``: paths inside the section holding model keys (``"*"`` = every item), checked against
      ``models:`` before any job runs.
    * ``rules``: its rules file; ``outputs``: its tables and figures; ``context(config)``: what every
      footnote states (models, scale, sample); ``check(section)``: cross-field checks raising ConfigError.
    """

    name: str
    paper: str
    sources: tuple[str, ...]
    model_refs: tuple[tuple[str, ...], ...]
    outputs: tuple[OutputSpec, ...]
    context: Callable[[Mapping[str, Any]], dict[str, Any]]
    check: Callable[[Mapping[str, Any]], None] | None = None
    findings: FindingsSpec | None = None
    scorecard: ScorecardSpec | None = None
    doc: str = ""
    _index: dict = field(default_factory=dict, repr=False, compare=False)

    @property
    def rules(self) -> str:
        return f"rules/{self.name}.smk"

    @property
    def schema(self) -> str:
        return f"schemas/studies/{self.name}.schema.yaml"

    def output(self, name: str) -> OutputSpec:
        if not self._index:
            self._index.update({o.name: o for o in self.outputs})
        try:
            return self._index[name]
        except KeyError:
            raise KeyError(f"study {self.name!r} has no table or figure {name!r}; "
                           f"expected one of {[o.name for o in self.outputs]}") from None

    def targets(self, config: Mapping[str, Any]) -> list[str]:
        out = [o.target(config) for o in self.outputs]
        if self.findings is not None:
            out.append(f"{study_root(config, self.name)}/findings.md")
        return out
