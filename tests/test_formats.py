"""The file readers (labkit.formats) against the reference libraries on the shipped files.

GGUF: every key and every array value equals gguf.GGUFReader's (one slow pass per file).
tokenizer.json / .model / .tiktoken / vocab.json+merges.txt: the values equal what
tokenizers, sentencepiece and tiktoken read from the same bytes. Plus sniffing by content,
folder loading and chat-template priority.
"""
from __future__ import annotations

import base64
import functools
import json
import shutil
import struct
from pathlib import Path

import numpy as np
import pytest

from labkit.core import TOKEN_CONTROL, FormatError, LabkitError
from labkit.formats.detect import pick_folder_file, read_vocab, sniff, sniff_bytes
from labkit.formats.gguf import read_gguf, read_gguf_kv
from labkit.formats.hf_json import read_hf_json
from labkit.formats.spm_model import parse_model_proto, read_spm_model, write_model_proto
from labkit.formats.tiktoken_file import read_tiktoken, tiktoken_expected_hashes
from labkit.formats.vocab_merges import read_vocab_merges, read_vocab_txt
from labkit.paths import data_path

GGUF_NAMES = ["gpt-2", "llama-spm", "qwen2", "bert-bge"]
SPM_NAMES = ["botchan_en_unigram_1000.model", "botchan_en_bpe_1000.model"]
MINILM = "hf/all-MiniLM-L6-v2"
CL100K_SHA256 = "223921b76ee99bde995b7ff738513eef100fb51d18c93597a113bcffe865b2a7"


def gguf_path(name: str) -> Path:
    return data_path(f"gguf/ggml-vocab-{name}.gguf")


@functools.lru_cache(maxsize=1)
def gpt2_byte_map() -> dict[int, str]:
    """GPT-2's byte -> unicode table written out independently of labkit (the oracle)."""
    keep = list(range(ord("!"), ord("~") + 1)) + list(range(0xA1, 0xAD)) + list(range(0xAE, 0x100))
    table, extra = {}, 0
    for b in range(256):
        if b in keep:
            table[b] = chr(b)
        else:
            table[b] = chr(256 + extra)
            extra += 1
    return table


GPT2_CHAR_TO_BYTE = {c: b for b, c in gpt2_byte_map().items()}


def gpt2_bytes(token: str) -> bytes:
    return bytes(GPT2_CHAR_TO_BYTE[c] for c in token)


def botchan_lines(step: int = 1) -> list[str]:
    return data_path("corpus/botchan.txt").read_text(encoding="utf-8").splitlines()[::step]


# ----------------------------------------------------------------------------- GGUF


def _plain(value):
    if hasattr(value, "tolist"):
        return value.tolist()
    if isinstance(value, list):
        return [_plain(v) for v in value]
    return value


class _NumpyReadingIntoMemory:
    """numpy as gguf.gguf_reader sees it, except that ``memmap`` reads the same bytes into a plain array.

    GGUFReader slices its buffer once per string part; on a ``np.memmap`` each slice runs
    memmap's Python-level hooks, half the reader's time on a 150k-token file. The parsing
    code and the bytes it parses are the library's and the file's, unchanged.
    """

    def __getattr__(self, name):
        return getattr(np, name)

    @staticmethod
    def memmap(path, mode="r"):
        assert mode == "r", mode  # GGUFReader's default: a read-only view of the file
        return np.fromfile(path, dtype=np.uint8)


@pytest.mark.parametrize("name", GGUF_NAMES)
def test_gguf_reader_matches_ggufreader_field_by_field(name, monkeypatch):
    import gguf.gguf_reader
    from gguf import GGUFReader

    path = gguf_path(name)
    ours = read_gguf_kv(path)
    monkeypatch.setattr(gguf.gguf_reader, "np", _NumpyReadingIntoMemory())
    reference = GGUFReader(str(path))  # slow (~8 s for qwen2, twice that over a memmap): one pass per file
    monkeypatch.undo()
    assert len(reference.tensors) == 0
    ref_keys = list(reference.fields)
    assert ref_keys == list(ours), "same keys in the same order"
    for key in ref_keys:
        expected = _plain(reference.fields[key].contents())
        got = ours[key]
        assert type(got) is type(expected) or isinstance(got, (int, float)), key
        assert got == expected, f"{name}: {key} differs"


