"""Config validation: JSON Schema (schemas/config.schema.yaml + one fragment per registered study under
schemas/studies/) plus cross-reference checks.

Every failure is one line naming the offending key and what was expected, raised as ConfigError
before any job runs. Defaults live only in the schema; :func:`fill_defaults` writes them into the config
(nested objects, ``$ref``, ``items``, ``additionalProperties``, ``allOf`` and ``if/then/else`` included),
so no rule or study module needs a fallback value of its own.
"""

from __future__ import annotations

import copy
from pathlib import Path
from typing import Any, Iterator

import jsonschema
import yaml

from wobble.errors import ConfigError, RetiredKeyError, WobbleError
from wobble.models.revisions import unpinned_revisions
from wobble.models.server_spec import check_model_servers
from wobble.resolve import check_selection, selected, suggest

# Places outside the studies' sections that hold model keys ("*" = every list item / every dict value);
# each registered study adds its own (StudySpec.model_refs, under its section).
SHARED_MODEL_REF_PATHS = (
    ("probe", "models", "*"),
    ("models", "*", "finetune", "base"),
    # the instructions study's fill-mask word proposer: a models: entry like any other, so it is materialized
    # from a pinned revision before the jobs that load it (a compute node needs no hub)
    ("instructions", "masked_lm"),
)


# Renamed keys: old key -> its replacement. A config that still has an old key stops (check-config and every run)
# with one line naming the replacement, so an old config never runs with a default where its own value was.
RETIRED_KEYS: dict[str, str] = {
    "instructions.model": "instructions.models (the main model first)",
    "instructions.second_model": "instructions.models (the second model as its second item)",
    "instructions.generation": "instructions.max_new_tokens",
    **{f"instructions.{part}.instances_per_task": f"instructions.{part}.n_instances_per_task"
       for part in ("english", "xlingual", "para", "train")},
    **{f"instructions.{part}.tasks_per_category": f"instructions.{part}.n_tasks_per_category"
       for part in ("english", "xlingual")},
    "instructions.diverse.examples_per_task": "instructions.diverse.n_examples_per_task",
    "first_token.eval_per_model": "first_token.n_eval_per_model",
    "first_token.peft": "first_token.finetune",
    "icl_bias.splits.test_per_cell": "icl_bias.splits.n_test_per_cell",
    "followup.judge": "followup.judge_model",
    "followup.judge_samples": "followup.n_judge_examples",
    "followup.heldout": "followup.n_heldout",
}


def check_retired_keys(config: Any, source: str = "config") -> None:
    """A :class:`RetiredKeyError` for the first key of :data:`RETIRED_KEYS` that ``config`` still has."""
    for old, new in RETIRED_KEYS.items():
        *parents, last = old.split(".")
        node = config
        for part in parents:
            node = node.get(part) if isinstance(node, dict) else None
        if isinstance(node, dict) and last in node:
            raise RetiredKeyError(source, old, new)


def model_ref_paths() -> tuple[tuple[str, ...], ...]:
    from wobble.studies import registry

    study = tuple((name, *path) for name, spec in registry().items() for path in spec.model_refs)
    return SHARED_MODEL_REF_PATHS + study


def load_schema(schema_path: str | Path) -> dict:
    """The config schema: the shared part plus each registered study's fragment under its section name.

    A fragment's own ``$defs`` move to the root (its ``$ref: "#/$defs/x"`` then resolves as written);
    a name already defined elsewhere is an error rather than a silent override.
    """
    from wobble.studies import registry

    schema_path = Path(schema_path)
    with open(schema_path, encoding="utf-8") as f:
        schema = yaml.safe_load(f)
    defs = schema.setdefault("$defs", {})
    for name in registry():
        fragment_path = schema_path.parent / "studies" / f"{name}.schema.yaml"
        if not fragment_path.is_file():
            raise WobbleError(f"study {name!r} is registered but its schema fragment {fragment_path} is missing")
        with open(fragment_path, encoding="utf-8") as f:
            fragment = yaml.safe_load(f)
        for key, value in fragment.pop("$defs", {}).items():
            if key in defs:
                raise WobbleError(f"{fragment_path}: $defs/{key} is already defined by another schema part")
            defs[key] = value
        schema["properties"][name] = fragment
    return schema


def _key(path) -> str:
    out = ""
    for p in path:
        out += f"[{p}]" if isinstance(p, int) else (f".{p}" if out else str(p))
    return out or "<root>"


