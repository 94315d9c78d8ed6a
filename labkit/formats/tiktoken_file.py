"""Read a ``.tiktoken`` file (one ``base64(token bytes) rank`` pair per line) into VocabData.

A tiktoken encoding is a byte-level BPE whose merge order *is* the rank: merging two
neighbours is allowed when their concatenation has a rank, lowest rank first. So the file
holds no merges; ids are ranks. The file's sha256 is checked against the published hashes
(a known encoding whose bytes differ is an error, since special-token ids and the split
regex would silently be wrong). Special tokens are not in the file: they come from a table
of the known encodings.
Introduced in notebook ``02_bpe_byte_level`` (cl100k) and ``11_factory_formats_hub``.

Example:
    >>> from labkit.formats.tiktoken_file import read_tiktoken
    >>> from labkit.paths import data_path
    >>> read_tiktoken(data_path("tiktoken/cl100k_base.tiktoken")).specials.eos_id
    100257
"""
from __future__ import annotations

import ast
import base64
import binascii
import hashlib
import importlib.util
from functools import lru_cache
from pathlib import Path

from labkit.algorithms.bytes_unicode import bytes_to_gpt2
from labkit.formats.files import file_bytes
from labkit.core import (
    TOKEN_CONTROL,
    TOKEN_NORMAL,
    TOKEN_UNUSED,
    AddedToken,
    FormatError,
    SpecialTokens,
    VocabData,
)

_EOT = "<|endoftext|>"

# The published encodings: sha256 of the .tiktoken file, special tokens, and the name of
# their split in labkit.algorithms.pretokenize (tiktoken's own spelling of each regex).
KNOWN_ENCODINGS: dict[str, dict] = {
    "cl100k_base": {
        "sha256": "223921b76ee99bde995b7ff738513eef100fb51d18c93597a113bcffe865b2a7",
        "special_tokens": {_EOT: 100257, "<|fim_prefix|>": 100258, "<|fim_middle|>": 100259,
                           "<|fim_suffix|>": 100260, "<|endofprompt|>": 100276},
        "pre": "cl100k",
    },
    "r50k_base": {
        "sha256": "306cd27f03c1a714eca7108e03d66b7dc042abe8c258b44c199a7ed9838dd930",
        "special_tokens": {_EOT: 50256},
        "pre": "r50k",
    },
    "p50k_base": {
        "sha256": "94b5ca7dff4d00767bc256fdd1b27e5b17361d7b8a5f968547f9f23eb70d2069",
        "special_tokens": {_EOT: 50256},
        "pre": "p50k",
    },
    "o200k_base": {
        "sha256": "446a9538cb6c348e3516120d7c08b09f57c36495e2acfffe59a5bf8b0cfb1a2d",
        "special_tokens": {_EOT: 199999, "<|endofprompt|>": 200018},
        "pre": "o200k",
    },
}
# ids may skip numbers (cl100k has holes before its specials), but not by this much:
# a corrupt rank must not make us allocate a huge table
_MAX_HOLES = 1 << 16


@lru_cache(maxsize=1)
def tiktoken_expected_hashes() -> dict[str, set[str]]:
    """Encoding name -> acceptable sha256 values: labkit's table plus, when ``tiktoken_ext``
    is installed, the ``expected_hash`` of each ``load_tiktoken_bpe(".../<name>.tiktoken")``
    call in its source (read with ``ast``, never executed: the constructors download).

    Example:
        >>> import hashlib
        >>> from labkit.paths import data_path
        >>> from labkit.formats.tiktoken_file import tiktoken_expected_hashes
        >>> sha = hashlib.sha256(data_path("tiktoken/cl100k_base.tiktoken").read_bytes()).hexdigest()
        >>> sha in tiktoken_expected_hashes()["cl100k_base"]
        True

    Introduced in notebook ``02_bpe_byte_level``.
    """
    table = {name: {info["sha256"]} for name, info in KNOWN_ENCODINGS.items()}
    try:
        spec = importlib.util.find_spec("tiktoken_ext.openai_public")
    except (ImportError, ValueError):
        spec = None
    if spec is None or not spec.origin:
        return table
    try:
        tree = ast.parse(Path(spec.origin).read_text(encoding="utf-8"))
    except (OSError, SyntaxError, UnicodeDecodeError, ValueError):
        return table
    for node in ast.walk(tree):
        if not isinstance(node, ast.Call) or not node.args:
            continue
        url = node.args[0]
        digest = next((k.value for k in node.keywords if k.arg == "expected_hash"), None)
        if not (isinstance(url, ast.Constant) and isinstance(url.value, str) and url.value.endswith(".tiktoken")):
            continue
        if isinstance(digest, ast.Constant) and isinstance(digest.value, str):
            name = url.value.rsplit("/", 1)[-1][: -len(".tiktoken")]
            table.setdefault(name, set()).add(digest.value.lower())
    return table


def identify_encoding(digest: str, filename: str) -> str | None:
    """The known encoding a file is, by its sha256 first, else by its file name (checked).

    Example:
        >>> import hashlib
        >>> from labkit.paths import data_path
        >>> from labkit.formats.tiktoken_file import identify_encoding
        >>> sha = hashlib.sha256(data_path("tiktoken/cl100k_base.tiktoken").read_bytes()).hexdigest()
        >>> identify_encoding(sha, "cl100k_base.tiktoken")
        'cl100k_base'

    Introduced in notebook ``02_bpe_byte_level``.
    """
    hashes = tiktoken_expected_hashes()
    for name, digests in hashes.items():
        if digest in digests:
            return name
    stem = Path(filename).name
    if stem.endswith(".tiktoken"):
        stem = stem[: -len(".tiktoken")]
    if stem in hashes:
        raise FormatError(
            f"{filename}: named like the {stem} encoding but its sha256 {digest} does not match "
            f"the published hash {sorted(hashes[stem])[0]}: the file is corrupt or not {stem}"
        )
    return None


