"""Unigram on whole texts: labkit's ids equal sentencepiece's (float sums with its rebase)
and tokenizers' (double sums) on whole texts of ~300K characters (the bench's three texts,
and two made from the CLDR tables babel ships: territory names in every language, and the
display strings of ten European locales, whose long words exercise the word cache's
reruns), cold and warm, and the sums behave as measured (neither plain float nor double
sums alone reproduce sentencepiece)."""
from __future__ import annotations

import pytest

import labkit
from labkit.engines.hf import convert_model_file
from labkit.algorithms.unigram import UnigramModel, split_words
from labkit.algorithms.unigram_words import WordCache
from labkit.bench.texts import bench_texts

NAME = "botchan-unigram"


@pytest.fixture(scope="module")
def engines():
    tok = labkit.load(NAME, engine="labkit")
    return tok, labkit.load(NAME, engine="sentencepiece").backend, convert_model_file(NAME).backend


def cldr_text(name: str, max_chars: int = 300_000) -> str:
    """Territory names in every CLDR language ('territories'), or every distinct display
    string of ten European locales ('european'), one per line, cut at a line end."""
    babel = pytest.importorskip("babel")
    from babel import Locale, localedata

    if name == "territories":
        codes = sorted(code for code in localedata.locale_identifiers() if "_" not in code)
        names = {code: Locale.parse(code).territories for code in codes}
        lines = [" ".join(names[c][t] for c in codes if t in names[c]) for t in sorted(Locale.parse("en").territories)]
    else:
        seen, lines, stack = set(), [], []
        for code in ("de", "fr", "es", "it", "pt", "nl", "pl", "sv", "cs", "fi"):
            stack = [localedata.load(code)]
            while stack:
                item = stack.pop()
                if isinstance(item, str):
                    if item not in seen and "{" not in item:
                        seen.add(item)
                        lines.append(item)
                elif hasattr(item, "items"):
                    stack.extend(item[key] for key in sorted(item.keys(), key=str, reverse=True))
                elif isinstance(item, (list, tuple)):
                    stack.extend(reversed(item))
    text = "\n".join(lines)
    assert babel and len(text) > max_chars
    return text[: text.rfind("\n", 0, max_chars)]


@pytest.fixture(scope="module", params=["botchan", "mixed", "chinese", "territories", "european"])
def text(request):
    if request.param in ("territories", "european"):
        return cldr_text(request.param)
    return bench_texts(0.3)[request.param]


def test_whole_text_equals_sentencepiece(engines, text):
    tok, sp, _ = engines
    expected = sp.encode(text)
    tok.clear_cache()
    assert tok.encode_ordinary(text) == expected  # cold
    assert tok.encode_ordinary(text) == expected  # warm
    assert tok.encode(text, parse_special=False).ids == expected
    # the plain forward pass (no cache) agrees too
    normalized = tok.normalize(text)
    assert [i for i, _, _ in tok.model.encode(normalized)] == expected


def test_whole_text_with_double_sums_equals_tokenizers(engines, text):
    tok, _, hf = engines
    vocab = tok.vocab
    double = UnigramModel(vocab.tokens, vocab.scores, vocab.token_types, sentencepiece=False)
    expected = hf.encode(text, add_special_tokens=False).ids
    normalized = tok.normalize(text)
    assert WordCache(double).ids(split_words(normalized)) == expected
    assert [i for i, _, _ in WordCache(double).encode(normalized)] == expected


def test_neither_plain_float_nor_double_sums_is_sentencepiece(engines):
    """The rebase matters: without it float sums drift from sentencepiece past ~1e5 of total
    score; double sums miss sentencepiece's float rounding on near-ties."""
    tok, sp, _ = engines
    vocab = tok.vocab
    text = bench_texts(0.3)["botchan"]
    normalized = tok.normalize(text)
    plain_float = UnigramModel(vocab.tokens, vocab.scores, vocab.token_types)
    plain_float.rebase_limit = None
    expected = sp.encode(text)
    got = [i for i, _, _ in plain_float.encode(normalized)]
    assert len(got) == len(expected) and got != expected
    double = UnigramModel(vocab.tokens, vocab.scores, vocab.token_types, float32_sums=False)
    near_ties = [pre + "." * k + "I" for pre in ("", "x ", "Hotta", "the the the ") for k in range(1, 25)]
    misses = 0
    for near_tie in near_ties:
        assert tok.encode_ordinary(near_tie) == sp.encode(near_tie)
        misses += [i for i, _, _ in double.encode(tok.normalize(near_tie))] != sp.encode(near_tie)
    assert misses > 0


def test_word_cache_public_api(engines):
    tok, sp, _ = engines
    cache = WordCache(tok.model, max_words=10)
    words = split_words(tok.normalize("the cat sat on the mat with the other cat"))
    assert cache.ids(words) == sp.encode("the cat sat on the mat with the other cat")
    assert 0 < len(cache) <= 10
    cache.clear()
    assert len(cache) == 0
    pieces = cache.word_pieces(["\u2581the", "\u2581cat"])
    assert [[tok.model.pieces[i] for i, _, _ in word] for word in pieces] == [
        [tok.model.pieces[i] for i in sp.encode("the")], [tok.model.pieces[i] for i in sp.encode("cat")]]
