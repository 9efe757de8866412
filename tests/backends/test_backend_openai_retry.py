"""OpenAICompatBackend against real HTTP servers on 127.0.0.1 that fail on purpose before they answer: 429 with
Retry-After (seconds, HTTP-date, retry-after-ms), 503, a body cut short, a body that is not JSON, a dropped
connection. The backend's sleep and clocks are a fake (no test sleeps for real) and its jitter a seeded RNG, so
every wait is known exactly. Also: the request cache never lets two servers share an answer."""

from __future__ import annotations

import email.utils
import json
import random
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest

from wobble.backends.base import GenParams
from wobble.backends.openai_compat import OpenAICompatBackend
from wobble.errors import WobbleError

WALL0 = 1_800_000_000.0  # the fake wall clock at its start (Unix seconds), for HTTP-date Retry-After
PARAMS = GenParams(max_new_tokens=4, temperature=0.0)


class FakeTime:
    """The backend's sleep, monotonic clock and wall clock: sleeping only moves the clocks on."""

    def __init__(self):
        self.now = 0.0
        self.sleeps: list[float] = []

    def sleep(self, seconds: float) -> None:
        self.sleeps.append(seconds)
        self.now += seconds

    def clock(self) -> float:
        return self.now

    def wall(self) -> float:
        return WALL0 + self.now