@pytest.mark.parametrize("name", GGUF_NAMES)
def test_gguf_vocab_fields(name):
    vocab = read_gguf(gguf_path(name))
    kv = read_gguf_kv(gguf_path(name))
    assert vocab.format == "gguf"
    assert len(vocab.tokens) == len(vocab.token_types) == len(kv["tokenizer.ggml.tokens"])
    retyped = {i: (vocab.tokens[i], kind) for i, (kind, stored) in enumerate(zip(vocab.token_types, kv["tokenizer.ggml.token_type"]))
               if kind != stored}
    # llama.cpp makes every token spelled like an end of generation a control token: Qwen2's ordinary
    # "</s>" too (llama-cpp-python 0.3.36 reports its attributes as NORMAL | CONTROL)
    assert retyped == ({128247: ("</s>", TOKEN_CONTROL)} if name == "qwen2" else {})
    if name in ("gpt-2", "qwen2"):
        assert vocab.model == "bpe_byte" and vocab.pre == name
        assert [f"{a} {b}" for a, b in vocab.merges] == kv["tokenizer.ggml.merges"]
    if name == "llama-spm":
        assert vocab.model == "spm_bpe" and vocab.merges is None
        assert vocab.scores == kv["tokenizer.ggml.scores"]
        assert vocab.options["byte_fallback"] is True


def test_gguf_pre_override():
    assert read_gguf(gguf_path("qwen2"), pre="qwen35").pre == "qwen35"
    assert read_vocab(gguf_path("qwen2"), pre="qwen35").pre == "qwen35"


def test_bert_bge_undone_vocab_equals_minilm_vocab_txt():
    vocab = read_gguf(gguf_path("bert-bge"))
    lines = data_path(f"{MINILM}/vocab.txt").read_text(encoding="utf-8").split("\n")
    assert lines[-1] == ""
    assert vocab.tokens == lines[:-1]
    assert vocab.model == "wordpiece" and vocab.specials.add_cls_sep
    assert (vocab.specials.cls_id, vocab.specials.sep_id, vocab.specials.unk_id) == (101, 102, 100)


# ----------------------------------------------------------------------------- sniffing


SHIPPED_KINDS = {
    "gguf/ggml-vocab-gpt-2.gguf": "gguf",
    "gguf/ggml-vocab-qwen2.gguf": "gguf",
    "sentencepiece/botchan_en_unigram_1000.model": "spm_model",
    "sentencepiece/botchan_en_bpe_1000.model": "spm_model",
    "tiktoken/cl100k_base.tiktoken": "tiktoken",
    f"{MINILM}/tokenizer.json": "hf_json",
    f"{MINILM}/tokenizer_config.json": "tokenizer_config",
    f"{MINILM}/vocab.txt": "vocab_txt",
    MINILM: "hf_json",
}


@pytest.mark.parametrize("relative,kind", sorted(SHIPPED_KINDS.items()))
def test_sniff_shipped(relative, kind):
    assert sniff(data_path(relative)) == kind


@pytest.mark.parametrize("relative,kind", sorted((r, k) for r, k in SHIPPED_KINDS.items() if r != MINILM))
def test_sniff_ignores_misleading_extension(tmp_path, relative, kind):
    source = data_path(relative)
    renamed = tmp_path / "misleading.json" if kind != "hf_json" else tmp_path / "misleading.model"
    shutil.copyfile(source, renamed)
    assert sniff(renamed) == kind


def test_sniff_json_after_bom_and_reads_it(tmp_path):
    folder = tmp_path / "bom"
    shutil.copytree(data_path(MINILM), folder)
    raw = (folder / "tokenizer.json").read_bytes()
    (folder / "tokenizer.json").write_bytes(b"\xef\xbb\xbf" + raw)
    assert sniff(folder / "tokenizer.json") == "hf_json"
    assert read_vocab(folder).tokens == read_vocab(data_path(MINILM)).tokens


