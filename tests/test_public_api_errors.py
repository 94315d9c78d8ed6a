"""Bad input to the public surface (the README lists it) gets a LabkitError that says what and where,
and loses nothing: after the error the object answers exactly as if the bad call never came.

Every bundled name is checked with every engine that serves it. Messages are checked for a
meaningful part (the bad value, its position, the file's name), not just for the type.
"""
from __future__ import annotations

import re

import pytest

import labkit
from support.engines import loaded
from labkit.algorithms.bytes_unicode import bytes_to_gpt2
from labkit.core import EngineUnavailable, LabkitError
from labkit.paths import BUNDLED, bundled_path

# which engines serve each bundled name, in the order load() lists them (written out here:
# computing it with engines_for would be the code under test)
SERVED = {
    "gpt2": ("labkit", "hf", "tiktoken"),
    "llama-spm": ("labkit", "sentencepiece"),  # the hf engine refuses llama and bert GGUFs
    "qwen2": ("labkit", "hf", "tiktoken"),
    "bert-bge": ("labkit",),
    "cl100k_base": ("labkit", "hf", "tiktoken"),
    "botchan-unigram": ("labkit", "sentencepiece"),  # the hf engine refuses .model files
    "botchan-bpe": ("labkit", "sentencepiece"),
    "minilm": ("labkit", "hf"),
}
PAIRS = [(name, engine) for name, engines in SERVED.items() for engine in engines]
PAIR_IDS = [f"{name}-{engine}" for name, engine in PAIRS]


def raises(fn, *args, **kwargs) -> str:
    """The message of the LabkitError ``fn`` raises (any other outcome fails the test)."""
    with pytest.raises(LabkitError) as info:
        fn(*args, **kwargs)
    message = str(info.value)
    assert message, "an empty error message says nothing"
    return message


def test_the_served_table_covers_every_bundled_name():
    assert set(SERVED) == set(BUNDLED)


# ----------------------------------------------------------------------------- encode


NOT_TEXT = [None, b"Hello", bytearray(b"Hello"), 5, 1.5, ["Hello"], ("Hello",), {"text": "Hello"}]


@pytest.mark.parametrize("name,engine", PAIRS, ids=PAIR_IDS)
def test_encode_takes_only_str(name, engine):
    tok = loaded(name, engine)
    before = tok.encode("Hello world").ids
    for value in NOT_TEXT:
        message = raises(tok.encode, value)
        assert tok.name in message and type(value).__name__ in message, message
    message = raises(tok.encode, "a\ud800b")
    assert "U+D800" in message and "char 1" in message and tok.name in message, message
    assert tok.encode("Hello world").ids == before  # nothing about the tokenizer changed


@pytest.mark.parametrize("name,engine", PAIRS, ids=PAIR_IDS)
def test_encode_batch_takes_a_list_of_str(name, engine):
    tok = loaded(name, engine)
    assert "str" in raises(tok.encode_batch, "a string")
    assert "item 0 is int" in raises(tok.encode_batch, [1, 2])
    assert "item 1 is NoneType" in raises(tok.encode_batch, ["ok", None])
    for value in (None, 5, b"ab"):
        assert type(value).__name__ in raises(tok.encode_batch, value)
    assert [e.ids for e in tok.encode_batch(("Hello", "world"))] == [tok.encode("Hello").ids, tok.encode("world").ids]
    assert tok.encode_batch([]) == []


# ----------------------------------------------------------------------------- decode and ids

NOT_IDS = [1.5, 1.0, float("nan"), float("inf"), "1", "a", None, True, False, [1], (1,), b"\x01"]


@pytest.mark.parametrize("name,engine", PAIRS, ids=PAIR_IDS)
def test_decode_refuses_ids_outside_the_vocab(name, engine):
    tok = loaded(name, engine)
    size = tok.vocab_size
    for bad in (-1, size, size + 1, 2**70, -(2**70)):
        message = raises(tok.decode, [0, bad])
        assert f"unknown id {bad} at position 1" in message and tok.name in message and str(size) in message, message
    assert tok.decode([]) == ""
    assert tok.decode(()) == ""
    assert tok.decode([0]) == tok.decode((0,))  # any sequence of ints


