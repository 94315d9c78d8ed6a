"""Pre-tokenization for byte-level BPE: the regexes that cut text into words before merging.

Byte-level BPE never merges across a pre-token boundary, so the split decides much of the
result: whether ``" world"`` keeps its space, whether ``"12345"`` is one piece, ``"123"+"45"``
or five digits, whether ``"don't"`` keeps ``'t`` apart. Each model family has its own rule,
named by GGUF ``tokenizer.ggml.pre``. llama.cpp (``src/llama-vocab.cpp``) applies a *list*
of regexes in sequence: each regex cuts every piece left by the previous one, and the text
between matches is kept as a piece of its own (HF ``Split(..., behavior="isolated")``).

Where llama.cpp had to rewrite a pattern for its own regex engine (``(?i:'s|...)`` spelled as
``'[sS]|...``), this table keeps the original pattern of the model's ``tokenizer.json`` or
tiktoken's ``pat_str``: the ``regex`` module understands it, and it is what the reference
libraries run. They differ from llama.cpp's rewrite in two places, both documented choices
measured in ``tests/test_pre_types_llama_cpp.py``: case folds (``(?i:'s)`` also matches
``'ſ``, U+017F LONG S, in `regex`, Oniguruma and tiktoken alike; ``'[sS]`` does not), and
GPT-4o's and Tekken's case classes, which llama.cpp's engine cannot read (it reads every
``\\p{Lu}``/``\\p{Ll}`` as ``\\p{L}``) and rewrites as "a letter that is not a-z", so that ``é``
is upper case there (about 100 of 261 probe texts with non-ASCII letters split otherwise).
Everywhere else the table spells what llama.cpp runs: the names llama.cpp 0c1e5709 added are
transcribed as it spells them (Youtu's case classes as the letter runs its engine makes of
them), DeepSeek's CJK and fullwidth classes leave out the spaces inside their ranges (llama.cpp
matches such a pattern against text whose non-ASCII spaces are U+000B), and an empty match
(SuperBPE's digit-group lookahead) cuts where it is, in llama.cpp and ``tokenizers`` alike.
Names whose split labkit does not reproduce are refused (:data:`LLAMA_CPP_UNSERVED`).
One known gap: `regex` ships newer Unicode tables than Oniguruma, so a code point assigned
only in a recent Unicode version (U+3D000 is a letter to `regex`, unassigned to Python 3.11)
can land in a different class than in ``tokenizers``.

Two more per-model switches live here:

* ``nfc``: the model's ``tokenizer.json`` has an NFC normaliser (Qwen2, GPT-NeoX/MPT,
  Command-R); ``e`` + U+0301 becomes ``é`` before splitting. llama.cpp itself applies no
  normalisation before a BPE split (``llm_tokenizer_bpe_session::tokenize`` in
  ``src/llama-vocab.cpp``), so on decomposed text it differs from these models' references;
  Qwen3.5 has no NFC at all;
* ``ignore_merges``: Llama-3 first looks the whole pre-token up in the vocabulary and only
  runs BPE when it is absent (HF ``BPE(ignore_merges=True)``).

User-defined tokens (type 4 in GGUF, e.g. MPT's whitespace runs) are not handled by the
regex at all: readers turn them into non-special added tokens, which are cut out of the text
before pre-tokenization (see :mod:`labkit.algorithms.specials`).

Introduced in notebook ``02_bpe_byte_level``.

Example:
    >>> from labkit.algorithms.pretokenize import get_pre_tokenizer
    >>> get_pre_tokenizer("gpt-2").split("Hello world's 12345")
    ['Hello', ' world', "'s", ' 12345']
"""
from __future__ import annotations

import unicodedata
from dataclasses import dataclass, field

import regex

from labkit.algorithms.llama_bpe_utf8 import UTF8_BPE_RULES
from labkit.core import LabkitError

# --------------------------------------------------------------------------- the patterns

