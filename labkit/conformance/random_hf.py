"""Random tokenizer.json configurations: find what the hand-written matrix misses.

The matrix of :mod:`labkit.conformance.hf_json_configs` covers every option once and the
pairs that interact; bugs also hide in combinations nobody wrote down. This module draws, from
a seed, one configuration: a base vocabulary (for half the seeds one of the matrix's trained
ones, for the other half one drawn by :mod:`labkit.conformance.random_vocab`), a random
normaliser, pre-tokenizer, decoder, post-processor, model flags and 0-5 added tokens with
random flags and spellings. Each is run through :func:`labkit.conformance.runner.run_case` on
the mixed corpus plus random strings and long words without whitespace (ids, tokens, offsets
with and without special tokens, parse_special=False, decode), and every cell must be exact
or refused at load (never differ silently).
Configurations ``tokenizers`` itself will not load are skipped and counted.

The module name does not start with ``hf_``: it is not part of the fixed matrix.

From a shell: ``python -m labkit.conformance.random_hf --seeds 0:200 --engines labkit,default``.

Example:
    >>> from labkit.conformance.random_hf import random_hf_case
    >>> case = random_hf_case(7)
    >>> case.name, case.extra["json"] == random_hf_case(7).extra["json"]  # a seed is one configuration
    ('hf-random/7', True)
"""
from __future__ import annotations

import argparse
import json
import random
import tempfile
import time
from collections import Counter
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path
from typing import Sequence

from labkit.conformance.cases import ConfigCase
from labkit.conformance.corpus import mixed_corpus
from labkit.conformance.hf_json_configs import (GPT2_SPLIT, QWEN2_SPLIT, SPACE, HFReference, added, base_vocabulary,
                                                build_json, byte_level, metaspace, node, replace,
                                                json_case, seq, split, template)
from labkit.conformance.runner import parse_seeds

BASES = ("byte", "plain", "prefix", "suffix", "meta", "wordpiece", "unigram", "wordlevel")
BEHAVIORS = ("Removed", "Isolated", "MergedWithPrevious", "MergedWithNext", "Contiguous")
# regexes a user might write in Replace or Split (Oniguruma in tokenizers, `regex` in labkit)
REGEXES = (r"\s+", r"\s", r" {2,}", r"[aeiou]", r"\d+", r"\p{L}+", r"\p{N}", r"\w+", r"[,.;!?]", r"(?i)th",
           r"'s|'t|'re", r"\s+(?!\S)", r"[^\s\p{L}\p{N}]+", r"\p{P}", r"e(?=\s)", r"^ ", r" $", GPT2_SPLIT,
           QWEN2_SPLIT, r".", r"[A-Z]", r"\s*", r"a*", r"\b")
LITERALS = (" ", "a", "the", "''", "e ", "▁", "-", "ab", "  ", "\n", "é")
REPLACEMENTS = ("", " ", "_", "▁", "XY", "e", "\u0301")
# added-token spellings: framed specials, overlapping pairs, spaces inside, vocabulary
# substrings, normaliser-sensitive ones, lone letters
SPELLINGS = ("<|im_end|>", "<|im_start|>", "<|im", "<mask>", "<mask", "[X]", "<s>", "</s>", "the", "he", "th",
             "ing", "and", "a b", " x ", "x y", "Café", "CAFÉ", "café", "ab", "bc", "abc", "e", "1", "12", "▁the",
             "\u2581", "Ġthe", "##ing", "</w>", "東京", "🙂", "!!", "'s", "don't", "<0x41>", "word", "Word",
             "\u00a0", "a\tb", "Ｈｉ", "ﬁ", "e\u0301")
