"""SentencePiece rows of the conformance matrix (issue 19): models trained in the run with
``sentencepiece``'s trainer, every engine compared with sentencepiece called directly on the
mixed corpus (ids, pieces, offsets, decode with and without ``skip_special_tokens``)."""
from __future__ import annotations

import pytest
import sentencepiece

import labkit
from labkit.engines.hf import convert_model_file
from labkit.conformance.corpus import mixed_corpus
from labkit.conformance.runner import run_case
from labkit.conformance.spm_matrix import SPM_CONFIGS, SentencePieceReference, spm_cases, train_model

CASES = {case.name.split("/", 1)[1]: case for case in spm_cases()}


@pytest.fixture(scope="module")
def folder(tmp_path_factory):
    return tmp_path_factory.mktemp("spm_matrix")


@pytest.mark.parametrize("name", list(SPM_CONFIGS))
def test_labkit_sentencepiece_and_default_engines_are_exact_or_refuse(name, folder):
    cells = {c.engine: c for c in run_case(CASES[name], folder, engines=("labkit", "sentencepiece", "default"))}
    for engine, cell in cells.items():
        assert cell.status in ("exact", "refused"), (engine, cell.message)
        if cell.status == "refused":
            assert f"spm_{name}" in cell.message  # names the model type it cannot serve
        else:
            assert cell.strings > 150 and cell.comparisons == 8 * cell.strings
    # sentencepiece serves every configuration it trained, and labkit too, char and word models included
    assert cells["sentencepiece"].status == "exact"
    assert cells["default"].status == "exact"
    assert cells["labkit"].status == "exact"


# engine="hf" refuses every .model: tokenizers' conversion differs from sentencepiece on every
# configuration (measured on the mixed corpus with convert_model_file: <unk> decodes as its
# spelling where sentencepiece reads ' ⁇ '; control characters the charsmap deletes before the
# first piece ('\x0b\x0bx') belong to sentencepiece's dummy '▁'; a composed character's end offset;
# text spelled like a byte piece ('<0x41>') with byte_fallback; user-defined symbols split the text
# before normalisation; '\r\n' with remove_extra_whitespaces off; a literal '▁' in decode;
# charsmap answers ('Å' under a custom rule TSV))
@pytest.mark.parametrize("name", list(SPM_CONFIGS))
def test_hf_engine_refuses_every_model_file_and_names_the_engines_that_can(name, folder):
    (cell,) = run_case(CASES[name], folder, engines=("hf",))
    assert cell.status == "refused", cell.message
    if name not in ("char", "word"):
        assert "does not serve SentencePiece .model files" in cell.message
        assert "engines that can: labkit, sentencepiece" in cell.message


@pytest.mark.parametrize("name", ["unigram", "bpe", "unigram+byte_fallback", "bpe/identity"])
def test_tokenizers_conversion_still_differs_so_the_refusal_stands(name, folder):
    # if tokenizers' conversion ever became exact on a configuration, the refusal would be too wide
    path = train_model(name, folder)
    sp = sentencepiece.SentencePieceProcessor(model_file=str(path))
    converted = convert_model_file(path)
    texts = [*mixed_corpus(botchan=4), *CASES[name].texts]
    differ = [t for t in texts
              if converted.encode(t).ids != sp.encode(t)
              or converted.encode(t).offsets != [tuple(o) for o in sp.encode(t, out_type="offset_mapping")["offsets"]]
              or converted.decode(sp.encode(t)) != sp.decode(sp.encode(t))]
    assert differ, name


@pytest.mark.parametrize("name", ["unigram", "bpe+byte_fallback"])
def test_hf_engine_offsets_follow_sentencepiece(name, folder):
    path = train_model(name, folder)
    sp = sentencepiece.SentencePieceProcessor(model_file=str(path))
    hf = convert_model_file(path)  # tokenizers' conversion, asked for by name
    # the bare dummy '▁' (tokenizers: (0, 1)), a squeezed space run, text the charsmap drops, byte pieces
    for text in ["x", "\u200bx", "  x  y  ", "a \u200b b", "ab\ufeff  c", "a\x85b", "Hello   world"]:
        enc = hf.encode(text)
        want = sp.encode(text, out_type="offset_mapping")
        assert enc.ids == list(want["ids"]), text
        assert enc.offsets == [tuple(o) for o in want["offsets"]], text
    assert hf.encode("x").offsets == [(0, 0), (0, 1)]


@pytest.mark.parametrize("kind", ["unigram", "bpe"])
def test_hf_engine_refuses_whitespace_as_suffix_by_name(kind, folder):
    path = train_model(f"{kind}+whitespace_as_suffix", folder)
    with pytest.raises(labkit.LabkitError, match="treat_whitespace_as_suffix"):
        convert_model_file(path)
    assert labkit.load(path).engine == "labkit"  # the default engine serves it


def test_issue_19_reproductions_user_defined_and_control_symbols(folder):
    path = train_model("bpe+user_defined", folder)
    sp = sentencepiece.SentencePieceProcessor(model_file=str(path))
    for engine in ("labkit", "sentencepiece"):
        tok = labkit.load(path, engine=engine)
        assert tok.encode("<sep> tag").tokens == sp.encode("<sep> tag", out_type=str)
        assert tok.encode("<sep> tag").tokens[:2] == ["▁", "<sep>"]
        assert tok.encode("a<sep>b").tokens == ["▁a", "<sep>", "b"]
        # a control symbol is ordinary text to sentencepiece, even with parse_special=True
        assert tok.encode("x <s> y").ids == sp.encode("x <s> y")
        assert "<s>" not in tok.encode("x <s> y").tokens


@pytest.mark.parametrize("kind", ["char", "word"])
def test_char_and_word_models_are_served_by_labkit_as_sentencepiece_serves_them(kind, folder):
    path = train_model(kind, folder)
    tok = labkit.load(path)  # labkit's own engine by default now (it used to fall back to sentencepiece)
    assert tok.engine == "labkit" and type(tok).__name__ == "SpmPiecesTokenizer"
    ref = SentencePieceReference(path)
    for text in ["Hello  world", "a<sep>b", " 語 x ", "e\u0301 ﬁ", "語語 xyzzy qqq 語", ""]:
        enc = tok.encode(text)
        assert (enc.ids, enc.tokens, enc.offsets) == ref.encode(text, False), text
        assert tok.decode(enc.ids) == ref.decode(enc.ids, False), text


def test_offsets_of_the_dummy_prefix_and_byte_pieces_follow_sentencepiece(folder):
    path = train_model("bpe+byte_fallback", folder)
    sp = sentencepiece.SentencePieceProcessor(model_file=str(path))
    for engine in ("labkit", "sentencepiece"):
        tok = labkit.load(path, engine=engine)
        assert tok.encode("x").offsets == [(0, 0), (0, 1)]
        assert tok.encode("a\x85b").offsets == sp.encode("a\x85b", out_type="offset_mapping")["offsets"]
