"""Model servers the workflow manages: a ``source: openai`` model with a ``server:`` block (schema
``$defs/model_server``; docs/models.md) is served by a process that each job using the model starts on its node.

* ``command`` is the server's argv (no shell), each item a template of
  :data:`wobble.models.server_spec.PLACEHOLDERS`: ``{port}`` (a free loopback port with ``port: auto``), ``{host}``
  (127.0.0.1), ``{model}`` (the served name the client asks for), ``{python}`` (this interpreter) and ``{threads}``
  (the job's CPU threads).
* :meth:`ManagedServer.start` runs it in its own process group, its output in a log beside the job's log
  (:func:`server_log_path`), and waits until ``GET /v1/models`` lists the model; a server that exits first, lists
  another name or does not answer within ``ready_timeout_s`` is one WobbleError line ending in its log's tail.
* The client talks only to its own server: the port's listener must be a process of the group the job started
  (:func:`wobble.backends.ports.port_owner`, from ``/proc``) before ``/v1/models`` is trusted, and it must listen on
  loopback only (``{host}`` is 127.0.0.1; a server on every interface is refused). With ``port: auto`` the port is
  chosen free and told to the server; if another process takes it first (the server cannot bind it, or someone
  else answers there), the server is stopped and started again on another port, :data:`PORT_TRIES` times in all.
* No secret in a ``command`` (:func:`wobble.models.server_spec.check_server_spec`, checked again at each start):
  the command is written to the job's log, the server's log and the model's manifest; a server takes its key from
  the job's environment.
* :meth:`ManagedServer.stop` sends SIGTERM to the group, SIGKILL after ``stop_timeout_s``. Servers stop when the
  job's :func:`wobble.snake.logged` block ends (:func:`job_servers`), normally or by an error, at interpreter
  exit otherwise, and by the kernel when the thread that started one dies (``PR_SET_PDEATHSIG``): a job killed
  outright leaves no server behind.
"""

from __future__ import annotations

import atexit
import contextlib
import json
import logging
import os
import signal
import socket
import subprocess
import sys
import threading
import time
import urllib.request
from pathlib import Path
from typing import Any, Iterator, Mapping

from wobble.backends.ports import group_pids, port_owner
from wobble.errors import WobbleError
from wobble.models.server_spec import check_server_spec

log = logging.getLogger(__name__)
HOST = "127.0.0.1"
READY_TIMEOUT_S = 600.0
STOP_TIMEOUT_S = 30.0
PORT_TRIES = 3
_RUNNING: set["ManagedServer"] = set()
_JOB_LOG: list[str | None] = [None]  # the log of the job now running (job_servers); None outside a job
_LOCK = threading.Lock()
_LOGS_OPENED: set[Path] = set()  # server logs this process has written: a second server in one job appends


def free_port() -> int:
    with socket.socket() as s:
        s.bind((HOST, 0))
        return s.getsockname()[1]


def server_log_path(key: str) -> Path:
    """The server log of model ``key``: beside the running job's log, else under ``logs/servers/``."""
    job_log = _JOB_LOG[-1]
    if job_log is None:
        return Path("logs") / "servers" / f"{key}.server.log"
    path = Path(job_log)
    return path.with_name(f"{path.name.removesuffix('.log')}.{key}.server.log")


def _die_with_parent():
    """A ``preexec_fn`` that has the kernel send the child SIGTERM when the thread that started it dies (Linux's
    ``PR_SET_PDEATHSIG``; resolved here, so the child between fork and exec only makes the call), else None."""
    if not sys.platform.startswith("linux"):
        return None
    import ctypes

    prctl = ctypes.CDLL(None, use_errno=True).prctl
    return lambda: prctl(1, signal.SIGTERM)  # 1 = PR_SET_PDEATHSIG


class PortTaken(WobbleError):
    """Another process holds the server's port: the server could not bind it, or someone else answers there."""


def _group_alive(pgid: int) -> bool:
    """Whether a process of group ``pgid`` is still running (zombies waiting for their reaper do not count)."""
    if not Path("/proc").is_dir():
        try:
            os.killpg(pgid, 0)
            return True
        except (ProcessLookupError, PermissionError):
            return False
    return bool(group_pids(pgid))


