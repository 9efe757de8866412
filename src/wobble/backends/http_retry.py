"""Retrying JSON POSTs for the ``openai`` backend (:mod:`wobble.backends.openai_compat`).

An HTTP 408/429/500/502/503/504, a connection error or timeout, an answer cut short (incomplete read) and an answer
that is not a JSON object are retried (a 429 with OpenAI's ``insufficient_quota`` is not: no wait ends it). Each
retry waits what the server asks in ``Retry-After`` (seconds or an HTTP-date; ``retry-after-ms`` too), else a
jittered exponential backoff: ``backoff_s * 2**n`` capped at ``backoff_max_s``, times a uniform factor in [0.5, 1);
a ``Retry-After`` wait gets up to 10 % added, never less than asked, so concurrent requests do not come back in
step. A request is given up after ``max_retries`` retries (default 12) or when the next wait would end past
``retry_budget_s`` (default 300 s, counted from its first attempt): enough to sit out a hosted API's per-minute rate
limits. The final failure is one :class:`WobbleError` line naming the model key, the URL, the last status (HTTP code
and the server's message, or what went wrong), the attempts and seconds spent, and the request (its cache key and
the start of its prompt); an HTTP status that is not retried (400, 401, 404, ...) fails at once the same way. The
clock, the sleep and the jitter's random generator are the backend's constructor arguments (tests pass a fake clock and
a seeded ``random.Random``).
"""

from __future__ import annotations

import email.utils
import http.client
import json
import urllib.error
import urllib.request
from typing import Callable

from wobble.errors import WobbleError

RETRY_STATUS = (408, 429, 500, 502, 503, 504)
#: Retry defaults (also the schema's defaults for ``source: openai`` models): up to 12 retries within 300 s.
MAX_RETRIES = 12
RETRY_BUDGET_S = 300.0
BACKOFF_S = 1.0
BACKOFF_MAX_S = 60.0


class HTTPStatusError(WobbleError):
    """A request that ended with an HTTP error status (``status``), after any retries."""

    def __init__(self, message: str, status: int):
        super().__init__(message)
        self.status = status


class Retryable(Exception):
    """One attempt's failure that another attempt may not meet: ``what`` completes "model 'k': ..."."""

    def __init__(self, what: str, status: int | None = None, retry_after: float | None = None):
        super().__init__(what)
        self.what, self.status, self.retry_after = what, status, retry_after


class RetryingPost:
    """The retry loop, one attempt and the waits, as methods of a backend. Reads the backend's ``model_key``,
    ``timeout_s``, ``max_retries``, ``retry_budget_s``, ``backoff_s``, ``backoff_max_s``, ``_sleep``, ``_clock``,
    ``_wall_clock``, ``_rng`` and ``_lock``; a subclass may wrap :meth:`_attempt` (the managed server checks that
    its process is alive there)."""

    def _post_json(self, url: str, data: bytes, headers: dict, describe: Callable[[], str]) -> dict:
        """POST ``data`` to ``url`` with retries (module docstring): the JSON object answered, or one WobbleError
        line ending with ``describe()`` (which request it was)."""
        start = self._clock()
        attempts = 0
        while True:
            attempts += 1
            try:
                return self._attempt(url, data, headers)
            except Retryable as e:
                last = e
            except HTTPStatusError as e:  # a status no retry changes
                raise HTTPStatusError(f"{e} (not retried); {describe()}", e.status) from None
            elapsed = self._clock() - start
            if attempts > self.max_retries:
                why = f"max_retries={self.max_retries} reached"
            else:
                wait = self._wait(attempts - 1, last.retry_after)
                if elapsed + wait <= self.retry_budget_s:
                    self._sleep(wait)
                    continue
                asked = (f"the server asks to wait {last.retry_after:.0f} s" if last.retry_after is not None
                         else f"the next wait of {wait:.0f} s")
                why = f"{asked} and retry_budget_s={self.retry_budget_s:g} would be exceeded"
            message = (f"model {self.model_key!r}: {last.what}; gave up after {attempts} attempt"
                       f"{'s' if attempts > 1 else ''} in {elapsed:.0f} s ({why}); {describe()}")
            if last.status is not None:
                raise HTTPStatusError(message, last.status) from None
            raise WobbleError(message) from None

    def _attempt(self, url: str, data: bytes, headers: dict) -> dict:
        """One POST: the JSON object answered, else :class:`Retryable` (worth another attempt) or
        :class:`HTTPStatusError` (not)."""
        req = urllib.request.Request(url, data=data, headers=headers, method="POST")
        try:
            with urllib.request.urlopen(req, timeout=self.timeout_s) as resp:
                payload = resp.read()
        except urllib.error.HTTPError as e:
            msg, code = error_details(e)
            what = f"{url} returned HTTP {e.code}: {msg}"
            if e.code in RETRY_STATUS and code != "insufficient_quota":
                raise Retryable(what, e.code, self._retry_after(e.headers)) from None
            raise HTTPStatusError(f"model {self.model_key!r}: {what}", e.code) from None
        except http.client.IncompleteRead as e:
            more = f", {e.expected} more expected" if e.expected is not None else ""
            raise Retryable(f"{url} returned an incomplete answer ({len(e.partial)} bytes read{more})") from None
        except (http.client.HTTPException, urllib.error.URLError, TimeoutError, ConnectionError) as e:
            reason = getattr(e, "reason", None) or f"{type(e).__name__}: {e}"
            raise Retryable(f"cannot reach {url}: {reason}") from None
        try:
            answer = json.loads(payload)
        except ValueError:  # JSONDecodeError and undecodable bytes
            answer = None
        if not isinstance(answer, dict):
            raise Retryable(f"{url} returned non-JSON (or not a JSON object): {payload[:200]!r}")
        return answer

    def _wait(self, retry: int, retry_after: float | None) -> float:
        """Seconds before retry number ``retry`` + 1: the server's Retry-After plus up to 10 %, else the jittered
        exponential backoff."""
        with self._lock:
            u = self._rng.random()
        if retry_after is not None:
            return retry_after * (1 + 0.1 * u)
        return min(self.backoff_max_s, self.backoff_s * 2 ** retry) * (0.5 + 0.5 * u)

    def _retry_after(self, headers) -> float | None:
        """The wait a response asks for: ``retry-after-ms``, else ``Retry-After`` in seconds or as an HTTP-date
        (against the wall clock); None when absent or unreadable."""
        if headers is None:
            return None
        ms = headers.get("retry-after-ms")
        if ms:
            try:
                return max(0.0, float(ms) / 1000)
            except ValueError:
                pass
        value = (headers.get("Retry-After") or "").strip()
        if not value:
            return None
        try:
            return max(0.0, float(value))
        except ValueError:
            pass
        try:
            when = email.utils.parsedate_to_datetime(value)
        except (TypeError, ValueError, IndexError):
            return None
        if when.tzinfo is None:
            return None
        return max(0.0, when.timestamp() - self._wall_clock())


def error_details(e: urllib.error.HTTPError) -> tuple[str, str | None]:
    """(the server's message, its error code or type when it gives one) of an HTTP error response."""
    try:
        raw = e.read().decode("utf-8", "replace")
    except Exception:  # noqa: BLE001 - a body cut short, a reset connection: the status line is what we have
        return str(e.reason), None
    try:
        err = json.loads(raw).get("error")
        if isinstance(err, dict):
            return " ".join(str(err.get("message", err)).split()), err.get("code") or err.get("type")
        if err:
            return " ".join(str(err).split()), None
    except (ValueError, AttributeError):
        pass
    return " ".join(raw[:300].split()) or str(e.reason), None
