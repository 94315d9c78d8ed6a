"""GGUF rows of the conformance matrix: one byte-level BPE vocabulary trained in the run,
written as a GGUF under every ``tokenizer.ggml.pre`` labkit lists, served by every engine,
compared with a ``tokenizers`` pipeline built from llama.cpp's own facts.

labkit's hf engine reads labkit's pre-type table (:mod:`labkit.algorithms.pretokenize`), so
for a GGUF it is no independent reference. The reference here is built from
:data:`LLAMA_CPP_PRE_TYPES`: the regex lists, pre-type names and ``ignore_merges`` flags
transcribed as data from llama.cpp's ``src/llama-vocab.cpp`` (commit 00ad355e, read for
issue 19), never from labkit's table. Where llama.cpp had to rewrite a pattern for its own
regex engine and quotes the model's original ``tokenizer.json`` pattern beside it, the
original is the fact used (it is what the model's reference tokenizer runs).
Introduced in notebook ``14_conformance_matrix``.

Example:
    >>> from labkit.conformance.gguf_pretypes import LLAMA_CPP_PRE_NAMES
    >>> LLAMA_CPP_PRE_NAMES["llama-bpe"]
    ('LLAMA3', True)
"""
from __future__ import annotations

import json
from functools import lru_cache
from pathlib import Path

from labkit.conformance.cases import ConfigCase, register
from labkit.paths import data_path

# --- transcribed from llama.cpp src/llama-vocab.cpp (llm_tokenizer_bpe, impl::load) -------
_GPT2 = r"'s|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)"
_LLAMA3 = r"(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+"
_QWEN2 = r"(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+"
_QWEN35 = (r"(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?[\p{L}\p{M}]+|\p{N}| ?[^\s\p{L}\p{M}\p{N}]+[\r\n]*"
           r"|\s*[\r\n]+|\s+(?!\S)|\s+")
_GPT4O = (r"[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]*[\p{Ll}\p{Lm}\p{Lo}\p{M}]+(?i:'s|'t|'re|'ve|'m|'ll|'d)?"
          r"|[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]+[\p{Ll}\p{Lm}\p{Lo}\p{M}]*(?i:'s|'t|'re|'ve|'m|'ll|'d)?"
          r"|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n/]*|\s*[\r\n]+|\s+(?!\S)|\s+")
_TEKKEN = (r"[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]*[\p{Ll}\p{Lm}\p{Lo}\p{M}]+"
           r"|[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]+[\p{Ll}\p{Lm}\p{Lo}\p{M}]*"
           r"|\p{N}| ?[^\s\p{L}\p{N}]+[\r\n/]*|\s*[\r\n]+|\s+(?!\S)|\s+")
