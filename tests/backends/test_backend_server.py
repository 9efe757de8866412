"""Model servers the workflow manages (wobble.backends.server): a ``server:`` block's command is started by the job,
waited for, talked to and stopped with its whole process group, also when the job fails. The server here is a
small OpenAI-compatible HTTP server in a subprocess (with a worker process of its own); the llama.cpp server
through a study is in test_backend_server_e2e.py."""

from __future__ import annotations

import os
import http.server
import json
import re
import socket
import sys
import threading
import time
from pathlib import Path
from types import SimpleNamespace

import pytest

from wobble.backends import GenParams, backend_from_spec, load_backend
from wobble.backends.managed import ManagedServerBackend
from wobble.backends import server as server_module
from wobble.backends.ports import _loopback, port_owner
from wobble.backends.server import _RUNNING, _group_alive, job_servers
from wobble.errors import ConfigError, WobbleError
from wobble.models.materialize import materialize
from wobble.models.server_spec import check_server_spec, secret_argument
from wobble.paths import gpus_for_inputs
from wobble.snake import logged
from wobble.studies.followup import layout as followup_layout

KEY = "fake-srv"
FAKE_SERVER = r'''
import http.server, json, os, signal, subprocess, sys
port, model = int(sys.argv[1]), sys.argv[2]
if os.environ.get("FAKE_IGNORE_TERM"):
    signal.signal(signal.SIGTERM, signal.SIG_IGN)
worker = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(600)"])  # in the server's process group
print("fake server: worker", worker.pid, flush=True)

class Handler(http.server.BaseHTTPRequestHandler):
    def answer(self, obj):
        body = json.dumps(obj).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def do_GET(self):
        if self.path != "/v1/models":
            return self.send_error(404)
        self.answer({"object": "list", "data": [{"id": model}]})

    def do_POST(self):
        request = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
        if os.environ.get("FAKE_DIE_ON_POST"):
            os._exit(7)
        text = "echo:" + request["messages"][-1]["content"]
        self.answer({"choices": [{"message": {"role": "assistant", "content": text}, "finish_reason": "stop"}]})

    def log_message(self, fmt, *args):
        print("fake server:", fmt % args, flush=True)

http.server.ThreadingHTTPServer((os.environ.get("FAKE_HOST", "127.0.0.1"), port), Handler).serve_forever()
'''
CHAT = [{"role": "user", "content": "hi"}]
PARAMS = GenParams(max_new_tokens=2)


@pytest.fixture
def fake(tmp_path, monkeypatch):
    """A ``source: openai`` spec whose server block runs the fake server; the test runs in ``tmp_path``."""
    monkeypatch.chdir(tmp_path)
    script = tmp_path / "fake_server.py"
    script.write_text(FAKE_SERVER)

    def spec(**server):
        block = {"command": ["{python}", str(script), "{port}", "{model}"], "stop_timeout_s": 5, **server}
        return {"source": "openai", "kind": "causal", "model": "served-name", "max_retries": 3,
                "cache_dir": str(tmp_path / "cache"), "server": block}

    return spec


def port_free(port: int) -> bool:
    with socket.socket() as s:
        return s.connect_ex(("127.0.0.1", port)) != 0


def job(log: Path) -> SimpleNamespace:
    """A stand-in for a script job's ``snakemake`` object."""
    return SimpleNamespace(log=[str(log)], threads=1)


