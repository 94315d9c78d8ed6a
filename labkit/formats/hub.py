"""Download a model's tokenizer files (never its weights) from the Hugging Face Hub.

``labkit.load("org/model")`` calls :func:`download_tokenizer_files`. ``huggingface_hub``
answers which commit a revision is and which files it holds (``HfApi.model_info``); labkit
chooses the tokenizer files and fetches each one itself, because every limit must hold
before and during the transfer: a size cap per file (checked on the announced length, then
on every chunk), a timeout per request and a deadline for the whole call, at most five
redirects with the token sent only to the endpoint's own host, and the sha256 checked when
the server's ETag is one. Files go to a folder private to the call, which is renamed into
the standard cache (``snapshots/<commit>``) only when complete; a failure or Ctrl-C removes
that folder and nothing else. ``HF_ENDPOINT``, ``HF_TOKEN``, ``HF_HUB_OFFLINE`` and
``HF_HOME``/``HF_HUB_CACHE`` are read at each call.
Introduced in notebook ``11_factory_formats_hub``.

Example (downloads tokenizer.json, tokenizer_config.json, ... from the Hub, so not run as a test):
    >>> import labkit
    >>> tok = labkit.load("Qwen/Qwen2.5-7B-Instruct")  # doctest: +SKIP
"""
from __future__ import annotations

import fnmatch
import hashlib
import os
import re
import shutil
import threading
import time
import uuid
from contextlib import contextmanager
from pathlib import Path
from urllib.parse import quote, urljoin, urlsplit

from labkit.core import LabkitError

# what a tokenizer needs; weights (*.safetensors, *.bin, *.gguf) are never fetched
TOKENIZER_PATTERNS = [
    "tokenizer.json",
    "tokenizer_config.json",
    "special_tokens_map.json",
    "added_tokens.json",
    "chat_template.jinja",
    "chat_template.json",
    "vocab.json",
    "merges.txt",
    "vocab.txt",
    "*.model",
    "*.tiktoken",
]
_TOKENIZER_FILES = ("tokenizer.json", "vocab.json", "vocab.txt")
_TOKENIZER_SUFFIXES = (".model", ".tiktoken")


# huggingface_hub reads HF_HUB_OFFLINE once, at import; labkit reads it at each call
_OFFLINE_LOCK = threading.Lock()


@contextmanager
def _hub_offline(offline: bool):
    """Make huggingface_hub's offline switch say ``offline`` for one download, then restore it."""
    from huggingface_hub import constants

    with _OFFLINE_LOCK:
        saved = constants.HF_HUB_OFFLINE
        constants.HF_HUB_OFFLINE = offline
        try:
            yield
        finally:
            constants.HF_HUB_OFFLINE = saved


def _truthy(value: str | None) -> bool:
    return (value or "").strip().lower() in ("1", "true", "yes", "on")


def hub_cache_dir() -> Path:
    """The standard Hub cache: $HF_HUB_CACHE, else $HF_HOME/hub, else ~/.cache/huggingface/hub."""
    if os.environ.get("HF_HUB_CACHE"):
        return Path(os.environ["HF_HUB_CACHE"])
    home = os.environ.get("HF_HOME") or os.path.join(os.path.expanduser("~"), ".cache", "huggingface")
    return Path(home) / "hub"


def _repo_folder(cache: Path, repo_id: str) -> Path:
    return cache / ("models--" + repo_id.replace("/", "--"))


def has_tokenizer_file(folder: Path) -> bool:
    """True if the folder holds something labkit can read as a tokenizer."""
    return any((folder / name).is_file() for name in _TOKENIZER_FILES) or any(
        p.suffix in _TOKENIZER_SUFFIXES for p in folder.iterdir() if p.is_file()
    )


# limits; each may be set per call or by environment variable (the tests use short ones)
MAX_FILE_BYTES = 512 * 2**20  # the largest tokenizer.json files on the Hub are tens of MB
REQUEST_TIMEOUT = 30.0  # seconds without progress on one connection
DEADLINE = 600.0  # seconds for the whole call
MAX_REDIRECTS = 5
_SHA256 = re.compile(r"[0-9a-f]{64}")