_BLOOM = r" ?[^(\s|.,!?…。，、।۔،)]+"
# the source spells DeepSeek's CJK run "[一-龥ࠀ-一가-퟿]+" and its punctuation "[...　-。]"; llama.cpp
# matches a pattern without \p{..} against text whose non-ASCII whitespace is U+000B
# (unicode.cpp), so the spaces inside those ranges (U+1680, U+2000-U+200A, U+2028, U+2029,
# U+202F, U+205F, U+3000) never match: what runs is the ranges without them
_CJK_RUN = "[一-龥ࠀ-\u167f\u1681-\u1fff\u200b-\u2027\u202a-\u202e\u2030-\u205e\u2060-\u2fff\u3001-一가-퟿]+"
_FULLWIDTH = "\\s?[!-/:-~！-／：-～‘-‟、-。]+"
_DEEPSEEK_CASED = (
    "\\s?[A-Za-z\u00b5\u00c0-\u00d6\u00d8-\u00f6\u00f8-\u01ba\u01bc-\u01bf\u01c4-\u0293\u0295-\u02af"
    "\u0370-\u0373\u0376\u0377\u037b-\u037d\u037f\u0386\u0388-\u038a\u038c\u038e-\u03a1\u03a3-\u03f5"
    "\u03f7-\u0481\u048a-\u052f\u0531-\u0556\u10a0-\u10c5\u13a0-\u13f5\u13f8-\u13fd\u1c90-\u1cba"
    "\u1cbd-\u1cbf\u1d00-\u1d2b\u1d6b-\u1d77\u1d79-\u1d9a\u1e00-\u1f15\u1f18-\u1f1d\u1f20-\u1f45"
    "\u1f48-\u1f4d\u1f50-\u1f57\u1f59\u1f5b\u1f5d\u1f5f-\u1f7d\u1f80-\u1fb4\u1fb6-\u1fbc\u1fbe"
    "\u1fc2-\u1fc4\u1fc6-\u1fcc\u1fd0-\u1fd3\u1fd6-\u1fdb\u1fe0-\u1fec\u1ff2-\u1ff4\u1ff6-\u1ffc"
    "\u2102\u2107\u210a-\u2113\u2115\u2119-\u211d\u2124\u2126\u2128\u212a-\u212d\u212f-\u2134\u2139"
    "\u213c-\u213f\u2145-\u2149\u214e\u2183\u2184\u2c00-\u2c7b\u2c7e-\u2ce4\u2ceb-\u2cee\u2cf2\u2cf3"
    "\ua640-\ua66d\ua680-\ua69b\ua722-\ua76f\ua771-\ua787\ua78b-\ua78e\uab70-\uabbf\ufb00-\ufb06"
    "\ufb13-\ufb17\uff21-\uff3a\uff41-\uff5a\U00010400-\U0001044f\U000104b0-\U000104d3"
    "\U000104d8-\U000104fb\U00010c80-\U00010cb2\U00010cc0-\U00010cf2\U000118a0-\U000118df"
    "\U0001e900-\U0001e943]+"
)
# the pre types llama.cpp 0c1e5709 added, as that commit spells them (contractions as '[sS])
_C = r"(?:'[sS]|'[tT]|'[rR][eE]|'[vV][eE]|'[mM]|'[lL][lL]|'[dD])"
_GPT2_AS_IS = r"'s|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)"
_QWEN2_AS_IS = _C + r"|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+"
_KANA = "[一-龥぀-ゟ゠-ヿ]+"
_DS3_WORDS = (r"[!\"#$%&'()*+,\-./:;<=>?@\[\\\]^_`{|}~][A-Za-z]+|[^\r\n\p{L}\p{P}\p{S}]?[\p{L}\p{M}]+"
              r"| ?[\p{P}\p{S}]+")