def _describe(err: jsonschema.ValidationError) -> str:
    v = err.validator
    if v == "additionalProperties":
        extra = sorted(set(err.instance) - set(err.schema.get("properties", {})))
        known = sorted(err.schema.get("properties", {}))
        hint = suggest(extra[0], known) if extra else ""
        return f"unknown key(s) {extra}{hint or ';'} expected one of {known}"
    if v == "required":
        return err.message.replace("is a required property", "is required here")
    if v == "type":
        want = err.validator_value
        want = want if isinstance(want, str) else " or ".join(want)
        return f"expected {want}, got {type(err.instance).__name__} {err.instance!r:.60}"
    if v == "enum":
        return f"expected one of {err.validator_value}, got {err.instance!r:.60}"
    if v == "oneOf":
        # Report the most specific sub-error, e.g. an unknown key inside a model spec.
        best = jsonschema.exceptions.best_match(err.context) if err.context else None
        if best is not None:
            return _describe(best)
    return err.message


def _best_error(errors: list[jsonschema.ValidationError]) -> jsonschema.ValidationError:
    err = jsonschema.exceptions.best_match(errors)
    # Descend into oneOf/anyOf to the deepest path so the key named is the real culprit.
    while err.context:
        err = jsonschema.exceptions.best_match(err.context)
    return err


def _resolve(schema: Any, root: dict) -> Any:
    """Follow local ``$ref`` s (``#/$defs/x``); keywords beside a ``$ref`` are kept."""
    while isinstance(schema, dict) and str(schema.get("$ref", "")).startswith("#/"):
        node: Any = root
        for part in schema["$ref"][2:].split("/"):
            node = node[part]
        schema = {**node, **{k: v for k, v in schema.items() if k != "$ref"}}
    return schema


def _matches(schema: dict, instance: Any, root: dict) -> bool:
    return jsonschema.Draft202012Validator({**schema, "$defs": root.get("$defs", {})}).is_valid(instance)


def fill_defaults(schema: Any, instance: Any, root: dict | None = None) -> None:
    """Write every ``default`` the schema declares into ``instance`` (in place), at any depth.

    Called after validation, so the branches of ``if/then/else`` are chosen on valid data; ``oneOf`` /
    ``anyOf`` branches are not entered (which one applies is not decidable from defaults alone).
    """
    root = schema if root is None else root
    schema = _resolve(schema, root)
    if not isinstance(schema, dict):
        return
    for sub in schema.get("allOf", []):
        fill_defaults(sub, instance, root)
    if isinstance(schema.get("if"), dict):
        branch = schema.get("then") if _matches(schema["if"], instance, root) else schema.get("else")
        if branch is not None:
            fill_defaults(branch, instance, root)
    if isinstance(instance, dict):
        props = schema.get("properties", {})
        for key, sub in props.items():
            sub = _resolve(sub, root)
            if key not in instance and isinstance(sub, dict) and "default" in sub:
                instance[key] = copy.deepcopy(sub["default"])
            if key in instance:
                fill_defaults(sub, instance[key], root)
        extra = schema.get("additionalProperties")
        if isinstance(extra, dict):
            for key, value in instance.items():
                if key not in props:
                    fill_defaults(extra, value, root)
    elif isinstance(instance, list) and isinstance(schema.get("items"), dict):
        for item in instance:
            fill_defaults(schema["items"], item, root)


def _unaliased(obj: Any) -> Any:
    """A copy with no shared dicts/lists: YAML anchors (``*ref``) would otherwise let a default filled
    at one place appear at every other place sharing the object."""
    if isinstance(obj, dict):
        return {k: _unaliased(v) for k, v in obj.items()}
    if isinstance(obj, list):
        return [_unaliased(v) for v in obj]
    return obj


def _walk(obj: Any, path: tuple, prefix: tuple = ()) -> Iterator[tuple[tuple, Any]]:
    if not path:
        yield prefix, obj
        return
    head, rest = path[0], path[1:]
    if head == "*":
        items = obj.items() if isinstance(obj, dict) else enumerate(obj) if isinstance(obj, list) else ()
        for k, v in items:
            yield from _walk(v, rest, prefix + (k,))
    elif isinstance(obj, dict) and head in obj:
        yield from _walk(obj[head], rest, prefix + (head,))


def check_model_refs(config: dict) -> None:
    models = config.get("models", {})
    for path in model_ref_paths():
        for where, value in _walk(config, path):
            if isinstance(value, str) and value not in models:
                raise ConfigError(_key(where), f"model key {value!r} is not defined under 'models' "
                                                f"(defined: {sorted(models)})")