# GPT-2's split (HF ByteLevel(use_regex=True)); the final \s+ catches a whitespace run that
# \s+(?!\S) leaves behind (llama.cpp keeps that gap as a piece, which comes to the same).
GPT2 = r"""'s|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+"""
# Llama-3 (= cl100k without possessive quantifiers): numbers in runs of up to 3 digits.
LLAMA3 = (
    r"""(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,3}"""
    r"""| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+"""
)
# Qwen2: as Llama-3 but one digit at a time.
QWEN2 = (
    r"""(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}"""
    r"""| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+"""
)
# Qwen3.5: combining marks (\p{M}) stay inside words.
QWEN35 = (
    r"""(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?[\p{L}\p{M}]+|\p{N}"""
    r"""| ?[^\s\p{L}\p{M}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+"""
)
# GPT-4o / o200k: case-aware words (CamelCase splits), contractions glued to the word.
O200K = "|".join(
    [
        r"""[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]*[\p{Ll}\p{Lm}\p{Lo}\p{M}]+(?i:'s|'t|'re|'ve|'m|'ll|'d)?""",
        r"""[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]+[\p{Ll}\p{Lm}\p{Lo}\p{M}]*(?i:'s|'t|'re|'ve|'m|'ll|'d)?""",
        r"""\p{N}{1,3}""",
        r""" ?[^\s\p{L}\p{N}]+[\r\n/]*""",
        r"""\s*[\r\n]+""",
        r"""\s+(?!\S)""",
        r"""\s+""",
    ]
)
# tiktoken's own spellings (possessive quantifiers, and "$" meaning end of text as in Rust).
R50K_TIKTOKEN = r"""'(?:[sdmt]|ll|ve|re)| ?\p{L}++| ?\p{N}++| ?[^\s\p{L}\p{N}]++|\s++$|\s+(?!\S)|\s"""
CL100K_TIKTOKEN = (
    r"""'(?i:[sdmt]|ll|ve|re)|[^\r\n\p{L}\p{N}]?+\p{L}++|\p{N}{1,3}+| ?[^\s\p{L}\p{N}]++[\r\n]*+"""
    r"""|\s++$|\s*[\r\n]|\s+(?!\S)|\s"""
)
# the cased letters (Unicode L&) as DeepSeek spelled them, escaped: several of these code
# points (U+1FBE, U+2126, U+212A, ...) are changed by NFC, and an editor must not touch them
_DEEPSEEK_CASED = (
    "A-Za-z\u00B5\u00C0-\u00D6\u00D8-\u00F6\u00F8-\u01BA\u01BC-\u01BF\u01C4-"
    "\u0293\u0295-\u02AF\u0370-\u0373\u0376\u0377\u037B-\u037D\u037F\u0386\u0388"
    "-\u038A\u038C\u038E-\u03A1\u03A3-\u03F5\u03F7-\u0481\u048A-\u052F\u0531"
    "-\u0556\u10A0-\u10C5\u13A0-\u13F5\u13F8-\u13FD\u1C90-\u1CBA\u1CBD-\u1CBF"
    "\u1D00-\u1D2B\u1D6B-\u1D77\u1D79-\u1D9A\u1E00-\u1F15\u1F18-\u1F1D\u1F20"
    "-\u1F45\u1F48-\u1F4D\u1F50-\u1F57\u1F59\u1F5B\u1F5D\u1F5F-\u1F7D\u1F80-"
    "\u1FB4\u1FB6-\u1FBC\u1FBE\u1FC2-\u1FC4\u1FC6-\u1FCC\u1FD0-\u1FD3\u1FD6-"
    "\u1FDB\u1FE0-\u1FEC\u1FF2-\u1FF4\u1FF6-\u1FFC\u2102\u2107\u210A-\u2113\u2115"
    "\u2119-\u211D\u2124\u2126\u2128\u212A-\u212D\u212F-\u2134\u2139\u213C-\u213F"
    "\u2145-\u2149\u214E\u2183\u2184\u2C00-\u2C7B\u2C7E-\u2CE4\u2CEB-\u2CEE\u2CF2"
    "\u2CF3\uA640-\uA66D\uA680-\uA69B\uA722-\uA76F\uA771-\uA787\uA78B-\uA78E"
    "\uAB70-\uABBF\uFB00-\uFB06\uFB13-\uFB17\uFF21-\uFF3A\uFF41-\uFF5A\U00010400"
    "-\U0001044F\U000104B0-\U000104D3\U000104D8-\U000104FB\U00010C80-\U00010CB2"
    "\U00010CC0-\U00010CF2\U000118A0-\U000118DF\U0001E900-\U0001E943"
)
# The same two splits spelled so that Python's `regex` and Oniguruma (inside tokenizers) both
# run them as tiktoken does: no possessive quantifiers (Oniguruma reads "{1,3}+" as a repeat
# of a repeat), and "end of text" written as (?![\s\S]) because "$" also matches before a
# newline in both engines. Note cl100k is NOT Llama-3's split: "\s+(?![\s\S])" keeps
# "\n " at the end of a text as one piece, where Llama-3 cuts "\n" + " ".
R50K = r"""'(?:[sdmt]|ll|ve|re)| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?![\s\S])|\s+(?!\S)|\s"""
CL100K = (
    r"""'(?i:[sdmt]|ll|ve|re)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n]*"""
    r"""|\s+(?![\s\S])|\s*[\r\n]|\s+(?!\S)|\s"""
)
# DeepSeek's CJK run "[一-龥ࠀ-一가-퟿]+" (U+0800-U+4E00 is one of its ranges) and punctuation
# "[...　-。]" hold whitespace (U+1680, U+2000-U+200A, U+2028/9, U+202F, U+205F, U+3000).
# llama.cpp runs a pattern without \p{..} on a copy of the text where every non-ASCII
# whitespace is U+000B (unicode.cpp), so those classes never take a space there: they are
# spelled without them here (measured: as written, 30 and 33 of 261 probe texts differ).
_DEEPSEEK_CJK = "[一-龥ࠀ-\u167f\u1681-\u1fff\u200b-\u2027\u202a-\u202e\u2030-\u205e\u2060-\u2fff\u3001-一가-퟿]+"
# DeepSeek LLM (7B/67B): newlines alone, Latin-ish words, ASCII/fullwidth punctuation,
# trailing spaces, CJK/Hangul runs, numbers.
DEEPSEEK_LLM = (
    r"""[\r\n]""",
    "\\s?[" + _DEEPSEEK_CASED + "]+",
    r"""\s?[!-/:-~！-／：-～‘-‟、-。]+""",
    r"""\s+$""",
    _DEEPSEEK_CJK,
    r"""\p{N}+""",
)
DEEPSEEK_CODER = (
    r"""[\r\n]""",
    r"""\s?\p{L}+""",
    r"""\s?\p{P}+""",
    _DEEPSEEK_CJK,
    r"""\p{N}""",
)
# BLOOM / Poro / GPT-3 Finnish: anything up to whitespace or a few punctuation marks.
BLOOM = r""" ?[^(\s|.,!?…。，、।۔،)]+"""
TEKKEN = (
    r"""[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]*[\p{Ll}\p{Lm}\p{Lo}\p{M}]+"""
    r"""|[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]+[\p{Ll}\p{Lm}\p{Lo}\p{M}]*"""
    r"""|\p{N}| ?[^\s\p{L}\p{N}]+[\r\n/]*|\s*[\r\n]+|\s+(?!\S)|\s+"""
)


