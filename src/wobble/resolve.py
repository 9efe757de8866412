"""A config file resolved into the whole run it describes, before the schema validates it.

A user's config says only what differs from a base it names explicitly: ``base: ../../config.yaml`` (a path
relative to the file). The resolved config is the user's mapping merged onto the base's by one rule: **mappings
merge key by key, at every depth; a list or a scalar replaces the base's value.** A base may name a base of its
own. Two keys say what the run is:

One exception: where the file gives a study its own ``models``, the base's per-model entries of that study
(``paper_models``, ``model_temperature``, ``model_deviations``) are kept only for the models it still runs.

* ``studies: [first_token, ...]``: the parts that run, registered studies and ``probe``; a study left out does not
  run and needs no section or models, and the probe runs only when listed.
* ``name: my-model``: the run's folder, ``results/<name>`` (``results_root`` says it otherwise). A config with a
  ``base`` never inherits the base's ``name`` or ``results_root``: without a name it takes the file's stem.

A config that names a base or a name writes under a folder of its own, never into the default run's ``results/``,
its study folders or the reference run's: the committed results cannot be overwritten by a user's run.
"""

from __future__ import annotations

import copy
import difflib
from pathlib import Path
from typing import Any, Iterable, Mapping

import yaml

from wobble.errors import ConfigError, WobbleError
from wobble.paths import RESULTS

#: Parts of the run ``studies:`` can name besides the registered studies.
EXTRA_PARTS = ("probe",)
#: A study's mappings keyed by its model keys: where a config gives the study its own ``models``, the base's entries
#: are kept only for models the study still runs (a stand-in or a temperature of a model no longer there is dropped).
MODEL_KEYED = ("paper_models", "model_temperature", "model_deviations")
#: Folders under ``results/`` that committed runs write: the default run's shared outputs and the reference run.
#: A user's run may not take one of them (nor a registered study's name).
RESERVED_NAMES = ("probe", "scorecard", "reference", "logs", "benchmarks", "findings.md")


def deep_merge(base: Any, over: Any) -> Any:
    """``over`` merged onto ``base``: mappings key by key (recursively), anything else replaced by ``over``."""
    if isinstance(base, Mapping) and isinstance(over, Mapping):
        out = {k: copy.deepcopy(v) for k, v in base.items()}
        for key, value in over.items():
            out[key] = deep_merge(out[key], value) if key in out else copy.deepcopy(value)
        return out
    return copy.deepcopy(over)


def suggest(word: str, known: Iterable[str]) -> str:
    """``"; did you mean 'x'?"`` for the closest of ``known`` (difflib), else ``""``."""
    close = difflib.get_close_matches(str(word), [str(k) for k in known], n=1, cutoff=0.6)
    return f"; did you mean {close[0]!r}?" if close else ""


def load_mapping(path: str | Path) -> dict:
    """The YAML mapping in ``path``; a ConfigError in one line when the file is missing, not YAML or not a mapping."""
    path = Path(path)
    if not path.is_file():
        raise WobbleError(f"{path}: no such config file")
    try:
        data = yaml.safe_load(path.read_text(encoding="utf-8"))
    except yaml.YAMLError as e:
        mark = getattr(e, "problem_mark", None)
        where = f" at line {mark.line + 1}" if mark is not None else ""
        raise WobbleError(f"{path}: not valid YAML{where} ({getattr(e, 'problem', None) or e})") from None
    if not isinstance(data, dict):
        raise WobbleError(f"{path}: a config is a mapping of sections, got {type(data).__name__}")
    return data


def _merged(raw: dict, here: Path, seen: tuple[Path, ...]) -> dict:
    """``raw`` merged onto its base chain (``base`` resolved against ``here``); the base's name and results folder
    are not inherited."""
    if "base" not in raw:
        return copy.deepcopy(raw)
    base_ref = raw["base"]
    if not isinstance(base_ref, str) or not base_ref:
        raise ConfigError("base", f"expected the path of the base config (relative to this file), got {base_ref!r}")
    base_path = (here / base_ref).resolve()
    if base_path in seen:
        raise ConfigError("base", f"{base_ref!r} leads back to a config already in the chain ({base_path})")
    if not base_path.is_file():
        raise ConfigError("base", f"{base_ref!r}: no such file ({base_path}; the path is relative to the config file)")
    base = _merged(load_mapping(base_path), base_path.parent, (*seen, base_path))
    for key in ("name", "results_root"):
        base.pop(key, None)
    own = {k: v for k, v in raw.items() if k != "base"}
    merged = deep_merge(base, own)
    for name, section in own.items():  # a study given its own models keeps the base's per-model entries of those
        if isinstance(section, Mapping) and isinstance(section.get("models"), list) and name in base:
            for key in MODEL_KEYED:
                inherited = (base[name] or {}).get(key) if isinstance(base[name], Mapping) else None
                if isinstance(inherited, Mapping):
                    kept = {m: v for m, v in inherited.items() if m in section["models"]}
                    merged[name][key] = {**kept, **(section.get(key) or {})}
    return merged