def test_the_job_starts_the_server_talks_to_it_and_stops_it(fake, tmp_path):
    job_log = tmp_path / "logs" / "study" / "infer_x.log"
    job_log.parent.mkdir(parents=True)
    with logged(job(job_log)):
        b = backend_from_spec(KEY, fake())
        assert isinstance(b, ManagedServerBackend) and b.server.alive()
        pgid, port = b.server.proc.pid, b.server.port
        assert os.getpgid(pgid) == pgid != os.getpgid(0)  # its own process group
        assert b.base_url == f"http://127.0.0.1:{port}/v1"
        assert [g.text for g in b.generate([CHAT], PARAMS)] == ["echo:hi"]
    # the job's block is over: the server and its worker are gone, the port is free, the log stays beside the job's
    assert not _group_alive(pgid) and port_free(port) and not _RUNNING
    server_log = tmp_path / "logs" / "study" / "infer_x.fake-srv.server.log"
    text = server_log.read_text()
    assert text.startswith(f"# wobble: model 'fake-srv': {sys.executable} ") and "fake server: worker" in text
    assert '"POST /v1/chat/completions HTTP/1.1" 200' in text
    assert "server ready after" in job_log.read_text() and "server stopped (SIGTERM)" in job_log.read_text()

    # a second job on another port is answered from the request cache: its key is the server's command, not its URL
    with logged(job(tmp_path / "logs" / "study" / "infer_y.log")):
        again = backend_from_spec(KEY, fake())
        assert [g.text for g in again.generate([CHAT], PARAMS)] == ["echo:hi"]
        assert (again.requests_sent, again.cache_hits) == (0, 1)
    assert not _RUNNING


def test_the_server_stops_when_the_job_fails(fake, tmp_path):
    with pytest.raises(RuntimeError, match="the study failed"):
        with logged(job(tmp_path / "job.log")):
            b = backend_from_spec(KEY, fake())
            pgid = b.server.proc.pid
            raise RuntimeError("the study failed")
    assert not _group_alive(pgid) and not _RUNNING


def test_materialized_server_model(fake, tmp_path):
    spec = fake()
    manifest = materialize(KEY, spec, tmp_path / "models" / KEY)
    assert manifest["origin"] == {"server": spec["server"]["command"], "model": "served-name"}
    assert manifest["weights_sha256"] is None
    with job_servers(None):
        b = load_backend(tmp_path / "models" / KEY, KEY, progress=False)
        assert b.generate([CHAT], PARAMS)[0].text == "echo:hi"
        assert b.server.log_path == Path("logs/servers/fake-srv.server.log")
    assert not _RUNNING


def test_a_server_ignoring_sigterm_is_killed(fake):
    b = backend_from_spec(KEY, fake(env={"FAKE_IGNORE_TERM": "1"}, stop_timeout_s=0.5))
    pgid = b.server.proc.pid
    t0 = time.monotonic()
    b.close()
    assert not _group_alive(pgid) and time.monotonic() - t0 < 10
    assert b.server.proc is None and not _RUNNING


def test_a_server_exiting_before_it_answers_is_one_line_with_its_log(fake):
    spec = fake(command=["{python}", "-c", "import sys; print('cannot load the weights'); sys.exit(3)", "{port}"])
    with pytest.raises(WobbleError, match=r"'fake-srv': the server exited with code 3 before it answered; the end "
                                          r"of logs/servers/fake-srv.server.log: # wobble: .* \| cannot load the "
                                          r"weights$"):
        backend_from_spec(KEY, spec)
    assert not _RUNNING


def test_a_server_that_never_answers_times_out_and_is_stopped(fake):
    spec = fake(command=["{python}", "-c", "import time; print('loading', flush=True); time.sleep(600)", "{port}"],
                ready_timeout_s=1)
    with pytest.raises(WobbleError, match=r"did not answer on http://127.0.0.1:\d+/v1/models within "
                                          r"ready_timeout_s=1; .*\| loading$"):
        backend_from_spec(KEY, spec)
    assert not _RUNNING


def test_a_server_serving_another_name_is_refused(fake, tmp_path):
    spec = fake(command=["{python}", str(tmp_path / "fake_server.py"), "{port}", "other-name"])
    with pytest.raises(WobbleError, match=r"serves \['other-name'\], not 'served-name' \(models.fake-srv.model"):
        backend_from_spec(KEY, spec)
    assert not _RUNNING


