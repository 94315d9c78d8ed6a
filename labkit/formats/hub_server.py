"""A tiny Hugging Face Hub on 127.0.0.1, for the Hub loader's tests and notebook 11.

It answers the calls ``huggingface_hub`` makes to download files: the repo info
(``/api/models/{repo}/revision/{rev}``), the file listing (``/api/models/{repo}/tree/{rev}``),
and ``HEAD``/``GET`` of
``/{repo}/resolve/{rev}/{file}`` (with the ``X-Repo-Commit`` and ``ETag`` headers the client
needs). It can make a repo private (a token is then required), answer 404 for unknown repos
and files, and drop the connection in the middle of a file. Every request is logged, so a
test can show which files were (and were not) fetched.
Introduced in notebook ``11_factory_formats_hub``.

Example:
    >>> import urllib.request
    >>> from labkit.formats.hub_server import LocalHub
    >>> with LocalHub({"org/tok": {"vocab.txt": b"a\\n"}}) as hub:
    ...     urllib.request.urlopen(f"{hub.url}/org/tok/resolve/main/vocab.txt").read()
    b'a\\n'
"""
from __future__ import annotations

import hashlib
import json
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from urllib.parse import unquote, urlparse


class LocalHub:
    """Serve ``repos`` ({repo_id: {filename: bytes}}) on 127.0.0.1 at a free port.

    ``private``: repo ids that need ``Authorization: Bearer <token>``.
    ``drop_after``: {(repo_id, filename): n} sends only the first n bytes of that file, then
    closes the connection; ``drop_times`` says for how many GETs of the file (None: every
    one, so the download cannot finish; 1: a transient failure the client's retry survives).
    ``slow``: {(repo_id, filename): bytes per second} trickles the body out.
    ``etags``: {(repo_id, filename): value} sends that ETag instead of the file's own.
    ``redirects``: {(repo_id, filename): url} answers the GET with a 302 to that URL.
    ``unsized``: {(repo_id, filename)} sends that body without a Content-Length, up to the
    end of the connection (so only the bytes that arrive tell its size).
    A value of ``repos`` may be a :class:`Zeros` (a large file that is never held in memory).
    ``authorizations`` logs (path, Authorization header or None) for every request.

    Example (a private repo answers 401 without its token):
        >>> import urllib.error, urllib.request
        >>> hub = LocalHub({"org/secret": {"vocab.txt": b"a\\n"}}, private={"org/secret"}, token="hf_x").start()
        >>> try:
        ...     urllib.request.urlopen(f"{hub.url}/org/secret/resolve/main/vocab.txt")
        ... except urllib.error.HTTPError as error:
        ...     print(error.code)
        401
        >>> hub.requests
        [('GET', '/org/secret/resolve/main/vocab.txt')]
        >>> hub.stop()
    """

    def __init__(self, repos: dict[str, dict[str, bytes]], *, private=(), token: str | None = None,
                 drop_after: dict | None = None, drop_times: int | None = None, slow: dict | None = None,
                 etags: dict | None = None, redirects: dict | None = None, unsized=()):
        self.repos = repos
        self.private = set(private)
        self.token = token
        self.drop_after = dict(drop_after or {})
        self.drop_times = drop_times
        self._drops_done: dict = {}
        self.slow = dict(slow or {})
        self.etags = dict(etags or {})
        self.redirects = dict(redirects or {})
        self.unsized = set(unsized)
        self.requests: list[tuple[str, str]] = []
        self.authorizations: list[tuple[str, str | None]] = []
        self._server: ThreadingHTTPServer | None = None
        self._thread: threading.Thread | None = None

    # -- lifecycle -------------------------------------------------------------
    @property
    def url(self) -> str:
        if self._server is None:
            raise RuntimeError("LocalHub is not running")
        host, port = self._server.server_address[:2]
        return f"http://{host}:{port}"

    def start(self) -> "LocalHub":
        hub = self

        class Handler(_HubHandler):
            owner = hub

        self._server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self._server.daemon_threads = True
        self._thread = threading.Thread(target=self._server.serve_forever, name="labkit-local-hub", daemon=True)
        self._thread.start()
        return self

    def stop(self) -> None:
        if self._server is not None:
            self._server.shutdown()
            self._server.server_close()
            self._server = None

    def __enter__(self) -> "LocalHub":
        return self.start()

    def __exit__(self, *exc) -> None:
        self.stop()

    # -- data ------------------------------------------------------------------
    def commit(self, repo_id: str) -> str:
        """A stable 40-hex commit id for the repo's current files."""
        digest = hashlib.sha1()
        for name in sorted(self.repos[repo_id]):
            data = self.repos[repo_id][name]
            digest.update(name.encode() + b"\0" + (data.fingerprint() if isinstance(data, Zeros) else data))
        return digest.hexdigest()

    def fetched(self) -> list[str]:
        """Files that were downloaded (GET of a resolve URL), in order."""
        return [path.split("/resolve/", 1)[1].split("/", 1)[1] for method, path in self.requests
                if method == "GET" and "/resolve/" in path]


class Zeros:
    """``size`` zero bytes, produced as they are sent (a 2 GiB file without 2 GiB of memory).

    Example:
        >>> big = Zeros(2**31)
        >>> len(big), big.sha1() == Zeros(2**31).sha1() != Zeros(1).sha1()
        (2147483648, True)
    """

    def __init__(self, size: int):
        self.size = size

    def __len__(self) -> int:
        return self.size

    def fingerprint(self) -> bytes:
        return f"zeros:{self.size}".encode()

    def sha1(self) -> str:
        return hashlib.sha1(self.fingerprint()).hexdigest()


