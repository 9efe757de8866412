"""Pin a config's hub models to commits: ``wobble pin-revisions FILE``.

At ``scale: paper`` every ``source: hub`` model must name a 40-hex commit sha (``wobble.config.check_pinned_revisions``):
a branch such as ``main`` can move between two runs, and a number must trace back to the weights that made it.
This command asks the Hugging Face Hub, once, which commit each unpinned model's branch or tag points at now
(``HfApi.model_info(repo, revision).sha``), and writes those shas into the config file in place of the branch
names, leaving every other line (comments, anchors, layout) as it was. Run it on a machine that reaches the hub
(a cluster's login node), with ``HF_TOKEN`` set for gated repositories, then commit the file.

The file is rewritten only when every model resolved and the rewritten text, parsed again, names exactly the new
shas (written to a temporary file, then renamed): a half-pinned config is never left behind.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Callable

import yaml

from wobble.errors import ConfigError, WobbleError
from wobble.io import atomic_write

#: ``resolver(repo_id, revision) -> 40-hex sha`` (the hub by default; tests pass their own).
Resolver = Callable[[str, str], str]

#: A full commit sha: the only revision a ``scale: paper`` run accepts for a hub model.
COMMIT_SHA = re.compile(r"[0-9a-f]{40}")


def hub_resolver(repo_id: str, revision: str) -> str:
    """The commit sha that ``revision`` of the hub repository ``repo_id`` points at now."""
    from huggingface_hub import HfApi

    return HfApi().model_info(repo_id, revision=revision).sha


def unpinned_revisions(config: dict, keys: list[str] | None = None) -> dict[str, str]:
    """``{model key: revision}`` of every ``source: hub`` model (of ``keys``, when given) whose revision is not a
    full 40-hex commit sha (a branch such as ``main`` or a tag can move between two runs; an absent revision means
    ``main``)."""
    out = {}
    for key, spec in (config.get("models") or {}).items():
        if keys is not None and key not in keys:
            continue
        if isinstance(spec, dict) and spec.get("source") == "hub":
            revision = str(spec.get("revision", "main"))
            if not COMMIT_SHA.fullmatch(revision):
                out[key] = revision
    return out


def resolve(config: dict, resolver: Resolver = hub_resolver) -> dict[str, tuple[str, str]]:
    """``{model key: (revision, sha)}`` for every unpinned hub model of ``config``; a WobbleError naming the first
    model the hub could not resolve (no network, a gated repo without a token, a misspelt id)."""
    out = {}
    for key, revision in unpinned_revisions(config).items():
        repo = config["models"][key]["id"]
        try:
            sha = resolver(repo, revision)
        except Exception as e:  # noqa: BLE001 - any failure of the hub client becomes one line naming the model
            raise WobbleError(f"models.{key}: cannot resolve {repo}@{revision} on the Hugging Face Hub: "
                              f"{type(e).__name__}: {str(e).splitlines()[0] if str(e) else ''}") from None
        if not isinstance(sha, str) or not COMMIT_SHA.fullmatch(sha):
            raise WobbleError(f"models.{key}: the hub answered {sha!r} for {repo}@{revision}, not a 40-hex sha")
        out[key] = (revision, sha)
    return out


def _entry_span(lines: list[str], key: str) -> tuple[int, int]:
    """First and past-last line of ``key``'s entry under ``models:`` (its own line and the lines indented deeper)."""
    in_models = False
    for i, line in enumerate(lines):
        if re.match(r"models:\s*(#.*)?$", line):
            in_models = True
            continue
        if in_models and re.match(r"\S", line):
            break
        m = re.match(rf"(\s+){re.escape(key)}:(\s|$)", line) if in_models else None
        if m:
            indent = len(m.group(1))
            end = i + 1
            while end < len(lines) and (not lines[end].strip() or
                                        len(lines[end]) - len(lines[end].lstrip()) > indent):
                end += 1
            return i, end
    raise ConfigError(f"models.{key}", "an entry under a top-level 'models:' mapping, one key per line")


def rewrite(text: str, pins: dict[str, tuple[str, str]]) -> str:
    """``text`` with each pinned model's ``revision: <branch>`` (an anchor kept) replaced by its sha."""
    lines = text.splitlines(keepends=True)
    for key, (revision, sha) in pins.items():
        start, end = _entry_span(lines, key)
        pattern = re.compile(rf"(\brevision:\s*(?:&[\w.-]+\s+)?)[\"']?{re.escape(revision)}[\"']?(?=\s*[,}}\n#]|$)")
        hits = [i for i in range(start, end) if pattern.search(lines[i])]
        if len(hits) != 1:
            raise ConfigError(f"models.{key}.revision", f"one 'revision: {revision}' in the entry's lines, "
                                                        f"found {len(hits)}")
        lines[hits[0]] = pattern.sub(lambda m: m.group(1) + sha, lines[hits[0]], count=1)
    return "".join(lines)


def pin_file(path: str | Path, resolver: Resolver = hub_resolver) -> dict[str, tuple[str, str]]:
    """Resolve and write the pins of the config at ``path``; returns what changed (empty: already pinned)."""
    path = Path(path)
    text = path.read_text(encoding="utf-8")
    config = yaml.safe_load(text) or {}
    pins = resolve(config, resolver)
    if not pins:
        return {}
    new_text = rewrite(text, pins)
    again = yaml.safe_load(new_text) or {}
    got = {key: str(again["models"][key].get("revision")) for key in pins}
    if got != {key: sha for key, (_, sha) in pins.items()}:
        raise WobbleError(f"{path}: the rewritten file does not name the resolved shas ({got}); left unchanged")
    with atomic_write(path) as f:
        f.write(new_text)
    return pins
