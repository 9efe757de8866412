"""What a model's ``server:`` block may say (schema ``$defs/model_server``), judged before any job starts: the
config's validation, the model's materialization and the server's start (:mod:`wobble.backends.server`) all ask
:func:`check_server_spec`.

* ``command`` is the server's argv, each item a template of :data:`PLACEHOLDERS` only; ``port: auto`` needs
  ``{port}``, and ``base_url`` is absent (wobble points the client at the server it starts).
* No secret in a ``command``: an argument after a key, token, secret or password option (``--api-key X``,
  ``--hf-token=X``) or one shaped like a key (``sk-…``, ``hf_…``) is refused, since the command is written to the
  job's log, the server's log and the model's manifest; a server takes its key from the job's environment. No
  ``env`` variable named like a secret either (the manifest records ``env``).
"""

from __future__ import annotations

import re
import string
from typing import Any, Mapping

from wobble.errors import ConfigError

PLACEHOLDERS = ("port", "host", "model", "python", "threads")
SECRET_HINTS = ("KEY", "TOKEN", "SECRET", "PASSWORD")
#: Words of an option's name (split at - and _) that make its value a secret: ``--api-key``, ``--hf-token``.
SECRET_WORDS = {"key", "apikey", "token", "secret", "password", "passwd"}
#: Arguments shaped like an API key or access token (OpenAI, Hugging Face, GitHub, bearer headers).
SECRET_VALUE = re.compile(r"^(?:sk-[A-Za-z0-9_-]{16,}|hf_[A-Za-z0-9]{16,}|gh[pousr]_[A-Za-z0-9]{20,}|Bearer\s+\S+)$")


def check_server_spec(key: str, spec: Mapping[str, Any]) -> None:
    """One ConfigError line for a ``server:`` block the schema cannot judge: a template naming an unknown
    placeholder, ``port: auto`` without ``{port}``, ``base_url`` beside it, a secret in ``env``."""
    server = spec.get("server")
    if server is None:
        return
    where = f"models.{key}.server"
    if spec.get("base_url"):
        raise ConfigError(f"models.{key}.base_url", "absent when a server: block starts the server (wobble points "
                                                    "the client at it)")
    used = set()
    for i, part in enumerate(server["command"]):
        try:
            names = {name for _, name, _, _ in string.Formatter().parse(part) if name is not None}
        except ValueError as e:
            raise ConfigError(f"{where}.command[{i}]", f"a template ({e}; write {{{{ and }}}} for braces)") from None
        unknown = sorted(n for n in names if n not in PLACEHOLDERS)
        if unknown:
            raise ConfigError(f"{where}.command[{i}]", f"known placeholders {{{'}, {'.join(PLACEHOLDERS)}}}, got "
                                                       f"{{{unknown[0]}}}")
        used |= names
    secret = secret_argument(server["command"])
    if secret is not None:
        raise ConfigError(f"{where}.command[{secret}]", "no secret in a server command (the job's log, the server's "
                                                        "log and the manifest record it): set it in the job's "
                                                        "environment, which the server inherits")
    if server.get("port", "auto") == "auto" and "port" not in used:
        raise ConfigError(f"{where}.command", "a {port} placeholder with port: auto (the port is chosen per job)")
    for var in server.get("env") or {}:
        if any(hint in var.upper() for hint in SECRET_HINTS):
            raise ConfigError(f"{where}.env.{var}", "no secret in the config (the manifest records env): set it in "
                                                    "the job's environment, which the server inherits")


def _secret_option(arg: str) -> bool:
    name = arg.lstrip("-").split("=", 1)[0].lower()
    return arg.startswith("-") and bool(SECRET_WORDS & set(re.split(r"[-_]", name)))


def secret_argument(command: list[str]) -> int | None:
    """The index of the first argument of ``command`` that holds a secret (see the module docstring), or None."""
    for i, arg in enumerate(map(str, command)):
        if _secret_option(arg) and "=" in arg and arg.split("=", 1)[1]:
            return i
        if i and _secret_option(str(command[i - 1])) and "=" not in str(command[i - 1]):
            return i
        if SECRET_VALUE.match(arg):
            return i
    return None


def check_model_servers(config: Mapping[str, Any]) -> None:
    """:func:`check_server_spec` over every model of a config."""
    for key, spec in (config.get("models") or {}).items():
        if isinstance(spec, Mapping):
            check_server_spec(key, spec)
