"""The Hub loader against a local Hub on 127.0.0.1: first download, cache, private repos,
missing repos and files, and connections dropped mid-file."""
from __future__ import annotations

import hashlib

import pytest

import labkit
from labkit.formats.hub import download_tokenizer_files
from labkit.formats.hub_server import LocalHub
from labkit.paths import data_path

MINILM = data_path("hf/all-MiniLM-L6-v2")
TOKEN = "hf_labkit_test_token"


def repos():
    tokenizer = {name: (MINILM / name).read_bytes() for name in ("tokenizer.json", "tokenizer_config.json", "vocab.txt")}
    return {
        "labkit-test/minilm": {**tokenizer, "model.safetensors": b"\0" * 4096, "config.json": b"{}"},
        "labkit-test/private": dict(tokenizer),
        "labkit-test/weights-only": {"model.safetensors": b"\0" * 16, "config.json": b"{}"},
        "labkit-test/botchan": {"spiece.model": data_path("sentencepiece/botchan_en_unigram_1000.model").read_bytes()},
    }


@pytest.fixture
def hub_env(monkeypatch, tmp_path):
    monkeypatch.setenv("HF_HOME", str(tmp_path / "hf"))
    monkeypatch.delenv("HF_HUB_CACHE", raising=False)
    monkeypatch.delenv("HF_TOKEN", raising=False)
    monkeypatch.delenv("HF_HUB_OFFLINE", raising=False)
    monkeypatch.setenv("HF_HUB_DISABLE_PROGRESS_BARS", "1")
    return tmp_path / "hf" / "hub"


def leftovers(cache):
    """Files in the cache a later load could read (lock files hold no data)."""
    return sorted(str(p.relative_to(cache)) for p in cache.rglob("*")
                  if (p.is_file() or p.is_symlink()) and ".locks" not in p.parts)


def test_first_download_fetches_tokenizer_files_only_then_the_cache_serves(hub_env, monkeypatch):
    with LocalHub(repos()) as hub:
        monkeypatch.setenv("HF_ENDPOINT", hub.url)
        tok = labkit.load("labkit-test/minilm")
        assert sorted(hub.fetched()) == ["tokenizer.json", "tokenizer_config.json", "vocab.txt"]
    reference = labkit.load("minilm")
    text = "Hello, how are you doing today? unaffable"
    assert tok.encode(text).ids == reference.encode(text).ids
    # the server is gone: the second load comes from the cache, with and without HF_HUB_OFFLINE
    again = labkit.load("labkit-test/minilm")
    assert again.encode(text).ids == reference.encode(text).ids
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    assert labkit.load("labkit-test/minilm").encode(text).ids == reference.encode(text).ids


def test_sentencepiece_model_repo(hub_env, monkeypatch):
    with LocalHub(repos()) as hub:
        monkeypatch.setenv("HF_ENDPOINT", hub.url)
        tok = labkit.load("labkit-test/botchan")
    assert tok.encode("What is LoRA?").ids == labkit.load("botchan-unigram").encode("What is LoRA?").ids


def test_named_chat_templates_are_downloaded(hub_env, monkeypatch):
    files = {name: (MINILM / name).read_bytes() for name in ("tokenizer.json", "tokenizer_config.json", "vocab.txt")}
    files.update({"chat_template.jinja": b"{{ 'default' }}", "additional_chat_templates/tool_use.jinja": b"{{ 'tools' }}",
                  "additional_chat_templates/notes.txt": b"not a template", "other/x.jinja": b"{{ 'no' }}"})
    with LocalHub({"labkit-test/chat": files}) as hub:
        monkeypatch.setenv("HF_ENDPOINT", hub.url)
        folder = download_tokenizer_files("labkit-test/chat")
        assert "additional_chat_templates/tool_use.jinja" in hub.fetched()
        assert not {"additional_chat_templates/notes.txt", "other/x.jinja"} & set(hub.fetched())
    assert (folder / "additional_chat_templates" / "tool_use.jinja").read_bytes() == b"{{ 'tools' }}"
    from labkit.chat.select import find_chat_templates
    found = find_chat_templates(folder)
    assert (found.pick(), found.pick(tools=[{"name": "search"}])) == ("{{ 'default' }}", "{{ 'tools' }}")


