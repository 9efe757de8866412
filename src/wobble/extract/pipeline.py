"""Filter pipelines: a list of filters applied in order, and a take-first over alternatives.

Like lm-evaluation-harness' filter lists (``filter_list: [{function: regex, ...}, {function:
take_first}]``), a study declares how it reads an answer as data, e.g. for GSM8K replies::

    take_first([regex("answer is (.*)") -> number], [number(select=last)])

``build_pipeline`` reads that declaration from a config/spec list so it can live in YAML and be
recorded beside the predictions (``Pipeline.spec()`` is its inverse)::

    - {filter: take_first, alternatives: [[{filter: regex, pattern: "answer is (.*)"}, number],
                                          [{filter: number, select: last}]]}
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable, Sequence

from wobble.errors import ConfigError
from wobble.extract.filters import FILTERS, Filter, filter_fields

Step = Callable[[str | None], str | None]


@dataclass(frozen=True)
class Pipeline:
    """Filters applied in order; ``None`` from any step is the result (no answer)."""

    steps: tuple[Step, ...]

    def __init__(self, *steps: Step):
        object.__setattr__(self, "steps", tuple(steps))

    def __call__(self, value: str | None) -> str | None:
        for step in self.steps:
            if value is None:
                return None
            value = step(value)
        return value

    def spec(self) -> list:
        return [step.spec() for step in self.steps]  # type: ignore[attr-defined]


@dataclass(frozen=True)
class TakeFirst:
    """The answer of the first alternative (a filter or pipeline) that finds one, else ``None``."""

    alternatives: tuple[Step, ...]
    name = "take_first"

    def __init__(self, *alternatives: Step):
        object.__setattr__(self, "alternatives", tuple(alternatives))

    def __call__(self, value: str | None) -> str | None:
        if value is None:
            return None
        for alt in self.alternatives:
            found = alt(value)
            if found is not None:
                return found
        return None

    def spec(self) -> dict:
        return {"filter": self.name, "alternatives": [_as_list(a.spec()) for a in self.alternatives]}  # type: ignore[attr-defined]


def _as_list(spec: Any) -> list:
    return spec if isinstance(spec, list) else [spec]


def _build_step(item: Any, key: str) -> Step:
    if isinstance(item, str):
        item = {"filter": item}
    if not isinstance(item, dict) or "filter" not in item:
        raise ConfigError(key, f"a filter name or a mapping with 'filter', got {item!r:.80}")
    name, kwargs = item["filter"], {k: v for k, v in item.items() if k != "filter"}
    if name == TakeFirst.name:
        alts = kwargs.pop("alternatives", None)
        if kwargs or not isinstance(alts, list) or not alts:
            raise ConfigError(key, "take_first with exactly one key 'alternatives': a non-empty list of filter lists")
        return TakeFirst(*(build_pipeline(_as_list(a), f"{key}.alternatives[{i}]") for i, a in enumerate(alts)))
    if name not in FILTERS:
        raise ConfigError(f"{key}.filter", f"one of {sorted([*FILTERS, TakeFirst.name])}, got {name!r}")
    cls = FILTERS[name]
    unknown = sorted(set(kwargs) - set(filter_fields(cls)))
    if unknown:
        raise ConfigError(key, f"unknown key(s) {unknown} for filter {name!r}; expected some of {filter_fields(cls)}")
    try:
        return cls(**kwargs)
    except (TypeError, ValueError) as e:
        raise ConfigError(key, f"valid settings for filter {name!r} ({e})") from None


def build_pipeline(spec: Sequence[Any], key: str = "extract") -> Pipeline:
    """A :class:`Pipeline` from its declaration: a list of filter names or ``{filter: name, **fields}``
    mappings (``take_first`` takes ``alternatives``: a list of such lists). A bad entry raises one
    :class:`~wobble.errors.ConfigError` naming its place (``key[i]``) and what was expected."""
    if isinstance(spec, (str, dict)) or not isinstance(spec, Sequence) or not spec:
        raise ConfigError(key, f"a non-empty list of filters, got {spec!r:.80}")
    return Pipeline(*(_build_step(item, f"{key}[{i}]") for i, item in enumerate(spec)))


def extract(text: str | None, *steps: Step) -> str | None:
    """``Pipeline(*steps)(text)``: the answer in ``text`` or ``None``."""
    return Pipeline(*steps)(text)


__all__ = ["Pipeline", "TakeFirst", "build_pipeline", "extract", "Filter"]