@pytest.mark.parametrize("name,engine", PAIRS, ids=PAIR_IDS)
def test_decode_refuses_what_is_not_an_id(name, engine):
    tok = loaded(name, engine)
    for bad in NOT_IDS:
        message = raises(tok.decode, [0, bad])
        assert "position 1" in message and tok.name in message, message
        assert ("bool" if isinstance(bad, bool) else type(bad).__name__) in message, message
    for ids in (None, 5, "12", b"\x01\x02", {1: 2}, 1.5):
        message = raises(tok.decode, ids)
        assert type(ids).__name__ in message and tok.name in message, message
    assert "position 0" in raises(tok.decode, [[1, 2]])  # nested lists are not ids


def test_decode_takes_numpy_integers():
    np = pytest.importorskip("numpy")
    tok = loaded("gpt2", "labkit")
    ids = tok.encode("Hello world").ids
    assert tok.decode(np.array(ids)) == "Hello world"
    assert tok.decode([np.int64(i) for i in ids]) == "Hello world"
    assert "float64" in raises(tok.decode, np.array(ids, dtype=float))


@pytest.mark.parametrize("name,engine", PAIRS, ids=PAIR_IDS)
def test_id_to_token_and_token_to_id(name, engine):
    tok = loaded(name, engine)
    size = tok.vocab_size
    for bad in (-1, size, 2**70):
        message = raises(tok.id_to_token, bad)
        assert f"unknown id {bad}" in message and tok.name in message, message
    for bad in (1.5, "3", None, True, [3]):
        message = raises(tok.id_to_token, bad)
        assert ("bool" if bad is True else type(bad).__name__) in message, message
    last = tok.id_to_token(size - 1)
    assert isinstance(last, str) and tok.token_to_id(last) is not None
    assert tok.token_to_id("\x00surely not a token\x00") is None
    assert tok.token_to_id("") is None or tok.id_to_token(tok.token_to_id("")) == ""
    for bad in (None, 5, b"a", ["a"]):
        assert type(bad).__name__ in raises(tok.token_to_id, bad)


def _byte_id(tok, value: int) -> int | None:
    """The id of the token that is exactly one raw byte: '<0xNN>' (SentencePiece) or the
    byte's GPT-2 spelling (byte-level BPE)."""
    if tok.vocab.model == "bpe_byte":
        return tok.token_to_id(bytes_to_gpt2(bytes([value])))
    return tok.token_to_id(f"<0x{value:02X}>")


BYTE_VOCABS = [(name, engine) for name, engine in PAIRS if name in ("gpt2", "qwen2", "cl100k_base", "llama-spm")]


@pytest.mark.parametrize("name,engine", BYTE_VOCABS, ids=[f"{n}-{e}" for n, e in BYTE_VOCABS])
def test_invalid_utf8_through_byte_tokens_decodes_with_replacement(name, engine):
    tok = loaded(name, engine)
    b = {value: _byte_id(tok, value) for value in (0x80, 0xBF, 0xE6, 0x97, 0xA5, 0xF0, 0x9F, 0xFF)}
    assert None not in b.values(), b
    a = tok.encode("ab", parse_special=False).ids
    assert tok.decode([b[0x80]]) == "\ufffd"  # a lone continuation byte
    assert tok.decode([b[0xFF]]) == "\ufffd"  # a byte UTF-8 never uses
    assert tok.decode([b[0xE6], b[0x97], b[0xA5]]) == "日"  # the same bytes, complete, are a character
    for ids in ([*a, b[0xE6], *a],  # a 3-byte sequence cut after its lead
                [*a, b[0xE6], b[0x97], *a],  # ... and after two bytes
                [*a, b[0xF0], b[0x9F], *a],  # a 4-byte sequence cut short
                [*a, b[0x80], b[0xBF], *a],  # two continuation bytes
                [b[0xE6]]):  # the text ends mid-character
        text = tok.decode(ids)
        assert "\ufffd" in text, (ids, text)
        if ids[0] == a[0]:
            assert text.startswith("ab") and text.rstrip().endswith("ab"), (ids, text)
        assert tok.decode(ids, skip_special_tokens=True) == text  # no specials here to skip


