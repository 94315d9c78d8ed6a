"""Hostile Hub servers (issue 14), against the local Hub on 127.0.0.1: a 2 GiB
tokenizer.json, a body at 1 byte/s, Ctrl-C mid-download, two loads of one repo at once, a
redirect to another host, an ETag that names another sha256. Each ends in a LabkitError
(or the right files) within seconds, and leaves in the cache only complete snapshots."""
from __future__ import annotations

import hashlib
import os
import signal
import subprocess
import sys
import textwrap
import threading
import time
import tracemalloc

import pytest

import labkit
from labkit.formats.hub import download_tokenizer_files
from labkit.formats.hub_server import LocalHub, Zeros
from labkit.paths import data_path

MINILM = data_path("hf/all-MiniLM-L6-v2")
TOKEN = "hf_labkit_hostile_token"


def minilm_files() -> dict[str, bytes]:
    return {name: (MINILM / name).read_bytes() for name in ("tokenizer.json", "tokenizer_config.json", "vocab.txt")}


@pytest.fixture
def hub_env(monkeypatch, tmp_path):
    monkeypatch.setenv("HF_HOME", str(tmp_path / "hf"))
    for name in ("HF_HUB_CACHE", "HF_TOKEN", "HF_HUB_OFFLINE", "HF_ENDPOINT"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("HF_HUB_DISABLE_PROGRESS_BARS", "1")
    return tmp_path / "hf" / "hub"


def cache_files(cache) -> list[str]:
    if not cache.exists():
        return []
    return sorted(str(p.relative_to(cache)) for p in cache.rglob("*")
                  if (p.is_file() or p.is_symlink()) and ".locks" not in p.parts)


def test_a_2_gib_tokenizer_json_is_refused_before_its_body(hub_env, monkeypatch):
    files = {**minilm_files(), "tokenizer.json": Zeros(2 * 2**30)}
    with LocalHub({"org/huge": files}) as hub:
        monkeypatch.setenv("HF_ENDPOINT", hub.url)
        started = time.monotonic()
        tracemalloc.start()
        try:
            with pytest.raises(labkit.LabkitError, match="over the limit") as info:
                labkit.load("org/huge")
            peak = tracemalloc.get_traced_memory()[1]
        finally:
            tracemalloc.stop()
        assert time.monotonic() - started < 10  # about 0.1 s: no byte of the body is read
        assert peak < 32 * 2**20, peak  # nothing of the 2 GiB body is held
    print(info.value)
    assert "2,147,483,648 bytes" in str(info.value)
    assert cache_files(hub_env) == []


def test_a_body_without_a_length_is_stopped_at_the_cap(hub_env, monkeypatch):
    """A server need not announce a length; the cap also holds on the bytes that arrive."""
    files = minilm_files()
    with LocalHub({"org/minilm": files}, unsized={("org/minilm", "tokenizer.json")}) as hub:
        monkeypatch.setenv("HF_ENDPOINT", hub.url)
        with pytest.raises(labkit.LabkitError, match="over the limit of 100,000 bytes.*download was stopped"):
            download_tokenizer_files("org/minilm", max_file_bytes=100_000)
        assert cache_files(hub_env) == []
        folder = download_tokenizer_files("org/minilm")  # under the default cap it arrives whole
    assert (folder / "tokenizer.json").read_bytes() == files["tokenizer.json"]


def test_a_body_at_one_byte_a_second_ends_at_the_deadline(hub_env, monkeypatch):
    with LocalHub({"org/slow": minilm_files()}, slow={("org/slow", "tokenizer.json"): 1}) as hub:
        monkeypatch.setenv("HF_ENDPOINT", hub.url)
        started = time.monotonic()
        with pytest.raises(labkit.LabkitError, match="deadline"):
            download_tokenizer_files("org/slow", deadline=2, timeout=5)
        assert time.monotonic() - started < 15  # 2 s deadline, generous for a loaded machine
    assert cache_files(hub_env) == []


def test_a_server_that_stops_sending_ends_at_the_request_timeout(hub_env, monkeypatch):
    # 1 byte every 5 s: each wait outlasts the 1 s timeout for progress on the connection
    with LocalHub({"org/stall": minilm_files()}, slow={("org/stall", "tokenizer.json"): 0.2}) as hub:
        monkeypatch.setenv("HF_ENDPOINT", hub.url)
        started = time.monotonic()
        with pytest.raises(labkit.LabkitError, match="partial files were removed"):
            download_tokenizer_files("org/stall", timeout=1, deadline=60)
        assert time.monotonic() - started < 20  # three tries of about 1 s each
    assert cache_files(hub_env) == []


def test_ctrl_c_mid_download_leaves_nothing_behind(hub_env, tmp_path):
    with LocalHub({"org/slow": minilm_files()}, slow={("org/slow", "tokenizer.json"): 1}) as hub:
        code = textwrap.dedent("""
            import labkit
            labkit.load("org/slow")
        """)
        env = dict(os.environ, HF_ENDPOINT=hub.url, HF_HOME=str(tmp_path / "hf"), HF_HUB_DISABLE_PROGRESS_BARS="1")
        # Ctrl-C's default action in the child even when this run was started in the background,
        # where the shell hands every process SIGINT ignored (the child would not stop at all)
        child = subprocess.Popen([sys.executable, "-c", code], env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                 preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))
        waited = 0.0
        while "tokenizer.json" not in hub.fetched() and waited < 60:
            time.sleep(0.1)
            waited += 0.1
        time.sleep(0.5)  # a few bytes of the body have arrived
        child.send_signal(signal.SIGINT)
        _, err = child.communicate(timeout=30)  # it stops at once: no executor thread to wait for
    assert b"KeyboardInterrupt" in err
    assert cache_files(hub_env) == []
    assert not list(hub_env.rglob("*.incomplete"))