def test_a_missing_server_command_is_one_line(fake):
    with pytest.raises(WobbleError, match=r"cannot run the server command 'wobble-no-such-server': .* \(is it "
                                          r"installed on this node\?\)"):
        backend_from_spec(KEY, fake(command=["wobble-no-such-server", "--port", "{port}"]))


def test_a_server_dying_mid_job_fails_the_request_at_once(fake):
    b = backend_from_spec(KEY, fake(env={"FAKE_DIE_ON_POST": "1"}))
    t0 = time.monotonic()
    with pytest.raises(WobbleError, match=r"the server exited with code 7 while the job ran; the end of"):
        b.generate([CHAT], PARAMS)
    assert time.monotonic() - t0 < 10  # not after the client's retries
    b.close()
    assert not _RUNNING


def test_a_fixed_port_in_use_is_refused(fake):
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        s.listen()
        with pytest.raises(WobbleError, match=rf"server port {s.getsockname()[1]} is in use"):
            backend_from_spec(KEY, fake(port=s.getsockname()[1]))


@pytest.mark.parametrize("change,where,what", [
    ({"command": ["srv", "--port", "{port}", "--gpu", "{gpu}"]}, "models.k.server.command[4]",
     "known placeholders {port}, {host}, {model}, {python}, {threads}, got {gpu}"),
    ({"command": ["srv", "--port", "{port"]}, "models.k.server.command[2]", "a template"),
    ({"command": ["srv", "--port", "8000"]}, "models.k.server.command", "a {port} placeholder with port: auto"),
    ({"env": {"HF_TOKEN": "hf_x"}}, "models.k.server.env.HF_TOKEN", "no secret in the config"),
])
def test_bad_server_blocks(change, where, what):
    spec = {"model": "m", "server": {"command": ["srv", "--port", "{port}"], **change}}
    with pytest.raises(ConfigError, match="^" + re.escape(f"config error at '{where}': {what}")):
        check_server_spec("k", spec)
    check_server_spec("k", {"model": "m", "server": {"command": ["srv", "--port", "8000"], "port": 8000}})
    with pytest.raises(ConfigError, match="models.k.base_url"):
        check_server_spec("k", {"model": "m", "base_url": "http://x:1/v1", "server": {"command": ["s", "{port}"]}})


def test_a_managed_server_books_its_gpus():
    config = {"models": {"vllm": {"source": "openai", "server": {"command": ["vllm"], "gpus": 4}},
                         "api": {"source": "openai", "base_url": "http://x/v1"},
                         "llamacpp": {"source": "openai", "server": {"command": ["llama-server"], "gpus": 0}},
                         "hub": {"source": "hub"}}}
    assert gpus_for_inputs(config, ["resources/models/vllm", "data/x.jsonl"]) == 4
    assert gpus_for_inputs(config, ["resources/models/api"]) == 0
    assert gpus_for_inputs(config, ["resources/models/llamacpp"]) == 0
    assert gpus_for_inputs(config, ["resources/models/hub", "resources/models/api"]) == 1
    # a study whose jobs call a base_url server without a model directory still books the managed server's GPUs
    for key, gpus in (("vllm", 4), ("api", 0)):
        inputs = followup_layout.infer_inputs(config, key, "multiarith", "direct_LA_none")
        paths = [p for v in inputs.values() for p in ([v] if isinstance(v, str) else v)]
        assert gpus_for_inputs(config, paths) == gpus


# ---------------------------------------------------------------------------------------------- its own server


@pytest.fixture
def squatter():
    """Another process's server on a loopback port (here: a thread of the test process, outside the server's
    process group) that lists the served model and answers every request with "hijacked"."""

    class Handler(http.server.BaseHTTPRequestHandler):
        def answer(self, obj):
            body = json.dumps(obj).encode()
            self.send_response(200)
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def do_GET(self):
            self.answer({"data": [{"id": "served-name"}]})

        def do_POST(self):
            self.rfile.read(int(self.headers["Content-Length"]))
            self.answer({"choices": [{"message": {"role": "assistant", "content": "hijacked"},
                                      "finish_reason": "stop"}]})

        def log_message(self, *args):
            pass

    httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    threading.Thread(target=httpd.serve_forever, daemon=True).start()
    yield httpd.server_address[1]
    httpd.shutdown()
    httpd.server_close()