# ----------------------------------------------------------------------------- load


def test_load_refuses_what_is_not_a_source(tmp_path):
    assert "got None" in raises(labkit.load, None)
    assert "got 5" in raises(labkit.load, 5)
    assert "got ''" in raises(labkit.load, "")
    assert "got b'gpt2'" in raises(labkit.load, b"gpt2")


def test_load_says_which_path_is_missing(tmp_path):
    missing = tmp_path / "nowhere" / "model.gguf"
    for source in (missing, str(missing)):
        message = raises(labkit.load, source)
        assert str(missing) in message and "no such file" in message, message
    assert "no such file" in raises(labkit.load, "missing.gguf")
    assert "no such file" in raises(labkit.load, "./missing")


def test_load_empty_file_and_folders(tmp_path):
    empty = tmp_path / "empty.gguf"
    empty.write_bytes(b"")
    message = raises(labkit.load, empty)
    assert "empty.gguf" in message and "empty" in message.split("empty.gguf", 1)[1], message
    folder = tmp_path / "nothing"
    folder.mkdir()
    message = raises(labkit.load, folder)
    assert str(folder) in message and "no tokenizer file" in message, message
    config_only = tmp_path / "config_only"
    config_only.mkdir()
    (config_only / "config.json").write_text('{"model_type": "llama"}')
    message = raises(labkit.load, config_only)
    assert str(config_only) in message and "no tokenizer file" in message, message


def test_load_a_folder_with_a_trailing_slash():
    folder = bundled_path("minilm")
    plain = labkit.load(str(folder))
    slashed = labkit.load(str(folder) + "/")
    assert slashed.encode("Hello world").ids == plain.encode("Hello world").ids
    assert slashed.name == plain.name


def test_load_unknown_names_and_engines():
    message = raises(labkit.load, "gpt3")
    assert "'gpt3'" in message and "gpt2" in message and "llama-spm" in message, message  # lists the bundled names
    message = raises(labkit.load, "gpt2", engine="nope")
    assert "unknown engine 'nope'" in message and "labkit, hf, tiktoken, sentencepiece" in message, message
    assert "unknown engine 5" in raises(labkit.load, "gpt2", engine=5)
    assert "pre-tokenizer" in raises(labkit.load, "gpt2", pre="no-such-pre")
    assert "int" in raises(labkit.load, "gpt2", pre=5)


def test_load_a_malformed_hub_id(monkeypatch):
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")  # never the network, whatever happens
    message = raises(labkit.load, "org/model name")
    assert "org/model name" in message, message
    assert "no such file" in raises(labkit.load, "org/")
    assert "a/b/c" in raises(labkit.load, "a/b/c")


UNSERVED = [("llama-spm", "tiktoken"), ("bert-bge", "tiktoken"), ("minilm", "tiktoken"), ("botchan-unigram", "tiktoken"),
            ("botchan-bpe", "tiktoken"), ("gpt2", "sentencepiece"), ("minilm", "sentencepiece"), ("bert-bge", "mock")]


@pytest.mark.parametrize("name,engine", UNSERVED, ids=[f"{n}-{e}" for n, e in UNSERVED])
def test_an_engine_that_cannot_serve_lists_those_that_can(name, engine):
    with pytest.raises(EngineUnavailable) as info:
        labkit.load(name, engine=engine)
    message = str(info.value)
    can = re.search(r"engines that can: (.*)$", message)
    assert can is not None, message
    assert tuple(can.group(1).split(", ")) == SERVED[name], message
    assert f"engine {engine!r} cannot serve" in message and loaded(name, "labkit").name in message, message


# ----------------------------------------------------------------------------- chat templates


HOSTILE_MESSAGES = [
    (None, "list"), ("Hello", "list"), (5, "list"), ({"role": "user", "content": "x"}, "list"),
    ((m for m in []), "list"),
    ([1, 2], "message 0"), (["Hello"], "message 0"), ([{"role": "user", "content": "x"}, None], "message 1"),
    ([{"content": "no role"}], "role"),
]


