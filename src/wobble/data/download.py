"""Downloading one pinned file: atomic, length-checked, checksum-checked, with the URL prefixes a user redirects.

Every download goes to a temp file beside its target and is renamed into place only when it is whole: the
server's Content-Length is met and, where a sha256 is given, the bytes hash to it. Any failure (HTTP error,
refused connection, time-out, a server that stops mid-file, a wrong checksum) raises :class:`DownloadError`
with one line naming the URL and what went wrong, and leaves nothing at the target, so a re-run restarts the
file cleanly.

``url_prefixes`` maps a URL prefix to its replacement (``{"https://raw.githubusercontent.com/":
"https://my-proxy/raw/"}``): a site behind a proxy or with its own copy of GitHub points the workflow there
(``data.url_prefixes`` in the config), and the tests point it at a loopback server.
"""

from __future__ import annotations

import contextlib
import http.client
import os
import shutil
import socket
import tempfile
import urllib.error
import urllib.request
from pathlib import Path
from typing import Mapping

from wobble.errors import WobbleError
from wobble.io import sha256_file

USER_AGENT = "wobble-data-acquire/0.1"


class DownloadError(WobbleError):
    """A file could not be downloaded whole and intact; nothing was left at its target."""


def rewrite(url: str, url_prefixes: Mapping[str, str] | None) -> str:
    """``url`` with the longest matching prefix of ``url_prefixes`` replaced (unchanged if none matches)."""
    for prefix in sorted(url_prefixes or {}, key=len, reverse=True):
        if url.startswith(prefix):
            return url_prefixes[prefix] + url[len(prefix):]
    return url


def temp_beside(target: Path, suffix: str = ".part") -> Path:
    """An empty temp file in ``target``'s folder (created), for a write that is renamed into place."""
    target.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{target.name}.", suffix=suffix, dir=target.parent)
    os.close(fd)
    return Path(tmp)


def _reason(exc: BaseException) -> str:
    if isinstance(exc, urllib.error.HTTPError):
        return f"HTTP {exc.code} {exc.reason}"
    if isinstance(exc, urllib.error.URLError):
        return f"no connection ({exc.reason})"
    if isinstance(exc, (socket.timeout, TimeoutError)):
        return "timed out"
    if isinstance(exc, http.client.IncompleteRead):
        return f"the server stopped after {len(exc.partial)} more bytes ({exc.expected} still expected)"
    return f"{type(exc).__name__}: {exc}"


def download(url: str, dest: str | os.PathLike, *, sha256: str | None = None, timeout: float = 20,
             url_prefixes: Mapping[str, str] | None = None) -> str:
    """Fetch ``url`` (after :func:`rewrite`) into ``dest``; return the sha256 of what was written.

    Raises :class:`DownloadError` on any failure, with ``dest`` untouched (a file already there stays).
    """
    dest = Path(dest)
    real = rewrite(url, url_prefixes)
    shown = url if real == url else f"{url} (via {real})"
    tmp = temp_beside(dest)
    try:
        try:
            req = urllib.request.Request(real, headers={"User-Agent": USER_AGENT})
            with urllib.request.urlopen(req, timeout=timeout) as resp, open(tmp, "wb") as out:
                shutil.copyfileobj(resp, out, length=1 << 20)
                expected = resp.headers.get("Content-Length")
            got = tmp.stat().st_size
            if expected is not None and expected.isdigit() and got != int(expected):
                raise DownloadError(f"download of {shown} is truncated: {got} of {expected} bytes arrived "
                                    "(nothing kept; re-run to restart it)")
        except DownloadError:
            raise
        except (urllib.error.URLError, OSError, http.client.HTTPException, ValueError) as exc:
            raise DownloadError(f"download of {shown} failed: {_reason(exc)} (nothing kept; re-run to restart "
                                "it)") from None
        actual = sha256_file(tmp)
        if sha256 and actual != sha256:
            raise DownloadError(f"download of {shown} has sha256 {actual}, but the pin expects {sha256} "
                                "(nothing kept)")
        dest.parent.mkdir(parents=True, exist_ok=True)
        os.replace(tmp, dest)
        return actual
    finally:
        with contextlib.suppress(FileNotFoundError):
            tmp.unlink()
