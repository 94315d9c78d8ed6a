"""Random base vocabularies for :mod:`labkit.conformance.random_hf`.

The matrix's eight base vocabularies are trained once on botchan; bugs also hide in
vocabularies nobody trains that way. From a seed this draws one of the same eight kinds
(byte-level BPE, BPE with unk, with ``##`` continuation, with ``</w>`` suffix, over Metaspace
words, WordPiece, Unigram, WordLevel) with a random size over a random alphabet, either
trained by a ``tokenizers`` trainer on random text or drawn by hand as a user could still
write it: BPE merges out of the usual order, a merge's result with a lower id than its parts,
duplicate merges, unreachable tokens, tokens with spaces, WordPiece vocabularies with and
without ``##`` pieces, Unigram with tied, zero, negative or positive scores.

Example:
    >>> import json
    >>> from labkit.conformance.random_vocab import random_vocabulary
    >>> doc = json.loads(random_vocabulary("wordpiece", 3)[0])
    >>> doc["model"]["type"], random_vocabulary("wordpiece", 3) == random_vocabulary("wordpiece", 3)
    ('WordPiece', True)
"""
from __future__ import annotations

import json
import random
from functools import lru_cache

# character pools an alphabet is drawn from (no whitespace: spaces separate the words)
POOLS = (
    "abcdefghijklmnopqrstuvwxyz",
    "etaoinshr",
    "ABCDEFGHIJKLMNOPQRSTUVWXYZ",
    "0123456789",
    ".,;:!?'\"-_()[]<>/\\|#@$%&*+=~`^{}",
    "àáâäãåçèéêëìíîïñòóôöõøùúûüýÿßœæ",
    "\u0300\u0301\u0308\u0323",
    "我爱自然语言處理東京日本の首都ですかタカナ한국어",
    "🙂👍🏽😀🌈",
    "▁Ġ#<>/",
)
BPE_KINDS = ("byte", "plain", "prefix", "suffix", "meta")
UNKS = ("<unk>", "[UNK]", "<0x00>", "a")


def random_alphabet(rng: random.Random) -> str:
    """3-40 distinct characters from 1-3 pools.

    Example:
        >>> import random
        >>> from labkit.conformance.random_vocab import random_alphabet
        >>> 3 <= len(random_alphabet(random.Random(0))) <= 40
        True
    """
    chars = "".join(rng.choice(POOLS) for _ in range(rng.randint(1, 3)))
    chars = list(dict.fromkeys(chars))
    rng.shuffle(chars)
    return "".join(chars[:rng.randint(3, 40)])


def random_corpus(rng: random.Random, alphabet: str, lines: int = 300) -> list[str]:
    """Lines of words over ``alphabet``, some words frequent (so training has pairs to merge).

    Example:
        >>> import random
        >>> from labkit.conformance.random_vocab import random_corpus
        >>> len(random_corpus(random.Random(0), "abc", 5))
        5
    """
    words = ["".join(rng.choice(alphabet) for _ in range(rng.randint(1, 9))) for _ in range(rng.randint(5, 80))]
    weights = [1 / (rank + 1) for rank in range(len(words))]  # Zipf-like
    return [" ".join(rng.choices(words, weights, k=rng.randint(1, 12))) for _ in range(lines)]


def _document(model: dict, added_tokens: list[dict] = ()) -> str:
    doc = {"version": "1.0", "truncation": None, "padding": None, "added_tokens": list(added_tokens),
           "normalizer": None, "pre_tokenizer": None, "post_processor": None, "decoder": None, "model": model}
    return json.dumps(doc, ensure_ascii=False)


def _special(content: str, index: int) -> dict:
    return {"id": index, "content": content, "single_word": False, "lstrip": False, "rstrip": False,
            "normalized": False, "special": True}


# ----------------------------------------------------------------------------- trained