@pytest.mark.parametrize("messages,part", HOSTILE_MESSAGES, ids=range(len(HOSTILE_MESSAGES)))
def test_chat_template_refuses_ill_formed_conversations(messages, part):
    tok = loaded("qwen2", "labkit")
    message = raises(tok.apply_chat_template, messages)
    assert part in message, message


ODD_MESSAGES = [
    [{"role": "user", "content": None}],
    [{"role": 5, "content": "x"}],
    [{"role": "user", "content": 5}],
    [{"role": "user", "content": ["a", "b"]}],
    [{"role": "user", "content": {"a": 1}}],
    [{"role": "user", "content": [{"type": "text", "text": "hi"}]}],
    [{"role": "assistant", "content": "x", "tool_calls": "not a list"}],
    [{"role": "user", "content": "x", "extra": object()}],
]


@pytest.mark.parametrize("messages", ODD_MESSAGES, ids=range(len(ODD_MESSAGES)))
def test_chat_template_ill_typed_content_renders_or_raises_labkit_error(messages):
    tok = loaded("qwen2", "labkit")
    try:
        text = tok.apply_chat_template(messages)
    except LabkitError as exc:
        assert "line" in str(exc) or "message" in str(exc), str(exc)  # says where in the template or the conversation
    else:
        assert isinstance(text, str) and "<|im_start|>" in text


def test_chat_template_huge_content_renders_whole():
    tok = loaded("qwen2", "labkit")
    content = "x" * 1_000_000
    text = tok.apply_chat_template([{"role": "user", "content": content}], add_generation_prompt=True)
    assert content in text and text.endswith("<|im_start|>assistant\n")


def test_chat_template_missing_says_where_it_looked():
    tok = loaded("gpt2", "labkit")
    message = raises(tok.apply_chat_template, [{"role": "user", "content": "x"}])
    assert "no chat template" in message and "ggml-vocab-gpt-2.gguf" in message, message


@pytest.mark.parametrize("template,part", [
    (None, "str"), (5, "str"), ("{% for %}", "line 1"), ("{{ 1/0 }}", "ZeroDivisionError"),
    ("{% for i in range(10**9) %}x{% endfor %}", "range"), ("{{ 'x' * 10**10 }}", "limit"),
    ("{{ ''.__class__ }}", "__class__"), ("{{ raise_exception('boom') }}", "boom"),
    ("{% macro f() %}{{ f() }}{% endmacro %}{{ f() }}", "deeper"),
], ids=range(9))
def test_render_chat_template_hostile_templates(template, part):
    message = raises(labkit.render_chat_template, template, [{"role": "user", "content": "x"}])
    assert part in message, message


# ----------------------------------------------------------------------------- streaming and cache

NOT_TOKENIZERS = [None, 5, "gpt2", object()]


def test_streaming_and_cache_take_only_tokenizers():
    vocab = loaded("gpt2", "labkit").vocab
    for value in [*NOT_TOKENIZERS, vocab]:
        kind = type(value).__name__
        assert kind in raises(labkit.DecodeStream, value)
        assert kind in raises(labkit.Sequence, value)
        assert kind in raises(labkit.StopSequenceDecoder, value, labkit.StopSequenceConfig())
        assert kind in raises(labkit.CachedTokenizer, value, labkit.CacheConfig())


BAD_IDS = [-1, 50257, 2**70, 1.5, "7", None, True, [7]]


def _bad_id_part(bad) -> str:
    """What a message about ``bad`` (for gpt2) must mention."""
    if isinstance(bad, bool):
        return "bool"
    if isinstance(bad, int):
        return str(bad)
    return type(bad).__name__