ALPHABET = {
    "ascii": "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ.,;:!?'\"-_()[]<>/\\|#@$%&*+=~`^{}",
    "latin": "àáâäãåçèéêëìíîïñòóôöõøùúûüýÿßÀÉÎÕÜÅÇÑœŒæÆ",
    "combining": "\u0300\u0301\u0302\u0308\u0323\u0327\u0338\u20dd",
    "cjk": "我爱自然语言處理東京日本の首都ですかタカナｶﾀｶﾅ한국어",
    "emoji": "🙂👍🏽😀🏳\ufe0f\u200d🌈👨\u200d👩",
    "space": " \t\n\r\u00a0\u3000\u2003\u2009\u200b\u0085\x0b\x0c",
    "digits": "0123456789١٢٣४५६߀߁໒𝟘𝟙²³½Ⅻ①",
    "marks": "▁Ġ##</w><0x41><unk>[UNK]ﬁﬂ\u212b\u00c5",
}
WORDS = ("the", "and", "I", "was", "that", "he", "to", "of", "in", "it", "not", "you", "Botchan", "school",
         "teacher", "don't", "I'm", "there", "said", "Hello", "world", "café", "naïve", "ing", "ed")


# ----------------------------------------------------------------------------- components


def _drawn(rng: random.Random, kind: str, counts: tuple[int, ...], one) -> dict | None:
    """None, one component drawn by ``one(rng)``, or a Sequence of them (how many: a choice of
    ``counts``); a lone component is written bare or as a Sequence of one, at random."""
    parts = [one(rng) for _ in range(rng.choice(counts))]
    if not parts:
        return None
    return parts[0] if len(parts) == 1 and rng.random() < 0.5 else seq(kind, *parts)


def random_normalizer(rng: random.Random) -> dict | None:
    """None, one normaliser, or a Sequence of 2-4 of them.

    Example:
        >>> import random
        >>> from labkit.conformance.random_hf import random_normalizer
        >>> [random_normalizer(random.Random(s)) is None for s in range(3)]  # doctest: +ELLIPSIS
        [...]
    """
    return _drawn(rng, "normalizer", (0, 0, 1, 1, 2, 3, 4), _one_normalizer)


def _one_normalizer(rng: random.Random) -> dict:
    rare = rng.random()  # one draw picks the rarer kinds (the seeds drawn before they existed keep their files)
    kind = rng.choice(("NFC", "NFD", "NFKC", "NFKD", "Lowercase", "Strip", "StripAccents", "Replace", "Replace",
                       "Prepend", "BertNormalizer", "Precompiled", "NFKC", "Lowercase", "Strip",
                       "Nmt" if rare < 0.15 else "ByteLevel" if rare < 0.3 else "NFC"))
    if kind == "Strip":
        return node("Strip", strip_left=rng.random() < 0.5, strip_right=rng.random() < 0.5)
    if kind == "Replace":
        regex = rng.random() < 0.5
        return replace(rng.choice(REGEXES if regex else LITERALS), rng.choice(REPLACEMENTS), regex=regex)
    if kind == "Prepend":
        return node("Prepend", prepend=rng.choice((SPACE, " ", "_", "ab")))
    if kind == "BertNormalizer":
        return node("BertNormalizer", clean_text=rng.random() < 0.5, handle_chinese_chars=rng.random() < 0.5,
                    strip_accents=rng.choice((None, True, False)), lowercase=rng.random() < 0.5)
    if kind == "Precompiled":
        return node("Precompiled", precompiled_charsmap=_charsmap())
    return node(kind)


@lru_cache(maxsize=1)
def _charsmap() -> str:
    from labkit.conformance.hf_json_configs import _precompiled_charsmap

    return _precompiled_charsmap()  # botchan's nmt_nfkc charsmap, read once


def random_pre_tokenizer(rng: random.Random) -> dict | None:
    """None, one pre-tokenizer, or a Sequence of 2-3 of them.

    Example:
        >>> import random
        >>> from labkit.conformance.random_hf import random_pre_tokenizer
        >>> random_pre_tokenizer(random.Random(1)) == random_pre_tokenizer(random.Random(1))
        True
    """
    return _drawn(rng, "pre_tokenizer", (0, 1, 1, 1, 2, 2, 3), _one_pre_tokenizer)


