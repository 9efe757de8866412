"""What ``wobble check-config`` catches before any job runs, beyond the schema: a file a model needs that is not
there, a server command that is not installed, a running server that does not answer, a hub revision not pinned to
a commit. Each finding is one line naming the key; only the models the run uses are checked (a model declared but
named by nothing that runs is never materialized). Relative paths are relative to the checkout, where jobs run."""

from __future__ import annotations

import importlib.util
import os
import shutil
import urllib.error
import urllib.request
from pathlib import Path
from typing import Any, Mapping

from wobble.config import models_in_use
from wobble.models.revisions import unpinned_revisions

#: Modules a managed server's ``{python} -m MODULE`` command runs, and the package each needs installed.
SERVER_MODULE_NEEDS = {"wobble.backends.llamacpp_serve": "xllamacpp"}


def _exists(path: str) -> bool:
    return Path(os.path.expanduser(path)).exists()


def missing_files(config: Mapping[str, Any]) -> list[str]:
    """One line per local model path or GGUF file (a ``local`` model's, or one a managed server's command names)
    that does not exist."""
    lines = []
    for key in models_in_use(config):
        spec = config["models"][key]
        if spec.get("source") == "local":
            path = spec["path"]
            gguf = spec.get("gguf_file")
            if not _exists(path):
                lines.append(f"models.{key}.path: {path} does not exist")
            elif gguf and not _exists(os.path.join(path, gguf)):
                lines.append(f"models.{key}.gguf_file: {os.path.join(path, gguf)} does not exist")
        for item in (spec.get("server") or {}).get("command", [])[1:]:
            if item.endswith(".gguf") and "{" not in item and not _exists(item):
                lines.append(f"models.{key}.server.command: the GGUF file {item} does not exist")
    return lines


def missing_commands(config: Mapping[str, Any]) -> list[str]:
    """One line per managed server whose executable is not on PATH, or whose ``{python} -m MODULE`` (or the package
    that module needs) is not installed, and per ``engine: vllm`` model without vllm installed."""
    lines = []
    for key in models_in_use(config):
        if config["models"][key].get("engine") == "vllm" and importlib.util.find_spec("vllm") is None:
            lines.append(f"models.{key}.engine: vllm is not installed (pip install vllm, into the jobs' environment on "
                         f"a machine with a CUDA GPU; or use engine hf)")
        command = (config["models"][key].get("server") or {}).get("command") or []
        if not command:
            continue
        exe = command[0]
        if exe != "{python}":
            if shutil.which(exe) is None:
                lines.append(f"models.{key}.server.command: {exe!r} is not installed (not found on PATH)")
            continue
        if len(command) > 2 and command[1] == "-m":
            module = command[2]
            for needed in (module, SERVER_MODULE_NEEDS.get(module)):
                if needed and importlib.util.find_spec(needed.split(".")[0]) is None:
                    lines.append(f"models.{key}.server.command: python module {needed!r} is not installed "
                                 f"(pip install {needed.split('.')[0]})")
                    break
    return lines


LOOPBACK = ("localhost", "127.0.0.1", "::1", "0.0.0.0")


def silent_servers(config: Mapping[str, Any], timeout_s: float = 3.0) -> list[tuple[str, bool]]:
    """``(line, on this machine)`` per server already running (``base_url``) that does not answer ``GET
    <base_url>/models`` within ``timeout_s``; any HTTP answer, an error status included, counts as answering. A
    server on this machine (loopback) must answer now; a remote one may be out of reach from where check-config
    runs (a login node, an offline machine), so it only warns."""
    from urllib.parse import urlparse

    from wobble.backends.openai_compat import normalize_base_url

    lines = []
    for key in models_in_use(config):
        spec = config["models"][key]
        if spec.get("source") != "openai" or not spec.get("base_url"):
            continue
        url = normalize_base_url(spec["base_url"]) + "/models"
        headers = {}
        if spec.get("api_key_env") and os.environ.get(spec["api_key_env"]):
            headers["Authorization"] = f"Bearer {os.environ[spec['api_key_env']]}"
        try:
            urllib.request.urlopen(urllib.request.Request(url, headers=headers), timeout=timeout_s).close()
        except urllib.error.HTTPError:
            pass
        except (urllib.error.URLError, OSError, ValueError) as e:
            reason = getattr(e, "reason", e)
            local = (urlparse(url).hostname or "") in LOOPBACK
            lines.append((f"models.{key}.base_url: no server answers at {spec['base_url']} (GET {url}: {reason}); "
                          + ("start it first, or pass --no-server-check" if local else
                             "a run from here would fail the same way"), local))
    return lines


def unpinned(config: Mapping[str, Any], source: str) -> list[str]:
    """One line per hub model in use whose revision is a branch or a tag, with the command that pins them."""
    loose = unpinned_revisions(dict(config), models_in_use(dict(config)))
    return [f"models.{key}.revision: {revision!r} is not a 40-hex commit sha, so the weights can change between two "
            f"runs; `wobble pin-revisions {source}` pins it (or --allow-unpinned to go on knowingly)"
            for key, revision in loose.items()]


def sizes_line(sized: list[str], config: Mapping[str, Any]) -> str:
    """check-config's line on the weights' fit: "not checked" when no model in use has a known size."""
    used = models_in_use(dict(config))
    known = [k for k in sized if k in used]
    if not known:
        return (f"model weights: not checked (none of the {len(used)} models in use has a known size: params_b or "
                "weights_gib sizes one before download)")
    rest = f"; {len(used) - len(known)} not checked" if len(known) < len(used) else ""
    return f"model weights: within their jobs' resources ({len(known)} of {len(used)} models in use checked{rest})"