# llama.cpp's regex engine reads \p{Lu}, \p{Ll} ... as \p{L} (unicode.cpp, k_ucat_enum): what
# its source spells "[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]*[\p{Ll}\p{Lm}\p{Lo}\p{M}]+" runs as a run of letters
_RUN = r"[^\r\n\p{L}\p{N}]?[\p{L}\p{M}]+" + _C + "?"
# llama.cpp's digit grouping function (AFMoE, Tiny Aya) spelled as a regex
_DIGIT_GROUPS = r"\P{N}*\p{N}{1,3}(?=(?:\p{N}{3})*(?!\p{N}))"
# Kimi-K2's Han: llama.cpp's unicode_cpt_is_han, a fixed list of CJK blocks (assigned or not)
_KIMI_HAN = "[\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff\U00020000-\U0002a6df\U0002a700-\U0002ebef\U0002f800-\U0002fa1f]"
_NEWER_PRE_TYPES: dict[str, tuple[str, ...]] = {
    "JAIS2": (_C + r"|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+"
              + "".join(rf"|\s{{{n}}}(?!\S)" for n in (512, 256, 128, 64, 32, 16, 8, 4)) + r"|\s{1,2}(?!\S)|\s{1}",),
    "DEEPSEEK3_LLM": (r"\p{N}{1,3}", _KANA, _DS3_WORDS + r"[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+"),
    "SPARK2_5": (r"\p{N}{1,3}", _KANA, _DS3_WORDS + r"|[\r\n]|\s+(?!\S)|\s+", r"\p{N}"),
    "YOUTU": ("[가-힣ㄱ-ㆎ]+|[！…“”‘’—：；，、-〿︰-﹏]+|[ㄅ-ㄯ]+|[一-龥぀-ゟ゠-ヿ]+",
              _RUN + r"|\p{N}| ?[^\s\p{L}\p{N}]+[\r\n/]*|\s*[\r\n]+|\s+(?!\S)|\s+"),
    "STABLELM2": (_QWEN2_AS_IS,),  # also HUNYUAN, SOLAR_OPEN, GROK_2, and QWEN2 itself without NFC
    "TRILLION": (_GPT2_AS_IS,),  # also GRANITE_DOCLING
    "CHAMELEON": ("<sentinel:[0-9]+>", "(IMGIMG)((A|B|C|D|E|F|G|H|I){1,4})Z", "([\t\n]|    |  )", r"\p{N}",
                  r"[\p{P}!-/:-@\[-`{-~]", _GPT2_AS_IS),
    "GRANITE_EMB_MULTI": (r"[^\r\n\p{L}\p{N}]?((?=[\p{L}\p{M}])([^a-z]))*((?=[\p{L}\p{M}])([^A-Z]))+" + _C + "?"
                          r"|[^\r\n\p{L}\p{N}]?((?=[\p{L}\p{M}])([^a-z]))+((?=[\p{L}\p{M}])([^A-Z]))*" + _C + "?"
                          r"|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n/]*|\s*[\r\n]+|\s+(?!\S)|\s+",),
    # its source says \d; a pattern without \p{..} runs on std::wregex, where \d is [0-9] (measured)
    "SUPERBPE": (r"\p{N}+", r"(?=([0-9]{3})+(?![0-9]))"),
    "BAILINGMOE": (r"'(?:[sSdDmMtT]|[lL][lL]|[vV][eE]|[rR][eE])|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}"
                   r"| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]|\s+(?!\S)|\s+",),
    "SEED_CODER": (_C + r"|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1}| ?[^\s\p{L}\p{N}\r\n]+|\s*[\r\n]+|\s+(?!\S)|\s+",),
    "UFAKZEKA": (r"[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+",),
    "LAGUNA": ("[^\n]+|[\n]+", _QWEN2_AS_IS),
    "EXAONE_MOE": (_C + r"|[^\r\n\p{L}\p{N}]?(?:\p{L}\p{M}*(?: \p{L}\p{M}*)*)+|\p{N}"
                   r"| ?[^\s\p{L}\p{N}]+[\r\n/]?|\s*[\r\n]|\s+(?!\S)|\s+",),
    # AFMoE's \p{AFMoE_digits} is llama.cpp's own function (unicode_regex_split_custom_afmoe), and
    # Tiny Aya's "\d{1,3}(?=(?:\d{3})*\b)" runs that same function there: each run of numbers in
    # threes from the right, the text before it joined to its first group. This regex does the
    # same (fine for short texts; quadratic on long ones, so labkit's table runs a function)
    "AFMOE": (_DIGIT_GROUPS,
              "[一-鿿㐀-䶿豈-﫿぀-ゟ゠-ヿ･-ﾟ⼀-⿟เ-๿຀-໿ក-៿က-႟ꩠ-ꩿꧠ-꧿가-힯ᄀ-ᇿ]+",
              _DS3_WORDS + r"[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+"),
    "TINY_AYA": (_DIGIT_GROUPS,
                 _RUN + r"|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n/]*|\s*[\r\n]+|\s+(?!\S)|\s+"),
    # Kimi-K2's "\p{Han}+" starts llama.cpp's hand-written scanner (unicode_regex_split_custom_kimi_k2);
    # as a regex, step by step: its fixed Han blocks, other letters with one leading character and
    # an ASCII contraction, numbers in threes, punctuation, then whitespace as GPT-4o's
    "KIMI_K2": (_KIMI_HAN + "+|" + r"[^\r\n\p{L}\p{N}]?(?:(?!" + _KIMI_HAN + r")\p{L})+(?:'[sStTmMdD]|'[rR][eE]|'[vV][eE]|'[lL][lL])?"
                r"|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+",),
    "MINICPM5": (r"\p{N}{1,3}", _C + r"|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}+| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+"
                 r"|\s+(?!\S)|\s+"),
}
# llama.cpp's LLAMA_VOCAB_PRE_TYPE_* -> its regex list (applied in sequence, gaps kept)
LLAMA_CPP_PRE_TYPES: dict[str, tuple[str, ...]] = {
    "DEFAULT": (r"[\p{P}\$\+<=>\^~\|]+", _GPT2, r"\p{N}+", "[0-9][0-9][0-9]"),
    "GPT2": (_GPT2,),          # also MPT, OLMO, JAIS (the same list)
    "LLAMA3": (_LLAMA3,),      # also DBRX, SMAUG, CHATGLM4 (the same list)
    "QWEN2": (_QWEN2,),
    "QWEN35": (_QWEN35,),
    "DEEPSEEK_LLM": ("[\r\n]", _DEEPSEEK_CASED, _FULLWIDTH, r"\s+$", _CJK_RUN, r"\p{N}+"),
    "DEEPSEEK_CODER": ("[\r\n]", r"\s?\p{L}+", r"\s?\p{P}+", _CJK_RUN, r"\p{N}"),
    "FALCON": (r"[\p{P}\$\+<=>\^~\|`]+", _GPT2, "[0-9][0-9][0-9]"),
    "STARCODER": (r"\p{N}", _GPT2),  # also REFACT, COMMAND_R, SMOLLM, CODESHELL, EXAONE, MINERVA, MELLUM2
    "GPT4O": (_GPT4O,),        # also MINIMAX_M2
    "TEKKEN": (_TEKKEN,),
    "BLOOM": (_BLOOM,),        # also PORO, GPT3_FINNISH
    "VIKING": (_BLOOM, r"\p{N}"),
    **_NEWER_PRE_TYPES,
}
# tokenizer.ggml.pre -> (regex list above, ignore_merges), for every name labkit lists
LLAMA_CPP_PRE_NAMES: dict[str, tuple[str, bool]] = {
    "default": ("DEFAULT", False),
    **{n: ("LLAMA3", True) for n in ("llama3", "llama-v3", "llama-bpe", "falcon3", "falcon-h1", "pixtral",
                                     "midm-2.0", "lfm2", "jina-v5-nano")},
    **{n: ("LLAMA3", False) for n in ("dbrx", "smaug-bpe", "chatglm-bpe")},
    "glm4": ("LLAMA3", True),  # ignore_merges since llama.cpp 0c1e5709 (measured with llama-cpp-python 0.3.36)
    **{n: ("GPT2", False) for n in ("gpt-2", "phi-2", "jina-es", "jina-de", "gigachat", "jina-v2-es", "jina-v2-de",
                                    "a.x-4.0", "mellum", "modern-bert", "jina-v1-en", "jina-v2-code", "roberta-bpe",
                                    "exaone4", "mpt", "olmo", "jais")},
    **{n: ("QWEN2", False) for n in ("qwen2", "deepseek-r1-qwen", "kormo", "f2llmv2")},
    "qwen35": ("QWEN35", False),
    "deepseek-llm": ("DEEPSEEK_LLM", False),
    "deepseek-coder": ("DEEPSEEK_CODER", False),
    "falcon": ("FALCON", False),
    **{n: ("STARCODER", False) for n in ("starcoder", "refact", "command-r", "smollm", "codeshell", "exaone",
                                         "minerva-7b", "mellum2")},
    **{n: ("GPT4O", False) for n in ("gpt-4o", "llama4", "kanana2", "talkie", "minimax-m2")},
    "tekken": ("TEKKEN", True),
    **{n: ("BLOOM", False) for n in ("bloom", "poro-chat", "gpt3-finnish")},
    "viking": ("VIKING", False),
    # added by llama.cpp 0c1e5709 (read for issue 15's exactness work)
    "jais-2": ("JAIS2", False),
    **{n: ("DEEPSEEK3_LLM", False) for n in ("deepseek-v3", "hunyuan-dense", "joyai-llm", "hy_v4")},
    "spark2_5": ("SPARK2_5", False),
    "youtu": ("YOUTU", True),
    **{n: ("STABLELM2", False) for n in ("stablelm2", "hunyuan", "solar-open", "megrez", "grok-2")},
    **{n: ("TRILLION", False) for n in ("trillion", "granite-docling")},
    "chameleon": ("CHAMELEON", False),
    "granite-embed-multi-97m": ("GRANITE_EMB_MULTI", True),
    "superbpe": ("SUPERBPE", False),
    **{n: ("BAILINGMOE", False) for n in ("bailingmoe", "bailingmoe2", "llada-moe")},
    "seed-coder": ("SEED_CODER", False),
    "ufakzeka": ("UFAKZEKA", False),
    "laguna": ("LAGUNA", False),
    "exaone-moe": ("EXAONE_MOE", False),
    "minicpm5": ("MINICPM5", True),
    "glm5": ("LLAMA3", True),
    # served since llama.cpp's digit grouping function is reproduced (labkit.algorithms.pretokenize.digit_groups)
    "afmoe": ("AFMOE", False),
    "kimi-k2": ("KIMI_K2", False),
    **{n: ("TINY_AYA", False) for n in ("tiny_aya", "cohere2moe")},
}
# names random_gguf's stored answers were drawn without (its seeds must keep drawing the same files)
NEWER_PRE_NAMES = ("jais-2", "deepseek-v3", "hunyuan-dense", "joyai-llm", "hy_v4", "spark2_5", "youtu", "stablelm2",
                   "hunyuan", "solar-open", "megrez", "grok-2", "trillion", "granite-docling", "chameleon",
                   "granite-embed-multi-97m", "superbpe", "bailingmoe", "bailingmoe2",
                   "llada-moe", "seed-coder", "ufakzeka", "laguna", "exaone-moe", "minicpm5", "glm5",
                   "afmoe", "tiny_aya", "cohere2moe", "kimi-k2")