def _one_pre_tokenizer(rng: random.Random) -> dict:
    rare = rng.random()  # one draw picks the rarer kinds, and FixedLength's length
    kind = rng.choice(("ByteLevel", "ByteLevel", "Whitespace", "WhitespaceSplit", "Punctuation", "Digits", "Split",
                       "Split", "Split", "Metaspace", "Metaspace", "CharDelimiterSplit", "BertPreTokenizer",
                       "UnicodeScripts" if rare < 0.15 else "FixedLength" if rare < 0.3 else "Whitespace"))
    if kind == "FixedLength":
        return node("FixedLength", length=1 + int(rare * 1000) % 6)
    if kind == "ByteLevel":
        return byte_level(rng.random() < 0.5, rng.random() < 0.7, rng.random() < 0.5)
    if kind == "Punctuation":
        return node("Punctuation", behavior=rng.choice(BEHAVIORS))
    if kind == "Digits":
        return node("Digits", individual_digits=rng.random() < 0.5)
    if kind == "Split":
        regex = rng.random() < 0.6
        return split(rng.choice(REGEXES if regex else LITERALS), rng.choice(BEHAVIORS), rng.random() < 0.3, regex=regex)
    if kind == "Metaspace":
        return dict(metaspace(rng.choice(("always", "first", "never")), rng.random() < 0.5),
                    replacement=rng.choice((SPACE, SPACE, SPACE, "_")))
    if kind == "CharDelimiterSplit":
        return node("CharDelimiterSplit", delimiter=rng.choice((" ", "-", "a", SPACE)))
    return node(kind)


def random_decoder(rng: random.Random) -> dict | None:
    """None, one decoder, or a Sequence of 2-4 (Llama's Replace/ByteFallback/Fuse/Strip among them).

    Example:
        >>> import random
        >>> from labkit.conformance.random_hf import random_decoder
        >>> random_decoder(random.Random(3)) == random_decoder(random.Random(3))
        True
    """
    return _drawn(rng, "decoder", (0, 1, 1, 2, 3, 4), _one_decoder)


def _one_decoder(rng: random.Random) -> dict:
    kind = rng.choice(("ByteLevel", "Metaspace", "WordPiece", "BPEDecoder", "Replace", "ByteFallback", "Fuse",
                       "Strip", "CTC"))
    if kind == "ByteLevel":
        return byte_level()
    if kind == "Metaspace":
        return metaspace(rng.choice(("always", "first", "never")), rng.random() < 0.5)
    if kind == "WordPiece":
        return node("WordPiece", prefix=rng.choice(("##", "@@")), cleanup=rng.random() < 0.5)
    if kind == "BPEDecoder":
        return node("BPEDecoder", suffix=rng.choice(("</w>", "e")))
    if kind == "Replace":
        return replace(rng.choice((SPACE, "_", "e", " ")), rng.choice((" ", "", "E")))
    if kind == "Strip":
        return node("Strip", content=rng.choice((" ", SPACE, "a")), start=rng.randint(0, 2), stop=rng.randint(0, 2))
    if kind == "CTC":
        return node("CTC", pad_token=rng.choice(("<pad>", "[PAD]", "e")), word_delimiter_token=rng.choice(("|", SPACE)),
                    cleanup=rng.random() < 0.5)
    return node(kind)


def random_post_processor(rng: random.Random, base: str, tokens: dict[str, int]) -> dict | None:
    """A post-processor framing with tokens the file knows (``tokens``: spelling -> id).

    Example:
        >>> import random
        >>> from labkit.conformance.random_hf import random_post_processor
        >>> random_post_processor(random.Random(0), "byte", {})  # nothing to frame with
    """
    kind = rng.choice(("none", "none", "TemplateProcessing", "TemplateProcessing", "ByteLevel", "Bert", "Roberta",
                       "Sequence"))
    if kind == "none" or (kind != "ByteLevel" and not tokens):
        return byte_level(rng.random() < 0.5, trim_offsets=rng.random() < 0.5) if kind == "ByteLevel" else None
    if kind == "ByteLevel":
        return byte_level(rng.random() < 0.5, trim_offsets=rng.random() < 0.5)
    names = sorted(name for name in tokens if name.split() == [name])  # a template names a token by one word
    if not names:
        return None
    first, last = rng.choice(names), rng.choice(names)
    if kind == "Bert":
        return node("BertProcessing", sep=[last, tokens[last]], cls=[first, tokens[first]])
    if kind == "Roberta":
        return node("RobertaProcessing", sep=[last, tokens[last]], cls=[first, tokens[first]],
                    trim_offsets=rng.random() < 0.5, add_prefix_space=rng.random() < 0.5)
    shape = rng.choice((("{a} $A", "{a} $A {a} $B:1"), ("$A {b}", "$A {b} $B:1 {b}:1"),
                        ("{a} $A {b}", "{a} $A {b} $B:1 {b}:1"), ("{a} {b} $A", "{a} $A $B")))
    single, pair = (s.format(a=first, b=last) for s in shape)
    framing = template(single, pair, {first: tokens[first], last: tokens[last]})
    if kind == "Sequence":  # Llama 3's shape: ByteLevel offsets trimming, then the template
        return {"type": "Sequence", "processors": [byte_level(rng.random() < 0.5, trim_offsets=rng.random() < 0.5), framing]}
    return framing