def test_sniff_vocab_json_and_merges(tmp_path):
    (tmp_path / "vocab.json").write_text(json.dumps({"a": 0, "b": 1, "ab": 2}), encoding="utf-8")
    (tmp_path / "merges.txt").write_text("#version: 0.2\na b\n", encoding="utf-8")
    assert sniff(tmp_path / "vocab.json") == "vocab_json"
    assert sniff(tmp_path / "merges.txt") == "merges_txt"
    (tmp_path / "m.bin").write_text("a b\nab c\n", encoding="utf-8")
    assert sniff(tmp_path / "m.bin") == "merges_txt"


@pytest.mark.parametrize("content", [b"", b"\x00\x01\x02\x03garbage", b"hello world, not a vocab\n", b"{}", b"[1, 2]",
                                     b"\xef\xbb\xbf", b'{"some": "thing"}'])
def test_sniff_unknown_is_format_error(tmp_path, content):
    path = tmp_path / "unknown.bin"
    path.write_bytes(content)
    with pytest.raises(FormatError, match="unknown.bin"):
        sniff(path)
    with pytest.raises(FormatError, match="unknown.bin"):
        read_vocab(path)


def test_sniff_bytes_gguf_magic_and_spm_structure():
    assert sniff_bytes(b"GGUF\x03\x00\x00\x00")[0] == "gguf"
    head = data_path(f"sentencepiece/{SPM_NAMES[0]}").read_bytes()[:300]
    assert sniff_bytes(head, complete=False)[0] == "spm_model"
    # a protobuf-looking first byte with a broken piece record is not a model
    with pytest.raises(FormatError):
        sniff_bytes(b"\x0a\x05\x12\x03abc")


def test_missing_path_and_bad_arguments(tmp_path):
    with pytest.raises(FormatError, match="no such file"):
        read_vocab(tmp_path / "nope.json")
    with pytest.raises(FormatError):
        read_vocab(None)
    with pytest.raises(FormatError):
        read_vocab(data_path(MINILM), pre=3)
    with pytest.raises(FormatError, match="no tokenizer file"):
        read_vocab(tmp_path)


# ----------------------------------------------------------------------------- tokenizer.json


def test_minilm_tokenizer_json_matches_tokenizers():
    from tokenizers import Tokenizer

    path = data_path(f"{MINILM}/tokenizer.json")
    vocab = read_vocab(path)
    reference = Tokenizer.from_file(str(path))
    assert vocab.format == "hf_json" and vocab.model == "wordpiece"
    assert {t: i for i, t in enumerate(vocab.tokens)} == reference.get_vocab(with_added_tokens=True)
    assert vocab.tokens == read_vocab_txt(data_path(f"{MINILM}/vocab.txt")).tokens
    sp = vocab.specials
    assert (sp.cls, sp.cls_id, sp.sep, sp.sep_id, sp.pad_id, sp.mask_id, sp.unk_id) == ("[CLS]", 101, "[SEP]", 102, 0, 103, 100)
    assert sp.add_cls_sep and not sp.add_bos
    assert vocab.normalizer == {"lowercase": True, "strip_accents": None, "clean_text": True, "handle_chinese_chars": True}
    assert vocab.options == {"unk_token": "[UNK]", "continuing_subword_prefix": "##", "max_input_chars_per_word": 100}
    assert [(a.content, a.id, a.special) for a in vocab.added_tokens] == [
        (t.content, i, t.special) for i, t in sorted(reference.get_added_tokens_decoder().items())]
    assert json.loads(vocab.metadata["tokenizer_json"]) == json.loads(path.read_text(encoding="utf-8"))
    assert vocab.metadata["tokenizer_config"]["tokenizer_class"] == "BertTokenizer"
    assert vocab.metadata["padding"]["strategy"] == {"Fixed": 128}
    assert vocab.chat_template is None


def _gpt2_hf_tokenizer():
    from tokenizers import AddedToken, Tokenizer, decoders, models, pre_tokenizers, processors

    gguf_vocab = read_gguf(gguf_path("gpt-2"))
    bpe = models.BPE({t: i for i, t in enumerate(gguf_vocab.tokens)}, list(gguf_vocab.merges))
    tok = Tokenizer(bpe)
    tok.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    tok.decoder = decoders.ByteLevel()
    tok.post_processor = processors.ByteLevel(trim_offsets=False)
    tok.add_special_tokens([AddedToken("<|endoftext|>", special=True, normalized=False)])
    return gguf_vocab, tok