class ManagedServer:
    """One server process: :meth:`start` runs ``command`` and waits until it answers, :meth:`stop` ends its
    process group."""

    def __init__(self, key: str, server: Mapping[str, Any], *, model: str, log_path: str | os.PathLike):
        self.key, self.model, self.spec = key, model, dict(server)
        self.log_path = Path(log_path)
        self.ready_timeout_s = float(server.get("ready_timeout_s", READY_TIMEOUT_S))
        self.stop_timeout_s = float(server.get("stop_timeout_s", STOP_TIMEOUT_S))
        self.proc: subprocess.Popen | None = None
        self.port: int | None = None
        self.argv: list[str] = []

    @property
    def base_url(self) -> str:
        return f"http://{HOST}:{self.port}/v1"

    def tail(self, n: int = 12) -> str:
        """The last ``n`` lines of the server's log, joined with `` | `` (one error line)."""
        try:
            lines = self.log_path.read_text(encoding="utf-8", errors="replace").splitlines()
        except OSError:
            return "(no log)"
        return " | ".join(line.strip() for line in lines[-n:] if line.strip()) or "(empty log)"

    def start(self) -> str:
        """Run the server and return its base URL once its own process answers ``/v1/models`` with the model; one
        WobbleError line if it exits first, does not answer in time or another process holds its port (the process
        group is stopped before raising). With ``port: auto`` a port another process took is retried."""
        check_server_spec(self.key, {"server": self.spec})
        port = self.spec.get("port", "auto")
        tries = PORT_TRIES if port == "auto" else 1
        for attempt in range(1, tries + 1):
            self.port = free_port() if port == "auto" else int(port)
            if port != "auto" and not _port_free(self.port):
                raise WobbleError(f"model {self.key!r}: server port {self.port} is in use on {HOST}")
            self._launch()
            try:
                self._wait_ready()
                return self.base_url
            except PortTaken as e:
                self.stop()
                if attempt == tries:
                    raise WobbleError(str(e) + (f" ({tries} ports tried)" if tries > 1 else "")) from None
                log.warning("model %r: %s; starting it again on another port", self.key, e)
            except BaseException:
                self.stop()
                raise
        raise AssertionError("unreachable")

    def _launch(self) -> None:
        values = {"port": self.port, "host": HOST, "model": self.model, "python": sys.executable,
                  "threads": os.environ.get("OMP_NUM_THREADS") or os.cpu_count() or 1}
        self.argv = [part.format_map(values) for part in self.spec["command"]]
        env = {**os.environ, **{k: str(v) for k, v in (self.spec.get("env") or {}).items()}}
        self.log_path.parent.mkdir(parents=True, exist_ok=True)
        with open(self.log_path, "ab" if self.log_path in _LOGS_OPENED else "wb") as out:  # a re-run's job starts anew
            _LOGS_OPENED.add(self.log_path)
            out.write(f"# wobble: model {self.key!r}: {' '.join(self.argv)}\n".encode())
            out.flush()
            try:
                self.proc = subprocess.Popen(self.argv, stdin=subprocess.DEVNULL, stdout=out, stderr=subprocess.STDOUT,
                                             env=env, start_new_session=True, preexec_fn=_die_with_parent())
            except OSError as e:
                raise WobbleError(f"model {self.key!r}: cannot run the server command {self.argv[0]!r}: "
                                  f"{e.strerror or e} (is it installed on this node?)") from None
        with _LOCK:
            _RUNNING.add(self)
        log.info("model %r: server pid %d on %s:%d, log %s", self.key, self.proc.pid, HOST, self.port, self.log_path)

    def _owner(self) -> str:
        """Who listens on the port (:func:`port_owner`): ``none``, ``ours``, ``unknown``; PortTaken when another
        process does, a WobbleError when this server listens beyond loopback."""
        owner, found = port_owner(self.port, self.proc.pid)
        if owner == "other":
            raise PortTaken(f"model {self.key!r}: another process (not this job's server) listens on port "
                            f"{self.port}")
        if owner == "ours" and not all(s.loopback for s in found):
            raise WobbleError(f"model {self.key!r}: the server listens on port {self.port} beyond loopback (every "
                              f"interface, or a public address); bind it to {HOST} ('--host', '{{host}}' in its "
                              "command)")
        return owner

    def _wait_ready(self) -> None:
        t0 = time.monotonic()
        wait = 0.1
        while True:
            try:
                self.check_alive("before it answered")
            except WobbleError:
                self._owner()  # it could not bind a port another process took: PortTaken, and another port
                raise
            if self._owner() == "none":  # not listening yet: nothing on the port to ask
                served = None
            else:
                served = _served_models(f"{self.base_url}/models")
            if served is not None:
                if self.model in served:
                    log.info("model %r: server ready after %.1f s", self.key, time.monotonic() - t0)
                    return
                raise WobbleError(f"model {self.key!r}: the server answers but serves {served}, not {self.model!r} "
                                  f"(models.{self.key}.model is the name the client asks for)")
            if time.monotonic() - t0 > self.ready_timeout_s:
                raise WobbleError(f"model {self.key!r}: the server did not answer on {self.base_url}/models within "
                                  f"ready_timeout_s={self.ready_timeout_s:g}; the end of {self.log_path}: {self.tail()}")
            time.sleep(wait)
            wait = min(1.0, wait * 1.5)

    def alive(self) -> bool:
        return self.proc is not None and self.proc.poll() is None

    def check_alive(self, when: str = "while the job ran") -> None:
        """One WobbleError line (with the end of its log) if the server process has exited."""
        if self.proc is not None and self.proc.poll() is not None:
            code = self.proc.returncode
            how = f"was killed by signal {-code}" if code < 0 else f"exited with code {code}"
            raise WobbleError(f"model {self.key!r}: the server {how} {when}; the end of {self.log_path}: "
                              f"{self.tail()}")

    def stop(self) -> None:
        """SIGTERM to the server's process group, SIGKILL after ``stop_timeout_s``; waits until none of it runs."""
        proc, self.proc = self.proc, None
        with _LOCK:
            _RUNNING.discard(self)
        if proc is None:
            return
        pgid = proc.pid  # start_new_session: the server leads its own group
        for sig, wait_s in ((signal.SIGTERM, self.stop_timeout_s), (signal.SIGKILL, 10.0)):
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.killpg(pgid, sig)
            deadline = time.monotonic() + wait_s
            while time.monotonic() < deadline:
                with contextlib.suppress(subprocess.TimeoutExpired):
                    proc.wait(timeout=0.1)
                if proc.returncode is not None and not _group_alive(pgid):
                    log.info("model %r: server stopped (%s)", self.key, signal.Signals(sig).name)
                    return
        log.warning("model %r: server process group %d still runs after SIGKILL", self.key, pgid)