def random_model_flags(rng: random.Random, base: str, vocabulary: str | None = None) -> dict:
    """Model options a user may set: BPE flags (dropout stays None), WordPiece's word limit,
    Unigram's byte fallback (with the 256 byte pieces added to its vocabulary; ``vocabulary``:
    the tokenizer.json text of a drawn base, else the trained one).

    Example:
        >>> import random
        >>> from labkit.conformance.random_hf import random_model_flags
        >>> random_model_flags(random.Random(0), "wordlevel")
        {}
    """
    flags: dict = {}
    if base in ("byte", "plain", "prefix", "suffix", "meta"):
        for key in ("byte_fallback", "fuse_unk", "ignore_merges"):
            if rng.random() < 0.3:
                flags[key] = True
        if base == "plain" and rng.random() < 0.2:
            flags["unk_token"] = None  # an unknown character is dropped
    elif base == "wordpiece" and rng.random() < 0.4:
        flags["max_input_chars_per_word"] = rng.choice((1, 3, 5, 20))
    elif base == "unigram" and rng.random() < 0.4:
        flags["byte_fallback"] = True
        pieces = json.loads(vocabulary or base_vocabulary("unigram"))["model"]["vocab"]
        known = {p for p, _ in pieces}
        flags["vocab"] = pieces + [[f"<0x{b:02X}>", -20.0] for b in range(256) if f"<0x{b:02X}>" not in known]
    return flags


def random_spelling(rng: random.Random) -> str:
    """An added-token spelling: from the pool, a vocabulary word, or two glued together.

    Example:
        >>> import random
        >>> from labkit.conformance.random_hf import random_spelling
        >>> isinstance(random_spelling(random.Random(0)), str)
        True
    """
    roll = rng.random()
    if roll < 0.6:
        return rng.choice(SPELLINGS)
    if roll < 0.8:
        return rng.choice(WORDS)
    return rng.choice(SPELLINGS) + rng.choice(("", " ", "_")) + rng.choice(WORDS)


def random_added_tokens(rng: random.Random) -> list[dict]:
    """0-5 added tokens with random special/normalized/lstrip/rstrip/single_word flags.

    Example:
        >>> import random
        >>> from labkit.conformance.random_hf import random_added_tokens
        >>> sorted(random_added_tokens(random.Random(4))[0])
        ['content', 'lstrip', 'normalized', 'rstrip', 'single_word', 'special']
    """
    out = []
    for _ in range(rng.randint(0, 5)):
        special = rng.random() < 0.5
        spelling = random_spelling(rng)
        if any(entry["content"] == spelling for entry in out):
            continue  # one entry per spelling (build_json keeps both, with one id)
        out.append(added(spelling, special=special,
                         normalized=rng.choice((None, True, False)), lstrip=rng.random() < 0.3,
                         rstrip=rng.random() < 0.3, single_word=rng.random() < 0.25))
    return out


def _byte_level_shape(rng: random.Random) -> tuple:
    """GPT-2's or Qwen2's pipeline, which labkit's byte-level BPE engine serves (NFC or none)."""
    normalizer = node("NFC") if rng.random() < 0.3 else None
    if rng.random() < 0.5:
        pre_tokenizer = byte_level()
    else:
        pre_tokenizer = seq("pre_tokenizer", split(rng.choice((GPT2_SPLIT, QWEN2_SPLIT)), "Isolated"),
                            byte_level(use_regex=False))
    return normalizer, pre_tokenizer, byte_level()