# llama.cpp itself normalises nothing before a BPE split (llm_tokenizer_bpe_session::tokenize
# runs unicode_regex_split on the raw text). The model's own tokenizer.json may: these are
# the pre types whose reference pipeline has an NFC normaliser (qwen2: measured on its
# vectors, REFERENCES.md; mpt, command-r: their tokenizer.json files; qwen35: none, its
# llama.cpp vectors keep e + U+0301 as two pieces).
NFC_PRE_TYPES = frozenset({"mpt", "qwen2", "deepseek-r1-qwen", "kormo", "f2llmv2", "command-r"})


@lru_cache(maxsize=1)
def trained_byte_level_bpe(vocab_size: int = 600) -> tuple[tuple[str, ...], tuple[str, ...]]:
    """(tokens by id, merges) of a byte-level BPE trained with ``tokenizers`` on botchan.

    Example:
        >>> from labkit.conformance.gguf_pretypes import trained_byte_level_bpe
        >>> len(trained_byte_level_bpe()[0]) >= 256
        True
    """
    import tokenizers
    from tokenizers import models, pre_tokenizers, trainers

    tok = tokenizers.Tokenizer(models.BPE())
    tok.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    trainer = trainers.BpeTrainer(vocab_size=vocab_size, initial_alphabet=pre_tokenizers.ByteLevel.alphabet(),
                                  show_progress=False)
    tok.train([str(data_path("corpus/botchan.txt"))], trainer)
    model = json.loads(tok.to_str())["model"]
    vocab = model["vocab"]
    tokens = tuple(sorted(vocab, key=vocab.get))
    merges = tuple(m if isinstance(m, str) else " ".join(m) for m in model["merges"])
    return tokens, merges