def test_private_repo_needs_the_token(hub_env, monkeypatch):
    with LocalHub(repos(), private={"labkit-test/private"}, token=TOKEN) as hub:
        monkeypatch.setenv("HF_ENDPOINT", hub.url)
        with pytest.raises(labkit.LabkitError, match="private and HF_TOKEN"):
            labkit.load("labkit-test/private")
        monkeypatch.setenv("HF_TOKEN", "hf_wrong")
        with pytest.raises(labkit.LabkitError, match="private and HF_TOKEN"):
            labkit.load("labkit-test/private")
        assert leftovers(hub_env) == []
        monkeypatch.setenv("HF_TOKEN", TOKEN)
        assert labkit.load("labkit-test/private").encode("hello").ids == labkit.load("minilm").encode("hello").ids


def test_missing_repo_file_or_tokenizer(hub_env, monkeypatch):
    content = repos()
    content["labkit-test/broken"] = dict(content["labkit-test/minilm"])
    with LocalHub(content) as hub:
        monkeypatch.setenv("HF_ENDPOINT", hub.url)
        with pytest.raises(labkit.LabkitError, match="no such repo"):
            labkit.load("labkit-test/nope")
        with pytest.raises(labkit.LabkitError, match="no tokenizer file"):
            labkit.load("labkit-test/weights-only")
        # listed by the repo info but gone when fetched
        real_files = content["labkit-test/broken"]
        hub.repos["labkit-test/broken"] = _ListedButMissing(real_files, missing="vocab.txt")
        with pytest.raises(labkit.LabkitError, match="download from"):
            labkit.load("labkit-test/broken")
    assert not [p for p in leftovers(hub_env) if "broken" in p]


class _ListedButMissing(dict):
    """A repo whose listing names a file that the file endpoint does not have."""

    def __init__(self, files, missing):
        super().__init__(files)
        self.missing = missing

    def __contains__(self, name):
        return name != self.missing and super().__contains__(name)


def test_connection_dropped_mid_file_leaves_nothing_a_later_load_would_trust(hub_env, monkeypatch):
    content = repos()
    with LocalHub(content, drop_after={("labkit-test/minilm", "tokenizer.json"): 50_000}) as hub:
        monkeypatch.setenv("HF_ENDPOINT", hub.url)
        with pytest.raises(labkit.LabkitError, match="partial files were removed"):
            labkit.load("labkit-test/minilm")
        assert not [p for p in leftovers(hub_env) if p.endswith(".incomplete")]
        assert not [p for p in leftovers(hub_env) if "/snapshots/" in p]
    # offline now: nothing partial is served from the cache
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    with pytest.raises(labkit.LabkitError, match="not in the local cache"):
        labkit.load("labkit-test/minilm")
    monkeypatch.delenv("HF_HUB_OFFLINE")
    with LocalHub(content) as hub:  # the network is back
        monkeypatch.setenv("HF_ENDPOINT", hub.url)
        folder = download_tokenizer_files("labkit-test/minilm")
    got = (folder / "tokenizer.json").read_bytes()
    assert hashlib.sha256(got).digest() == hashlib.sha256(content["labkit-test/minilm"]["tokenizer.json"]).digest()


def test_a_transient_drop_is_retried_and_the_file_is_exact(hub_env, monkeypatch):
    content = repos()
    with LocalHub(content, drop_after={("labkit-test/minilm", "tokenizer.json"): 50_000}, drop_times=1) as hub:
        monkeypatch.setenv("HF_ENDPOINT", hub.url)
        folder = download_tokenizer_files("labkit-test/minilm")
        assert hub.fetched().count("tokenizer.json") == 2  # the dropped try and the retry
    assert (folder / "tokenizer.json").read_bytes() == content["labkit-test/minilm"]["tokenizer.json"]


def test_bad_repo_ids_are_refused_before_any_request():
    for bad in ("", "a/b/c", "/x", "x/"):
        with pytest.raises(labkit.LabkitError):
            download_tokenizer_files(bad)


def test_offline_at_first_import_does_not_stick(hub_env, monkeypatch):
    """huggingface_hub freezes HF_HUB_OFFLINE at import; labkit reads it at each call."""
    from huggingface_hub import constants

    monkeypatch.setattr(constants, "HF_HUB_OFFLINE", True)  # as if imported while offline
    with LocalHub(repos()) as hub:
        monkeypatch.setenv("HF_ENDPOINT", hub.url)
        assert labkit.load("labkit-test/minilm").encode("hello").ids == labkit.load("minilm").encode("hello").ids
    assert constants.HF_HUB_OFFLINE is True  # restored after the call