def _trained(kind: str, rng: random.Random, alphabet: str) -> str:
    """A vocabulary of ``kind`` trained by tokenizers on random text over ``alphabet``."""
    from tokenizers import Tokenizer, models, pre_tokenizers, trainers

    specials = rng.sample(["<unk>", "<s>", "</s>", "[PAD]", "[UNK]"], rng.randint(0, 3))
    unk = next((s for s in specials if "unk" in s.lower()), None)
    size = len(alphabet) + rng.randint(0, 300)
    options = dict(vocab_size=size, show_progress=False, special_tokens=specials)
    lines = random_corpus(rng, alphabet)
    if kind in BPE_KINDS:
        extra = {"prefix": {"continuing_subword_prefix": "##"}, "suffix": {"end_of_word_suffix": "</w>"}}.get(kind, {})
        tok = Tokenizer(models.BPE(unk_token=unk, **extra))
        if kind == "byte":
            tok.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
            options["initial_alphabet"] = pre_tokenizers.ByteLevel.alphabet()
            options["vocab_size"] += 256
        else:
            tok.pre_tokenizer = pre_tokenizers.Metaspace() if kind == "meta" else pre_tokenizers.Whitespace()
        trainer = trainers.BpeTrainer(**extra, **options)
    elif kind == "wordpiece":
        tok = Tokenizer(models.WordPiece(unk_token=unk or "[UNK]"))
        tok.pre_tokenizer = pre_tokenizers.Whitespace()
        trainer = trainers.WordPieceTrainer(**options)
    elif kind == "unigram":
        tok = Tokenizer(models.Unigram())
        tok.pre_tokenizer = pre_tokenizers.Metaspace()
        trainer = trainers.UnigramTrainer(unk_token=unk, **options)
        lines = lines[:120]  # Unigram training is the slow one
    else:
        tok = Tokenizer(models.WordLevel(unk_token=unk))
        tok.pre_tokenizer = pre_tokenizers.Whitespace()
        trainer = trainers.WordLevelTrainer(**options)
    tok.train_from_iterator(lines, trainer)
    doc = json.loads(tok.to_str())
    doc["pre_tokenizer"] = None
    return json.dumps(doc, ensure_ascii=False)


# ----------------------------------------------------------------------------- drawn by hand


def _symbols(kind: str, alphabet: str) -> list[str]:
    """The single symbols a BPE of ``kind`` starts a word from."""
    if kind == "byte":
        from labkit.algorithms.bytes_unicode import bytes_to_unicode

        return list(bytes_to_unicode().values())
    if kind == "prefix":
        return list(alphabet) + ["##" + ch for ch in alphabet]
    if kind == "suffix":
        return list(alphabet) + [ch + "</w>" for ch in alphabet]
    if kind == "meta":
        return list(alphabet) + ["\u2581"]
    return list(alphabet)


def _merged(kind: str, left: str, right: str) -> str | None:
    """What tokenizers names the merge of ``left`` and ``right``: with a continuation prefix it
    drops the right one's first two bytes, whatever they are (None where tokenizers panics at
    load: a right part shorter than that, or a cut inside a character)."""
    if kind != "prefix":
        return left + right
    data = right.encode("utf-8")
    try:
        return left + data[2:].decode("utf-8") if len(data) >= 2 else None
    except UnicodeDecodeError:
        return None


