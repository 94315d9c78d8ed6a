"""tokenizer.json, vocab.txt and vocab.json readers on bad or unusual input (issue 14), and
the per-model-kind helpers of ``hf_json_to_vocab`` (issue 13)."""
from __future__ import annotations

import json

import pytest
import tokenizers

import labkit
from labkit.conformance.hf_json_configs import build_json, metaspace, node
from labkit.core import FormatError
from labkit.formats.hf_json import hf_json_to_vocab


def _bert_wordpiece(path):
    from tokenizers import models
    from tokenizers.implementations import BertWordPieceTokenizer

    return BertWordPieceTokenizer(models.WordPiece.read_file(str(path)))


def test_vocab_txt_with_an_empty_line_is_read_as_tokenizers_reads_it(tmp_path):
    """An empty line is the token "" (no text makes it; decode gives it a space), as in tokenizers."""
    path = tmp_path / "vocab.txt"
    path.write_text("[PAD]\n[UNK]\n[CLS]\n[SEP]\n\nhello\nworld\n", encoding="utf-8")
    reference = _bert_wordpiece(path)
    for source in (path, tmp_path):
        tok = labkit.load(source)
        assert tok.encode("hello world", add_special_tokens=True).ids == reference.encode("hello world").ids
        assert tok.decode([5, 4, 6]) == reference.decode([5, 4, 6]) == "hello  world"


def test_vocab_txt_duplicate_token_takes_its_last_line(tmp_path):
    """tokenizers maps a spelling to its last line; the earlier line is an id with no token,
    which decode drops."""
    path = tmp_path / "vocab.txt"
    path.write_text("[PAD]\n[UNK]\nhello\nhello\n[CLS]\n[SEP]\n", encoding="utf-8")
    reference = _bert_wordpiece(path)
    for engine in ("labkit", "hf"):
        tok = labkit.load(path, engine=engine)
        assert tok.encode("hello", add_special_tokens=True).ids == reference.encode("hello").ids == [4, 3, 5]
        assert tok.decode([2, 3, 2]) == reference.decode([2, 3, 2]) == "hello"


def test_unigram_duplicate_piece_handled_as_tokenizers_does(tmp_path):
    doc = json.loads(build_json("unigram", pre_tokenizer=metaspace(), decoder=metaspace()))
    pieces = doc["model"]["vocab"]
    pieces.append([pieces[10][0], pieces[10][1] + 1.0])  # the same piece twice; the later id wins in tokenizers
    path = tmp_path / "tokenizer.json"
    path.write_text(json.dumps(doc), encoding="utf-8")
    tok, ref = labkit.load(path, engine="labkit"), tokenizers.Tokenizer.from_file(str(path))
    text = f"x {pieces[10][0].lstrip(chr(0x2581))} y and more words"
    assert tok.encode(text).ids == ref.encode(text, add_special_tokens=False).ids
    word = pieces[10][0].replace("\u2581", " ")
    assert tok.encode(word).ids == ref.encode(word, add_special_tokens=False).ids


@pytest.mark.parametrize("base,family", [("byte", "bpe_byte"), ("meta", "spm_bpe"), ("wordpiece", "wordpiece"),
                                         ("unigram", "unigram"), ("wordlevel", "wordlevel")])
def test_each_model_kind_reads_into_its_family(base, family):
    pre = node("ByteLevel", add_prefix_space=False, trim_offsets=False, use_regex=True) if base == "byte" else node("Whitespace")
    doc = json.loads(build_json(base, pre_tokenizer=pre))
    vocab = hf_json_to_vocab(doc, "tokenizer.json")
    assert vocab.model == family
    assert len(vocab.tokens) == len(vocab.token_types) >= 400
    assert (vocab.scores is not None) == (family in ("unigram", "spm_bpe"))
    assert (vocab.merges is not None) == (family in ("bpe_byte", "spm_bpe"))
    if family != "bpe_byte":
        assert vocab.specials.unk_id is not None and vocab.tokens[vocab.specials.unk_id] in ("<unk>", "[UNK]")


def test_unknown_model_type_refused():
    with pytest.raises(FormatError, match="model type 'Magic' is not supported"):
        hf_json_to_vocab({"model": {"type": "Magic", "vocab": {}}}, "tokenizer.json")