def test_byte_level_bpe_tokenizer_json(tmp_path):
    gguf_vocab, tok = _gpt2_hf_tokenizer()
    tok.save(str(tmp_path / "tokenizer.json"))
    config = {"bos_token": "<|endoftext|>", "eos_token": "<|endoftext|>", "unk_token": "<|endoftext|>",
              "chat_template": "{{ messages[0]['content'] }}", "add_bos_token": False}
    (tmp_path / "tokenizer_config.json").write_text(json.dumps(config), encoding="utf-8")
    vocab = read_vocab(tmp_path)
    assert vocab.model == "bpe_byte" and vocab.pre == "gpt-2"
    assert vocab.tokens == gguf_vocab.tokens
    assert vocab.merges == gguf_vocab.merges
    assert vocab.token_types == gguf_vocab.token_types
    assert vocab.token_bytes[50256] is None
    assert all(vocab.token_bytes[i] == gpt2_bytes(t) for i, t in enumerate(vocab.tokens[:50256]))
    assert (vocab.specials.eos, vocab.specials.eos_id, vocab.specials.bos_id) == ("<|endoftext|>", 50256, 50256)
    assert vocab.specials.eos_ids == (50256,)
    assert vocab.chat_template == "{{ messages[0]['content'] }}"
    assert [(a.content, a.id, a.special) for a in vocab.added_tokens] == [("<|endoftext|>", 50256, True)]


# the Split regexes as the Qwen2 and Llama-3 tokenizer.json files spell them
QWEN2_SPLIT = (r"""(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}| ?[^\s\p{L}\p{N}]+[\r\n]*"""
               r"""|\s*[\r\n]+|\s+(?!\S)|\s+""")
LLAMA3_SPLIT = (r"""(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n]*"""
                r"""|\s*[\r\n]+|\s+(?!\S)|\s+""")


@pytest.mark.parametrize("split,nfc,expected", [(QWEN2_SPLIT, True, "qwen2"), (LLAMA3_SPLIT, False, "llama3"),
                                                (None, False, "gpt-2"), ("[0-9]+", False, None)])
def test_byte_level_split_regex_names_and_nfc(tmp_path, split, nfc, expected):
    from tokenizers import Regex, Tokenizer, models, normalizers, pre_tokenizers

    alphabet = [gpt2_byte_map()[b] for b in range(256)]
    tok = Tokenizer(models.BPE({c: i for i, c in enumerate(alphabet)}, []))
    if nfc:
        tok.normalizer = normalizers.NFC()
    if split is None:
        tok.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    else:
        tok.pre_tokenizer = pre_tokenizers.Sequence([
            pre_tokenizers.Split(Regex(split), behavior="isolated"),
            pre_tokenizers.ByteLevel(add_prefix_space=False, use_regex=False),
        ])
    path = tmp_path / "tokenizer.json"
    tok.save(str(path))
    vocab = read_vocab(path)
    assert (vocab.model, vocab.pre, vocab.normalizer.get("nfc", False)) == ("bpe_byte", expected, nfc)
    assert vocab.token_bytes == [bytes([b]) for b in range(256)]
    assert read_vocab(path, pre="llama3").pre == "llama3"


def test_unigram_tokenizer_json_matches_the_model_file(tmp_path):
    from tokenizers import Tokenizer, models, normalizers, pre_tokenizers

    spm_vocab = read_spm_model(data_path(f"sentencepiece/{SPM_NAMES[0]}"))
    tok = Tokenizer(models.Unigram([(t, s) for t, s in zip(spm_vocab.tokens, spm_vocab.scores)], unk_id=0))
    tok.normalizer = normalizers.Precompiled(spm_vocab.normalizer["charsmap"])
    tok.pre_tokenizer = pre_tokenizers.Metaspace(replacement="\u2581", prepend_scheme="always")
    path = tmp_path / "tokenizer.json"
    tok.save(str(path))
    vocab = read_vocab(path)
    assert vocab.model == "unigram"
    assert vocab.tokens == spm_vocab.tokens
    assert vocab.scores == pytest.approx(spm_vocab.scores, abs=1e-6)
    assert vocab.normalizer["charsmap"] == spm_vocab.normalizer["charsmap"]
    assert vocab.normalizer["add_dummy_prefix"] is True and vocab.normalizer["escape_whitespaces"] is True
    assert (vocab.specials.unk_id, vocab.token_types[0]) == (0, 2)


