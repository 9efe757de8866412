"""The ``openai`` backend: any OpenAI-compatible HTTP server (llama.cpp server, vLLM, hosted APIs).

Plain ``urllib`` + ``json``; no client library. Config spec (``models.<key>``)::

    {source: openai, base_url: http://localhost:8000/v1, model: NAME, api_key_env: OPENAI_API_KEY,
     chat: chat|completions, top_logprobs: 20, timeout_s: 120, concurrency: 4, max_retries: 12,
     retry_budget_s: 300, backoff_s: 1, backoff_max_s: 60}

``base_url`` follows the OpenAI SDK convention (it includes ``/v1``; a bare ``http://host:port`` gets
``/v1`` appended). The API key is read from the environment variable named by ``api_key_env`` (never
from the config itself); no variable means no ``Authorization`` header (local servers).

Methods:

* ``generate``: chat-message prompts go to ``/chat/completions`` (``chat: chat``, the default) and text
  prompts to ``/completions``. With ``chat: completions`` chat messages are rendered locally with
  :func:`~wobble.backends.base.render_chat_fallback` and sent to ``/completions`` instead. For a
  ``/chat/completions`` request the server applies its own chat template, which the client cannot see:
  ``Generation.rendered_prompt`` is then the canonical JSON of the messages. Temperature, top_p, seed,
  stop and max_tokens are passed through; stop strings are also applied client-side (text cut before
  the first stop string). ``return_logprobs`` asks for the sampled tokens' log-probs.
* ``next_token_logprobs``: one request per prompt with ``max_tokens=1``, ``temperature=0`` and the top
  ``top_logprobs`` alternatives of the first generated token. The client has no tokenizer, so a
  candidate is matched to a returned token by (1) exact string equality, else (2) the longest
  returned token that is a non-empty prefix of the candidate (the candidate's likely first token).
  **A candidate matching none of the top-k tokens is an error** naming the prompt, the candidates
  and k: its log-prob is unknown (only bounded by the k-th), and no value is made up. Raise
  ``top_logprobs`` (llama.cpp's server returns any k up to the vocabulary size, which makes the
  answer exact; OpenAI's API caps k at 20, vLLM at its ``--max-logprobs``).
* ``continuation_logprobs``: ``/completions`` with ``prompt = prompt + continuation``, ``echo=True``,
  ``logprobs=1``, ``max_tokens=1``; the server tokenizes the joint string, and every echoed token that
  ends after the prompt's last character is a continuation token (a token straddling the boundary
  counts as continuation). Servers without echo support (many hosted chat-only APIs, llama.cpp) raise
  a :class:`WobbleError` saying so. Chat prompts need ``chat: completions`` here (the server's chat
  template is unknown to the client).

Requests are sent ``concurrency`` at a time, each with the retries of :mod:`wobble.backends.http_retry` (an
HTTP 408/429/5xx, a connection error, a cut-short or non-JSON answer; ``Retry-After`` honoured, jittered
backoff, given up after ``max_retries`` or ``retry_budget_s``, the failure one line naming the request).

**Request cache.** Every successful answer is kept on disk under ``cache_dir`` (spec key; default
``resources/cache/openai/<model key>``, ``null`` = off), one JSON file per exact request: the sha256 of
the normalized ``base_url``, the endpoint and the canonical JSON body (served model name, generation
parameters, ``extra_body``; never the API key). Whatever changes the answer changes the key, so a model
key re-pointed at another server, another served model or other parameters never replays an old answer.
A request already answered is not sent again: a re-run re-asks nothing, and a run killed half-way
resumes with what it already got (files are written to a temporary name and renamed, so a kill leaves
no half answer; an unreadable entry counts as absent). ``requests_sent`` / ``cache_hits`` count both
kinds (tests use them).

``has_chat_template``: True with ``chat: chat`` (the server renders chat messages with its own
template, unseen by the client), False with ``chat: completions`` (the plain fallback rendering).
"""

from __future__ import annotations

import hashlib
import json
import os
import random
import sys
import threading
import time
import urllib.parse
from concurrent.futures import ThreadPoolExecutor
from typing import Any, Callable, Mapping, Sequence

from tqdm.auto import tqdm

from wobble.backends.base import Generation, GenParams, Prompt, render_chat_fallback
from wobble.backends.http_retry import (
    BACKOFF_MAX_S, BACKOFF_S, MAX_RETRIES, RETRY_BUDGET_S, RETRY_STATUS, HTTPStatusError, RetryingPost)
