"""A local stand-in for the Hugging Face hub on 127.0.0.1, with faults on demand.

Serves ``/{repo}/resolve/{revision}/{filename}`` with the headers huggingface-hub reads
(``X-Repo-Commit``, ``ETag`` = the content's sha256 as for LFS files, ``Content-Length``,
``Accept-Ranges``) and honours ``Range: bytes=N-``. Faults: ``drop_after`` cuts the body of the
next GETs after that many bytes; ``refuse`` / ``refuse_after`` close GETs before any byte;
``sizes`` makes a HEAD announce another size.
"""

from __future__ import annotations

import hashlib
import threading
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from urllib.parse import unquote

COMMIT = "0123456789abcdef0123456789abcdef01234567"


@dataclass
class Hub:
    files: dict[tuple[str, str], bytes] = field(default_factory=dict)  # (repo, name) -> bytes
    requests: list[tuple[str, str, str | None]] = field(default_factory=list)  # method, path, Range
    drop_after: int | None = None
    drops: int = 0  # how many GETs to cut after drop_after bytes
    refuse: int = 0  # how many GETs to close before any byte
    refuse_after: int | None = None  # once this many GETs were served, close every later one
    sizes: dict[str, int] = field(default_factory=dict)  # name -> size a HEAD announces
    url: str = ""

    def gets(self) -> list[tuple[str, str, str | None]]:
        return [r for r in self.requests if r[0] == "GET"]


def make_handler(hub: Hub) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def log_message(self, *args: object) -> None:
            pass

        def _lookup(self) -> bytes | None:
            parts = unquote(self.path.split("?")[0]).strip("/").split("/")
            if len(parts) < 5 or parts[2] != "resolve":
                return None
            return hub.files.get(("/".join(parts[:2]), "/".join(parts[4:])))

        def _head(self, data: bytes, status: int, start: int, size: int | None = None) -> None:
            self.send_response(status)
            self.send_header("X-Repo-Commit", COMMIT)
            self.send_header("ETag", f'"{hashlib.sha256(data).hexdigest()}"')
            self.send_header("Accept-Ranges", "bytes")
            self.send_header("Content-Length", str(size if size else len(data) - start))
            if status == 206:
                self.send_header("Content-Range", f"bytes {start}-{len(data) - 1}/{len(data)}")
            self.end_headers()

        def do_HEAD(self) -> None:
            hub.requests.append(("HEAD", self.path, None))
            data = self._lookup()
            if data is None:
                self._missing()
                return
            name = unquote(self.path).rsplit("/resolve/", 1)[-1].split("/", 1)[-1]
            self._head(data, 200, 0, hub.sizes.get(name))

        def do_GET(self) -> None:
            rng = self.headers.get("Range")
            hub.requests.append(("GET", self.path, rng))
            data = self._lookup()
            if data is None:
                self._missing()
                return
            served = len(hub.gets()) - 1
            if hub.refuse_after is not None and served >= hub.refuse_after:
                self.close_connection = True
                return
            if hub.refuse > 0:
                hub.refuse -= 1
                self.close_connection = True
                return  # the connection closes without a response
            start = int(rng.split("=")[1].split("-")[0]) if rng else 0
            if start >= len(data):
                self.send_response(416)
                self.send_header("Content-Length", "0")
                self.end_headers()
                return
            self._head(data, 206 if rng else 200, start)
            body = data[start:]
            if hub.drops > 0 and hub.drop_after is not None:
                hub.drops -= 1
                self.wfile.write(body[: hub.drop_after])
                self.wfile.flush()
                self.close_connection = True
                return  # cut mid-body
            self.wfile.write(body)

        def _missing(self) -> None:
            self.send_response(404)
            self.send_header("X-Error-Code", "EntryNotFound")
            self.send_header("X-Error-Message", "Entry not found")
            self.send_header("Content-Length", "0")
            self.end_headers()

    return Handler


def start_hub() -> tuple[Hub, ThreadingHTTPServer]:
    hub = Hub()
    server = ThreadingHTTPServer(("127.0.0.1", 0), make_handler(hub))
    hub.url = f"http://127.0.0.1:{server.server_address[1]}"
    threading.Thread(target=server.serve_forever, daemon=True).start()
    return hub, server
