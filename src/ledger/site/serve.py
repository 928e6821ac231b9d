"""A static file server for a built site (the standard library's, bound to localhost)."""

from __future__ import annotations

import functools
from http.server import SimpleHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path


class _Quiet(SimpleHTTPRequestHandler):
    def log_message(self, format: str, *args) -> None:  # the stdlib's name
        return None  # the library never prints; the CLI says where it serves


def server(site_dir: Path, host: str = "127.0.0.1", port: int = 8000) -> ThreadingHTTPServer:
    """A server for `site_dir` (port 0 picks a free port); call serve_forever() on it."""
    handler = functools.partial(_Quiet, directory=str(site_dir))
    return ThreadingHTTPServer((host, port), handler)
