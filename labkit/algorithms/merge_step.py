"""One BPE merge, as both BPE flavours record it: which pair was joined, where, and why.

Rank BPE (GPT-2 style, parts are bytes) picks the pair with the lowest rank; score BPE
(SentencePiece, parts are strings) picks the pair whose merged piece scores highest. A step
carries whichever number chose it and the parts just before it, so a viewer can replay it.
Introduced in notebooks ``02_bpe_byte_level`` (rank) and ``03_bpe_sentencepiece`` (score).

Example:
    >>> from labkit.algorithms.merge_step import MergeStep
    >>> MergeStep(0, 0, b"l", b"o", b"lo", rank=0, parts_before=(b"l", b"o", b"w")).parts_after
    (b'lo', b'w')
"""
from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class MergeStep:
    """One merge: ``left + right`` became ``merged`` at index ``position`` of the parts.

    Example:
        >>> from labkit.algorithms.merge_step import MergeStep
        >>> MergeStep(1, 0, "▁", "t", "▁t", score=-1.0)
        MergeStep(step=1, position=0, left='▁', right='t', merged='▁t', rank=None, score=-1.0, parts_before=())
    """

    step: int                          # 0-based merge number
    position: int                      # index of the left part among the parts before this merge
    left: bytes | str
    right: bytes | str
    merged: bytes | str
    rank: int | None = None            # rank BPE: the pair's rank (lowest merges first)
    score: float | None = None         # score BPE: the merged piece's score (highest merges first)
    parts_before: tuple = ()           # every part before this merge

    @property
    def parts_after(self) -> tuple:
        """Every part after this merge.

        Example:
            >>> MergeStep(1, 1, "l", "o", "lo", parts_before=("▁", "l", "o", "w")).parts_after
            ('▁', 'lo', 'w')
        """
        p = self.position
        return self.parts_before[:p] + (self.merged,) + self.parts_before[p + 2 :]