# --- pre types llama.cpp added by commit 0c1e5709, transcribed verbatim from its
# llm_tokenizer_bpe (src/llama-vocab.cpp), contractions spelled as it spells them ('[sS]):
# the models' own tokenizer.json patterns were not checked, and llama.cpp is what a GGUF is
# measured against (tests/test_pretokenize_llama_cpp_new.py holds its answers).
_LLAMA_CONTRACTIONS = r"""(?:'[sS]|'[tT]|'[rR][eE]|'[vV][eE]|'[mM]|'[lL][lL]|'[dD])"""
_GPT2_LLAMA_CPP = r"""'s|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)"""
# Jais-2: the Llama-3 split, with whitespace runs cut in powers of two
JAIS2 = (
    _LLAMA_CONTRACTIONS + r"""|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+"""
    r"""|\s{512}(?!\S)|\s{256}(?!\S)|\s{128}(?!\S)|\s{64}(?!\S)|\s{32}(?!\S)|\s{16}(?!\S)|\s{8}(?!\S)"""
    r"""|\s{4}(?!\S)|\s{1,2}(?!\S)|\s{1}"""
)
_CJK_KANA = r"""[一-龥぀-ゟ゠-ヿ]+"""
# DeepSeek-V3 (also Hunyuan-dense, JoyAI, HY-v4): digits in threes, CJK and kana runs, then words
DEEPSEEK3 = (
    r"""\p{N}{1,3}""",
    _CJK_KANA,
    r"""[!"#$%&'()*+,\-./:;<=>?@\[\\\]^_`{|}~][A-Za-z]+|[^\r\n\p{L}\p{P}\p{S}]?[\p{L}\p{M}]+"""
    r"""| ?[\p{P}\p{S}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+""",
)
SPARK2_5 = (
    r"""\p{N}{1,3}""",
    _CJK_KANA,
    r"""[!"#$%&'()*+,\-./:;<=>?@\[\\\]^_`{|}~][A-Za-z]+|[^\r\n\p{L}\p{P}\p{S}]?[\p{L}\p{M}]+"""
    r"""| ?[\p{P}\p{S}]+|[\r\n]|\s+(?!\S)|\s+""",
    r"""\p{N}""",
)
# llama.cpp's regex engine reads every letter class (\p{Lu}, \p{Ll} ...) as \p{L} (unicode.cpp,
# k_ucat_enum), so its "upper* lower+ | upper+ lower*" words are plain runs of letters and
# marks; these rows spell what it runs (measured: with the case classes, 77 of 261 texts differ)
_LETTER_RUN = r"""[^\r\n\p{L}\p{N}]?[\p{L}\p{M}]+""" + _LLAMA_CONTRACTIONS + "?"
YOUTU = (
    r"""[가-힣ㄱ-ㆎ]+|[！…“”‘’—：；，、-〿︰-﹏]+|[ㄅ-ㄯ]+|[一-龥぀-ゟ゠-ヿ]+""",
    _LETTER_RUN + r"""|\p{N}| ?[^\s\p{L}\p{N}]+[\r\n/]*|\s*[\r\n]+|\s+(?!\S)|\s+""",
)
QWEN2_LLAMA_CPP = (_LLAMA_CONTRACTIONS + r"""|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+"""
                   r"""|\s+(?!\S)|\s+""")
CHAMELEON = (
    r"""<sentinel:[0-9]+>""",
    r"""(IMGIMG)((A|B|C|D|E|F|G|H|I){1,4})Z""",
    r"""([\t\n]|    |  )""",
    r"""\p{N}""",
    r"""[\p{P}!-/:-@\[-`{-~]""",
    _GPT2_LLAMA_CPP,
)
# Granite multilingual embedding (97m): GPT-4o's split as llama.cpp spells it, marks as letters
GRANITE_EMB_MULTI = (
    r"""[^\r\n\p{L}\p{N}]?((?=[\p{L}\p{M}])([^a-z]))*((?=[\p{L}\p{M}])([^A-Z]))+""" + _LLAMA_CONTRACTIONS + "?"
    r"""|[^\r\n\p{L}\p{N}]?((?=[\p{L}\p{M}])([^a-z]))+((?=[\p{L}\p{M}])([^A-Z]))*""" + _LLAMA_CONTRACTIONS + "?"
    r"""|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n/]*|\s*[\r\n]+|\s+(?!\S)|\s+"""
)
# SuperBPE: digit runs, then a cut before every group of three digits counted from the right
# (an empty match: it cuts where it is, in llama.cpp and tokenizers alike)
SUPERBPE = (r"""\p{N}+""", r"""(?=([0-9]{3})+(?![0-9]))""")
BAILINGMOE = (r"""'(?:[sSdDmMtT]|[lL][lL]|[vV][eE]|[rR][eE])|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}| ?[^\s\p{L}\p{N}]+[\r\n]*"""
              r"""|\s*[\r\n]|\s+(?!\S)|\s+""")
