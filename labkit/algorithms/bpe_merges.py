"""Convert between the ways BPE vocabularies order their merges: token ranks -> merges, and
SentencePiece scores -> merges. ``tokenizers`` only runs a merges list, so labkit's ``hf``
engine serves a ``.tiktoken`` file or a SentencePiece BPE model through these conversions.

* :func:`merges_from_ranks`: a tiktoken token of rank r is the merge of the two parts that
  rank BPE leaves on its own bytes when only merges ranked below r are allowed;
* :func:`spm_merges_from_scores`: every split of a normal piece into two pieces, ordered by
  the merged piece's score (highest first, as sentencepiece merges).

Introduced in notebooks ``00_tour`` and ``03_bpe_sentencepiece``.

Example:
    >>> from labkit.algorithms.bpe_merges import merges_from_ranks
    >>> merges_from_ranks([bytes([b]) for b in range(256)] + [b"ab"])
    [('a', 'b')]
"""
from __future__ import annotations

from typing import Sequence

from labkit.algorithms.bpe import bpe_heap, byte_parts
from labkit.algorithms.bytes_unicode import bytes_to_gpt2
from labkit.core import (
    TOKEN_BYTE,
    TOKEN_CONTROL,
    TOKEN_UNKNOWN,
    TOKEN_UNUSED,
    EngineUnavailable,
    FormatError,
    VocabData,
)


def merges_from_ranks(token_bytes: Sequence[bytes | None]) -> list[tuple[str, str]]:
    """Derive BPE merges from a rank-ordered byte vocabulary (tiktoken's form), spelled GPT-2 style.

    A token of rank r is the merge of the two parts that rank BPE, allowed only merges
    ranked below r, leaves when run on the token's own bytes (transformers converts
    tiktoken files the same way). Merges come out in rank order. The heap BPE keeps this
    O(L log L) per token of L bytes, so a hostile file of very long tokens loads quickly.
    Example:
        >>> from labkit.algorithms.bpe_merges import merges_from_ranks
        >>> merges_from_ranks([bytes([b]) for b in range(256)] + [b"ab"])
        [('a', 'b')]

    Introduced in notebook ``00_tour``.
    """
    ranks = {tb: rank for rank, tb in enumerate(token_bytes) if tb is not None}
    get = ranks.get
    merges = []
    for rank, tb in enumerate(token_bytes):
        if tb is None or len(tb) < 2:
            continue
        if len(tb) <= SHORT_TOKEN_BYTES:
            parts = _two_parts_by_rescanning(tb, get, rank)
        else:
            def below(a: bytes, b: bytes, limit: int = rank) -> int | None:
                # only merges ranked below this token exist yet (its own rank would join the last pair)
                r = get(a + b)
                return r if r is not None and r < limit else None

            parts = bpe_heap(byte_parts(tb), below)
        if len(parts) != 2 or parts[0] not in ranks or parts[1] not in ranks:
            raise FormatError(f"token of rank {rank} ({tb[:40]!r}) is not the merge of two lower-ranked tokens")
        merges.append((bytes_to_gpt2(parts[0]), bytes_to_gpt2(parts[1])))
    return merges


# up to this many bytes, a token's parts are found by rescanning (no heap: qwen2's 151k tokens
# take a quarter less time); a longer one keeps the heap, so a hostile file's long tokens stay O(L log L)
SHORT_TOKEN_BYTES = 32


def _two_parts_by_rescanning(token: bytes, get, limit: int) -> list[bytes]:
    """Rank BPE on ``token``'s bytes with only the ranks below ``limit``, stopped at two parts
    (those two never merge below ``limit``: their merge is the token itself, of rank ``limit``).

    Example:
        >>> ranks = {b"ab": 256, b"abc": 257}
        >>> _two_parts_by_rescanning(b"abc", ranks.get, 257)
        [b'ab', b'c']
    """
    never = limit  # a pair that is no token, or not yet one, never merges here
    parts = [token[i:i + 1] for i in range(len(token))]
    pair_ranks = [get(a + b, never) for a, b in zip(parts, parts[1:])]
    pair_ranks = [r if r < limit else never for r in pair_ranks]
    while len(parts) > 2:
        best = min(pair_ranks)
        if best == never:
            break
        i = pair_ranks.index(best)  # the leftmost of the lowest rank
        parts[i] += parts.pop(i + 1)
        del pair_ranks[i]
        if i < len(pair_ranks):
            r = get(parts[i] + parts[i + 1], never)
            pair_ranks[i] = r if r < limit else never
        if i:
            r = get(parts[i - 1] + parts[i], never)
            pair_ranks[i - 1] = r if r < limit else never
    return parts


def spm_merges_from_scores(vocab: VocabData) -> list[tuple[str, str]]:
    """Rebuild BPE merges from SentencePiece scores: every split of a normal piece into two
    pieces of the vocab, ordered by the merged piece's score (highest first).

    Example:
        >>> from labkit.algorithms.bpe_merges import spm_merges_from_scores
        >>> from labkit.formats.gguf import read_gguf
        >>> from labkit.paths import bundled_path
        >>> spm_merges_from_scores(read_gguf(bundled_path("llama-spm")))[0]
        ('▁', 't')

    Introduced in notebooks ``00_tour`` and ``03_bpe_sentencepiece``.
    """
    if vocab.scores is None:
        raise EngineUnavailable(f"{vocab.name}: SentencePiece BPE needs scores to order its merges")
    ids = {}
    for index, (token, ttype) in enumerate(zip(vocab.tokens, vocab.token_types)):
        if ttype not in (TOKEN_CONTROL, TOKEN_UNKNOWN, TOKEN_BYTE, TOKEN_UNUSED):
            ids.setdefault(token, index)
    found = []
    for piece, index in ids.items():
        for cut in range(1, len(piece)):
            left, right = piece[:cut], piece[cut:]
            if left in ids and right in ids:
                # sentencepiece merges the pair whose result scores highest; ties: lower id first
                found.append((-vocab.scores[index], index, ids[left], ids[right], left, right))
    found.sort()
    return [(left, right) for *_, left, right in found]