def parts() -> list[str]:
    """Every name ``studies:`` accepts: the registered studies, then the probe."""
    from wobble.studies import STUDIES

    return [*STUDIES, *EXTRA_PARTS]


def check_selection(config: Mapping[str, Any]) -> None:
    """``studies:`` names only registered studies and the probe (a ConfigError with the nearest name otherwise)."""
    chosen = config.get("studies")
    if chosen is None:
        return
    if not isinstance(chosen, list) or not chosen:
        raise ConfigError("studies", f"expected a non-empty list of {parts()}, got {chosen!r}")
    for i, name in enumerate(chosen):
        if name not in parts():
            raise ConfigError(f"studies[{i}]", f"unknown study {name!r}{suggest(name, parts())} "
                                               f"(expected one of {parts()})")


def selected(config: Mapping[str, Any], part: str) -> bool:
    """Whether ``part`` (a study or the probe) is among the config's ``studies:`` (every part when absent)."""
    chosen = config.get("studies")
    return chosen is None or part in chosen


def check_results_root(config: Mapping[str, Any]) -> None:
    """A named or based run writes to a folder of its own: not ``results/`` itself, nor a folder that the default
    run or the reference run writes (a ConfigError in one line otherwise)."""
    from wobble.studies import STUDIES

    root = str(config.get("results_root", RESULTS)).rstrip("/")
    taken = {RESULTS, *(f"{RESULTS}/{n}" for n in (*STUDIES, *RESERVED_NAMES))}
    if root in taken:
        what = "the default run's committed results" if root == RESULTS else "a folder of the committed results"
        raise ConfigError("results_root", f"{root!r} is {what}; a config with a name or a base writes under "
                                          f"results/<name> (give another name:, or a results_root such as "
                                          f"results/my-run)")


def resolve(raw: Mapping[str, Any], here: str | Path, stem: str | None = None) -> dict:
    """The whole run ``raw`` describes: its base chain merged under it, ``studies:`` checked, and ``results_root``
    derived from ``name`` (or ``stem``, the file's name, for a config with a base). ``here``: the folder that
    ``base`` is relative to."""
    is_user = "base" in raw
    config = _merged(dict(raw), Path(here), ())
    check_selection(config)
    if is_user or "name" in config:
        name = config.get("name") or stem
        if not isinstance(name, str) or not name:
            raise ConfigError("name", "a config with a base needs a name: (its results go to results/<name>)")
        config.setdefault("name", name)
        config.setdefault("results_root", f"{RESULTS}/{name}")
        check_results_root(config)
    return config


def resolve_file(path: str | Path) -> dict:
    """The resolved config of the file ``path`` (:func:`resolve`)."""
    path = Path(path)
    return resolve(load_mapping(path), path.resolve().parent, stem=path.stem)


def config_file_with_base(files: Iterable[str | Path], default: str | Path) -> Path:
    """The config file whose ``base`` the run's config holds: the last of ``files`` (Snakemake's --configfile, merged
    in order) that names one, else the last of them, else ``default`` (the checkout's config.yaml)."""
    files = [Path(f) for f in files]
    for f in reversed(files):
        try:
            data = yaml.safe_load(f.read_text(encoding="utf-8"))
        except (OSError, yaml.YAMLError):
            continue
        if isinstance(data, dict) and "base" in data:
            return f
    return files[-1] if files else Path(default)


def resolve_in_place(config: dict, files: Iterable[str | Path], default: str | Path) -> dict:
    """Replace the contents of Snakemake's ``config`` with its resolved form (``files``: the --configfile list)."""
    source = config_file_with_base(list(files), default)
    resolved = resolve(config, source.resolve().parent, stem=source.stem)
    config.clear()
    config.update(resolved)
    return config


def dump(config: Mapping[str, Any]) -> str:
    """A resolved config as YAML, sections in their order."""
    return yaml.safe_dump(dict(config), sort_keys=False, default_flow_style=None, width=120, allow_unicode=True)