def _port_free(port: int) -> bool:
    with socket.socket() as s:
        return s.connect_ex((HOST, port)) != 0


def _served_models(url: str) -> list[str] | None:
    """The model ids ``GET /v1/models`` lists, or None while the server does not answer it (yet)."""
    try:
        with urllib.request.urlopen(url, timeout=2) as resp:
            answer = json.loads(resp.read())
    except (OSError, ValueError):
        return None
    data = answer.get("data") if isinstance(answer, dict) else None
    if not isinstance(data, list):
        return None
    return [str(m.get("id")) for m in data if isinstance(m, dict)]


def stop_all() -> None:
    """Stop every server this process started and has not stopped (registered with :mod:`atexit`)."""
    with _LOCK:
        running = list(_RUNNING)
    for server in running:
        server.stop()


atexit.register(stop_all)


@contextlib.contextmanager
def job_servers(job_log: str | os.PathLike | None) -> Iterator[None]:
    """The block of one job: servers started in it log beside ``job_log`` and are stopped when it ends."""
    with _LOCK:
        before = set(_RUNNING)
    _JOB_LOG.append(None if job_log is None else os.fspath(job_log))
    try:
        yield
    finally:
        _JOB_LOG.pop()
        with _LOCK:
            mine = list(_RUNNING - before)
        for server in mine:
            server.stop()