@pytest.mark.parametrize("engine", SERVED["gpt2"])
def test_decode_stream_bad_ids_lose_nothing(engine):
    tok = loaded("gpt2", engine)
    ids = tok.encode("Hello wörld, 日本!").ids
    clean = labkit.DecodeStream(tok)
    expected = [clean.step(i) for i in ids] + [clean.flush()]
    stream = labkit.DecodeStream(tok)
    got = []
    for position, token_id in enumerate(ids):
        bad = BAD_IDS[position % len(BAD_IDS)]
        message = raises(stream.step, bad)
        assert _bad_id_part(bad) in message and tok.name in message, message
        got.append(stream.step(token_id))
    got.append(stream.flush())
    assert got == expected
    # a batch with a bad id in the middle raises before it consumes anything
    stream = labkit.DecodeStream(tok)
    assert "2" in raises(stream.step_batch, [ids[0], ids[1], 2**70])
    assert "".join(stream.step_batch(ids)) + (stream.flush() or "") == tok.decode(ids)
    for value in (None, 5, "ab"):
        assert type(value).__name__ in raises(stream.step_batch, value)
        assert type(value).__name__ in raises(labkit.DecodeStream, tok, prompt_ids=value)
    assert "-1" in raises(labkit.DecodeStream, tok, prompt_ids=[ids[0], -1])


def test_sequence_bad_input_loses_nothing():
    tok = loaded("gpt2", "labkit")
    ids = tok.encode(" and then 日本").ids
    seq = labkit.Sequence(tok)
    seq.append_text("Hello")
    for bad in BAD_IDS:
        assert _bad_id_part(bad) in raises(seq.append_token, bad)
    assert "NoneType" in raises(seq.append_text, None)
    assert "append_tokens" in raises(seq.append_tokens, 5)
    assert "-1" in raises(seq.append_tokens, [ids[0], -1])  # checked before any is appended
    assert seq.text() == "Hello" and len(seq) == len(tok.encode("Hello").ids)
    assert seq.append_tokens(ids) == " and then 日本"
    assert seq.text() == "Hello and then 日本"


def test_stop_sequence_decoder_bad_input_loses_nothing():
    tok = loaded("gpt2", "labkit")
    ids = tok.encode("The answer is 42. STOP here").ids
    config = labkit.StopSequenceConfig(stop_sequences=["STOP"])

    def texts(outputs):
        return "".join(getattr(o, "text", "") for o in outputs)

    clean = labkit.StopSequenceDecoder(tok, config)
    expected = texts(clean.process_tokens(ids))
    decoder = labkit.StopSequenceDecoder(tok, config)
    outputs = []
    for position, token_id in enumerate(ids):
        bad = BAD_IDS[position % len(BAD_IDS)]
        if not decoder.stopped:
            assert _bad_id_part(bad) in raises(decoder.process_token, bad)
        outputs.append(decoder.process_token(token_id))
    assert texts(outputs) == expected == "The answer is 42. "
    decoder.reset()
    assert "2" in raises(decoder.process_tokens, [ids[0], 2**70])
    assert texts(decoder.process_tokens(ids)) == expected  # the failed batch consumed nothing
    for value in (None, 5):
        assert type(value).__name__ in raises(decoder.process_tokens, value)
    assert "StopSequenceConfig" in raises(labkit.StopSequenceDecoder, tok, {"stop_sequences": ["x"]})
    assert "-1" in raises(labkit.StopSequenceDecoder, tok, labkit.StopSequenceConfig(stop_tokens=[-1]))
    assert "50257" in raises(labkit.StopSequenceDecoder, tok, labkit.StopSequenceConfig(stop_tokens=[50257]))
    assert "1.5" in raises(labkit.StopSequenceConfig, stop_tokens=[1.5])
    assert "empty" in raises(labkit.StopSequenceConfig, stop_sequences=[""])
    assert "str" in raises(labkit.StopSequenceConfig, stop_sequences="STOP")


@pytest.mark.parametrize("kwargs,part", [
    ({"enable_l0": 1}, "enable_l0"), ({"enable_l1": None}, "enable_l1"),
    ({"l0_max_entries": 1.5}, "l0_max_entries"), ({"l0_max_entries": True}, "l0_max_entries"),
    ({"enable_l0": True, "l0_max_entries": 0}, "l0_max_entries"), ({"l1_max_memory": "50MB"}, "l1_max_memory"),
    ({"enable_l1": True, "l1_max_memory": -1}, "l1_max_memory"),
], ids=range(7))
def test_cache_config_bad_values(kwargs, part):
    message = raises(labkit.CacheConfig, **kwargs)
    assert part in message, message