def _bert_shape(rng: random.Random) -> tuple:
    """BERT's pipeline with random flags, which labkit's WordPiece engine serves."""
    normalizer = node("BertNormalizer", clean_text=rng.random() < 0.7, handle_chinese_chars=rng.random() < 0.7,
                      strip_accents=rng.choice((None, True, False)), lowercase=rng.random() < 0.6)
    return normalizer, node("BertPreTokenizer"), node("WordPiece", prefix="##", cleanup=rng.random() < 0.7)


# base -> a pipeline one of labkit's family engines serves (not only the component-by-component one)
FAMILY_SHAPES = {"byte": _byte_level_shape, "wordpiece": _bert_shape}


# ----------------------------------------------------------------------------- one case


def _framing_tokens(base: str, added_tokens: list[dict], doc: dict) -> dict[str, int]:
    """Tokens a post-processor may frame with: the base's specials and the added tokens, with ids."""
    ids = {e["content"]: e["id"] for e in doc.get("added_tokens") or []}
    return {name: ids[name] for name in ids if name not in ("<unk>", "[UNK]", "[PAD]", "[MASK]")}


def random_hf_case(seed: int) -> ConfigCase:
    """One random configuration (the same one for the same seed); its JSON is ``case.extra["json"]``.

    Example:
        >>> from labkit.conformance.random_hf import random_hf_case
        >>> import json
        >>> json.loads(random_hf_case(0).extra["json"])["model"]["type"] in ("BPE", "WordPiece", "Unigram", "WordLevel")
        True
    """
    rng = random.Random(seed)
    base = rng.choice(BASES)
    vocabulary, alphabet = drawn_vocabulary(base, seed)
    model = random_model_flags(rng, base, vocabulary)
    normalizer = random_normalizer(rng)
    pre_tokenizer = random_pre_tokenizer(rng)
    decoder = random_decoder(rng)
    # a pipeline labkit's family engine serves (more often over a drawn vocabulary: its long-word path)
    if base in FAMILY_SHAPES and rng.random() < (0.7 if vocabulary else 0.4):
        normalizer, pre_tokenizer, decoder = FAMILY_SHAPES[base](rng)
    added_tokens = random_added_tokens(rng)
    text = build_json(base, model=model, normalizer=normalizer, pre_tokenizer=pre_tokenizer, decoder=decoder,
                      added_tokens=added_tokens, vocabulary=vocabulary)
    doc = json.loads(text)
    # the post-processor is drawn last: it names ids only the built file knows
    doc["post_processor"] = random_post_processor(rng, base, _framing_tokens(base, added_tokens, doc))
    text = json.dumps(doc, ensure_ascii=False, indent=1)
    texts = random_texts(seed, tuple(e["content"] for e in doc["added_tokens"]))
    texts += long_words(seed, alphabet)
    label = base if vocabulary is None else f"{base} (drawn)"
    return json_case(f"hf-random/{seed}", "hf-random", text, texts=texts, extra={"json": text, "base": label})


DRAWN_SHARE = 0.5  # of the seeds draw their base vocabulary; the others keep the trained bases


def drawn_vocabulary(base: str, seed: int) -> tuple[str | None, str]:
    """For about half the seeds a random vocabulary of the base's kind (its tokenizer.json text
    and alphabet, see :mod:`labkit.conformance.random_vocab`), else ``(None, "")``: the trained
    base. Drawn from its own stream, so a seed's components stay what they were.

    Example:
        >>> from labkit.conformance.random_hf import drawn_vocabulary
        >>> drawn_vocabulary("wordlevel", 3) == drawn_vocabulary("wordlevel", 3)
        True
    """
    from labkit.conformance.random_vocab import random_vocabulary

    if random.Random(f"drawn-{seed}").random() >= DRAWN_SHARE:
        return None, ""
    return random_vocabulary(base, seed)


LONG_WORD_CHARS = (30, 3000)  # byte-level BPE merges words from 24 bytes on by buckets (LONG_WORD_BYTES)