def check_sources(config: dict) -> None:
    from wobble.data.sources import SOURCES

    for i, key in enumerate(config.get("data", {}).get("sources", [])):
        if key not in SOURCES:
            raise ConfigError(f"data.sources[{i}]", f"unknown source {key!r}; expected one of {sorted(SOURCES)}")


def check_sections(config: dict, schema: dict) -> None:
    """Every top-level key is a shared section or a registered study's section."""
    from wobble.studies import STUDIES

    if not isinstance(config, dict):
        raise ConfigError("<root>", f"expected a mapping of sections, got {type(config).__name__}")
    if "base" in config:
        raise ConfigError("base", "a config with a base is resolved before it is validated (wobble.resolve."
                                  "resolve_file; `wobble check-config --resolved FILE` shows the result)")
    unknown = sorted(set(config) - set(schema["properties"]))
    if unknown:
        shared = sorted(set(schema["properties"]) - set(STUDIES))
        hint = suggest(unknown[0], schema["properties"])
        raise ConfigError("<root>", f"unknown section(s) {unknown}{hint or ';'} expected a shared section {shared} or a "
                                    f"registered study {list(STUDIES)} (studies are registered in "
                                    "src/wobble/studies/__init__.py)")


def check_studies(config: dict) -> None:
    """Each present study section's own cross-field checks (``StudySpec.check``), defaults filled."""
    from wobble.studies import registry

    for name, spec in registry().items():
        if name in config and spec.check is not None:
            spec.check(config[name])


def models_in_use(config: dict) -> list[str]:
    """The model keys a run loads: those its running studies and the probe name, then the bases of finetuned ones.
    A model that is declared but named by nothing that runs is never materialized, so no pre-run check needs it."""
    from wobble.studies import disabled_reason, registry

    models = config.get("models") or {}
    paths = [("probe", "models", "*")] if "probe" in config and selected(config, "probe") else []
    for name, spec in registry().items():
        if name in config and disabled_reason(config, name) is None:
            paths += [(name, *path) for path in spec.model_refs]
            paths += [path for path in SHARED_MODEL_REF_PATHS if path[0] == name]
    used = [v for path in paths for _, v in _walk(config, path) if isinstance(v, str) and v in models]
    used = list(dict.fromkeys(used))
    for key in used:  # grows while it is read: a finetune's base, and that base's base
        base = ((models.get(key) or {}).get("finetune") or {}).get("base")
        if base in models and base not in used:
            used.append(base)
    return used


def check_finetune_recipe(config: dict) -> None:
    """A finetuned model in use is made by the instructions study's finetune rule from ``instructions.finetune``
    and ``instructions.train``: without an ``instructions:`` section it could not be made."""
    for key in models_in_use(config):
        if "finetune" in config["models"][key] and "instructions" not in config:
            raise ConfigError(f"models.{key}.finetune", "a finetuned model is made with the recipe under "
                                                        "instructions.finetune and instructions.train; the config has "
                                                        "no instructions: section (take it from a base, or give one)")


def check_pinned_revisions(config: dict) -> None:
    """At ``scale: paper`` every hub model the run uses is pinned to a commit: a ConfigError naming the first
    unpinned one (and the others) otherwise. Every real run checks it (a dry run only warns); ``wobble
    check-config`` refuses an unpinned model at any scale (wobble.preflight)."""
    if config.get("scale") != "paper":
        return
    loose = unpinned_revisions(config, models_in_use(config))
    if loose:
        (key, revision), *rest = loose.items()
        also = f" (also unpinned: {', '.join(f'{k} {r!r}' for k, r in rest)})" if rest else ""
        raise ConfigError(f"models.{key}.revision", f"scale 'paper' needs every hub model pinned to a 40-hex commit "
                                                    f"sha, got {revision!r}{also}; `wobble pin-revisions <config>` "
                                                    f"writes the current ones where the hub is reachable")


def validate_config(config: dict, schema_path: str | Path, source: str = "config") -> dict:
    """Validate ``config`` in place (defaults filled) and return it; raise ConfigError on the first problem.
    ``source`` names the config file in the one-line error of a retired key."""
    check_retired_keys(config, source)
    schema = load_schema(schema_path)
    check_selection(config)
    check_sections(config, schema)
    validator = jsonschema.Draft202012Validator(schema)
    errors = list(validator.iter_errors(config))
    if errors:
        err = _best_error(errors)
        raise ConfigError(_key(list(err.absolute_path)), _describe(err))
    for key in list(config):
        config[key] = _unaliased(config[key])
    fill_defaults(schema, config)
    check_model_refs(config)
    check_model_servers(config)  # a server: block's templates, port and env
    check_sources(config)
    check_studies(config)
    check_finetune_recipe(config)
    return config
