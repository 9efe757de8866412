"""A loopback HTTP server that stands in for GitHub in the data tests: it serves files from a dict and fails on
request the ways a real download can (404, a server that stops mid-file, bytes that differ from the pin)."""

from __future__ import annotations

import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer


class Upstream:
    """``with Upstream(files) as up:`` serves ``files`` (URL path -> bytes) on 127.0.0.1; ``up.url`` is its base.

    ``up.cut[path] = n`` makes that path announce its full length but close after ``n`` bytes (a server that
    stops mid-file); ``up.requests`` lists every path asked for, in order."""

    def __init__(self, files: dict[str, bytes]):
        self.files = dict(files)
        self.cut: dict[str, int] = {}
        self.requests: list[str] = []
        upstream = self

        class Handler(BaseHTTPRequestHandler):
            def do_GET(self):  # noqa: N802 (http.server's name)
                upstream.requests.append(self.path)
                data = upstream.files.get(self.path)
                if data is None:
                    self.send_error(404, "Not Found")
                    return
                self.send_response(200)
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                n = upstream.cut.get(self.path)
                self.wfile.write(data if n is None else data[:n])
                if n is not None:
                    self.close_connection = True

            def log_message(self, *args):
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}"
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)

    def __enter__(self) -> "Upstream":
        self.thread.start()
        return self

    def __exit__(self, *exc) -> None:
        self.server.shutdown()
        self.server.server_close()
        self.thread.join(timeout=5)