def test_a_failed_load_never_removes_another_loads_snapshot(hub_env, monkeypatch):
    """Two loads of one repo at once: the slow one fails after the fast one has finished."""
    files = minilm_files()
    results = {}
    with LocalHub({"org/minilm": files}) as fast, \
            LocalHub({"org/minilm": files}, slow={("org/minilm", "tokenizer.json"): 1}) as slow:

        def slow_load():
            try:
                download_tokenizer_files("org/minilm", endpoint=slow.url, deadline=3)
            except labkit.LabkitError as exc:
                results["slow"] = str(exc)

        thread = threading.Thread(target=slow_load)
        thread.start()
        while "tokenizer.json" not in slow.fetched():
            time.sleep(0.05)
        results["fast"] = download_tokenizer_files("org/minilm", endpoint=fast.url)  # completes first
        thread.join(30)
    assert "deadline" in results["slow"]
    snapshot = results["fast"]
    assert snapshot.is_dir() and (snapshot / "tokenizer.json").read_bytes() == files["tokenizer.json"]
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    assert labkit.load("org/minilm").encode("hello").ids == labkit.load("minilm").encode("hello").ids


def test_credentials_are_not_sent_to_another_host_after_a_redirect(hub_env, monkeypatch):
    files = minilm_files()
    with LocalHub({"org/private": files}, private={"org/private"}, token=TOKEN) as other:
        other.private = set()  # the file host answers anyone (as a CDN does)
        target = other.url.replace("127.0.0.1", "localhost") + "/org/private/resolve/main/tokenizer.json"
        with LocalHub({"org/private": files}, private={"org/private"}, token=TOKEN,
                      redirects={("org/private", "tokenizer.json"): target}) as hub:
            monkeypatch.setenv("HF_ENDPOINT", hub.url)
            monkeypatch.setenv("HF_TOKEN", TOKEN)
            folder = download_tokenizer_files("org/private")
            sent_to_hub = [auth for _, auth in hub.authorizations]
        sent_elsewhere = [auth for _, auth in other.authorizations]
    assert (folder / "tokenizer.json").read_bytes() == files["tokenizer.json"]
    assert f"Bearer {TOKEN}" in sent_to_hub  # the Hub itself gets the token
    assert sent_elsewhere and all(auth is None for auth in sent_elsewhere), sent_elsewhere


def test_a_file_whose_etag_names_another_sha256_is_rejected(hub_env, monkeypatch):
    files = minilm_files()
    wrong = hashlib.sha256(b"something else").hexdigest()
    with LocalHub({"org/minilm": files}, etags={("org/minilm", "tokenizer.json"): wrong}) as hub:
        monkeypatch.setenv("HF_ENDPOINT", hub.url)
        with pytest.raises(labkit.LabkitError, match="sha256") as info:
            labkit.load("org/minilm")
    assert wrong in str(info.value)
    assert cache_files(hub_env) == []
    right = hashlib.sha256(files["tokenizer.json"]).hexdigest()
    with LocalHub({"org/minilm": files}, etags={("org/minilm", "tokenizer.json"): right}) as hub:
        monkeypatch.setenv("HF_ENDPOINT", hub.url)
        assert labkit.load("org/minilm").encode("hello").ids == labkit.load("minilm").encode("hello").ids


def test_bad_limits_are_refused(hub_env):
    for kwargs in ({"max_file_bytes": 0}, {"timeout": -1}, {"deadline": "soon"}):
        with pytest.raises(labkit.LabkitError, match="positive number"):
            download_tokenizer_files("org/model", **kwargs)