def test_chat_template_list_form(tmp_path):
    shutil.copyfile(data_path(f"{MINILM}/tokenizer.json"), tmp_path / "tokenizer.json")
    config = {"chat_template": [{"name": "tool_use", "template": "T"}, {"name": "default", "template": "D"}]}
    (tmp_path / "tokenizer_config.json").write_text(json.dumps(config), encoding="utf-8")
    vocab = read_vocab(tmp_path)
    assert vocab.chat_template == "D"
    assert vocab.chat_templates == {"tool_use": "T", "default": "D"}
    assert vocab.chat_template_origin == f"{tmp_path / 'tokenizer_config.json'}: chat_template"


def test_chat_template_priority_inside_a_folder(tmp_path):
    shutil.copyfile(data_path(f"{MINILM}/tokenizer.json"), tmp_path / "tokenizer.json")
    (tmp_path / "tokenizer_config.json").write_text(json.dumps({"chat_template": "from config"}), encoding="utf-8")
    (tmp_path / "chat_template.json").write_text(json.dumps({"chat_template": "from json"}), encoding="utf-8")
    (tmp_path / "chat_template.jinja").write_text("from jinja", encoding="utf-8")
    assert read_vocab(tmp_path).chat_template == "from jinja"
    (tmp_path / "chat_template.jinja").unlink()
    assert read_vocab(tmp_path).chat_template == "from json"
    (tmp_path / "chat_template.json").unlink()
    assert read_vocab(tmp_path).chat_template == "from config"
    # reading the config file itself reads the vocabulary beside it
    assert read_vocab(tmp_path / "tokenizer_config.json").chat_template == "from config"


def test_config_wrong_types_are_format_errors(tmp_path):
    shutil.copyfile(data_path(f"{MINILM}/tokenizer.json"), tmp_path / "tokenizer.json")
    for bad in ([1, 2], {"eos_token": 5}, {"add_bos_token": "yes"}, {"chat_template": 3},
                {"added_tokens_decoder": {"x": {}}}, {"chat_template": [{"name": 1}]}):
        (tmp_path / "tokenizer_config.json").write_text(json.dumps(bad), encoding="utf-8")
        with pytest.raises(FormatError, match="tokenizer_config.json"):
            read_vocab(tmp_path)


def test_added_tokens_decoder_extends_vocab(tmp_path):
    shutil.copyfile(data_path(f"{MINILM}/tokenizer.json"), tmp_path / "tokenizer.json")
    config = {"added_tokens_decoder": {"30523": {"content": "<new>", "special": True}}}
    (tmp_path / "tokenizer_config.json").write_text(json.dumps(config), encoding="utf-8")
    vocab = read_vocab(tmp_path)
    assert len(vocab.tokens) == 30524
    assert vocab.tokens[30523] == "<new>" and vocab.token_types[30523] == 3
    assert vocab.token_types[30522] == 5  # the hole


# ----------------------------------------------------------------------------- SentencePiece


