"""data/MANIFEST.tsv lists every bundled data file with its exact size and sha256.

Every file under data/ (except the manifest itself and data/README.md) has a row; every row
names a file that exists; sizes and hashes match byte for byte (a re-saved or normalised
file fails here before it silently changes a test vector).
"""
from __future__ import annotations

import hashlib
import re
from pathlib import Path

import pytest

from labkit.paths import data_dir

NOT_LISTED = {"MANIFEST.tsv", "README.md"}
COLUMNS = ["file", "bytes", "sha256", "source", "license/notes"]


def manifest_rows() -> list[dict[str, str]]:
    lines = (data_dir() / "MANIFEST.tsv").read_text(encoding="utf-8").splitlines()
    header = lines[0].split("\t")
    assert header == COLUMNS
    rows = []
    for line_no, line in enumerate(lines[1:], 2):
        if not line.strip():
            continue
        fields = line.split("\t")
        assert len(fields) == len(COLUMNS), f"MANIFEST.tsv line {line_no} has {len(fields)} columns"
        rows.append(dict(zip(COLUMNS, fields)))
    return rows


def data_files() -> set[str]:
    root = data_dir()
    return {p.relative_to(root).as_posix() for p in root.rglob("*") if p.is_file()} - NOT_LISTED


def test_manifest_rows_are_well_formed():
    rows = manifest_rows()
    assert rows
    names = [row["file"] for row in rows]
    assert len(names) == len(set(names)), "a file is listed twice"
    for row in rows:
        path = row["file"]
        assert not path.startswith("/") and ".." not in Path(path).parts, path
        assert re.fullmatch(r"[0-9]+", row["bytes"]), row
        assert re.fullmatch(r"[0-9a-f]{64}", row["sha256"]), row
        assert row["source"].strip() and row["license/notes"].strip(), row


def test_every_data_file_is_listed_and_every_row_exists():
    listed = {row["file"] for row in manifest_rows()}
    on_disk = data_files()
    assert sorted(on_disk - listed) == [], "files in data/ missing from MANIFEST.tsv"
    assert sorted(listed - on_disk) == [], "MANIFEST.tsv rows whose file is missing"


@pytest.mark.parametrize("row", manifest_rows(), ids=lambda row: row["file"])
def test_size_and_sha256_match(row):
    path = data_dir() / row["file"]
    assert path.is_file(), f"{row['file']} is missing"
    content = path.read_bytes()
    assert len(content) == int(row["bytes"]), f"{row['file']}: size differs"
    assert hashlib.sha256(content).hexdigest() == row["sha256"], f"{row['file']}: sha256 differs"
