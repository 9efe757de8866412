"""OpenAICompatBackend against a tiny local http.server returning canned OpenAI-shaped JSON.

This tests our request building and response parsing, not any real server.
"""

from __future__ import annotations

import json
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest

from wobble.backends import backend_from_spec
from wobble.backends.base import Backend, GenParams, render_chat_fallback
from wobble.backends.openai_compat import OpenAICompatBackend, match_candidate, normalize_base_url
from wobble.errors import WobbleError
from wobble.io import dumps_canonical

TOP = {"A": -0.5, " B": -1.25, "Par": -2.0, "P": -3.0}


def fake_tokens(text: str) -> list[str]:
    """The fake server's tokenizer: chunks of 3 characters."""
    return [text[i:i + 3] for i in range(0, len(text), 3)]


class Handler(BaseHTTPRequestHandler):
    requests: list = []
    seen: dict = {}

    def log_message(self, *args):  # keep pytest output clean
        pass

    def reply(self, code: int, obj) -> None:
        data = json.dumps(obj).encode()
        self.send_response(code)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def do_POST(self):  # noqa: N802 - http.server API
        body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
        Handler.requests.append({"path": self.path, "body": body, "auth": self.headers.get("Authorization")})
        model = body.get("model")
        if model == "broken":
            return self.reply(500, {"error": {"message": "internal trouble"}})
        if model == "flaky":  # every request fails once with 503, then succeeds
            key = json.dumps(body, sort_keys=True)
            Handler.seen[key] = Handler.seen.get(key, 0) + 1
            if Handler.seen[key] == 1:
                return self.reply(503, {"error": {"message": "busy"}})
        if self.path == "/v1/chat/completions":
            if body.get("top_logprobs"):
                top = [{"token": t, "logprob": v} for t, v in TOP.items()]
                return self.reply(200, {"choices": [{"message": {"content": "A"}, "finish_reason": "length",
                                                     "logprobs": {"content": [{"token": "A", "logprob": -0.5,
                                                                               "top_logprobs": top}]}}]})
            choice = {"message": {"role": "assistant", "content": "Paris. Next question"}, "finish_reason": "stop"}
            if body.get("logprobs"):
                choice["logprobs"] = {"content": [{"token": "Paris", "logprob": -0.1}, {"token": ".", "logprob": -0.2}]}
            return self.reply(200, {"choices": [choice]})
        if self.path == "/v1/completions":
            if body.get("echo"):
                if model == "no-echo":
                    return self.reply(400, {"error": {"message": "echo is not supported with logprobs"}})
                if model == "silent-echo":  # ignores echo, returns only the generated token
                    return self.reply(200, {"choices": [{"text": "X", "logprobs": {
                        "tokens": ["X"], "token_logprobs": [-9.0], "text_offset": [len(body["prompt"])]}}]})
                toks = fake_tokens(body["prompt"]) + ["X"]
                lps = [None] + [-(i + 1) / 10 for i in range(1, len(toks))]
                offs = [3 * i for i in range(len(toks) - 1)] + [len(body["prompt"])]
                return self.reply(200, {"choices": [{"text": body["prompt"] + "X", "finish_reason": "length",
                                                     "logprobs": {"tokens": toks, "token_logprobs": lps,
                                                                  "text_offset": offs}}]})
            if body.get("max_tokens") == 1 and body.get("logprobs"):
                return self.reply(200, {"choices": [{"text": "A", "logprobs": {
                    "tokens": ["A"], "token_logprobs": [-0.5], "top_logprobs": [TOP]}}]})
            choice = {"text": " world!\nQ: next", "finish_reason": "length"}
            if body.get("logprobs"):
                choice["logprobs"] = {"tokens": [" world", "!"], "token_logprobs": [-0.3, -0.4]}
            return self.reply(200, {"choices": [choice]})
        return self.reply(404, {"error": {"message": f"no route {self.path}"}})