def _limit(value, env: str, default: float, kind=float):
    if value is None:
        value = os.environ.get(env) or default
    try:
        value = kind(value)
    except (TypeError, ValueError):
        raise LabkitError(f"{env} must be a positive number, got {value!r}") from None
    if not value > 0:
        raise LabkitError(f"{env} must be a positive number, got {value!r}")
    return value


def _cached_snapshot(folder: Path, revision: str | None) -> Path | None:
    """The snapshot a revision points to in the cache, if it holds a tokenizer file."""
    name = revision or "main"
    commit = name if re.fullmatch(r"[0-9a-f]{40}", name) else None
    ref = folder / "refs" / name
    if commit is None and ref.is_file():
        commit = ref.read_text(encoding="utf-8").strip()
    snapshot = folder / "snapshots" / commit if commit else None
    if snapshot is not None and snapshot.is_dir() and has_tokenizer_file(snapshot):
        return snapshot
    return None


def _write_ref(folder: Path, revision: str | None, commit: str) -> None:
    """refs/<revision> -> commit, replaced atomically."""
    ref = folder / "refs" / (revision or "main")
    ref.parent.mkdir(parents=True, exist_ok=True)
    temporary = ref.with_name(f".{ref.name}.{uuid.uuid4().hex}.tmp")
    temporary.write_text(commit, encoding="utf-8")
    os.replace(temporary, ref)


# named chat templates beside chat_template.jinja (e.g. additional_chat_templates/tool_use.jinja): one level, .jinja only
EXTRA_TEMPLATE_NAME = re.compile(r"additional_chat_templates/[^/\\]+\.jinja")


def _wanted(names: list[str]) -> list[str]:
    """The repo files a tokenizer needs: top-level files matching TOKENIZER_PATTERNS and the
    named chat templates under ``additional_chat_templates/``.

    Example:
        >>> _wanted(["model.safetensors", "vocab.txt", "sub/vocab.txt", "additional_chat_templates/tool_use.jinja"])
        ['additional_chat_templates/tool_use.jinja', 'vocab.txt']
    """
    return sorted(n for n in names if ("/" not in n and any(fnmatch.fnmatch(n, p) for p in TOKENIZER_PATTERNS))
                  or EXTRA_TEMPLATE_NAME.fullmatch(n))


class _Transfer:
    """The limits and credentials of one call's downloads."""

    def __init__(self, endpoint: str, token: str | None, max_file_bytes: int, timeout: float, deadline_at: float):
        import httpx
        from huggingface_hub.utils import build_hf_headers

        self.origin = urlsplit(endpoint)[:2]
        self.headers = build_hf_headers(token=token or False, library_name="labkit")
        self.max_file_bytes = max_file_bytes
        self.deadline_at = deadline_at
        self.client = httpx.Client(timeout=httpx.Timeout(timeout), follow_redirects=False)

    def remaining(self) -> float:
        left = self.deadline_at - time.monotonic()
        if left <= 0:
            raise LabkitError("the download took longer than its deadline")
        return left

    def fetch(self, url: str, target: Path, name: str) -> None:
        """GET url into target (retried once after a dropped connection)."""
        import httpx

        for attempt in range(3):
            try:
                self._fetch_once(url, target, name)
                return
            except (httpx.TransportError, _Incomplete) as exc:
                if attempt == 2:
                    raise LabkitError(f"{name}: {type(exc).__name__}: {str(exc).splitlines()[0][:200] if str(exc) else 'connection lost'}") from None

    def _fetch_once(self, url: str, target: Path, name: str) -> None:
        for _ in range(MAX_REDIRECTS + 1):
            self.remaining()
            # credentials go only to the endpoint's own scheme, host and port
            same_origin = urlsplit(url)[:2] == self.origin
            headers = self.headers if same_origin else {k: v for k, v in self.headers.items() if k.lower() != "authorization"}
            with self.client.stream("GET", url, headers=headers) as response:
                if response.status_code in (301, 302, 303, 307, 308):
                    url = urljoin(url, response.headers.get("location", ""))
                    continue
                if response.status_code == 404:
                    raise LabkitError(f"{name}: not found on the server")
                if response.status_code >= 400:
                    raise LabkitError(f"{name}: HTTP {response.status_code}")
                self._save(response, target, name)
                return
        raise LabkitError(f"{name}: more than {MAX_REDIRECTS} redirects")

    def _save(self, response, target: Path, name: str) -> None:
        announced = response.headers.get("content-length")
        if announced is not None and announced.isdigit() and int(announced) > self.max_file_bytes:
            raise LabkitError(f"{name} is {int(announced):,} bytes, over the limit of {self.max_file_bytes:,} "
                              f"(LABKIT_HUB_MAX_FILE_BYTES); nothing was downloaded")
        etag = (response.headers.get("x-linked-etag") or response.headers.get("etag") or "").strip('"').lower()
        etag = etag.removeprefix("w/").strip('"')
        digest, size = hashlib.sha256(), 0
        with open(target, "wb") as out:
            for chunk in response.iter_raw():
                size += len(chunk)
                if size > self.max_file_bytes:
                    raise LabkitError(f"{name} is over the limit of {self.max_file_bytes:,} bytes "
                                      f"(LABKIT_HUB_MAX_FILE_BYTES); the download was stopped")
                self.remaining()  # a body that trickles in still ends at the deadline
                digest.update(chunk)
                out.write(chunk)
        if announced is not None and announced.isdigit() and size != int(announced):
            raise _Incomplete(f"{size:,} of {int(announced):,} bytes")
        if _SHA256.fullmatch(etag) and digest.hexdigest() != etag:
            raise LabkitError(f"{name}: its sha256 {digest.hexdigest()} is not the {etag} the server's ETag says")