SEED_CODER = (_LLAMA_CONTRACTIONS + r"""|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1}| ?[^\s\p{L}\p{N}\r\n]+|\s*[\r\n]+"""
              r"""|\s+(?!\S)|\s+""")
UFAKZEKA = r"""[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+"""
LAGUNA = (r"""[^\n]+|[\n]+""", QWEN2_LLAMA_CPP)
EXAONE_MOE = (_LLAMA_CONTRACTIONS + r"""|[^\r\n\p{L}\p{N}]?(?:\p{L}\p{M}*(?: \p{L}\p{M}*)*)+|\p{N}"""
              r"""| ?[^\s\p{L}\p{N}]+[\r\n/]?|\s*[\r\n]|\s+(?!\S)|\s+""")
# AFMoE's first step is no regex: llama.cpp names it \p{AFMoE_digits} and runs its own function
# (unicode_regex_split_custom_afmoe), which cuts each run of numbers into threes from the right,
# the text before the run going with the run's first group (digit_groups below). Tiny Aya's
# tokenizer.json spells its digit step "\d{1,3}(?=(?:\d{3})*\b)", but llama.cpp runs that same
# function for it (and the regex as written differs from it on 17 of 261 probe texts)
AFMOE_DIGITS = r"""\p{AFMoE_digits}"""
AFMOE = (
    AFMOE_DIGITS,
    r"""[一-鿿㐀-䶿豈-﫿぀-ゟ゠-ヿ･-ﾟ⼀-⿟เ-๿຀-໿ក-៿က-႟ꩠ-ꩿꧠ-꧿가-힯ᄀ-ᇿ]+""",
    DEEPSEEK3[2],
)
TINY_AYA = (AFMOE_DIGITS, _LETTER_RUN + r"""|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n/]*|\s*[\r\n]+|\s+(?!\S)|\s+""")
# Kimi-K2: llama.cpp splits it with a hand-written scanner (unicode_regex_split_custom_kimi_k2),
# which this one regex follows step by step: runs of its Han ranges (unicode_cpt_is_han, a fixed
# list of CJK blocks, unassigned code points in them included), runs of other letters with one
# leading character and an ASCII contraction, numbers in threes, then GPT-4o's punctuation and
# whitespace rules (measured: llama.cpp's ids on 261 probe and 1,500 random texts,
# data/gguf/custom_splits_llama_cpp.json)
_KIMI_HAN = "[\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff\U00020000-\U0002a6df\U0002a700-\U0002ebef\U0002f800-\U0002fa1f]"
KIMI_K2 = (_KIMI_HAN + "+|" + r"""[^\r\n\p{L}\p{N}]?(?:(?!""" + _KIMI_HAN + r""")\p{L})+(?:'[sStTmMdD]|'[rR][eE]|'[vV][eE]|'[lL][lL])?"""
           r"""|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+""")
_NUMBER_RUN = regex.compile(r"\p{N}+")


def digit_groups(text: str, start: int = 0, end: int | None = None) -> list[tuple[int, int]]:
    """llama.cpp's digit grouping (AFMoE, Tiny Aya) over ``text[start:end]``: each run of numbers
    cut into threes from the right (1-2 digits first when its length is no multiple of three),
    the text before a run joined to its first group, the text after the last run a piece.

    Example:
        >>> from labkit.algorithms.pretokenize import digit_groups
        >>> text = "x1234567 ab 12"
        >>> [text[s:e] for s, e in digit_groups(text)]
        ['x1', '234', '567', ' ab 12']
    """
    end = len(text) if end is None else end
    pieces, before = [], start
    for run in _NUMBER_RUN.finditer(text, start, end):
        run_start, run_end = run.span()
        first = run_start + ((run_end - run_start) % 3 or 3)
        pieces.append((before, first))
        pieces.extend((k, k + 3) for k in range(first, run_end, 3))
        before = run_end
    if before < end:
        pieces.append((before, end))
    return pieces


MINICPM5 = (r"""\p{N}{1,3}""",
            _LLAMA_CONTRACTIONS + r"""|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}+| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+""")


# --------------------------------------------------------------------------- Unicode versions

# Combining marks Python's unicodedata (Unicode 14.0.0) gives a nonzero combining class while
# the NFC of ``tokenizers`` 0.23 (the unicode-normalization crate's older tables) treats them
# as starters (class 0): 98 code points, measured by probing every mark and decomposable
# char through ``tokenizers.normalizers.NFC`` (tests/test_spmgguf_sweep_regressions.py and
# notebook 01 recompute it). labkit's NFC follows the reference: it never reorders or
# composes across these.
REFERENCE_STARTER_RANGES = (
    (0x07FD, 0x07FD), (0x0898, 0x089F), (0x08CA, 0x08D3), (0x09FE, 0x09FE), (0x0C3C, 0x0C3C),
    (0x0D3B, 0x0D3C), (0x0EBA, 0x0EBA), (0x1715, 0x1715), (0x1ABF, 0x1ACE), (0x1DF6, 0x1DFA),
    (0xA82C, 0xA82C), (0x10D24, 0x10D27), (0x10EAB, 0x10EAC), (0x10F46, 0x10F50), (0x10F82, 0x10F85),
    (0x11070, 0x11070), (0x1133B, 0x1133B), (0x1145E, 0x1145E), (0x11839, 0x1183A), (0x1193D, 0x1193E),
    (0x11943, 0x11943), (0x119E0, 0x119E0), (0x11A34, 0x11A34), (0x11A47, 0x11A47), (0x11A99, 0x11A99),
    (0x11D42, 0x11D42), (0x11D44, 0x11D45), (0x11D97, 0x11D97), (0x16FF0, 0x16FF1), (0x1E130, 0x1E136),
    (0x1E2AE, 0x1E2AE), (0x1E2EC, 0x1E2EF),
)
REFERENCE_STARTERS = frozenset(cp for a, b in REFERENCE_STARTER_RANGES for cp in range(a, b + 1))
_STARTER_SPLIT = regex.compile("([" + "".join(f"{chr(a)}-{chr(b)}" for a, b in REFERENCE_STARTER_RANGES) + "])")