def write_pre_gguf(pre: str, path: Path) -> Path:
    """Write the trained vocabulary as a vocab-only GGUF with ``tokenizer.ggml.pre = pre``.

    Example:
        >>> import tempfile
        >>> from labkit.formats.gguf import read_gguf_kv
        >>> path = write_pre_gguf("qwen2", Path(tempfile.mkdtemp()) / "qwen2.gguf")
        >>> read_gguf_kv(path)["tokenizer.ggml.pre"]
        'qwen2'
    """
    tokens, merges = trained_byte_level_bpe()
    return write_byte_level_gguf(path, list(tokens), [1] * len(tokens), list(merges), pre)


@lru_cache(maxsize=1)
def _gguf_writer_class():
    """``gguf.GGUFWriter`` writing a bytes array (a charsmap, ~140,000 bytes) in one piece where
    gguf packs one ``struct.pack`` per byte (0.4 s a file): the same bytes on disk."""
    import gguf

    class BytesArrayWriter(gguf.GGUFWriter):
        def _pack_val(self, val, vtype, add_vtype, sub_type=None):
            if vtype == gguf.GGUFValueType.ARRAY and isinstance(val, bytes) and val and sub_type is None:
                head = self._pack("I", vtype) if add_vtype else b""
                return head + self._pack("I", gguf.GGUFValueType.UINT8) + self._pack("Q", len(val)) + val
            return super()._pack_val(val, vtype, add_vtype, sub_type)

    return BytesArrayWriter


