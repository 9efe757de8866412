"""Config validation: JSON Schema (schemas/config.schema.yaml) plus cross-reference checks.

Every failure is one line naming the offending key and what was expected, raised as ConfigError
before any job runs. Defaults declared in the schema are filled in.
"""

from __future__ import annotations

import copy
from pathlib import Path
from typing import Any, Iterator

import jsonschema
import yaml

from wobble.errors import ConfigError

# Places outside the studies' sections that hold model keys ("*" = every list item / every dict value);
# each registered study adds its own (StudySpec.model_refs, under its section).
SHARED_MODEL_REF_PATHS = (
    ("probe", "models", "*"),
    ("models", "*", "finetune", "base"),
)


def model_ref_paths() -> tuple[tuple[str, ...], ...]:
    from wobble.studies import registry

    study = tuple((name, *path) for name, spec in registry().items() for path in spec.model_refs)
    return SHARED_MODEL_REF_PATHS + study


def load_schema(schema_path: str | Path) -> dict:
    """The config schema: the shared part plus each registered study's fragment under its section name."""
    from wobble.studies import registry

    schema_path = Path(schema_path)
    with open(schema_path, encoding="utf-8") as f:
        schema = yaml.safe_load(f)
    root = schema_path.parent
    for name, spec in registry().items():
        fragment = root / "studies" / f"{name}.schema.yaml"
        with open(fragment, encoding="utf-8") as f:
            schema["properties"][name] = yaml.safe_load(f)
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
        return f"unknown key(s) {extra}; expected one of {known}"
    if v == "required":
        return err.message.replace("is a required property", "is required here")
    if v == "type":
        want = err.validator_value
        return f"expected {want if isinstance(want, str) else ' or '.join(want)}, got {type(err.instance).__name__} {err.instance!r:.60}"
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


def _fill_defaults(schema: dict, instance: Any, root: dict) -> None:
    if isinstance(schema, dict) and "$ref" in schema:
        ref = schema["$ref"].split("/")[-1]
        schema = root["$defs"][ref]
    if not isinstance(instance, dict) or not isinstance(schema, dict):
        return
    for key, sub in schema.get("properties", {}).items():
        if key not in instance and isinstance(sub, dict) and "default" in sub:
            instance[key] = copy.deepcopy(sub["default"])
        if key in instance:
            _fill_defaults(sub, instance[key], root)


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


def validate_config(config: dict, schema_path: str | Path) -> dict:
    """Validate ``config`` in place (defaults filled) and return it; raise ConfigError on the first problem."""
    schema = load_schema(schema_path)
    validator = jsonschema.Draft202012Validator(schema)
    errors = list(validator.iter_errors(config))
    if errors:
        err = _best_error(errors)
        raise ConfigError(_key(list(err.absolute_path)), _describe(err))
    _fill_defaults(schema, config, schema)
    check_model_refs(config)
    check_sources(config)
    return config