def reference_nfc(text: str) -> str:
    """NFC as ``tokenizers`` computes it: Python's NFC, except that the marks of
    REFERENCE_STARTERS act as starters (nothing is reordered or composed across them).

    Example:
        >>> from labkit.algorithms.pretokenize import reference_nfc
        >>> import unicodedata
        >>> reference_nfc("a\\u0899\\u0898")
        'a࢙࢘'
        >>> unicodedata.normalize("NFC", "a\\u0899\\u0898")
        'a࢙࢘'
    """
    if _STARTER_SPLIT.search(text) is None:
        return unicodedata.normalize("NFC", text)
    return "".join(unicodedata.normalize("NFC", part) for part in _STARTER_SPLIT.split(text))


# --------------------------------------------------------------------------- the spec


@dataclass(frozen=True)
class PreTokenizerSpec:
    """How one ``tokenizer.ggml.pre`` splits text: regexes applied in sequence, plus NFC and
    ignore_merges switches.

    Example:
        >>> from labkit.algorithms.pretokenize import get_pre_tokenizer
        >>> get_pre_tokenizer("qwen2").split("abc 123")
        ['abc', ' ', '1', '2', '3']

    Introduced in notebook ``02_bpe_byte_level``.
    """

    name: str
    regexes: tuple[str, ...]
    nfc: bool = False
    ignore_merges: bool = False
    aliases: tuple[str, ...] = ()
    family: str = ""   # llama.cpp's LLAMA_VOCAB_PRE_TYPE_* this name maps to
    note: str = ""
    tiktoken_pattern: str | None = None  # tiktoken's pat_str verbatim, where it is a tiktoken encoding
    _compiled: tuple = field(default=(), init=False, repr=False, compare=False)

    def __post_init__(self):
        try:
            # a step llama.cpp runs as its own function is that function here (digit_groups)
            compiled = tuple(_CUSTOM_STEPS.get(r) or regex.compile(r) for r in self.regexes)
        except regex.error as exc:  # a broken table entry is a bug here, say which
            raise LabkitError(f"pre-tokenizer {self.name!r}: bad regex ({exc})") from None
        object.__setattr__(self, "_compiled", compiled)

    @property
    def custom_steps(self) -> tuple[str, ...]:
        """The steps llama.cpp runs as functions of its own, not as regexes (no regex engine
        such as tokenizers' can take them).

        Example:
            >>> from labkit.algorithms.pretokenize import AFMOE_DIGITS, get_pre_tokenizer
            >>> get_pre_tokenizer("afmoe").custom_steps == (AFMOE_DIGITS,), get_pre_tokenizer("qwen2").custom_steps
            (True, ())
        """
        return tuple(r for r in self.regexes if r in _CUSTOM_STEPS)

    @property
    def pattern(self) -> str | None:
        """The single regex when the split is one pattern (what tiktoken/HF ByteLevel take)."""
        return self.regexes[0] if len(self.regexes) == 1 else None

    def normalize(self, text: str) -> str:
        """The text the regexes see: NFC-normalised if this model does so, else unchanged.

        Example:
            >>> from labkit.algorithms.pretokenize import get_pre_tokenizer
            >>> get_pre_tokenizer("qwen2").normalize("e\\u0301")
            'é'
        """
        if self.nfc and not unicodedata.is_normalized("NFC", text):
            return reference_nfc(text)
        return text

    def spans(self, text: str) -> list[tuple[int, int]]:
        """(start, end) of each pre-token of ``text`` as given (no normalisation): matches
        and the gaps between them, covering the text with no overlap.

        Example:
            >>> from labkit.algorithms.pretokenize import get_pre_tokenizer
            >>> get_pre_tokenizer("gpt-2").spans("a b")
            [(0, 1), (1, 3)]
        """
        if not isinstance(text, str):
            raise LabkitError(f"pre-tokenizer {self.name!r}: spans() takes str, got {type(text).__name__}")
        pieces = [(0, len(text))] if text else []
        for pattern in self._compiled:
            cut: list[tuple[int, int]] = []
            for start, end in pieces:
                if callable(pattern):  # a custom step: it covers the piece itself
                    cut.extend(pattern(text, start, end))
                    continue
                cursor = start
                for match in pattern.finditer(text, start, end):
                    s, e = match.span()
                    if s > cursor:
                        cut.append((cursor, s))  # text between matches stays a piece
                        cursor = s  # (so an empty match, a pure lookahead, cuts where it is)
                    if s < e:
                        cut.append((s, e))
                        cursor = e
                if cursor < end:
                    cut.append((cursor, end))
            pieces = cut
        return pieces

    def split_normalized(self, text: str) -> list[str]:
        """Pre-tokens of already-normalised ``text`` (fast path: one findall when its matches
        cover the text, none empty; a pattern with groups, whose findall gives the groups, never)."""
        if len(self._compiled) == 1 and not callable(self._compiled[0]) and not self._compiled[0].groups:
            words = self._compiled[0].findall(text)
            if sum(map(len, words)) == len(text) and "" not in words:
                return words
        return [text[s:e] for s, e in self.spans(text)]

    def split(self, text: str) -> list[str]:
        """The pre-tokens BPE will see: normalise (NFC where the model does), then split.

        Example:
            >>> from labkit.algorithms.pretokenize import get_pre_tokenizer
            >>> get_pre_tokenizer("llama3").split("x 12345")
            ['x', ' ', '123', '45']
        """
        if not isinstance(text, str):
            raise LabkitError(f"pre-tokenizer {self.name!r}: split() takes str, got {type(text).__name__}")
        return self.split_normalized(self.normalize(text))