from wobble.backends.sampling import stop_cut
from wobble.errors import ConfigError, WobbleError
from wobble.io import dumps_canonical
from wobble.backends.openai_responses import (  # noqa: F401  (match_candidate: re-exported)
    echo_continuation, first_top_logprobs, match_candidate, sampled_logprobs)

CHAT_MODES = ("chat", "completions")


def normalize_base_url(base_url: str) -> str:
    url = base_url.rstrip("/")
    if urllib.parse.urlparse(url).path in ("", "/"):
        url += "/v1"
    return url


class OpenAICompatBackend(RetryingPost):
    """Backend over an OpenAI-compatible server; implements :class:`wobble.backends.base.Backend`."""

    # A server's top-k log-probs need not contain every candidate: first-token answers come from a
    # separate next_token_logprobs call.
    supports_first_token_logprobs = False

    def __init__(self, base_url: str, model: str, model_key: str | None = None, api_key: str | None = None,
                 api_key_env: str | None = None, chat: str = "chat", top_logprobs: int = 20,
                 timeout_s: float = 120.0, concurrency: int = 4, max_retries: int = MAX_RETRIES, progress: bool = True,
                 extra_body: Mapping[str, Any] | None = None, cache_dir: str | os.PathLike | None = None,
                 retry_budget_s: float = RETRY_BUDGET_S, backoff_s: float = BACKOFF_S,
                 backoff_max_s: float = BACKOFF_MAX_S, sleep: Callable[[float], None] = time.sleep,
                 clock: Callable[[], float] = time.monotonic, wall_clock: Callable[[], float] = time.time,
                 rng: random.Random | None = None):
        if chat not in CHAT_MODES:
            raise ConfigError(f"models.{model_key}.chat", f"one of {', '.join(CHAT_MODES)}, got {chat!r}")
        self.base_url = normalize_base_url(base_url)
        parts = urllib.parse.urlparse(self.base_url)
        if parts.scheme not in ("http", "https") or not parts.netloc:
            raise ConfigError(f"models.{model_key}.base_url", f"an http:// or https:// URL, got {base_url!r}")
        self.model = model
        self.model_key = model_key or model
        if api_key is None and api_key_env:
            api_key = os.environ.get(api_key_env)
            if not api_key:
                raise WobbleError(f"model {self.model_key!r}: environment variable {api_key_env} (api_key_env) "
                                  f"is not set")
        self._api_key = api_key
        self.chat = chat
        self.top_logprobs = int(top_logprobs)
        self.timeout_s = float(timeout_s)
        self.concurrency = max(1, int(concurrency))
        self.max_retries = int(max_retries)
        self.retry_budget_s = float(retry_budget_s)
        self.backoff_s = float(backoff_s)
        self.backoff_max_s = float(backoff_max_s)
        self._sleep, self._clock, self._wall_clock = sleep, clock, wall_clock
        self._rng = rng if rng is not None else random.Random()
        self.progress = progress
        self.extra_body = dict(extra_body or {})
        self.cache_dir = None if cache_dir is None else os.fspath(cache_dir)
        self._lock = threading.Lock()
        self.requests_sent = 0
        self.cache_hits = 0

    @property
    def has_chat_template(self) -> bool:
        return self.chat == "chat"

    @classmethod
    def from_spec(cls, model_key: str, spec: Mapping[str, Any], progress: bool = True) -> "OpenAICompatBackend":
        for k in ("base_url", "model"):
            if not spec.get(k):
                raise ConfigError(f"models.{model_key}.{k}", "required for source: openai")
        return cls(spec["base_url"], spec["model"], model_key=model_key, api_key_env=spec.get("api_key_env"),
                   chat=spec.get("chat", "chat"), top_logprobs=spec.get("top_logprobs", 20),
                   timeout_s=spec.get("timeout_s", 120), concurrency=spec.get("concurrency", 4),
                   max_retries=spec.get("max_retries", MAX_RETRIES), extra_body=spec.get("extra_body"),
                   progress=progress, cache_dir=spec.get("cache_dir", f"resources/cache/openai/{model_key}"),
                   retry_budget_s=spec.get("retry_budget_s", RETRY_BUDGET_S),
                   backoff_s=spec.get("backoff_s", BACKOFF_S), backoff_max_s=spec.get("backoff_max_s", BACKOFF_MAX_S))

    # ------------------------------------------------------------------------------------------ http

    def request_key(self, endpoint: str, full_body: dict) -> str:
        """The sha256 naming one request: the server (normalized ``base_url``), the endpoint and the body (served
        model name, generation parameters, ``extra_body``), i.e. everything that changes the answer; never the
        API key."""
        request = {"base_url": self.base_url, "endpoint": endpoint, "body": full_body}
        return hashlib.sha256(dumps_canonical(request).encode()).hexdigest()

    def _cache_path(self, key: str) -> str | None:
        if not self.cache_dir:
            return None
        return os.path.join(self.cache_dir, key[:2], f"{key}.json")

    def _post(self, endpoint: str, body: dict) -> dict:
        """The server's JSON answer to one request: from the request cache when this exact request was answered
        before, else sent (with retries) and cached."""
        full_body = {"model": self.model, **self.extra_body, **body}
        key = self.request_key(endpoint, full_body)
        path = self._cache_path(key)
        if path and os.path.exists(path):
            try:
                with open(path, encoding="utf-8") as f:
                    cached = json.load(f)
            except (OSError, ValueError):
                cached = None  # unreadable: asked again, and the entry rewritten
            if isinstance(cached, dict):
                with self._lock:
                    self.cache_hits += 1
                return cached
        answer = self._send(endpoint, full_body, key)
        if path:
            os.makedirs(os.path.dirname(path), exist_ok=True)
            tmp = f"{path}.{os.getpid()}.{threading.get_ident()}.tmp"
            with open(tmp, "w", encoding="utf-8") as f:
                json.dump(answer, f)
            os.replace(tmp, path)
        return answer

    def _send(self, endpoint: str, full_body: dict, key: str) -> dict:
        """One request with retries (:meth:`RetryingPost._post_json`); the answer, or one WobbleError line."""
        with self._lock:
            self.requests_sent += 1
        headers = {"Content-Type": "application/json", "Accept": "application/json"}
        if self._api_key:
            headers["Authorization"] = f"Bearer {self._api_key}"
        return self._post_json(f"{self.base_url}/{endpoint}", json.dumps(full_body).encode(), headers,
                               lambda: _describe_request(key, full_body))

    def _map(self, fn: Callable[[int], Any], n: int, desc: str) -> list:
        bar = tqdm(total=n, desc=f"{self.model_key} {desc}", unit="req", file=sys.stderr,
                   disable=not self.progress or n == 0, leave=False)

        def run(i):
            try:
                return fn(i)
            finally:
                bar.update(1)

        try:
            if self.concurrency == 1 or n <= 1:
                return [run(i) for i in range(n)]
            with ThreadPoolExecutor(max_workers=self.concurrency) as pool:
                return list(pool.map(run, range(n)))
        finally:
            bar.close()

    # ------------------------------------------------------------------------------------ prompts

    def _route(self, prompt: Prompt) -> tuple[str, dict, str]:
        """(endpoint, prompt part of the body, rendered prompt) for one prompt."""
        if isinstance(prompt, str):
            return "completions", {"prompt": prompt}, prompt
        messages = [dict(m) for m in prompt]
        for i, m in enumerate(messages):
            if "role" not in m or "content" not in m:
                raise WobbleError(f"chat prompt message {i} should have 'role' and 'content', got {m!r:.80}")
        if self.chat == "chat":
            return "chat/completions", {"messages": messages}, dumps_canonical(messages)
        text = render_chat_fallback(messages)
        return "completions", {"prompt": text}, text

    def _choice(self, resp: dict, url: str) -> dict:
        try:
            return resp["choices"][0]
        except (KeyError, IndexError, TypeError):
            raise WobbleError(f"model {self.model_key!r}: {url}: response has no choices: {str(resp)[:200]}") from None

    # ------------------------------------------------------------------------------------ methods

    def generate(self, prompts: Sequence[Prompt], params: GenParams) -> list[Generation]:
        if params.first_token_candidates:
            raise WobbleError(f"model {self.model_key!r}: the openai backend cannot return first-token log-probs "
                              f"from generate(); call next_token_logprobs")
        stops = [s for s in params.stop if s]

        def one(i: int) -> Generation:
            endpoint, body, rendered = self._route(prompts[i])
            body.update(max_tokens=params.max_new_tokens, temperature=params.temperature, top_p=params.top_p,
                        seed=params.seed)
            if stops:
                body["stop"] = stops
            chat = endpoint == "chat/completions"
            if params.return_logprobs:
                body["logprobs"] = True if chat else 1
            choice = self._choice(self._post(endpoint, body), endpoint)
            text = ((choice.get("message") or {}).get("content") if chat else choice.get("text")) or ""
            cut = stop_cut(text, stops)
            text = text if cut is None else text[:cut]
            reason = "stop" if cut is not None else {"eos": "stop", None: "stop"}.get(choice.get("finish_reason"),
                                                                          choice.get("finish_reason"))
            tokens, lps = [], []
            if params.return_logprobs:
                tokens, lps = sampled_logprobs(choice.get("logprobs") or {})
            return Generation(text=text, rendered_prompt=rendered, tokens=tokens, token_logprobs=lps,
                              finish_reason=reason)

        return self._map(one, len(prompts), "generate")

    def _next_top(self, i: int, prompt: Prompt, k: int) -> dict[str, float]:
        """The top ``k`` alternatives of the next token after ``prompt`` (greedy, one token), {string: log-prob}."""
        endpoint, body, _ = self._route(prompt)
        chat = endpoint == "chat/completions"
        body.update(max_tokens=1, temperature=0)
        body.update({"logprobs": True, "top_logprobs": k} if chat else {"logprobs": k})
        choice = self._choice(self._post(endpoint, body), endpoint)
        top = first_top_logprobs(choice.get("logprobs") or {})
        if top is None:
            said = (choice.get("message") or {}).get("content") if chat else choice.get("text")
            raise WobbleError(f"model {self.model_key!r}: prompt {i}: {self.base_url}/{endpoint} returned no top "
                              f"log-probs for the first token (generated {said!r}, finish_reason "
                              f"{choice.get('finish_reason')!r}): the server does not support logprobs, or (llama.cpp) "
                              f"the token ended the turn or was an incomplete UTF-8 sequence")
        return top

    def next_token_logprobs(self, prompts: Sequence[Prompt], candidates: Sequence[str]) -> list[dict[str, float]]:
        k = self.top_logprobs

        def one(i: int) -> dict[str, float]:
            top = self._next_top(i, prompts[i], k)
            out = {c: match_candidate(c, top) for c in candidates}
            missing = [c for c, v in out.items() if v is None]
            if missing:
                raise WobbleError(f"model {self.model_key!r}: prompt {i}: candidate(s) {missing} are not among the "
                                  f"server's {len(top)} returned next tokens (top_logprobs={k}), so their log-probs "
                                  f"are unknown; raise models.{self.model_key}.top_logprobs (llama.cpp serves up "
                                  f"to the vocabulary size) or score with a local backend")
            return out

        return self._map(one, len(prompts), "next-token")

    def continuation_logprobs(self, prompts: Sequence[Prompt], continuations: Sequence[str]) -> list[list[float]]:
        if len(prompts) != len(continuations):
            raise WobbleError(f"continuation_logprobs: {len(prompts)} prompts but {len(continuations)} continuations")

        def one(i: int) -> list[float]:
            endpoint, body, rendered = self._route(prompts[i])
            if endpoint != "completions":
                raise WobbleError(f"model {self.model_key!r}: continuation_logprobs of chat prompts needs "
                                  f"'chat: completions' (echo is only available on /completions)")
            cont = continuations[i]
            if not cont:
                return []
            full = rendered + cont
            body.update(prompt=full, max_tokens=1, temperature=0, echo=True, logprobs=1)
            url = f"{self.base_url}/completions"
            try:
                choice = self._choice(self._post("completions", body), "completions")
            except HTTPStatusError as e:
                if 400 <= e.status < 500 and e.status not in RETRY_STATUS:
                    raise WobbleError(f"model {self.model_key!r}: the server rejected echo=True with logprobs, "
                                      f"which continuation_logprobs needs ({e})") from None
                raise
            return echo_continuation(choice.get("logprobs") or {}, rendered, full, self.model_key, url)

        return self._map(one, len(prompts), "continuation")


# ---------------------------------------------------------------------------------- response parsing

def _describe_request(key: str, body: Mapping[str, Any]) -> str:
    """``request <cache key>, prompt '<its start>'``: which request failed, in one line."""
    prompt = body.get("prompt")
    if prompt is None:
        messages = body.get("messages") or [{}]
        prompt = (messages[-1] or {}).get("content", "") if isinstance(messages[-1], dict) else ""
    text = str(prompt)
    return f"request {key[:12]}, prompt {text[:60] + ('…' if len(text) > 60 else '')!r}"