def parse_tiktoken_ranks(data: bytes, source: str) -> dict[bytes, int]:
    """Parse ``base64 rank`` lines into {token bytes: rank}; every defect names its line.

    Example:
        >>> from labkit.formats.tiktoken_file import parse_tiktoken_ranks
        >>> parse_tiktoken_ranks(b"IQ== 0\\n", "x")
        {b'!': 0}

    Introduced in notebook ``02_bpe_byte_level``.
    """
    try:
        text = data.decode("ascii")
    except UnicodeDecodeError as exc:
        raise FormatError(f"{source}: a .tiktoken file is ASCII; byte {exc.start} is 0x{data[exc.start]:02x}") from None
    ranks: dict[bytes, int] = {}
    seen_ranks: set[int] = set()
    for line_no, line in enumerate(text.splitlines(), 1):
        if not line.strip():
            continue
        parts = line.split()
        if len(parts) != 2:
            raise FormatError(f"{source}: line {line_no} should be 'base64 rank', got {line[:60]!r}")
        token_b64, rank_text = parts
        if not rank_text.isdigit() or len(rank_text) > 12:
            raise FormatError(f"{source}: line {line_no}: rank {rank_text[:20]!r} is not a non-negative integer")
        try:
            token = base64.b64decode(token_b64, validate=True)
        except (binascii.Error, ValueError):
            raise FormatError(f"{source}: line {line_no}: {token_b64[:40]!r} is not valid base64") from None
        if not token:
            raise FormatError(f"{source}: line {line_no}: empty token")
        rank = int(rank_text)
        if token in ranks:
            raise FormatError(f"{source}: line {line_no}: token {token!r} already has rank {ranks[token]}")
        if rank in seen_ranks:
            raise FormatError(f"{source}: line {line_no}: rank {rank} is given to two tokens")
        ranks[token] = rank
        seen_ranks.add(rank)
    if not ranks:
        raise FormatError(f"{source}: no 'base64 rank' lines: empty .tiktoken file")
    return ranks


def read_tiktoken(path, *, pre: str | None = None, data: bytes | None = None) -> VocabData:
    """Read a ``.tiktoken`` file into VocabData (model "bpe_byte", ids = ranks, merges None).

    Ids with no token (holes, such as cl100k's 100256 and 100261-100275) get type UNUSED,
    a placeholder spelling ``<|unused_ID|>`` and no bytes.
    Example:
        >>> from labkit.paths import data_path
        >>> from labkit.formats.tiktoken_file import read_tiktoken
        >>> read_tiktoken(data_path("tiktoken/cl100k_base.tiktoken")).tokens[9906]
        'Hello'

    Introduced in notebook ``02_bpe_byte_level``.
    """
    source = str(path)
    data = file_bytes(path, data, "tiktoken")
    digest = hashlib.sha256(data).hexdigest()
    name = identify_encoding(digest, source)
    ranks = parse_tiktoken_ranks(data, source)
    info = KNOWN_ENCODINGS.get(name or "", {})
    special_tokens: dict[str, int] = dict(info.get("special_tokens", {}))
    used_ranks = set(ranks.values())
    for content, index in special_tokens.items():
        if index in used_ranks:
            raise FormatError(f"{source}: special token {content!r} id {index} is also a rank in the file")
    size = max(max(ranks.values()), max(special_tokens.values(), default=-1)) + 1
    if size - len(ranks) - len(special_tokens) > _MAX_HOLES:
        raise FormatError(f"{source}: ranks go up to {size - 1} but only {len(ranks)} tokens are given")

    tokens: list[str | None] = [None] * size
    token_bytes: list[bytes | None] = [None] * size
    types = [TOKEN_UNUSED] * size
    for raw, rank in ranks.items():
        tokens[rank] = bytes_to_gpt2(raw)
        token_bytes[rank] = raw
        types[rank] = TOKEN_NORMAL
    added = []
    for content, index in sorted(special_tokens.items(), key=lambda item: item[1]):
        tokens[index] = content
        types[index] = TOKEN_CONTROL
        added.append(AddedToken(content, index, special=True))
    holes = [i for i, t in enumerate(tokens) if t is None]
    for index in holes:
        tokens[index] = f"<|unused_{index}|>"
    eot = special_tokens.get(_EOT)
    specials = SpecialTokens(
        eos=_EOT if eot is not None else None, eos_id=eot,
        eos_ids=(eot,) if eot is not None else (),
    )
    metadata = {"sha256": digest, "encoding_name": name, "n_ranks": len(ranks), "holes": holes}
    return VocabData(
        source=source,
        format="tiktoken",
        model="bpe_byte",
        tokens=tokens,  # type: ignore[arg-type]  (no None left)
        token_types=types,
        merges=None,
        token_bytes=token_bytes,
        pre=pre if pre is not None else info.get("pre"),
        specials=specials,
        added_tokens=added,
        metadata=metadata,
    )