@pytest.mark.parametrize("name", SPM_NAMES)
def test_spm_model_matches_sentencepiece(name):
    import sentencepiece as spm

    path = data_path(f"sentencepiece/{name}")
    vocab = read_vocab(path)
    sp = spm.SentencePieceProcessor(model_file=str(path))
    assert vocab.format == "spm_model"
    assert vocab.model == ("unigram" if "unigram" in name else "spm_bpe")
    assert len(vocab.tokens) == sp.get_piece_size()
    assert vocab.tokens == [sp.id_to_piece(i) for i in range(sp.get_piece_size())]
    assert vocab.scores == [sp.get_score(i) for i in range(sp.get_piece_size())]
    for i, ttype in enumerate(vocab.token_types):
        assert (ttype == 2) == sp.is_unknown(i) and (ttype == 3) == sp.is_control(i)
        assert (ttype == 6) == sp.is_byte(i) and (ttype == 5) == sp.is_unused(i)
    s = vocab.specials
    assert (s.unk_id, s.bos_id, s.eos_id) == (sp.unk_id(), sp.bos_id(), sp.eos_id())
    assert (s.pad_id if s.pad_id is not None else -1) == sp.pad_id()
    # sentencepiece never matches control pieces in text: only user-defined pieces are added tokens
    assert [(a.content, a.id) for a in vocab.added_tokens] == [
        (sp.id_to_piece(i), i) for i in range(len(vocab.tokens)) if vocab.token_types[i] == 4]
    assert {i for i in range(len(vocab.tokens)) if sp.is_control(i)} == {1, 2}
    assert vocab.normalizer["charsmap"] and vocab.normalizer["name"] in ("nfkc", "nmt_nfkc")
    assert vocab.options["byte_fallback"] is False


@pytest.mark.parametrize("name", SPM_NAMES)
def test_spm_round_trip_gives_same_ids(name):
    import sentencepiece as spm

    path = data_path(f"sentencepiece/{name}")
    vocab = read_spm_model(path)
    blob = write_model_proto(vocab)
    original = spm.SentencePieceProcessor(model_file=str(path))
    rebuilt = spm.SentencePieceProcessor(model_proto=blob)
    lines = botchan_lines()
    assert rebuilt.encode(lines) == original.encode(lines)
    again = parse_model_proto(blob)
    assert again["normalizer_spec"]["precompiled_charsmap"] == vocab.normalizer["charsmap"]
    assert [p for p, _, _ in again["pieces"]] == vocab.tokens


def test_spm_from_gguf_arrays_passes_llama_vectors():
    import sentencepiece as spm

    from labkit.vectors import load_vectors

    vocab = read_gguf(gguf_path("llama-spm"))
    sp = spm.SentencePieceProcessor(model_proto=write_model_proto(vocab))
    cases = load_vectors("llama-spm")
    assert cases
    assert [sp.encode(text) for text, _ in cases] == [ids for _, ids in cases]


def test_spm_writer_keeps_exactly_one_unknown():
    import sentencepiece as spm

    vocab = read_gguf(gguf_path("llama-spm"))
    vocab.token_types[1] = 2  # a second UNKNOWN piece: sentencepiece would refuse it
    sp = spm.SentencePieceProcessor(model_proto=write_model_proto(vocab))
    assert sp.is_unknown(0) and not sp.is_unknown(1) and sp.is_control(1)
    vocab.tokens[5] = vocab.tokens[6]
    with pytest.raises(FormatError, match="twice"):
        write_model_proto(vocab)
    with pytest.raises(FormatError):
        write_model_proto(read_gguf(gguf_path("gpt-2")))


def test_spm_folder_with_config(tmp_path):
    shutil.copyfile(data_path(f"sentencepiece/{SPM_NAMES[1]}"), tmp_path / "tokenizer.model")
    config = {"add_bos_token": True, "bos_token": "<s>", "chat_template": "{{ bos_token }}"}
    (tmp_path / "tokenizer_config.json").write_text(json.dumps(config), encoding="utf-8")
    vocab = read_vocab(tmp_path)
    assert vocab.format == "spm_model" and vocab.specials.add_bos and vocab.specials.bos_id == 1
    assert vocab.chat_template == "{{ bos_token }}"
    shutil.copyfile(data_path(f"sentencepiece/{SPM_NAMES[0]}"), tmp_path / "other.model")
    assert pick_folder_file(tmp_path).name == "tokenizer.model"
    (tmp_path / "tokenizer.model").rename(tmp_path / "third.model")
    with pytest.raises(FormatError, match="several"):
        read_vocab(tmp_path)


# ----------------------------------------------------------------------------- tiktoken