def long_words(seed: int, alphabet: str = "", count: int = 3) -> list[str]:
    """``count`` long texts without whitespace (30-3,000 chars): random letters of ``alphabet``
    (or ASCII), a word repeated, digits, a run of one or two characters. They cross the length
    from which labkit's BPE engines merge a word by buckets of ranks, and past 2,048 parts in
    chunks (bpe_rank_chunks).

    Example:
        >>> from labkit.conformance.random_hf import long_words
        >>> [len(w) >= 30 and not any(c.isspace() for c in w) for w in long_words(1, "ab")]
        [True, True, True]
    """
    rng = random.Random(f"long-{seed}")
    letters = "".join(c for c in alphabet if not c.isspace()) or "abcdefghijklmnopqrstuvwxyz"
    out = []
    for _ in range(count):
        size = int(LONG_WORD_CHARS[0] * (LONG_WORD_CHARS[1] / LONG_WORD_CHARS[0]) ** rng.random())  # log-uniform
        shape = rng.choice(("letters", "letters", "repeated", "digits", "run"))
        if shape == "letters":
            few = rng.sample(letters, min(len(letters), rng.randint(1, 8)))
            unit = "".join(rng.choice(few) for _ in range(size))
        elif shape == "repeated":
            unit = rng.choice((rng.choice(WORDS).replace(" ", ""), "".join(rng.choices(letters, k=rng.randint(2, 6)))))
        elif shape == "digits":
            unit = "".join(rng.choice("0123456789") for _ in range(size))
        else:
            unit = "".join(rng.choices(letters, k=rng.randint(1, 2)))
        out.append((unit * (size // len(unit) + 1))[:size])
    return out


def random_texts(seed: int, specials: Sequence[str] = (), count: int = 40) -> list[str]:
    """``count`` random strings over the seeded alphabet, with the spellings glued to neighbours.

    Example:
        >>> from labkit.conformance.random_hf import random_texts
        >>> len(random_texts(0, ["<s>"], 5)), random_texts(0, ["<s>"], 5) == random_texts(0, ["<s>"], 5)
        (5, True)
    """
    rng = random.Random(f"texts-{seed}")
    pools = list(ALPHABET.values())
    out = []
    for _ in range(count):
        units = []
        for _ in range(rng.randint(1, 16)):
            roll = rng.random()
            if specials and roll < 0.15:
                units.append(rng.choice(specials))  # glued: no space around it unless drawn
            elif roll < 0.4:
                units.append(rng.choice(WORDS))
            else:
                pool = rng.choice(pools)
                units.append("".join(rng.choice(pool) for _ in range(rng.randint(1, 3))))
        out.append("".join(units))
    return out


# ----------------------------------------------------------------------------- running seeds


@dataclass
class SeedResult:
    """What one seed gave: its status and, per engine, the runner's cells.

    Example:
        >>> from labkit.conformance.random_hf import SeedResult
        >>> SeedResult(3, "skipped", reason="tokenizers: bad").status
        'skipped'
    """

    seed: int
    status: str               # "exact" | "refused" | "differs" | "skipped"
    cells: list = field(default_factory=list)
    reason: str = ""
    served_by: str = ""       # the labkit engine's class, where it loaded
    dropped_texts: int = 0    # strings the reference itself raised on


REFERENCE_MEMORY = 1 << 30  # address space the reference may add in its child (it has asked for 3 GB)
REFERENCE_SECONDS = 60  # and the time it may take (on seed 1435 it ran for minutes without an answer)


def _usable_texts(path: Path, texts: Sequence[str]) -> tuple[list[str], int]:
    """The texts tokenizers answers on (a WordLevel without unk raises on an unknown word).

    Asked in a forked child under a memory cap and a time limit: on some configurations
    tokenizers panics ("AddedVocabulary bad split") and then allocates gigabytes, which aborts
    the process, or runs for minutes. Raises RuntimeError when the child dies or is too slow.
    """
    import multiprocessing

    context = multiprocessing.get_context("fork")
    receive, send = context.Pipe(duplex=False)
    child = context.Process(target=_usable_indices, args=(path, list(texts), send), daemon=True)
    child.start()
    send.close()
    kept = None
    try:
        if receive.poll(REFERENCE_SECONDS):
            kept = receive.recv()
    except EOFError:
        pass
    if kept is None and child.is_alive():
        child.kill()  # tokenizers itself did not answer in time
        child.join()
        raise RuntimeError(f"tokenizers did not answer on this configuration in {REFERENCE_SECONDS} s")
    child.join()
    if kept is None or child.exitcode != 0:
        raise RuntimeError(f"tokenizers died on this configuration (exit code {child.exitcode})")
    return [texts[i] for i in kept], len(texts) - len(kept)


def _usable_indices(path: Path, texts: list[str], send) -> None:
    """In the child: the indices of the texts the reference answers on, sent through ``send``."""
    import faulthandler
    import os
    import resource

    os.dup2(os.open(os.devnull, os.O_WRONLY), 2)  # the reference's panic messages are not ours to print
    os.environ["RUST_BACKTRACE"] = "0"  # nor their backtraces, which cost tens of ms a panic in a kernel
    faulthandler.disable()  # pytest's handler writes to its own copy of stderr: an abort here is expected
    with open("/proc/self/statm") as handle:  # the child's present size, in pages
        size = int(handle.read().split()[0]) * resource.getpagesize()
    resource.setrlimit(resource.RLIMIT_AS, (size + REFERENCE_MEMORY,) * 2)
    reference = HFReference(path)
    kept = []
    for index, text in enumerate(texts):
        try:
            ids = reference.encode(text, True)[0]
            reference.encode(text, False)
            reference.encode_unparsed(text, True)
            reference.encode_unparsed(text, False)
            reference.decode(ids, False)
            reference.decode(ids, True)
        except BaseException as exc:  # the reference's own error or a Rust panic: nothing to compare
            if isinstance(exc, (KeyboardInterrupt, SystemExit)):
                raise
            continue
        kept.append(index)
    send.send(kept)
    send.close()


def normalized_clash(reference, entries: list[dict]) -> str | None:
    """Two normalized added tokens that the reference's own normaliser makes one text: tokenizers
    then matches either of them, by hash-map order, differently from one load to the next.

    Example:
        >>> from tokenizers import Tokenizer, models, normalizers
        >>> tok = Tokenizer(models.WordLevel({"<unk>": 0}, unk_token="<unk>"))
        >>> tok.normalizer = normalizers.Lowercase()
        >>> normalized_clash(tok, [{"id": 1, "content": "A", "normalized": True}, {"id": 2, "content": "a", "normalized": True}])
        "'A' and 'a' both normalize to 'a'"
    """
    normalizer = reference.normalizer
    seen: dict[str, dict] = {}
    for entry in entries:
        if not entry.get("normalized", not entry.get("special", False)):
            continue
        text = normalizer.normalize_str(entry["content"]) if normalizer is not None else entry["content"]
        other = seen.setdefault(text, entry)
        if other["id"] != entry["id"]:
            return f"{other['content']!r} and {entry['content']!r} both normalize to {text!r}"
    return None


def run_seed(seed: int, workdir: Path, engines: Sequence[str] = ("labkit", "default"), *, botchan: int = 20,
             corpus: bool = True) -> SeedResult:
    """Build seed's configuration, skip it if tokenizers refuses it, else compare every engine.

    Example:
        >>> import tempfile
        >>> from labkit.conformance.random_hf import run_seed
        >>> run_seed(0, Path(tempfile.mkdtemp()), corpus=False).status in ("exact", "refused", "skipped")
        True
    """
    import labkit
    from labkit.conformance.runner import Cell, run_case
    from tokenizers import Tokenizer

    case = random_hf_case(seed)
    folder = Path(workdir) / f"seed-{seed}"
    path = case.build(folder)
    try:
        reference = Tokenizer.from_file(str(path))
        clash = normalized_clash(reference, json.loads(case.extra["json"])["added_tokens"])
    except BaseException as exc:  # a Rust panic is a BaseException; tokenizers refuses the file
        if isinstance(exc, (KeyboardInterrupt, SystemExit)):
            raise
        return SeedResult(seed, "skipped", reason=f"tokenizers: {str(exc)[:120]}")
    if clash:  # no answer to hold labkit to: tokenizers' own answer changes from load to load
        return SeedResult(seed, "skipped", reason=f"tokenizers is not deterministic here: {clash}")
    texts = (mixed_corpus(case.specials, botchan=botchan) if corpus else []) + list(case.texts)
    try:
        texts, dropped = _usable_texts(path, texts)
    except RuntimeError as exc:
        return SeedResult(seed, "skipped", reason=f"tokenizers: {exc}")
    if not texts:  # tokenizers raises on every string: nothing to compare
        return SeedResult(seed, "skipped", reason="tokenizers raised on every string", dropped_texts=dropped)
    empty = ConfigCase(case.name, case.family, case.components, case.build, case.reference, case.specials)
    try:
        cells = run_case(empty, folder, engines, texts)
    except Exception as exc:  # labkit raised something that is not a LabkitError: a defect
        cells = [Cell(case.name, "?", "differs", message=f"crashed: {type(exc).__name__}: {exc}")]
    result = SeedResult(seed, "exact", cells, dropped_texts=dropped)
    if any(c.status == "differs" for c in cells):
        result.status = "differs"
    elif any(c.status == "refused" for c in cells):
        result.status = "refused"
    result.reason = next((c.message for c in cells if c.status != "exact"), "")
    if result.status != "refused" and "labkit" in engines:
        try:
            result.served_by = type(labkit.load(path, engine="labkit")).__name__
        except Exception:
            pass
    return result


def run_seeds(seeds: Sequence[int], engines: Sequence[str] = ("labkit", "default"), *, botchan: int = 20,
              corpus: bool = True, echo=None) -> list[SeedResult]:
    """Every seed through :func:`run_seed` in a temporary folder; ``echo(result)`` after each.

    Example:
        >>> from labkit.conformance.random_hf import run_seeds
        >>> [r.seed for r in run_seeds([0, 1], corpus=False)]
        [0, 1]
    """
    results = []
    with tempfile.TemporaryDirectory(prefix="labkit-random-hf-") as folder:
        for seed in seeds:
            result = run_seed(seed, Path(folder), engines, botchan=botchan, corpus=corpus)
            results.append(result)
            if echo is not None:
                echo(result)
    return results


def main(argv: list[str] | None = None) -> int:
    """Run the seeds, print one line per seed and the summary; 1 if anything differs."""
    parser = argparse.ArgumentParser(prog="python -m labkit.conformance.random_hf", description=__doc__.split("\n\n")[0])
    parser.add_argument("--seeds", default="0:200", help="a range a:b, a seed, or a comma list (default: %(default)s)")
    parser.add_argument("--engines", default="labkit,default", help="comma-separated engines (default: %(default)s)")
    parser.add_argument("--botchan", type=int, default=20, help="botchan lines in each configuration's corpus")
    parser.add_argument("--verbose", action="store_true", help="print each differing configuration's JSON")
    args = parser.parse_args(argv)
    started = time.perf_counter()

    def echo(result: SeedResult) -> None:
        detail = result.reason.splitlines()[0][:160] if result.reason else ""
        strings = max((c.strings for c in result.cells), default=0)
        print(f"seed {result.seed:5} {result.status:8} {result.served_by:20} strings {strings:4} "
              f"(reference raised on {result.dropped_texts}) {detail}", flush=True)
        if result.status == "differs":
            for line in result.reason.splitlines()[1:4]:
                print(f"      {line[:200]}")
            if args.verbose:
                print(random_hf_case(result.seed).extra["json"][:4000])

    results = run_seeds(parse_seeds(args.seeds), tuple(args.engines.split(",")), botchan=args.botchan, echo=echo)
    counts = Counter(r.status for r in results)
    print(f"seeds {len(results)}: " + ", ".join(f"{k} {counts[k]}" for k in ("exact", "refused", "differs", "skipped"))
          + f" ({time.perf_counter() - started:.0f} s)")
    served = Counter(r.served_by for r in results if r.status == "exact")
    print("served by labkit's " + ", ".join(f"{k} {v}" for k, v in served.most_common()))
    return 1 if counts["differs"] else 0


if __name__ == "__main__":
    raise SystemExit(main())