class _Incomplete(Exception):
    """The connection ended before the announced length."""


def download_tokenizer_files(repo_id: str, *, revision: str | None = None, token: str | None = None,
                             endpoint: str | None = None, max_file_bytes: int | None = None,
                             timeout: float | None = None, deadline: float | None = None) -> Path:
    """Fetch (or find in the cache) the tokenizer files of a Hub model; the snapshot folder.

    Limits (argument, else environment, else default): ``max_file_bytes``
    (``LABKIT_HUB_MAX_FILE_BYTES``, 512 MiB), ``timeout`` per request without progress
    (``LABKIT_HUB_TIMEOUT``, 30 s), ``deadline`` for the call (``LABKIT_HUB_DEADLINE``, 600 s).

    Example (against the local Hub of :mod:`labkit.formats.hub_server`, into a fresh cache):
        >>> import os, tempfile
        >>> from unittest import mock
        >>> from labkit.formats.hub_server import LocalHub
        >>> with LocalHub({"org/tiny": {"vocab.txt": b"[UNK]\\na\\n"}}) as hub, \\
        ...         mock.patch.dict(os.environ, {"HF_HUB_CACHE": tempfile.mkdtemp()}):
        ...     folder = download_tokenizer_files("org/tiny", endpoint=hub.url)
        >>> folder.parent.parent.name, [path.name for path in folder.iterdir()]
        ('models--org--tiny', ['vocab.txt'])
    """
    if not isinstance(repo_id, str) or repo_id.count("/") != 1 or not all(repo_id.split("/")):
        raise LabkitError(f"{repo_id!r} is not a Hub model id of the form 'org/model'")
    max_file_bytes = _limit(max_file_bytes, "LABKIT_HUB_MAX_FILE_BYTES", MAX_FILE_BYTES, int)
    timeout = _limit(timeout, "LABKIT_HUB_TIMEOUT", REQUEST_TIMEOUT)
    deadline = _limit(deadline, "LABKIT_HUB_DEADLINE", DEADLINE)
    started = time.monotonic()
    cache = hub_cache_dir()
    folder = _repo_folder(cache, repo_id)
    offline = _truthy(os.environ.get("HF_HUB_OFFLINE"))
    endpoint = (endpoint or os.environ.get("HF_ENDPOINT") or "https://huggingface.co").rstrip("/")
    where = endpoint if endpoint != "https://huggingface.co" else "the Hugging Face Hub"
    token = token or os.environ.get("HF_TOKEN") or None
    if offline:
        cached = _cached_snapshot(folder, revision)
        if cached is None:
            raise LabkitError(f"{repo_id}: not in the local cache ({cache}) and HF_HUB_OFFLINE is set")
        return cached
    commit, names = _repo_files(repo_id, revision, token, endpoint, where, timeout, folder, cache)
    if commit is None:  # unreachable, answered from the cache
        return names
    wanted = _wanted(names)
    if not wanted or not any(n in _TOKENIZER_FILES or n.endswith(_TOKENIZER_SUFFIXES) for n in wanted):
        raise LabkitError(
            f"{repo_id}: the repo has no tokenizer file (tokenizer.json, *.model, *.tiktoken, vocab.json, vocab.txt)"
        )
    snapshot = folder / "snapshots" / commit
    if snapshot.is_dir() and all((snapshot / n).is_file() for n in wanted):
        _write_ref(folder, revision, commit)
        return snapshot
    # a folder private to this call: only it is ever removed on failure
    private = folder / f".labkit-{uuid.uuid4().hex}.incomplete"
    private.mkdir(parents=True)
    transfer = _Transfer(endpoint, token, max_file_bytes, timeout, started + deadline)
    try:
        for name in wanted:
            url = f"{endpoint}/{repo_id}/resolve/{commit}/{quote(name)}"
            (private / name).parent.mkdir(exist_ok=True)  # additional_chat_templates/
            transfer.fetch(url, private / name, name)
        _publish(private, snapshot, wanted)
        _write_ref(folder, revision, commit)
    except LabkitError as exc:
        raise LabkitError(f"{repo_id}: download from {where} failed ({exc}); partial files were removed") from None
    except Exception as exc:  # dropped connections, a full disk, a malformed answer alike
        raise LabkitError(
            f"{repo_id}: download from {where} failed ({type(exc).__name__}: {str(exc).splitlines()[0][:200] if str(exc) else ''}); "
            f"partial files were removed"
        ) from None
    finally:  # also on KeyboardInterrupt
        transfer.client.close()
        shutil.rmtree(private, ignore_errors=True)
        for empty in (folder / "snapshots", folder):
            try:
                empty.rmdir()  # only if nothing else is there
            except OSError:
                pass
    if not has_tokenizer_file(snapshot):
        raise LabkitError(
            f"{repo_id}: the repo has no tokenizer file (tokenizer.json, *.model, *.tiktoken, vocab.json, vocab.txt)"
        )
    return snapshot