def test_cached_tokenizer_bad_input_loses_nothing():
    tok = loaded("qwen2", "labkit")
    cached = labkit.CachedTokenizer(tok, labkit.CacheConfig(enable_l0=True, enable_l1=True))
    assert "CacheConfig" in raises(labkit.CachedTokenizer, tok, {"enable_l0": True})
    prompt = "<|im_start|>user\nHello<|im_end|>\n<|im_start|>assistant\n"
    first = cached.encode(prompt).ids
    stats = cached.stats()
    for value in NOT_TEXT:
        assert type(value).__name__ in raises(cached.encode, value)
    for bad in (-1, cached.vocab_size, 2**70):
        assert str(bad) in raises(cached.decode, [bad])
        assert str(bad) in raises(cached.id_to_token, bad)
    assert cached.stats() == stats  # refused calls touch neither level
    assert cached.encode(prompt).ids == first == tok.encode(prompt).ids
    assert cached.decode(first) == prompt
    assert cached.token_to_id("\x00never\x00") is None


# ----------------------------------------------------------------------------- files that are not files


def test_load_refuses_pipes_and_devices(tmp_path):
    import os

    pipe = tmp_path / "pipe.gguf"
    os.mkfifo(pipe)  # reading it would block forever
    message = raises(labkit.load, pipe)
    assert str(pipe) in message and "not a regular file" in message, message
    endless = tmp_path / "zero.gguf"
    endless.symlink_to("/dev/zero")  # reading it would never end
    assert "not a regular file" in raises(labkit.load, endless)
    folder = tmp_path / "folder"
    folder.mkdir()
    (folder / "tokenizer.json").write_bytes(bundled_path("minilm").joinpath("tokenizer.json").read_bytes())
    os.mkfifo(folder / "tokenizer_config.json")  # a side file that is a pipe: refused, not read and not skipped
    message = raises(labkit.load, folder)
    assert "tokenizer_config.json" in message and "not a regular file" in message, message


@pytest.mark.parametrize("name,engine", [("gpt2", "tiktoken"), ("llama-spm", "sentencepiece"), ("minilm", "hf")])
def test_is_special_id_refuses_bad_ids(name, engine):
    tok = loaded(name, engine)
    for bad in (-1, tok.vocab_size, 2**70):
        assert str(bad) in raises(tok.is_special_id, bad)
    assert "bool" in raises(tok.is_special_id, True)
    assert "float" in raises(tok.is_special_id, 1.0)


def test_a_cyclic_charsmap_is_served_alike_and_refusals_name_the_engines_that_can(tmp_path):
    import dataclasses
    import struct

    from labkit.engines.hf import convert_model_file
    from labkit.formats.spm_model import read_spm_model, write_model_proto

    units = [0] * 1024
    units[0] = 1 << 10  # the root's children live at 1 ^ label
    units[1 ^ 0x61] = ((1 ^ 0x61 ^ 1) << 10) | 0x61  # 'a' leads back to the root's block: a cycle
    blob = struct.pack("<I", 4 * len(units)) + struct.pack(f"<{len(units)}I", *units) + b"a\0"
    vocab = read_spm_model(bundled_path("botchan-unigram"))
    path = tmp_path / "cyclic.model"
    path.write_bytes(write_model_proto(dataclasses.replace(vocab, normalizer=dict(vocab.normalizer, charsmap=blob))))
    # a cycle cannot trap the walk (each step consumes a character), so every engine serves it alike
    served = {engine: labkit.load(path, engine=engine) for engine in ("labkit", "sentencepiece")}
    served["tokenizers' conversion"] = convert_model_file(path)  # the hf engine refuses .model files
    for text in ("a", "aaa", "banana", "Hello a world"):
        assert len({tuple(tok.encode(text).ids) for tok in served.values()}) == 1, text
    message = raises(labkit.load, path, engine="tiktoken")
    assert "cyclic.model" in message and message.endswith("engines that can: labkit, sentencepiece"), message