def write_vocab_gguf(path: Path, model: str, tokens: list[str], types: list[int], *, arch: str | None = None,
                     name: str | None = None, pre: str | None = None, scores: list[float] | None = None,
                     merges: list[str] | None = None, charsmap: bytes | None = None,
                     ids: dict[str, int] | None = None, flags: dict[str, bool] | None = None) -> Path:
    """A vocab-only GGUF (``gguf.GGUFWriter``) of any tokenizer model: the keys given, in one
    fixed order (the fuzzers' stored sha256 digests depend on it). ``ids={"eos": 3}`` writes
    ``tokenizer.ggml.eos_token_id``, ``flags={"add_bos_token": False}`` a bool key.

    Example:
        >>> import tempfile
        >>> from labkit.formats.gguf import read_gguf_kv
        >>> path = write_vocab_gguf(Path(tempfile.mkdtemp()) / "t.gguf", "bert", ["[UNK]", "a"], [2, 1], ids={"unknown": 0})
        >>> read_gguf_kv(path)["tokenizer.ggml.unknown_token_id"]
        0
    """
    writer = _gguf_writer_class()(str(path), arch=arch or model)
    if name:
        writer.add_name(name)
    writer.add_tokenizer_model(model)
    if pre is not None:
        writer.add_tokenizer_pre(pre)
    writer.add_token_list(tokens)
    if scores is not None:
        writer.add_token_scores([float(s) for s in scores])
    writer.add_token_types(types)
    if merges is not None:
        writer.add_token_merges(merges)
    if charsmap:
        writer.add_precompiled_charsmap(charsmap)
    for key, value in (ids or {}).items():
        writer.add_uint32(f"tokenizer.ggml.{key}_token_id", value)
    for flag, value in (flags or {}).items():
        writer.add_bool(f"tokenizer.ggml.{flag}", value)
    writer.write_header_to_file()
    writer.write_kv_data_to_file()
    writer.write_tensors_to_file()
    writer.close()
    return path


