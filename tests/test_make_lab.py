"""`make lab` starts JupyterLab on the book and serves /lab (then we stop it)."""
from __future__ import annotations

import os
import shutil
import signal
import socket
import subprocess
import time
import urllib.request
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.mark.skipif(shutil.which("make") is None, reason="make is not installed")
def test_make_lab_serves_the_book():
    port = free_port()
    args = f"--no-browser --port {port} --ServerApp.ip=127.0.0.1 --IdentityProvider.token=labkit-test"
    process = subprocess.Popen(["make", "-s", "lab", f"LAB_ARGS={args}"], cwd=ROOT, stdout=subprocess.PIPE,
                               stderr=subprocess.STDOUT, start_new_session=True)
    try:
        deadline = time.monotonic() + 90
        status, listing = None, ""
        while time.monotonic() < deadline and process.poll() is None:
            try:
                with urllib.request.urlopen(f"http://127.0.0.1:{port}/lab?token=labkit-test", timeout=5) as r:
                    status = r.status
                with urllib.request.urlopen(f"http://127.0.0.1:{port}/api/contents?token=labkit-test", timeout=5) as r:
                    listing = r.read().decode()
                break
            except OSError:
                time.sleep(0.5)
        assert status == 200, process.stdout.read().decode()[-2000:] if process.poll() is not None else "no answer"
        assert "00_tour.ipynb" in listing
    finally:
        os.killpg(process.pid, signal.SIGTERM)
        try:
            process.wait(timeout=20)
        except subprocess.TimeoutExpired:
            os.killpg(process.pid, signal.SIGKILL)
