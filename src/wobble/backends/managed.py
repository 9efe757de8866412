"""The ``openai`` backend on a server the job starts itself (a model's ``server:`` block, :mod:`.server`)."""

from __future__ import annotations

import hashlib
from typing import Any, Mapping

from wobble.backends.http_retry import Retryable
from wobble.backends.openai_compat import OpenAICompatBackend
from wobble.backends.server import ManagedServer, server_log_path
from wobble.io import dumps_canonical


class ManagedServerBackend(OpenAICompatBackend):
    """:class:`OpenAICompatBackend` on a :class:`ManagedServer` it stops on :meth:`close` (the job's end stops it
    too). Its request cache keys answers on the server's command template and ``env``, not on the URL."""

    server: ManagedServer
    server_identity: dict

    def request_key(self, endpoint: str, full_body: dict) -> str:
        request = {"server": self.server_identity, "endpoint": endpoint, "body": full_body}
        return hashlib.sha256(dumps_canonical(request).encode()).hexdigest()

    def _attempt(self, url: str, data: bytes, headers: dict) -> dict:
        try:
            return super()._attempt(url, data, headers)
        except Retryable:
            self.server.check_alive()  # a server that has exited fails the request now, with the end of its log
            raise

    def close(self) -> None:
        self.server.stop()

    def __enter__(self) -> "ManagedServerBackend":
        return self

    def __exit__(self, *exc) -> None:
        self.close()


def server_identity(spec: Mapping[str, Any]) -> dict:
    """What names a managed server in the request cache: its command template (``{port}`` unfilled) and env."""
    server = spec["server"]
    return {"command": list(server["command"]), "env": dict(server.get("env") or {})}


def managed_backend(model_key: str, spec: Mapping[str, Any], progress: bool = True) -> ManagedServerBackend:
    """Start the server ``spec['server']`` declares (:class:`ManagedServer`), wait until it answers and return the
    backend on it."""
    server = ManagedServer(model_key, spec["server"], model=spec["model"], log_path=server_log_path(model_key))
    base_url = server.start()
    try:
        backend = ManagedServerBackend.from_spec(model_key, {**spec, "base_url": base_url}, progress=progress)
    except BaseException:
        server.stop()
        raise
    backend.server, backend.server_identity = server, server_identity(spec)
    return backend