def _publish(private: Path, snapshot: Path, names: list[str]) -> None:
    """Move the complete files into snapshots/<commit>: the whole folder in one rename, or,
    if another call published that commit first, each file it lacks (one rename each)."""
    snapshot.parent.mkdir(parents=True, exist_ok=True)
    try:
        os.rename(private, snapshot)
        private.mkdir()  # the caller's cleanup expects the folder
        return
    except OSError:
        if not snapshot.is_dir():
            raise
    for name in names:
        if not (snapshot / name).is_file():
            (snapshot / name).parent.mkdir(exist_ok=True)
            os.replace(private / name, snapshot / name)


def _repo_files(repo_id, revision, token, endpoint, where, timeout, folder, cache):
    """(commit, file names) from the Hub, or (None, cached snapshot) when it cannot be reached."""
    import httpx
    from huggingface_hub import HfApi
    from huggingface_hub import errors as hf_errors

    try:
        with _hub_offline(False):
            info = HfApi(endpoint=endpoint, library_name="labkit").model_info(
                repo_id, revision=revision, token=token or False, timeout=timeout)
    except hf_errors.GatedRepoError:
        raise LabkitError(f"{repo_id}: the repo is gated on {where}; accept its terms and set HF_TOKEN") from None
    except hf_errors.RepositoryNotFoundError:
        raise LabkitError(
            f"{repo_id}: no such repo on {where}, or it is private and HF_TOKEN is missing or wrong"
        ) from None
    except hf_errors.RevisionNotFoundError:
        raise LabkitError(f"{repo_id}: revision {revision!r} not found on {where}") from None
    except (httpx.TransportError, hf_errors.HfHubHTTPError, OSError) as exc:
        cached = _cached_snapshot(folder, revision)
        if cached is not None:
            return None, cached
        raise LabkitError(f"{repo_id}: not in the local cache ({cache}) and {where} cannot be reached "
                          f"({type(exc).__name__})") from None
    names = [s.rfilename for s in (info.siblings or [])]
    if not info.sha or not re.fullmatch(r"[0-9a-f]{40}", info.sha):
        raise LabkitError(f"{repo_id}: {where} gave no commit id for revision {revision or 'main'!r}")
    return info.sha, names