def hand_bpe(kind: str, rng: random.Random, alphabet: str) -> str:
    """A BPE vocabulary drawn by hand: random merges of the tokens so far, some out of order or
    repeated, ids shuffled (a result may have a lower id than its parts), tokens no merge makes,
    and sometimes a space inside a token.

    Example:
        >>> import json, random
        >>> from labkit.conformance.random_vocab import hand_bpe
        >>> json.loads(hand_bpe("plain", random.Random(1), "abc"))["model"]["type"]
        'BPE'
    """
    symbols = _symbols(kind, alphabet + (" " if kind in ("plain", "suffix") and rng.random() < 0.2 else ""))
    if kind == "byte" and rng.random() < 0.2:
        symbols = [s for s in symbols if rng.random() < 0.97]  # a few bytes with no token
    tokens = list(dict.fromkeys(symbols))
    merges: list[list[str]] = []
    pool = [s for s in tokens if kind != "byte" or s in _byte_alphabet_of(alphabet)] or tokens
    for _ in range(rng.randint(0, 200)):
        left, right = rng.choice(pool), rng.choice(pool)
        if kind == "prefix" and not right.startswith("##") and rng.random() < 0.9:
            continue  # mostly merges text meets: a continuation symbol on the right
        result = _merged(kind, left, right)
        if not result or result.startswith("##") != left.startswith("##") and kind == "prefix":
            continue
        merges.append([left, right])
        if result not in tokens:
            tokens.append(result)
            pool.append(result)
    if merges and rng.random() < 0.3:  # duplicates: tokenizers keeps the last rank
        merges += [list(rng.choice(merges)) for _ in range(rng.randint(1, 5))]
    if merges and rng.random() < 0.3:  # a stretch out of order
        i, j = sorted(rng.sample(range(len(merges) + 1), 2))
        merges[i:j] = rng.sample(merges[i:j], j - i)
    tokens += ["".join(rng.choices(alphabet, k=rng.randint(2, 5))) for _ in range(rng.randint(0, 10))]  # unreachable
    tokens = list(dict.fromkeys(tokens))
    unk = rng.choice((None, "<unk>", "[UNK]")) if kind != "byte" else None
    if unk is not None and unk not in tokens:
        tokens.append(unk)
    if rng.random() < 0.5:
        rng.shuffle(tokens)  # ids in no order: a merge may make a lower id than its parts
    if kind == "meta" and rng.random() < 0.5:
        tokens += [f"<0x{b:02X}>" for b in range(256) if f"<0x{b:02X}>" not in tokens]
    model = {"type": "BPE", "dropout": None, "unk_token": unk,
             "continuing_subword_prefix": "##" if kind == "prefix" else None,
             "end_of_word_suffix": "</w>" if kind == "suffix" else None, "fuse_unk": False, "byte_fallback": False,
             "ignore_merges": False, "vocab": {t: i for i, t in enumerate(tokens)}, "merges": merges}
    added = [_special(unk, tokens.index(unk))] if unk is not None and rng.random() < 0.5 else []
    return _document(model, added)


def _byte_alphabet_of(alphabet: str) -> set[str]:
    """The byte-level symbols of ``alphabet``'s UTF-8 (merges over them are the ones text meets)."""
    from labkit.algorithms.bytes_unicode import bytes_to_unicode

    table = bytes_to_unicode()
    return {table[b] for b in alphabet.encode("utf-8")}


def hand_wordpiece(rng: random.Random, alphabet: str) -> str:
    """A WordPiece vocabulary: characters, with or without their ``##`` pieces, random words and
    suffixes, an unk that may be missing from the vocabulary.

    Example:
        >>> import json, random
        >>> from labkit.conformance.random_vocab import hand_wordpiece
        >>> json.loads(hand_wordpiece(random.Random(0), "ab"))["model"]["type"]
        'WordPiece'
    """
    tokens = list(alphabet)
    if rng.random() < 0.7:
        tokens += ["##" + ch for ch in alphabet if rng.random() < 0.9]
    for _ in range(rng.randint(0, 120)):
        word = "".join(rng.choices(alphabet, k=rng.randint(2, 7)))
        tokens.append(("##" + word) if rng.random() < 0.4 else word)
    unk = rng.choice(UNKS)
    if rng.random() < 0.9:
        tokens.append(unk)
    tokens = list(dict.fromkeys(tokens))
    if rng.random() < 0.5:
        rng.shuffle(tokens)
    model = {"type": "WordPiece", "unk_token": unk, "continuing_subword_prefix": "##",
             "max_input_chars_per_word": rng.choice((100, 100, 8, 1000)), "vocab": {t: i for i, t in enumerate(tokens)}}
    return _document(model)