_CUSTOM_STEPS = {AFMOE_DIGITS: digit_groups}
# each custom step as a regex that splits alike (for comparisons on short texts: it takes
# quadratic time on a long run of digits, or of text without any)
CUSTOM_STEP_REGEXES = {AFMOE_DIGITS: r"""\P{N}*\p{N}{1,3}(?=(?:\p{N}{3})*(?!\p{N}))"""}


def _spec(name, regexes, **kw) -> PreTokenizerSpec:
    if isinstance(regexes, str):
        regexes = (regexes,)
    return PreTokenizerSpec(name=name, regexes=tuple(regexes), **kw)


_SPECS = [
    _spec("default", (r"[\p{P}\$\+<=>\^~\|]+", GPT2, r"\p{N}+", r"[0-9][0-9][0-9]"), family="DEFAULT",
          note="llama.cpp's fallback when a GGUF has no tokenizer.ggml.pre"),
    _spec("gpt-2", GPT2, family="GPT2",
          aliases=("gpt2", "phi-2", "jina-es", "jina-de", "gigachat", "jina-v2-es", "jina-v2-de",
                   "a.x-4.0", "mellum", "modern-bert", "olmo", "jais", "exaone4", "roberta-bpe",
                   "jina-v1-en", "jina-v2-code"),
          note="GPT-2's split: optional space + letters / numbers / other; contractions"),
    _spec("mpt", GPT2, nfc=True, family="MPT",
          note="GPT-NeoX tokenizer: GPT-2 split after NFC; its whitespace-run tokens are "
               "user-defined (type 4) and matched as added tokens"),
    _spec("llama3", LLAMA3, ignore_merges=True, family="LLAMA3",
          aliases=("llama-bpe", "llama-v3", "falcon3", "falcon-h1", "pixtral", "midm-2.0", "lfm2",
                   "jina-v5-nano"),
          note="Llama-3: digits in groups of up to 3, whole-word lookup first (ignore_merges)"),
    _spec("dbrx", LLAMA3, family="DBRX", aliases=("smaug-bpe",), note="Llama-3 split, merges always applied"),
    _spec("chatglm-bpe", LLAMA3, family="CHATGLM4", note="Llama-3 split"),
    # llama.cpp at 0c1e5709 looks glm4's whole words up first, as Llama-3's (chatglm-bpe still merges)
    _spec("glm4", LLAMA3, ignore_merges=True, family="CHATGLM4", aliases=("glm5",),
          note="Llama-3 split, whole-word lookup first"),
    _spec("qwen2", QWEN2, nfc=True, family="QWEN2", aliases=("deepseek-r1-qwen", "kormo", "f2llmv2"),
          note="Qwen2: NFC, then the Llama-3 split with one digit at a time"),
    # no NFC: llama.cpp normalises nothing before a BPE split (llama-vocab.cpp,
    # llm_tokenizer_bpe_session::tokenize) and its qwen35 vectors keep e + U+0301 as two pieces
    _spec("qwen35", QWEN35, family="QWEN35",
          note="Qwen3.5: the qwen2 split with combining marks inside words; no NFC"),
    _spec("deepseek-llm", DEEPSEEK_LLM, family="DEEPSEEK_LLM",
          note="DeepSeek LLM: six regexes in sequence (newlines, words, punctuation, CJK, numbers)"),
    _spec("deepseek-coder", DEEPSEEK_CODER, family="DEEPSEEK_CODER",
          note="DeepSeek Coder: newlines, words, punctuation, CJK, single digits"),
    _spec("falcon", (r"[\p{P}\$\+<=>\^~\|`]+", GPT2, r"[0-9][0-9][0-9]"), family="FALCON",
          note="Falcon: punctuation runs first, then the GPT-2 split, then 3-digit groups"),
    _spec("starcoder", (r"\p{N}", GPT2), family="STARCODER",
          aliases=("smollm", "codeshell", "exaone", "minerva-7b", "mellum2"),
          note="StarCoder: every digit alone, then the GPT-2 split"),
    _spec("refact", (r"\p{N}", GPT2), family="REFACT", note="as starcoder"),
    _spec("command-r", (r"\p{N}", GPT2), nfc=True, family="COMMAND_R",
          note="Command-R: NFC, every digit alone, then the GPT-2 split"),
    _spec("gpt-4o", O200K, family="GPT4O", aliases=("llama4", "kanana2", "talkie", "minimax-m2"),
          note="GPT-4o / o200k: case-aware words, digits in groups of up to 3"),
    _spec("tekken", TEKKEN, ignore_merges=True, family="TEKKEN", note="Mistral Tekken"),
    _spec("bloom", BLOOM, family="BLOOM", aliases=("poro-chat", "gpt3-finnish"),
          note="BLOOM: cut only at whitespace and a few punctuation marks"),
    _spec("viking", (BLOOM, r"\p{N}"), family="VIKING", note="as bloom, plus single digits"),
    # llama.cpp 0c1e5709's newer pre types (no NFC: llama.cpp normalises nothing before a split)
    _spec("jais-2", JAIS2, family="JAIS2", note="Jais-2: the Llama-3 split, whitespace runs cut in powers of two"),
    _spec("deepseek-v3", DEEPSEEK3, family="DEEPSEEK3_LLM", aliases=("hunyuan-dense", "joyai-llm", "hy_v4"),
          note="DeepSeek-V3: digits in threes, CJK and kana runs, then words with their marks"),
    _spec("spark2_5", SPARK2_5, family="SPARK2_5", note="as deepseek-v3, newlines alone, then single digits"),
    _spec("youtu", YOUTU, ignore_merges=True, family="YOUTU",
          note="Youtu: Hangul, CJK punctuation, bopomofo and CJK/kana runs first, then GPT-4o-like words"),
    _spec("stablelm2", QWEN2_LLAMA_CPP, family="STABLELM2", aliases=("hunyuan", "solar-open", "megrez", "grok-2"),
          note="the qwen2 split without NFC (llama.cpp's QWEN2 regex list)"),
    _spec("trillion", _GPT2_LLAMA_CPP, family="TRILLION", aliases=("granite-docling",),
          note="GPT-2's split as llama.cpp spells it"),
    _spec("chameleon", CHAMELEON, family="CHAMELEON",
          note="Chameleon: sentinels, image tokens, tabs and space pairs, digits, punctuation, then GPT-2's split"),
    _spec("granite-embed-multi-97m", GRANITE_EMB_MULTI, ignore_merges=True, family="GRANITE_EMB_MULTI",
          note="GPT-4o's split as llama.cpp spells it, combining marks counted as letters"),
    _spec("superbpe", SUPERBPE, family="SUPERBPE", note="SuperBPE: digit runs, then digit groups of three from the right"),
    _spec("bailingmoe", BAILINGMOE, family="BAILINGMOE", aliases=("bailingmoe2", "llada-moe"),
          note="Ling (BailingMoE): cl100k's split with one digit at a time"),
    _spec("seed-coder", SEED_CODER, family="SEED_CODER", note="Seed-Coder: single digits, no newline after punctuation"),
    _spec("ufakzeka", UFAKZEKA, family="UFAKZEKA", note="the qwen2 split without contractions"),
    _spec("laguna", LAGUNA, family="LAGUNA", note="lines first, then the qwen2 split"),
    _spec("exaone-moe", EXAONE_MOE, family="EXAONE_MOE", note="EXAONE MoE: words joined across single spaces"),
    _spec("kimi-k2", KIMI_K2, family="KIMI_K2", note="Kimi-K2: llama.cpp's own scanner, Han runs apart from other letters"),
    _spec("afmoe", AFMOE, family="AFMOE", note="AFMoE: llama.cpp's digit groups, CJK and Southeast Asian runs, then words"),
    _spec("tiny_aya", TINY_AYA, family="TINY_AYA", aliases=("cohere2moe",),
          note="Tiny Aya: llama.cpp's digit groups, then letter runs (its case classes read as letters)"),
    _spec("minicpm5", MINICPM5, ignore_merges=True, family="MINICPM5",
          note="MiniCPM5: digits in threes, then the Llama-3 split"),
    # tiktoken's encodings, under their own names
    _spec("r50k", R50K, aliases=("r50k_base", "p50k", "p50k_base", "p50k_edit"), family="GPT2",
          tiktoken_pattern=R50K_TIKTOKEN, note="tiktoken r50k/p50k split (the same as gpt-2's)"),
    _spec("cl100k", CL100K, aliases=("cl100k_base",), family="LLAMA3",
          tiktoken_pattern=CL100K_TIKTOKEN,
          note="tiktoken cl100k_base split; differs from llama3 on whitespace after a newline at the end"),
    _spec("o200k", O200K, aliases=("o200k_base", "o200k_harmony"), family="GPT4O",
          tiktoken_pattern=O200K, note="tiktoken o200k_base split (the same as gpt-4o's)"),
]