def test_cl100k_matches_tiktoken_loader():
    from tiktoken.load import load_tiktoken_bpe

    path = data_path("tiktoken/cl100k_base.tiktoken")
    vocab = read_vocab(path)
    ranks = load_tiktoken_bpe(str(path), expected_hash=CL100K_SHA256)
    assert (vocab.format, vocab.model, vocab.pre, vocab.merges) == ("tiktoken", "bpe_byte", "cl100k", None)
    assert vocab.metadata["sha256"] == CL100K_SHA256 and vocab.metadata["encoding_name"] == "cl100k_base"
    assert len(vocab.tokens) == 100277
    for raw, rank in ranks.items():
        assert vocab.token_bytes[rank] == raw
    table = gpt2_byte_map()
    assert all(vocab.tokens[rank] == "".join(table[b] for b in raw) for raw, rank in ranks.items())
    specials = {"<|endoftext|>": 100257, "<|fim_prefix|>": 100258, "<|fim_middle|>": 100259,
                "<|fim_suffix|>": 100260, "<|endofprompt|>": 100276}
    assert {a.content: a.id for a in vocab.added_tokens} == specials
    assert all(a.special for a in vocab.added_tokens)
    holes = [100256, *range(100261, 100276)]
    assert [i for i, t in enumerate(vocab.token_types) if t == 5] == holes
    assert all(vocab.token_bytes[i] is None for i in holes + list(specials.values()))
    assert vocab.specials.eos_id == 100257


def test_tiktoken_hash_table_includes_tiktoken_ext():
    import re

    import tiktoken_ext.openai_public as ref

    source = Path(ref.__file__).read_text(encoding="utf-8")
    published = set(re.findall(r'expected_hash="([0-9a-f]{64})"', source))
    assert published
    ours = set().union(*tiktoken_expected_hashes().values())
    assert published <= ours
    assert CL100K_SHA256 in tiktoken_expected_hashes()["cl100k_base"]


def test_tiktoken_hash_mismatch_with_known_name(tmp_path):
    raw = data_path("tiktoken/cl100k_base.tiktoken").read_bytes()
    lines = raw.split(b"\n")
    lines[1000] = base64.b64encode(b"zzzzzzzzzz") + b" 1000"
    changed = b"\n".join(lines)
    with pytest.raises(FormatError, match="sha256"):
        read_vocab_file(tmp_path / "cl100k_base.tiktoken", changed)
    vocab = read_vocab_file(tmp_path / "mine.tiktoken", changed)
    assert vocab.metadata["encoding_name"] is None and vocab.pre is None and not vocab.added_tokens
    assert vocab.token_bytes[1000] == b"zzzzzzzzzz"
    # by hash a known file is recognised whatever its name
    assert read_vocab_file(tmp_path / "anything.txt", raw).pre == "cl100k"


def read_vocab_file(path: Path, content: bytes):
    path.write_bytes(content)
    return read_vocab(path)


@pytest.mark.parametrize("content,match", [
    (b"IQ== 0\nIQ== 1\n", "already has rank"),
    (b"IQ== 0\nIg== 0\n", "two tokens"),
    (b"IQ== 0\n!!!! 1\n", "base64"),
    (b"IQ== 0\nIg== 99999999999\n", "ranks go up to"),
])
def test_tiktoken_defects(tmp_path, content, match):
    path = tmp_path / "t.tiktoken"
    path.write_bytes(content)
    with pytest.raises(FormatError, match=match):
        read_tiktoken(path)


# ----------------------------------------------------------------------------- vocab.json + merges.txt


def _write_gpt2_pair(folder: Path):
    gguf_vocab = read_gguf(gguf_path("gpt-2"))
    (folder / "vocab.json").write_text(json.dumps({t: i for i, t in enumerate(gguf_vocab.tokens)}, ensure_ascii=False), encoding="utf-8")
    (folder / "merges.txt").write_text("#version: 0.2\n" + "\n".join(f"{a} {b}" for a, b in gguf_vocab.merges) + "\n", encoding="utf-8")
    return gguf_vocab