def write_byte_level_gguf(path: Path, tokens: list[str], types: list[int], merges: list[str], pre: str, *,
                          name: str | None = None, ids: dict[str, int] | None = None) -> Path:
    """A vocab-only byte-level GGUF (add_bos off), optionally with a model name and header ids.

    Example:
        >>> import tempfile
        >>> from labkit.formats.gguf import read_gguf_kv
        >>> path = write_byte_level_gguf(Path(tempfile.mkdtemp()) / "t.gguf", ["a", "b", "ab"], [1, 1, 1], ["a b"], "gpt-2")
        >>> read_gguf_kv(path)["tokenizer.ggml.merges"]
        ['a b']
    """
    return write_vocab_gguf(path, "gpt2", tokens, types, arch="llama", name=name, pre=pre, merges=merges, ids=ids,
                            flags={"add_bos_token": False})


class LlamaCppFactsReference:
    """A ``tokenizers`` pipeline made from the transcribed llama.cpp facts for one pre type:
    (NFC where the model has it) -> Split(regex, isolated) for each regex -> ByteLevel -> BPE.

    Example:
        >>> from labkit.conformance.gguf_pretypes import LlamaCppFactsReference
        >>> LlamaCppFactsReference("qwen2").encode("a 12", False)[1]
        ['a', 'Ġ', '1', '2']
    """

    def __init__(self, pre: str):
        import tokenizers
        from tokenizers import decoders, models, normalizers, pre_tokenizers

        family, ignore_merges = LLAMA_CPP_PRE_NAMES[pre]
        tokens, merges = trained_byte_level_bpe()
        vocab = {t: i for i, t in enumerate(tokens)}
        pairs = [tuple(m.split(" ", 1)) for m in merges]
        tok = tokenizers.Tokenizer(models.BPE(vocab, pairs, ignore_merges=ignore_merges))
        if pre in NFC_PRE_TYPES:
            tok.normalizer = normalizers.NFC()
        steps = [pre_tokenizers.Split(tokenizers.Regex(r), behavior="isolated") for r in LLAMA_CPP_PRE_TYPES[family]]
        tok.pre_tokenizer = pre_tokenizers.Sequence([*steps, pre_tokenizers.ByteLevel(add_prefix_space=False, use_regex=False)])
        tok.decoder = decoders.ByteLevel()
        self.tok = tok

    def encode(self, text: str, add_special_tokens: bool):
        enc = self.tok.encode(text, add_special_tokens=add_special_tokens)
        return list(enc.ids), list(enc.tokens), [tuple(o) for o in enc.offsets]

    def decode(self, ids: list[int], skip_special_tokens: bool) -> str:
        return self.tok.decode(list(ids), skip_special_tokens=skip_special_tokens)


def _case(pre: str) -> ConfigCase:
    return ConfigCase(
        name=f"gguf/{pre}", family="gguf", components=(("tokenizer.ggml.pre", pre),),
        build=lambda folder, pre=pre: write_pre_gguf(pre, Path(folder) / f"{pre}.gguf"),
        reference=lambda path, pre=pre: LlamaCppFactsReference(pre),
        texts=("e\u0301", "cafe\u0301 x", "I'M HERE'S", "CamelCaseWord éÉ", "a\r\nb", "x  \n", "12345 1234567"),
    )


@register("gguf")
def gguf_cases() -> list[ConfigCase]:
    """One GGUF configuration per canonical llama.cpp pre type labkit lists.

    Example:
        >>> from labkit.conformance.gguf_pretypes import gguf_cases
        >>> "gguf/qwen35" in [c.name for c in gguf_cases()]
        True
    """
    from labkit.algorithms.pretokenize import PRE_TOKENIZERS

    return [_case(spec.name) for spec in PRE_TOKENIZERS.values() if spec.tiktoken_pattern is None]
