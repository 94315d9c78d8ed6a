"""Download a model's tokenizer files (never its weights) from the Hugging Face Hub.

``labkit.load("org/model")`` calls :func:`download_tokenizer_files`: ``huggingface_hub``
does the transfer into its standard cache, with its progress bars; labkit chooses which
files, reads ``HF_ENDPOINT``, ``HF_TOKEN``, ``HF_HUB_OFFLINE``, ``HF_HOME``/``HF_HUB_CACHE``
at call time, turns every failure into a LabkitError that says what and where, and removes
what a failed download left behind so that no later load trusts a partial snapshot.
Introduced in notebook ``11_factory_formats_hub``.

Example: ``labkit.load("Qwen/Qwen2.5-7B-Instruct")`` (tokenizer.json, tokenizer_config.json, ...)
"""
from __future__ import annotations

import os
import shutil
import threading
from contextlib import contextmanager
from pathlib import Path

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


def _snapshot_state(folder: Path) -> tuple[set[str], set[str]]:
    snapshots = {p.name for p in (folder / "snapshots").glob("*")} if folder.exists() else set()
    refs = {p.name for p in (folder / "refs").glob("*")} if folder.exists() else set()
    return snapshots, refs


def _clean_failed_download(folder: Path, before: tuple[set[str], set[str]]) -> None:
    """Remove incomplete blobs and any snapshot or ref this failed call created."""
    if not folder.exists():
        return
    for partial in (folder / "blobs").glob("*.incomplete"):
        partial.unlink(missing_ok=True)
    snapshots, refs = _snapshot_state(folder)
    for name in snapshots - before[0]:
        shutil.rmtree(folder / "snapshots" / name, ignore_errors=True)
    for name in refs - before[1]:
        (folder / "refs" / name).unlink(missing_ok=True)
    if not before[0] and not any((folder / "snapshots").glob("*")):
        shutil.rmtree(folder, ignore_errors=True)  # a first download that failed leaves nothing


def has_tokenizer_file(folder: Path) -> bool:
    """True if the folder holds something labkit can read as a tokenizer."""
    return any((folder / name).is_file() for name in _TOKENIZER_FILES) or any(
        p.suffix in _TOKENIZER_SUFFIXES for p in folder.iterdir() if p.is_file()
    )


def download_tokenizer_files(repo_id: str, *, revision: str | None = None, token: str | None = None) -> Path:
    """Fetch (or find in the cache) the tokenizer files of a Hub model; the snapshot folder.

    Example: ``download_tokenizer_files("org/model")`` -> ``~/.cache/huggingface/hub/models--org--model/snapshots/<sha>``
    """
    from huggingface_hub import snapshot_download
    from huggingface_hub import errors as hf_errors

    if not isinstance(repo_id, str) or repo_id.count("/") != 1 or not all(repo_id.split("/")):
        raise LabkitError(f"{repo_id!r} is not a Hub model id of the form 'org/model'")
    cache = hub_cache_dir()
    folder = _repo_folder(cache, repo_id)
    offline = _truthy(os.environ.get("HF_HUB_OFFLINE"))
    endpoint = os.environ.get("HF_ENDPOINT") or None
    where = f"{endpoint or 'the Hugging Face Hub'}"
    before = _snapshot_state(folder)
    try:
        with _hub_offline(offline):
            path = snapshot_download(
                repo_id,
                revision=revision,
                cache_dir=str(cache),
                allow_patterns=TOKENIZER_PATTERNS,
                token=token or os.environ.get("HF_TOKEN") or None,
                local_files_only=offline,
                endpoint=endpoint,
            )
    except hf_errors.GatedRepoError:
        _clean_failed_download(folder, before)
        raise LabkitError(f"{repo_id}: the repo is gated on {where}; accept its terms and set HF_TOKEN") from None
    except hf_errors.RepositoryNotFoundError:
        _clean_failed_download(folder, before)
        raise LabkitError(
            f"{repo_id}: no such repo on {where}, or it is private and HF_TOKEN is missing or wrong"
        ) from None
    except hf_errors.RevisionNotFoundError:
        _clean_failed_download(folder, before)
        raise LabkitError(f"{repo_id}: revision {revision!r} not found on {where}") from None
    except hf_errors.LocalEntryNotFoundError:
        _clean_failed_download(folder, before)
        why = "HF_HUB_OFFLINE is set" if offline else f"{where} cannot be reached"
        raise LabkitError(f"{repo_id}: not in the local cache ({cache}) and {why}") from None
    except Exception as exc:  # HTTP errors, dropped connections, and a malformed answer alike
        _clean_failed_download(folder, before)
        raise LabkitError(
            f"{repo_id}: download from {where} failed ({type(exc).__name__}: {str(exc).splitlines()[0][:200]}); "
            f"partial files were removed"
        ) from None
    path = Path(path)
    if not path.is_dir() or not has_tokenizer_file(path):
        raise LabkitError(
            f"{repo_id}: the repo has no tokenizer file (tokenizer.json, *.model, *.tiktoken, vocab.json, vocab.txt)"
        )
    return path