def test_vocab_json_merges_txt_match_tokenizers(tmp_path):
    from tokenizers import models

    gguf_vocab = _write_gpt2_pair(tmp_path)
    ref_vocab, ref_merges = models.BPE.read_file(str(tmp_path / "vocab.json"), str(tmp_path / "merges.txt"))
    for target in (tmp_path, tmp_path / "vocab.json", tmp_path / "merges.txt"):
        vocab = read_vocab(target)
        assert (vocab.format, vocab.model, vocab.pre) == ("vocab_merges", "bpe_byte", "gpt-2")
        assert {t: i for i, t in enumerate(vocab.tokens)} == ref_vocab
        assert vocab.merges == [tuple(m) for m in ref_merges]
    assert vocab.tokens == gguf_vocab.tokens
    assert vocab.specials.eos_id == 50256 and vocab.token_types[50256] == 3
    assert vocab.token_bytes[50256] is None and vocab.token_bytes[220] == b" "


def test_vocab_json_without_merges(tmp_path):
    (tmp_path / "vocab.json").write_text(json.dumps({"a": 0}), encoding="utf-8")
    with pytest.raises(FormatError, match="merges.txt"):
        read_vocab(tmp_path / "vocab.json")
    (tmp_path / "merges.txt").write_text("a b\n", encoding="utf-8")
    with pytest.raises(FormatError, match="not in the vocabulary"):
        read_vocab_merges(tmp_path / "vocab.json", tmp_path / "merges.txt")


def test_vocab_txt_folder(tmp_path):
    shutil.copyfile(data_path(f"{MINILM}/vocab.txt"), tmp_path / "vocab.txt")
    (tmp_path / "tokenizer_config.json").write_text(json.dumps({"do_lower_case": False}), encoding="utf-8")
    vocab = read_vocab(tmp_path)
    reference = read_vocab(data_path(MINILM))
    assert vocab.model == "wordpiece" and vocab.tokens == reference.tokens
    assert vocab.token_types == reference.token_types
    assert vocab.specials.add_cls_sep and vocab.specials.cls_id == 101
    assert vocab.normalizer["lowercase"] is False


def test_readers_only_raise_labkit_errors_on_wrong_json_types(tmp_path):
    base = json.loads(data_path(f"{MINILM}/tokenizer.json").read_text(encoding="utf-8"))
    mutations = [
        ("model", []), ("model", "x"), ("added_tokens", {}), ("added_tokens", [1]),
        ("normalizer", [1]), ("pre_tokenizer", "x"), ("post_processor", 3),
    ]
    for key, value in mutations:
        doc = dict(base, **{key: value})
        (tmp_path / "tokenizer.json").write_text(json.dumps(doc), encoding="utf-8")
        with pytest.raises(LabkitError, match="tokenizer.json"):
            read_hf_json(tmp_path / "tokenizer.json")
    doc = json.loads(json.dumps(base))
    doc["model"]["vocab"]["[PAD]"] = "0"
    (tmp_path / "tokenizer.json").write_text(json.dumps(doc), encoding="utf-8")
    with pytest.raises(FormatError, match=r"model\.vocab"):
        read_hf_json(tmp_path / "tokenizer.json")


def _strings(*items: bytes) -> bytes:
    return b"".join(struct.pack("<Q", len(item)) + item for item in items)


@pytest.mark.parametrize("data,count,message", [
    (_strings(b"a", "é".encode(), b"\xff\xfe", b"d"), 4, "string 2 is not valid UTF-8"),
    (_strings(b"a", b"bc")[:-1], 2, "truncated in string 1 of 2"),
    (_strings(b"a") + struct.pack("<Q", 2**63) + b"xyz", 2, "truncated in string 1 of 2"),
    (_strings(b"a", b"b"), 3, "truncated in string 2 of 3"),
])
def test_gguf_string_array_names_the_bad_string(data, count, message):
    # the fast pass slices without checks; a bad array falls to the careful pass, which says where
    from labkit.formats.gguf import _Cursor
    with pytest.raises(FormatError, match=message):
        _Cursor(data, "x.gguf")._string_array(count)


def test_gguf_string_array_fast_pass_equals_the_careful_one():
    from labkit.formats.gguf import _Cursor
    items = [s.encode() for s in ("", "a", "Ġthe", "日本", "😀", " <s>", "\x00")]
    data = _strings(*items) + b"tail"
    fast, careful = _Cursor(data, "x.gguf"), _Cursor(data, "x.gguf")
    assert fast._string_array(len(items)) == careful._string_array_checked(len(items), 0) == [i.decode() for i in items]
    assert fast.pos == careful.pos == len(data) - 4