def hand_unigram(rng: random.Random, alphabet: str) -> str:
    """A Unigram vocabulary: characters and random substrings with tied, zero, negative or
    positive scores, unk anywhere or absent.

    Example:
        >>> import json, random
        >>> from labkit.conformance.random_vocab import hand_unigram
        >>> json.loads(hand_unigram(random.Random(0), "ab"))["model"]["type"]
        'Unigram'
    """
    words = random_corpus(rng, alphabet, 20)
    pieces = list(alphabet) + ["\u2581"] if rng.random() < 0.8 else list(alphabet[: len(alphabet) // 2 + 1])
    for _ in range(rng.randint(0, 150)):
        line = "\u2581" + rng.choice(words).replace(" ", "\u2581")
        start = rng.randrange(len(line))
        pieces.append(line[start:start + rng.randint(2, 6)])
    pieces = list(dict.fromkeys(pieces))
    style = rng.choice(("tied", "zero", "random", "few"))
    levels = {"tied": (-2.0,), "zero": (0.0,), "few": (-1.0, -3.5, 0.0, -1.0), "random": None}[style]

    def score() -> float:
        return rng.choice(levels) if levels else round(rng.uniform(-12, 0.5), rng.choice((0, 2, 6)))

    vocab = [[piece, score()] for piece in pieces]
    unk_id = None
    if rng.random() < 0.85:
        unk_id = rng.randrange(len(vocab) + 1)
        vocab.insert(unk_id, [rng.choice(("<unk>", "[UNK]")), score()])
    model = {"type": "Unigram", "unk_id": unk_id, "vocab": vocab, "byte_fallback": False}
    return _document(model)


def hand_wordlevel(rng: random.Random, alphabet: str) -> str:
    """A WordLevel vocabulary of random words, its unk in the vocabulary or missing from it.

    Example:
        >>> import json, random
        >>> from labkit.conformance.random_vocab import hand_wordlevel
        >>> json.loads(hand_wordlevel(random.Random(0), "ab"))["model"]["type"]
        'WordLevel'
    """
    words = [w for line in random_corpus(rng, alphabet, 30) for w in line.split()] + list(alphabet)
    tokens = list(dict.fromkeys(words))
    unk = rng.choice(("<unk>", "<unk>", "[UNK]"))
    if rng.random() < 0.9:
        tokens.insert(rng.randrange(len(tokens) + 1), unk)
    model = {"type": "WordLevel", "vocab": {t: i for i, t in enumerate(tokens)}, "unk_token": unk}
    return _document(model)


# ----------------------------------------------------------------------------- one draw


@lru_cache(maxsize=64)
def random_vocabulary(kind: str, seed: int) -> tuple[str, str]:
    """A base vocabulary of ``kind`` (one of random_hf's BASES) drawn from ``seed``, trained or
    drawn by hand over a random alphabet: its tokenizer.json text (components None) and the
    alphabet (texts over it meet the merges).

    Example:
        >>> import json
        >>> from labkit.conformance.random_vocab import random_vocabulary
        >>> text, alphabet = random_vocabulary("byte", 5)
        >>> json.loads(text)["model"]["type"], len(alphabet) >= 3
        ('BPE', True)
    """
    rng = random.Random(f"vocab-{kind}-{seed}")
    alphabet = random_alphabet(rng)
    if rng.random() < 0.4:
        return _trained(kind, rng, alphabet), alphabet
    if kind in BPE_KINDS:
        return hand_bpe(kind, rng, alphabet), alphabet
    draw = {"wordpiece": hand_wordpiece, "unigram": hand_unigram, "wordlevel": hand_wordlevel}[kind]
    return draw(rng, alphabet), alphabet