@pytest.fixture(scope="module")
def server():
    srv = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    thread = threading.Thread(target=srv.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{srv.server_address[1]}"
    srv.shutdown()
    srv.server_close()


@pytest.fixture(autouse=True)
def clear_requests():
    Handler.requests.clear()
    Handler.seen.clear()


def make(server, model="m", **kw):
    return OpenAICompatBackend(server + "/v1", model, model_key="remote", progress=False, max_retries=0, **kw)


CHAT = [{"role": "user", "content": "Capital of France?"}]


def test_is_a_backend(server):
    assert isinstance(make(server), Backend)


def test_base_url_normalization():
    assert normalize_base_url("http://h:8000") == "http://h:8000/v1"
    assert normalize_base_url("http://h:8000/") == "http://h:8000/v1"
    assert normalize_base_url("https://api.example.com/v1/") == "https://api.example.com/v1"
    assert normalize_base_url("https://example.com/openai/v2") == "https://example.com/openai/v2"


def test_generate_text_completions(server, monkeypatch):
    monkeypatch.setenv("WOBBLE_TEST_KEY", "sk-test")
    b = make(server, api_key_env="WOBBLE_TEST_KEY")
    params = GenParams(max_new_tokens=5, temperature=0.7, top_p=0.9, seed=11, stop=("\nQ:",), return_logprobs=True)
    g = b.generate(["Hello", "Bye"], params)
    assert [x.text for x in g] == [" world!", " world!"]
    assert g[0].finish_reason == "stop" and g[0].rendered_prompt == "Hello"
    assert g[0].tokens == [" world", "!"] and g[0].token_logprobs == [-0.3, -0.4]
    reqs = sorted(Handler.requests, key=lambda r: r["body"]["prompt"])
    assert [r["path"] for r in reqs] == ["/v1/completions"] * 2
    body = reqs[1]["body"]
    assert body == {"model": "m", "prompt": "Hello", "max_tokens": 5, "temperature": 0.7, "top_p": 0.9, "seed": 11,
                    "stop": ["\nQ:"], "logprobs": 1}
    assert reqs[0]["auth"] == "Bearer sk-test"


def test_generate_chat(server):
    g = make(server).generate([CHAT], GenParams(max_new_tokens=8, return_logprobs=True))[0]
    req = Handler.requests[0]
    assert req["path"] == "/v1/chat/completions" and req["body"]["messages"] == CHAT
    assert req["body"]["logprobs"] is True and req["auth"] is None
    assert g.text == "Paris. Next question" and g.finish_reason == "stop"
    assert g.rendered_prompt == dumps_canonical(CHAT)
    assert g.tokens == ["Paris", "."] and g.token_logprobs == [-0.1, -0.2]
    g2 = make(server).generate([CHAT], GenParams(stop=(".",)))[0]
    assert g2.text == "Paris" and g2.tokens == []


def test_chat_via_completions_mode(server):
    g = make(server, chat="completions").generate([CHAT], GenParams())[0]
    rendered = render_chat_fallback(CHAT)
    assert Handler.requests[0]["path"] == "/v1/completions"
    assert Handler.requests[0]["body"]["prompt"] == rendered == g.rendered_prompt


@pytest.mark.parametrize("prompt", ["Answer:", CHAT])
def test_next_token_logprobs(server, prompt):
    out = make(server).next_token_logprobs([prompt, prompt], ["A", " B", "Paris"])
    assert len(out) == 2
    row = out[0]
    assert row["A"] == -0.5 and row[" B"] == -1.25
    assert row["Paris"] == -2.0  # longest returned token that prefixes the candidate ("Par", not "P")
    body = Handler.requests[0]["body"]
    assert body["max_tokens"] == 1 and body["temperature"] == 0
    if isinstance(prompt, str):
        assert body["logprobs"] == 20
    else:
        assert body["logprobs"] is True and body["top_logprobs"] == 20


def test_candidate_outside_top_k_is_an_error(server):
    """No made-up value: a candidate the server did not return has an unknown log-prob."""
    with pytest.raises(WobbleError) as err:
        make(server, top_logprobs=4).next_token_logprobs(["Answer:"], ["A", "Q", "Z"])
    msg = str(err.value)
    assert "'remote'" in msg and "['Q', 'Z']" in msg and "top_logprobs=4" in msg and "models.remote.top_logprobs" in msg


def test_match_candidate():
    assert match_candidate("A", {" A": -1.0}) is None
    assert match_candidate("AB", {"A": -1.0, "AB": -2.0}) == -2.0
    assert match_candidate("Paris", {"P": -3.0, "Par": -2.0, "Pa": -1.0}) == -2.0


def test_chat_template_flag(server):
    assert make(server).has_chat_template  # the server applies its own template
    assert not make(server, chat="completions").has_chat_template  # the plain fallback rendering


def test_continuation_logprobs_echo(server):
    prompt, cont = "The answer is", " forty-two"
    out = make(server).continuation_logprobs([prompt, "abc"], [cont, ""])
    full = prompt + cont
    toks = fake_tokens(full)
    expected = [-(i + 1) / 10 for i, t in enumerate(toks) if 3 * i + len(t) > len(prompt)]
    assert out[0] == pytest.approx(expected)
    assert out[1] == []
    body = Handler.requests[0]["body"]
    assert body["prompt"] == full and body["echo"] is True and body["logprobs"] == 1 and body["max_tokens"] == 1
    assert len(Handler.requests) == 1  # empty continuation: no request


def test_continuation_errors(server):
    with pytest.raises(WobbleError, match="rejected echo=True"):
        make(server, model="no-echo").continuation_logprobs(["p"], ["c"])
    with pytest.raises(WobbleError, match="does not support echo=True"):
        make(server, model="silent-echo").continuation_logprobs(["p"], ["c"])
    with pytest.raises(WobbleError, match="chat: completions"):
        make(server).continuation_logprobs([CHAT], [" Paris"])
    assert make(server, chat="completions").continuation_logprobs([CHAT], [" Paris"])[0]


def test_http_errors(server, monkeypatch):
    with pytest.raises(WobbleError, match=r"'remote'.*HTTP 500: internal trouble"):
        make(server, model="broken").generate(["x"], GenParams())
    with pytest.raises(WobbleError, match="cannot reach"):
        OpenAICompatBackend("http://127.0.0.1:9/v1", "m", progress=False, max_retries=0,
                            timeout_s=2).generate(["x"], GenParams())
    monkeypatch.delenv("WOBBLE_MISSING_KEY", raising=False)
    with pytest.raises(WobbleError, match="WOBBLE_MISSING_KEY"):
        make(server, api_key_env="WOBBLE_MISSING_KEY")


def test_backend_from_spec(server, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)  # the default request cache is relative to the workflow root
    spec = {"source": "openai", "base_url": server, "model": "m", "chat": "completions", "top_logprobs": 5}
    b = backend_from_spec("remote-model", spec)
    assert b.cache_dir == "resources/cache/openai/remote-model"
    assert backend_from_spec("remote-model", {**spec, "cache_dir": None}).cache_dir is None
    assert isinstance(b, OpenAICompatBackend) and b.model_key == "remote-model"
    assert b.base_url == server + "/v1" and b.top_logprobs == 5
    b.progress = False
    assert b.generate(["hi"], GenParams())[0].text == " world!\nQ: next"


PROMPTS = ["one", "two", "three", "four"]


def test_request_cache_asks_nothing_twice(server, tmp_path, monkeypatch):
    """A re-run re-asks nothing; a run killed half-way resumes with the half it got (server requests counted)."""
    monkeypatch.setenv("WOBBLE_TEST_KEY", "sk-secret-123")
    cache = tmp_path / "cache"
    params = GenParams(max_new_tokens=5, temperature=0.7, seed=3)
    first = make(server, cache_dir=cache, api_key_env="WOBBLE_TEST_KEY")
    half = first.generate(PROMPTS[:2], params)  # the run is killed after two answers
    assert (first.requests_sent, len(Handler.requests)) == (2, 2)
    resumed = make(server, cache_dir=cache, api_key_env="WOBBLE_TEST_KEY")
    full = resumed.generate(PROMPTS, params)
    assert (resumed.requests_sent, resumed.cache_hits, len(Handler.requests)) == (2, 2, 4)
    assert [g.text for g in full[:2]] == [g.text for g in half]
    again = make(server, cache_dir=cache, api_key_env="WOBBLE_TEST_KEY")
    assert [g.text for g in again.generate(PROMPTS, params)] == [g.text for g in full]
    assert (again.requests_sent, len(Handler.requests)) == (0, 4)  # nothing asked twice
    # another request (other seed) is another cache entry
    make(server, cache_dir=cache).generate(PROMPTS[:1], GenParams(max_new_tokens=5, temperature=0.7, seed=4))
    assert len(Handler.requests) == 5
    files = sorted(cache.rglob("*"))
    assert sum(f.suffix == ".json" for f in files) == 5 and not any(f.name.endswith(".tmp") for f in files)
    assert all("sk-secret-123" not in f.read_text() for f in files if f.is_file())  # never the API key


def test_retries_with_backoff_on_5xx(server):
    """One 503 per request, then the answer: one jittered backoff wait each (the sleep is injected; see
    test_backend_openai_retry.py for every kind of failure)."""
    waits = []
    b = OpenAICompatBackend(server + "/v1", "flaky", model_key="remote", progress=False, max_retries=2, concurrency=1,
                            sleep=waits.append)
    assert [g.text for g in b.generate(["x", "y"], GenParams(max_new_tokens=3))] == [" world!\nQ: next"] * 2
    assert len(Handler.requests) == 4 and len(waits) == 2 and all(0.5 <= w < 1.0 for w in waits)
    with pytest.raises(WobbleError, match="HTTP 503: busy"):
        Handler.seen.clear()
        OpenAICompatBackend(server + "/v1", "flaky", model_key="remote", progress=False,
                            max_retries=0).generate(["z"], GenParams(max_new_tokens=3))