def _sha1(data) -> str:
    return data.sha1() if isinstance(data, Zeros) else hashlib.sha1(data).hexdigest()


class _HubHandler(BaseHTTPRequestHandler):
    owner: LocalHub
    protocol_version = "HTTP/1.1"

    def log_message(self, format, *args):  # keep test output clean
        pass

    # -- helpers ---------------------------------------------------------------
    def _send(self, status: int, body: bytes = b"", headers: dict | None = None, head_only: bool = False):
        self.send_response(status)
        for key, value in (headers or {}).items():
            self.send_header(key, value)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        if not head_only:
            self.wfile.write(body)

    def _error(self, status: int, code: str, message: str, head_only: bool = False):
        body = json.dumps({"error": message}).encode()
        self._send(status, body, {"Content-Type": "application/json", "X-Error-Code": code,
                                  "X-Error-Message": message}, head_only)

    def _authorised(self, repo_id: str) -> bool:
        if repo_id not in self.owner.private:
            return True
        return self.headers.get("Authorization") == f"Bearer {self.owner.token}"

    def _repo(self, repo_id: str, head_only: bool) -> dict | None:
        if repo_id not in self.owner.repos or not self._authorised(repo_id):
            # the Hub answers a private repo without a valid token like a missing one
            status = 401 if repo_id in self.owner.private else 404
            self._error(status, "RepoNotFound", f"Repository {repo_id} not found", head_only)
            return None
        return self.owner.repos[repo_id]

    # -- routes ----------------------------------------------------------------
    def do_HEAD(self):
        self._route(head_only=True)

    def do_GET(self):
        self._route(head_only=False)

    def _route(self, head_only: bool):
        path = unquote(urlparse(self.path).path)
        self.owner.requests.append(("HEAD" if head_only else "GET", path))
        self.owner.authorizations.append((path, self.headers.get("Authorization")))
        parts = path.strip("/").split("/")
        if parts[:2] == ["api", "models"] and len(parts) >= 4:
            repo_id = "/".join(parts[2:4])
            files = self._repo(repo_id, head_only)
            if files is None:
                return
            if len(parts) >= 6 and parts[4] == "tree":  # the file listing snapshot_download reads
                listing = [{"type": "file", "path": name, "size": len(files[name]),
                            "oid": _sha1(files[name])} for name in sorted(files)]
                self._send(200, json.dumps(listing).encode(), {"Content-Type": "application/json"}, head_only)
                return
            info = {"id": repo_id, "modelId": repo_id, "sha": self.owner.commit(repo_id),
                    "private": repo_id in self.owner.private,
                    "siblings": [{"rfilename": name} for name in sorted(files)]}
            self._send(200, json.dumps(info).encode(), {"Content-Type": "application/json"}, head_only)
            return
        if len(parts) >= 5 and parts[2] == "resolve":
            repo_id = "/".join(parts[:2])
            files = self._repo(repo_id, head_only)
            if files is None:
                return
            filename = "/".join(parts[4:])
            if filename not in files:
                self._error(404, "EntryNotFound", f"{filename} does not exist in {repo_id}", head_only)
                return
            self._file(repo_id, filename, files[filename], head_only)
            return
        self._error(404, "NotFound", f"no route for {path}", head_only)

    def _file(self, repo_id: str, filename: str, data, head_only: bool):
        key = (repo_id, filename)
        headers = {
            "X-Repo-Commit": self.owner.commit(repo_id),
            "ETag": '"' + self.owner.etags.get(key, _sha1(data)) + '"',
            "Content-Type": "application/octet-stream",
            "Accept-Ranges": "bytes",
        }
        if not head_only and key in self.owner.redirects:
            self._send(302, b"", {"Location": self.owner.redirects[key]})
            return
        ranged = self.headers.get("Range")
        drop = self.owner.drop_after.get(key)
        if head_only:
            self.send_response(200)
            for name, value in headers.items():
                self.send_header(name, value)
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            return
        start = 0
        if ranged and ranged.startswith("bytes="):
            start = int(ranged[6:].split("-")[0] or 0)
        if drop is not None:
            done = self.owner._drops_done.get(key, 0)
            if self.owner.drop_times is not None and done >= self.owner.drop_times:
                drop = None  # the network has recovered
            else:
                self.owner._drops_done[key] = done + 1
        size = len(data) - start
        self.send_response(206 if start else 200)
        for name, value in headers.items():
            self.send_header(name, value)
        if start:
            self.send_header("Content-Range", f"bytes {start}-{len(data) - 1}/{len(data)}")
        if key in self.owner.unsized:
            self.send_header("Connection", "close")
            self.close_connection = True
        else:
            self.send_header("Content-Length", str(size))
        self.end_headers()
        limit = size if drop is None else min(drop, size)
        rate = self.owner.slow.get(key)
        sent, step = 0, (1 if rate else 1 << 16)
        try:
            while sent < limit:
                n = min(step, limit - sent)
                chunk = bytes(n) if isinstance(data, Zeros) else data[start + sent : start + sent + n]
                self.wfile.write(chunk)
                sent += n
                if rate:
                    self.wfile.flush()
                    time.sleep(1 / rate)
        except (BrokenPipeError, ConnectionResetError):
            return  # the client gave up
        if drop is not None:
            self.wfile.flush()
            self.close_connection = True
            self.connection.shutdown(2)  # a dropped connection, mid-file