PRE_TOKENIZERS: dict[str, PreTokenizerSpec] = {spec.name: spec for spec in _SPECS}
# names llama.cpp 0c1e5709 knows whose split labkit does not reproduce, and why (a GGUF naming
# one is refused, not served with a split that differs)
LLAMA_CPP_UNSERVED: dict[str, str] = {}
# names that are not byte-level splits at all: BPE over raw UTF-8 (labkit.algorithms.llama_bpe_utf8)
_NOT_BYTE_LEVEL = ("BPE over raw UTF-8 with <0xNN> byte tokens (llama.cpp's byte_encode off): labkit's own engine "
                   "serves it (labkit.engines.labkit_llama_bpe_utf8), no byte-level split does")
PRE_ALIASES: dict[str, str] = {alias: spec.name for spec in _SPECS for alias in spec.aliases}
# the names labkit gives splits that llama.cpp does not know (tiktoken's encodings, and "gpt2"):
# llama.cpp does not load a GGUF whose tokenizer.ggml.pre is one of them, nor does labkit's reader
NOT_LLAMA_CPP_NAMES = frozenset({"gpt2", "r50k", "r50k_base", "p50k", "p50k_base", "p50k_edit", "cl100k", "cl100k_base",
                                 "o200k", "o200k_base", "o200k_harmony"})