class Scripted(BaseHTTPRequestHandler):
    """Does what the server's script says for each request, in order; answers once the script has run out."""

    def log_message(self, *args):
        pass

    def _send(self, code: int, body: bytes, headers: dict | None = None, length: int | None = None) -> None:
        self.send_response(code)
        for k, v in {"Content-Type": "application/json", **(headers or {})}.items():
            self.send_header(k, v)
        self.send_header("Content-Length", str(len(body) if length is None else length))
        self.end_headers()
        self.wfile.write(body)

    def do_POST(self):  # noqa: N802 - http.server API
        body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
        srv = self.server
        with srv.lock:
            srv.seen.append({"path": self.path, "body": body})
            action = srv.script.pop(0) if srv.script else ("ok",)
        kind, *arg = action
        error = json.dumps({"error": {"message": f"scripted {kind}", "code": arg[1] if len(arg) > 1 else None}})
        answer = json.dumps({"choices": [{"text": srv.answer, "finish_reason": "length"}]}).encode()
        if kind in ("429", "503", "400"):
            headers = {"Retry-After": arg[0]} if arg and arg[0] is not None else {}
            return self._send(int(kind), error.encode(), headers)
        if kind == "429ms":
            return self._send(429, error.encode(), {"retry-after-ms": arg[0]})
        if kind == "truncated":  # announces the whole answer, sends half of it, hangs up
            return self._send(200, answer[: len(answer) // 2], length=len(answer))
        if kind == "nonjson":
            return self._send(200, b"<html><body>502 Bad Gateway</body></html>", {"Content-Type": "text/html"})
        if kind == "drop":  # no status line at all
            self.close_connection = True
            return None
        return self._send(200, answer)


@pytest.fixture
def serve():
    """``serve(script, answer)``: a fresh scripted server on 127.0.0.1 (port 0); its base URL and itself."""
    servers = []

    def start(script=(), answer="the answer"):
        srv = ThreadingHTTPServer(("127.0.0.1", 0), Scripted)
        srv.script, srv.answer, srv.seen, srv.lock = list(script), answer, [], threading.Lock()
        threading.Thread(target=srv.serve_forever, kwargs={"poll_interval": 0.02}, daemon=True).start()
        servers.append(srv)
        return f"http://127.0.0.1:{srv.server_address[1]}/v1", srv

    yield start
    for srv in servers:
        srv.shutdown()
        srv.server_close()


def backend(url, fake, **kw):
    return OpenAICompatBackend(url, "served-model", model_key="remote", progress=False, concurrency=1,
                               sleep=fake.sleep, clock=fake.clock, wall_clock=fake.wall, rng=random.Random(0), **kw)


def expected_backoffs(retries, base=1.0, cap=60.0, seed=0):
    """The waits of retries 0..retries-1 without Retry-After, as the backend draws them from Random(seed)."""
    rng = random.Random(seed)
    return [min(cap, base * 2 ** n) * (0.5 + 0.5 * rng.random()) for n in range(retries)]


def test_each_kind_of_failure_is_retried_until_the_answer(serve):
    url, srv = serve([("429", "7"), ("503",), ("truncated",), ("nonjson",), ("drop",)], answer="Paris")
    fake = FakeTime()
    t0 = time.perf_counter()
    out = backend(url, fake).generate(["Capital of France?"], PARAMS)
    assert time.perf_counter() - t0 < 5  # nothing slept for real
    assert [g.text for g in out] == ["Paris"]
    assert len(srv.seen) == 6 and all(r == srv.seen[0] for r in srv.seen)  # the same request six times
    rng = random.Random(0)
    first = 7 * (1 + 0.1 * rng.random())  # Retry-After: 7, plus up to 10 %
    rest = [min(60.0, 2.0 ** n) * (0.5 + 0.5 * rng.random()) for n in range(1, 5)]
    assert fake.sleeps == pytest.approx([first, *rest])
    assert 7 <= fake.sleeps[0] < 7.7


def test_retry_after_as_an_http_date_and_in_milliseconds(serve):
    when = email.utils.formatdate(WALL0 + 42, usegmt=True)
    url, srv = serve([("503", when), ("429ms", "1500")])
    fake = FakeTime()
    assert backend(url, fake).generate(["x"], PARAMS)[0].text == "the answer"
    assert len(srv.seen) == 3
    assert 42 <= fake.sleeps[0] < 42 * 1.1
    assert 1.5 <= fake.sleeps[1] < 1.65


def test_the_default_budget_sits_out_a_minute_of_rate_limiting(serve):
    """Seven 429s without Retry-After in a row: the default retries wait more than a minute in all, then succeed."""
    url, srv = serve([("429", None)] * 7)
    fake = FakeTime()
    assert backend(url, fake).generate(["x"], PARAMS)[0].text == "the answer"
    assert len(srv.seen) == 8
    assert fake.sleeps == pytest.approx(expected_backoffs(7))
    assert 60 < sum(fake.sleeps) < 300


def test_giving_up_is_one_line_naming_server_request_and_last_status(serve):
    url, srv = serve([("503",)] * 100)
    fake = FakeTime()
    b = backend(url, fake)
    with pytest.raises(WobbleError) as err:
        b.generate(["Which planet is largest?\nAnswer:"], PARAMS)
    msg = str(err.value)
    assert "\n" not in msg and err.value.__cause__ is None and err.value.__suppress_context__
    assert msg.startswith(f"model 'remote': {url}/completions returned HTTP 503: scripted 503; gave up after ")
    assert "retry_budget_s=300" in msg or "max_retries=12 reached" in msg
    assert "prompt 'Which planet is largest?\\nAnswer:'" in msg and "request " in msg
    key = b.request_key("completions", srv.seen[0]["body"])
    assert f"request {key[:12]}" in msg
    assert sum(fake.sleeps) <= 300 and len(srv.seen) == len(fake.sleeps) + 1 <= 13


def test_a_wait_past_the_budget_is_not_made(serve):
    url, srv = serve([("429", "3600")])
    fake = FakeTime()
    with pytest.raises(WobbleError, match=r"HTTP 429: scripted 429; gave up after 1 attempt in 0 s \(the server "
                                          r"asks to wait 3600 s and retry_budget_s=300 would be exceeded\)"):
        backend(url, fake).generate(["x"], PARAMS)
    assert fake.sleeps == [] and len(srv.seen) == 1
    # a smaller budget per model: the backoff stops earlier
    url, srv = serve([("503",)] * 100)
    fake = FakeTime()
    with pytest.raises(WobbleError, match="retry_budget_s=10 would be exceeded"):
        backend(url, fake, retry_budget_s=10).generate(["x"], PARAMS)
    assert sum(fake.sleeps) <= 10 and fake.sleeps == pytest.approx(expected_backoffs(len(fake.sleeps)))


def test_statuses_no_retry_changes_fail_at_once(serve):
    for script, status in (([("400",)], "HTTP 400: scripted 400"),
                           ([("429", "1", "insufficient_quota")], "HTTP 429: scripted 429")):
        url, srv = serve(script)
        fake = FakeTime()
        with pytest.raises(WobbleError) as err:
            backend(url, fake).generate(["x"], PARAMS)
        assert f"{url}/completions returned {status} (not retried); request " in str(err.value)
        assert fake.sleeps == [] and len(srv.seen) == 1


def test_unreachable_server_names_the_url(serve):
    url, srv = serve()
    srv.shutdown()
    srv.server_close()  # nothing listens on the port any more
    fake = FakeTime()
    with pytest.raises(WobbleError, match=rf"cannot reach {url}/completions: .*gave up after 3 attempts"):
        backend(url, fake, max_retries=2).generate(["x"], PARAMS)
    assert len(fake.sleeps) == 2


def test_concurrent_requests_retry_independently(serve):
    url, srv = serve([("429", "2")] * 3 + [("503",)] * 3)
    fake = FakeTime()
    b = backend(url, fake)
    b.concurrency = 4
    assert [g.text for g in b.generate([f"q{i}" for i in range(6)], PARAMS)] == ["the answer"] * 6
    assert len(srv.seen) == 12 and b.requests_sent == 6


# ------------------------------------------------------------------------------------ the request cache

def test_two_servers_never_share_an_answer(serve, tmp_path):
    """One model key, one cache folder, re-pointed from server A to server B: B is asked and its answer kept;
    back on A, A's own answer comes from the cache."""
    url_a, srv_a = serve(answer="from A")
    url_b, srv_b = serve(answer="from B")
    cache = tmp_path / "cache"
    fake = FakeTime()
    assert backend(url_a, fake, cache_dir=cache).generate(["q"], PARAMS)[0].text == "from A"
    on_b = backend(url_b, fake, cache_dir=cache)
    assert on_b.generate(["q"], PARAMS)[0].text == "from B"
    assert (on_b.requests_sent, on_b.cache_hits, len(srv_b.seen)) == (1, 0, 1)
    back = backend(url_a, fake, cache_dir=cache)
    assert back.generate(["q"], PARAMS)[0].text == "from A"
    assert (back.requests_sent, back.cache_hits, len(srv_a.seen)) == (0, 1, 1)
    # the same server written another way (no /v1, a trailing slash) is the same server
    same = backend(url_a.removesuffix("/v1"), fake, cache_dir=cache)
    assert same.generate(["q"], PARAMS)[0].text == "from A" and same.requests_sent == 0
    assert len(list(cache.rglob("*.json"))) == 2


def test_everything_that_changes_the_answer_changes_the_key(serve):
    url, _ = serve()
    b = backend(url, FakeTime())
    body = {"model": "served-model", "prompt": "q", "max_tokens": 4, "temperature": 0.0}
    keys = {
        b.request_key("completions", body),
        b.request_key("chat/completions", body),  # another endpoint
        b.request_key("completions", {**body, "model": "other-model"}),  # another served model
        b.request_key("completions", {**body, "temperature": 0.7}),  # another generation parameter
        b.request_key("completions", {**body, "seed": 1}),
        backend(url.replace("127.0.0.1", "localhost"), FakeTime()).request_key("completions", body),  # another URL
    }
    assert len(keys) == 6
    assert b.request_key("completions", dict(reversed(body.items()))) == b.request_key("completions", body)


def test_unreadable_cache_entry_is_asked_again(serve, tmp_path):
    url, srv = serve()
    fake = FakeTime()
    b = backend(url, fake, cache_dir=tmp_path)
    b.generate(["q"], PARAMS)
    (entry,) = tmp_path.rglob("*.json")
    entry.write_text("{truncated")
    again = backend(url, fake, cache_dir=tmp_path)
    assert again.generate(["q"], PARAMS)[0].text == "the answer"
    assert again.requests_sent == 1 and len(srv.seen) == 2 and json.loads(entry.read_text())["choices"]


def test_spec_keys_reach_the_backend(serve):
    url, _ = serve()
    spec = {"base_url": url, "model": "m", "max_retries": 3, "retry_budget_s": 45, "backoff_s": 0.25,
            "backoff_max_s": 8, "cache_dir": None}
    b = OpenAICompatBackend.from_spec("remote", spec, progress=False)
    assert (b.max_retries, b.retry_budget_s, b.backoff_s, b.backoff_max_s) == (3, 45, 0.25, 8)
    d = OpenAICompatBackend.from_spec("remote", {"base_url": url, "model": "m"}, progress=False)
    assert (d.max_retries, d.retry_budget_s, d.backoff_s, d.backoff_max_s) == (12, 300, 1, 60)
    with pytest.raises(WobbleError, match=r"'models\.remote\.base_url': an http:// or https:// URL"):
        OpenAICompatBackend.from_spec("remote", {"base_url": "localhost:8000", "model": "m"})