def test_a_port_another_process_takes_first_is_retried_on_another(fake, squatter, monkeypatch, tmp_path):
    """The port chosen for the server is taken before the server binds it: the server cannot bind, the job sees
    another process on the port, and starts the server again on another port; it never talks to the squatter."""
    ports = iter([squatter])
    monkeypatch.setattr(server_module, "free_port", lambda: next(ports, None) or socket_free_port())
    with logged(job(tmp_path / "job.log")):
        b = backend_from_spec(KEY, fake())
        assert b.server.port != squatter
        assert [g.text for g in b.generate([CHAT], PARAMS)] == ["echo:hi"]
    assert f"another process (not this job's server) listens on port {squatter}; starting it again on another " \
           "port" in (tmp_path / "job.log").read_text()
    assert not _RUNNING


def test_a_listener_that_is_not_the_jobs_own_server_is_never_trusted(fake, squatter, monkeypatch):
    """Someone else listens on the server's port and lists the model; the job's server never binds: the job refuses
    it (readiness once trusted any process listing the model name)."""
    monkeypatch.setattr(server_module, "free_port", lambda: squatter)
    spec = fake(command=["{python}", "-c", "import time; time.sleep(600)", "{port}"], ready_timeout_s=20)
    with pytest.raises(WobbleError, match=rf"^model 'fake-srv': another process \(not this job's server\) listens on "
                                          rf"port {squatter} \(3 ports tried\)$"):
        backend_from_spec(KEY, spec)
    assert not _RUNNING


def test_a_server_on_every_interface_is_refused(fake):
    with pytest.raises(WobbleError, match=r"listens on port \d+ beyond loopback .* bind it to 127.0.0.1"):
        backend_from_spec(KEY, fake(env={"FAKE_HOST": "0.0.0.0"}))
    assert not _RUNNING


def test_the_port_owner_is_read_from_proc(squatter):
    if not Path("/proc/net/tcp").is_file():
        pytest.skip("no /proc/net/tcp (not Linux)")
    owner, found = port_owner(squatter, os.getpgid(0))
    assert owner == "ours" and found and all(s.loopback for s in found)  # the test process's own thread
    assert port_owner(squatter, os.getpgid(0) + 10**6)[0] == "other"
    assert port_owner(socket_free_port(), os.getpgid(0))[0] == "none"
    assert _loopback("0100007F") and _loopback("0101007F") and not _loopback("00000000")
    assert _loopback("00000000000000000000000001000000") and not _loopback("0" * 32)
    assert _loopback("0000000000000000FFFF00000100007F")


def socket_free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.mark.parametrize("command,where", [
    (["srv", "--api-key", "abc123"], 2),
    (["srv", "--api-key=abc123", "--port", "{port}"], 1),
    (["srv", "--hf_token", "x"], 2),
    (["srv", "--port", "{port}", "--auth", "sk-proj-0123456789abcdefABCDEF"], 4),
    (["srv", "hf_0123456789abcdefABCDEF"], 1),
])
def test_a_secret_in_the_server_command_is_refused(command, where):
    command = command if "{port}" in command else [*command, "--port", "{port}"]
    with pytest.raises(ConfigError, match="^" + re.escape(f"config error at 'models.k.server.command[{where}]': "
                                                          "no secret in a server command")):
        check_server_spec("k", {"model": "m", "server": {"command": command}})


def test_options_that_only_look_like_secrets_are_kept():
    command = ["vllm", "serve", "m", "--tokenizer", "t", "--max-num-batched-tokens", "8192", "--ssl-keyfile",
               "k.pem", "--kv-cache-dtype", "fp8", "--port", "{port}", "--host", "{host}"]
    assert secret_argument(command) is None
    check_server_spec("k", {"model": "m", "server": {"command": command}})