def known_pre_names() -> list[str]:
    """Every pre name this module knows (canonical names and aliases), sorted.

    Example:
        >>> from labkit.algorithms.pretokenize import known_pre_names
        >>> "qwen2" in known_pre_names()
        True
    """
    return sorted([*PRE_TOKENIZERS, *PRE_ALIASES])


def get_pre_tokenizer(name: str | None) -> PreTokenizerSpec:
    """The spec for a ``tokenizer.ggml.pre`` name or tiktoken encoding name (None -> 'default').

    Unknown names raise LabkitError listing the known ones.
    Example:
        >>> from labkit.algorithms.pretokenize import get_pre_tokenizer
        >>> get_pre_tokenizer("llama-bpe").name
        'llama3'

    Introduced in notebook ``02_bpe_byte_level``.
    """
    if name is None:
        name = "default"
    if isinstance(name, PreTokenizerSpec):
        return name
    if not isinstance(name, str):
        raise LabkitError(f"pre-tokenizer name must be a str, got {type(name).__name__}")
    spec = PRE_TOKENIZERS.get(name) or PRE_TOKENIZERS.get(PRE_ALIASES.get(name, ""))
    if spec is None and name in UTF8_BPE_RULES:
        raise LabkitError(f"pre-tokenizer {name!r} is llama.cpp's {_NOT_BYTE_LEVEL}")
    if spec is None and name in LLAMA_CPP_UNSERVED:
        raise LabkitError(f"pre-tokenizer {name!r} is llama.cpp's, but labkit does not split as it does: "
                          f"{LLAMA_CPP_UNSERVED[name]}")
    if spec is None:
        raise LabkitError(f"unknown pre-tokenizer {name!r}; known: {', '.join(known_pre_names())}")
    return spec


def pretokenize(text: str, pre: str | PreTokenizerSpec = "gpt-2") -> list[str]:
    """Split ``text`` the way model ``pre`` does (normalising first where it does).

    Example:
        >>> from labkit.algorithms.pretokenize import pretokenize
        >>> pretokenize("I'm 2024", "qwen2")
        ['I', "'m", ' ', '2', '0', '2', '4']

    Introduced in notebook ``02_bpe_byte_level``.
    """
    return get_pre_tokenizer(pre).split(text)


split = pretokenize


def nfc_with_offsets(text: str) -> tuple[str, list[tuple[int, int]]]:
    """NFC-normalise ``text`` and say, for each output char, which (start, end) of the
    input it came from, as ``tokenizers`` aligns them (by position, not by identity): each
    input char first stands for the chars of its decomposition; then, per chunk that
    normalises on its own, the first output char takes the first of those, the chars a
    composition absorbed are dropped right after it, and the rest line up with the tail.
    ``'cafe\\u0301'``: the ``é`` is ``(3, 4)``, not ``(3, 5)``.

    Example:
        >>> from labkit.algorithms.pretokenize import nfc_with_offsets
        >>> nfc_with_offsets("e\\u0301x")
        ('éx', [(0, 1), (2, 3)])
    """
    if unicodedata.is_normalized("NFC", text):
        return text, [(i, i + 1) for i in range(len(text))]
    if _STARTER_SPLIT.search(text) is not None:  # the reference's starters cut the text first
        out_text, out_map, start = [], [], 0
        for part in _STARTER_SPLIT.split(text):
            piece, mapping = nfc_with_offsets(part) if _STARTER_SPLIT.fullmatch(part) is None else (part, [(0, len(part))])
            out_text.append(piece)
            out_map.extend((start + a, start + b) for a, b in mapping)
            start += len(part)
        return "".join(out_text), out_map
    # Cut the input into chunks that normalise independently: a new chunk starts at a
    # starter whose NFC does not interact with what came before.
    chunks: list[tuple[int, int]] = []
    start = 0
    for i in range(1, len(text)):
        if unicodedata.combining(text[i]) != 0:
            continue
        head = unicodedata.normalize("NFC", text[start:i])
        if unicodedata.normalize("NFC", text[start : i + 1]) == head + unicodedata.normalize("NFC", text[i]):
            chunks.append((start, i))
            start = i
    if text:
        chunks.append((start, len(text)))
    out_chars: list[str] = []
    mapping: list[tuple[int, int]] = []
    for s, e in chunks:
        piece = unicodedata.normalize("NFC", text[s:e])
        out_chars.append(piece)
        mapping.extend(_align_chunk(text, s, e, piece))
    normalized = "".join(out_chars)
    if normalized != unicodedata.normalize("NFC", text):  # chunking went wrong: one chunk
        normalized = unicodedata.normalize("NFC", text)
        mapping = _align_chunk(text, 0, len(text), normalized)
    return normalized, mapping


def _align_chunk(text: str, start: int, end: int, piece: str) -> list[tuple[int, int]]:
    """One input char for each char of ``piece`` (the NFC of ``text[start:end]``), by position."""
    sources = []
    for i in range(start, end):
        sources.extend([i] * len(unicodedata.normalize("NFD", text[i])))
    length, count = len(sources), len(piece)
    if count >= length:  # nothing composed: one to one, any extra on the last
        picked = [sources[min(j, length - 1)] for j in range(count)]
    else:
        shift = length - count
        picked = [sources[0]] + [sources[j + shift] for j in range(1, count)]
    return [(i, i + 1) for i in picked]
