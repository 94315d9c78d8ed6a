"""The README's table of limits says what the code enforces (each row against its constant)."""
from __future__ import annotations

from pathlib import Path

from labkit.algorithms.aho_corasick import MAX_PATTERN_CHARS
from labkit.cache.cached_tokenizer import CacheConfig
from labkit.chat.budget import DEFAULT_LIMITS
from labkit.formats import hub
from labkit.formats.files import SIZE_LIMITS
from labkit.formats.hf_config import MAX_TEMPLATE_BYTES

README = (Path(__file__).resolve().parent.parent / "README.md").read_text(encoding="utf-8")
MIB = 2**20


def row(label: str) -> str:
    line = next((line for line in README.splitlines() if line.startswith(f"| {label} |")), None)
    assert line is not None, f"README has no limits row for {label!r}"
    return line


def test_file_sizes():
    assert f"| {SIZE_LIMITS['spm_model'] // MIB} MiB |" in row("`.model` file")
    assert f"| {SIZE_LIMITS['tiktoken'] // MIB} MiB |" in row("`.tiktoken` file")
    assert f"| {SIZE_LIMITS['vocab.txt'] // MIB} MiB |" in row("`vocab.txt`")
    assert f"| {SIZE_LIMITS['vocab_merges'] // MIB} MiB |" in row("`vocab.json`, `merges.txt`")
    assert f"| {SIZE_LIMITS['tokenizer.json'] // MIB} MiB |" in row("`tokenizer.json` and other JSON")
    assert SIZE_LIMITS["file"] == SIZE_LIMITS["tokenizer.json"]
    assert f"| {SIZE_LIMITS['gguf header'] // MIB} MiB window |" in row("GGUF: the header is mapped, never read whole")


def test_hub_chat_stop_and_cache():
    assert f"| {hub.MAX_FILE_BYTES // MIB} MiB " in row("a file downloaded from the Hub")
    assert f"| {hub.REQUEST_TIMEOUT:.0f} s / {hub.DEADLINE:.0f} s " in row("Hub: no progress on a connection / the whole call")
    assert f"| {MAX_TEMPLATE_BYTES // MIB} MiB |" in row("a chat template file")
    render = row("one chat template render")
    assert f"{DEFAULT_LIMITS.max_seconds} s, {DEFAULT_LIMITS.max_steps:,} steps, {DEFAULT_LIMITS.max_output:,} characters out" in render
    assert f"| {MAX_PATTERN_CHARS:,} characters |" in row("stop strings of one stop set, in all")
    config = CacheConfig()
    cache = row("the tokenization cache's budget")
    from labkit.cache.cached_tokenizer import SHARE_OF_BUDGET
    from labkit.cache.prefix_tree import PrefixTree

    assert SHARE_OF_BUDGET == 8 and PrefixTree(max_bytes=8 * MIB).max_entry == MIB and "at most 1/8 of its level" in cache
    assert f"L0 {config.l0_max_memory // MIB} MiB and {config.l0_max_entries:,} entries, L1 {config.l1_max_memory // MIB} MiB" in cache
