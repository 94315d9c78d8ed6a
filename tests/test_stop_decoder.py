"""StopSequenceDecoder on real vocabularies: regression cases and properties against a full decode.

The reference for a token stream is computed without streaming: decode every id before the
first stop token (including it when it is visible) with ``tok.decode``, then cut that text at
the first stop string (``stop_reference``). The decoder, fed one id at a time, must emit
exactly that text, never a hidden stop, and never a character twice.
"""
from __future__ import annotations


import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from support.engines import servable_pairs, tokenizer
from labkit import LabkitError
from labkit.streaming.stop import (
    Held,
    StopReason,
    StopSequenceConfig,
    StopSequenceDecoder,
    Stopped,
    StoppedWithText,
    Text,
    stop_reference,
)

VOCABS = ["gpt2", "llama-spm", "qwen2", "bert-bge", "cl100k_base", "botchan-unigram", "botchan-bpe", "minilm"]
MULTIBYTE_STOPS = [" ×", "Δ", "°", " (∆", " –", "€", "中", "🚀", "💡"]
# vocabularies that give back every character they were given (byte-level or byte fallback)
LOSSLESS = ["gpt2", "qwen2", "cl100k_base", "llama-spm"]


# the reference engine per name: hf, but not on a llama or bert GGUF, which it refuses
REFERENCE = {"llama-spm": "sentencepiece", "bert-bge": "labkit"}


def load(name, engine=None):
    return tokenizer(name, engine or REFERENCE.get(name, "hf"))  # every pair used here must build


def emitted(outputs) -> str:
    return "".join(o.text for o in outputs if isinstance(o, (Text, StoppedWithText)))


def run(tok, ids, config, *, skip_special_tokens=True):
    """Feed ids one at a time; flush at the end if nothing stopped. Returns (outputs, decoder)."""
    dec = StopSequenceDecoder(tok, config, skip_special_tokens=skip_special_tokens)
    outputs = [dec.process_token(i) for i in ids]
    if not dec.stopped:
        outputs.append(dec.flush())
    return outputs, dec


def reference(tok, ids, config, *, skip_special_tokens=True):
    """Full decode up to the first stop token, cut at the first stop string."""
    hidden_ids = set(config.stop_tokens) | set(config.eos_token_ids)
    visible_ids = set(config.visible_stop_tokens)
    end = len(ids)
    for k, i in enumerate(ids):
        if k >= config.min_tokens and (i in hidden_ids or i in visible_ids):
            end = k + 1 if i in visible_ids else k
            break
    text = tok.decode(ids[:end], skip_special_tokens=skip_special_tokens)
    return stop_reference(text, config.stop_sequences, config.visible_stop_sequences)[0]


# ----------------------------------------------------------------------------- regression cases


def test_hello_is_held_then_released_as_hello_test():
    tok = load("gpt2")
    hello, test = tok.encode("Hello").ids, tok.encode(" test").ids
    assert len(hello) == 1 and len(test) == 1
    dec = StopSequenceDecoder(tok, StopSequenceConfig(stop_sequences=["Hello world"]))
    assert dec.process_token(hello[0]) == Held()
    assert dec.jail == "Hello"
    assert dec.process_token(test[0]) == Text("Hello test")
    assert dec.jail == ""


@pytest.mark.parametrize("parse_special", [True, False])
def test_im_start_is_not_cut_when_the_stop_is_im_end(parse_special):
    tok = load("qwen2")
    ids = tok.encode("<|im_start|>user\nhi<|im_end|>", parse_special=parse_special).ids
    outputs, dec = run(tok, ids, StopSequenceConfig(stop_sequences=["<|im_end|>"]), skip_special_tokens=False)
    assert emitted(outputs) == "<|im_start|>user\nhi"
    assert dec.stop_reason == StopReason("string", "<|im_end|>", False)


def test_stop_string_spanning_three_tokens():
    tok = load("gpt2")
    prefix, stop = "The answer is 42", "</answer>"
    ids = tok.encode(prefix + stop + " and more").ids
    stop_ids = tok.encode(stop).ids
    assert len(stop_ids) >= 3  # the stop really is spread over three or more tokens
    for visible in (False, True):
        config = StopSequenceConfig(**{("visible_stop_sequences" if visible else "stop_sequences"): [stop]})
        outputs, dec = run(tok, ids, config)
        assert emitted(outputs) == prefix + (stop if visible else "")
        held = [o for o in outputs if o == Held()]
        assert len(held) >= 2  # "</" and "answer" waited in the jail
        assert isinstance(outputs[-1], (Stopped, StoppedWithText))


def test_stop_string_inside_a_single_token():
    tok = load("gpt2")
    ids = tok.encode("Say Hello now").ids
    assert "Hello" in [tok.decode([i]).strip() for i in ids]
    outputs, _ = run(tok, ids, StopSequenceConfig(stop_sequences=["ell"]))
    assert emitted(outputs) == "Say H"
    outputs, _ = run(tok, ids, StopSequenceConfig(visible_stop_sequences=["ell"]))
    assert emitted(outputs) == "Say Hell"
    # " Hello" arrives at once: the stop ends inside it and its tail "o" is dropped
    assert outputs == [Text("Say"), StoppedWithText(" Hell"), Stopped()]


@pytest.mark.parametrize("name", LOSSLESS)
@pytest.mark.parametrize("stop", MULTIBYTE_STOPS)
def test_multibyte_stops(name, stop):
    tok = load(name)
    text = f"Price{stop[:-1]}x{stop}100 more"
    ids = tok.encode(text).ids
    for visible in (False, True):
        config = StopSequenceConfig(**{("visible_stop_sequences" if visible else "stop_sequences"): [stop]})
        outputs, dec = run(tok, ids, config)
        expected = tok.decode(ids).split(stop)[0] + (stop if visible else "")
        assert emitted(outputs) == expected
        assert dec.stop_reason == StopReason("string", stop, visible)
        for out in outputs:  # no partial character ever leaves the decoder
            assert "\ufffd" not in getattr(out, "text", "")


def test_hidden_stop_token_releases_the_jail():
    tok = load("qwen2")
    eos = tok.token_to_id("<|im_end|>")
    config = StopSequenceConfig(stop_tokens=[eos], stop_sequences=[" Hello world"])
    dec = StopSequenceDecoder(tok, config)
    assert dec.process_tokens(tok.encode("Say Hello").ids) == [Text("Say"), Held()]
    assert dec.jail == " Hello"
    assert dec.process_token(eos) == StoppedWithText(" Hello")
    assert dec.stop_reason == StopReason("token", eos, False)
    assert dec.process_token(eos) == Stopped()
    assert dec.flush() == Stopped()


@pytest.mark.parametrize("skip", [True, False])
def test_visible_stop_token_appends_its_own_text(skip):
    tok = load("qwen2")
    eos = tok.token_to_id("<|im_end|>")
    dec = StopSequenceDecoder(tok, StopSequenceConfig(visible_stop_tokens=[eos]), skip_special_tokens=skip)
    assert dec.process_tokens(tok.encode("Hi").ids) == [Text("Hi")]
    assert dec.process_token(eos) == (Stopped() if skip else StoppedWithText("<|im_end|>"))
    assert dec.stop_reason == StopReason("token", eos, True)


def test_token_stop_is_checked_before_decoding():
    # the stop token's text would complete a stop string, but the hidden token stop comes first
    tok = load("gpt2")
    world = tok.encode(" world").ids
    assert len(world) == 1
    config = StopSequenceConfig(stop_tokens=world, visible_stop_sequences=["Hello world"])
    outputs, dec = run(tok, tok.encode("Hello world").ids, config)
    assert emitted(outputs) == "Hello"
    assert dec.stop_reason == StopReason("token", world[0], False)


def test_several_eos_ids_and_for_tokenizer():
    tok = load("qwen2")
    config = StopSequenceConfig.for_tokenizer(tok, stop_sequences=["\n\n"])
    eos = set(config.eos_token_ids)
    assert tok.special_tokens.eos_id in eos and eos >= set(tok.special_tokens.eos_ids)
    extra = tok.token_to_id("<|im_end|>")
    config = StopSequenceConfig(eos_token_ids=[tok.special_tokens.eos_id, extra])
    for stop_id in config.eos_token_ids:
        dec = StopSequenceDecoder(tok, config)
        assert dec.process_tokens(tok.encode("ok").ids) == [Text("ok")]
        assert dec.process_token(stop_id) == Stopped()
        assert dec.stop_reason == StopReason("eos", stop_id, False)


def test_prompt_ids_give_the_continuation_text():
    # SentencePiece drops the leading space of the first piece; after a prompt it must stay
    tok = load("llama-spm")
    prompt, ids = tok.encode("Question: say hi").ids, tok.encode("Hello there. Bye").ids
    dec = StopSequenceDecoder(tok, StopSequenceConfig(stop_sequences=[". "]), prompt_ids=prompt)
    shown = emitted(dec.process_tokens(ids))
    full = tok.decode(prompt + ids)
    assert shown == full[len(tok.decode(prompt)):].split(". ")[0] == " Hello there"
    alone = StopSequenceDecoder(tok, StopSequenceConfig(stop_sequences=[". "]))
    assert emitted(alone.process_tokens(ids)) == "Hello there"  # no prompt: the text starts here


def test_min_tokens_lets_early_stops_through():
    tok = load("gpt2")
    ids = tok.encode("A. B. C").ids
    dots = [k for k, i in enumerate(ids) if "." in tok.decode([i])]
    assert len(dots) == 2
    config = StopSequenceConfig(stop_sequences=["."], min_tokens=dots[0] + 1)
    outputs, _ = run(tok, ids, config)
    assert emitted(outputs) == "A. B"
    outputs, _ = run(tok, ids, StopSequenceConfig(stop_sequences=["."], min_tokens=dots[0]))
    assert emitted(outputs) == "A"
    eos = tok.special_tokens.eos_id
    config = StopSequenceConfig(eos_token_ids=[eos], min_tokens=2)
    outputs, dec = run(tok, [eos, *tok.encode("Hi").ids, eos, eos], config, skip_special_tokens=False)
    assert emitted(outputs) == tok.decode([eos]) + "Hi" and dec.stop_reason.kind == "eos"


def test_reset_starts_over_and_flush_releases_the_jail():
    tok = load("gpt2")
    dec = StopSequenceDecoder(tok, StopSequenceConfig(stop_sequences=["Hello world", "!"]))
    assert dec.process_tokens(tok.encode("Hi!").ids)[-1] in (Stopped(), StoppedWithText("Hi"))
    assert dec.process_token(0) == Stopped()
    dec.reset()
    assert not dec.stopped and dec.process_tokens(tok.encode("Hello").ids) == [Held()]
    assert dec.flush() == Text("Hello")


def test_bad_input_raises_labkit_error():
    tok = load("gpt2")
    with pytest.raises(LabkitError, match="empty string"):
        StopSequenceConfig(stop_sequences=["ok", ""])
    with pytest.raises(LabkitError, match="list of str"):
        StopSequenceConfig(stop_sequences="\n\n")
    with pytest.raises(LabkitError, match="both hidden and visible"):
        StopSequenceConfig(stop_sequences=["x"], visible_stop_sequences=["x"])
    with pytest.raises(LabkitError, match="not a token id"):
        StopSequenceConfig(stop_tokens=["<|endoftext|>"])
    with pytest.raises(LabkitError, match="outside"):
        StopSequenceDecoder(tok, StopSequenceConfig(stop_tokens=[10**9]))
    with pytest.raises(LabkitError, match="StopSequenceConfig"):
        StopSequenceDecoder(tok, {"stop_sequences": ["x"]})
    dec = StopSequenceDecoder(tok, StopSequenceConfig())
    with pytest.raises(LabkitError, match="vocab size"):
        dec.process_token(tok.vocab_size)
    with pytest.raises(LabkitError, match="int"):
        dec.process_token("7")
    with pytest.raises(LabkitError, match="int"):
        dec.process_token([7])
    with pytest.raises(LabkitError, match="bool"):
        dec.process_token(True)


# ----------------------------------------------------------------------------- properties

TEXT = st.text(
    alphabet=st.one_of(
        st.sampled_from(list("ab \n.<|>Hello world×Δ°∆–€中🚀💡é")),
        st.characters(blacklist_categories=("Cs",)),
    ),
    max_size=40,
)
SPECIAL_SPELLINGS = ["<|endoftext|>", "<|im_end|>", "<|im_start|>", "</s>", "<s>", "[SEP]", "[CLS]"]


@st.composite
def scenario(draw, tok):
    """Token ids (encoded text, plus some random and special ids) and a stop config."""
    text = draw(TEXT)
    for spelling in draw(st.lists(st.sampled_from(SPECIAL_SPELLINGS), max_size=2)):
        at = draw(st.integers(0, len(text)))
        text = text[:at] + spelling + text[at:]
    ids = list(tok.encode(text, parse_special=True).ids)
    for _ in range(draw(st.integers(0, 2))):  # random ids: byte pieces, partial UTF-8, specials
        ids.insert(draw(st.integers(0, len(ids))), draw(st.integers(0, tok.vocab_size - 1)))
    full = tok.decode(ids, skip_special_tokens=draw(st.booleans()))
    stops = []
    for _ in range(draw(st.integers(0, 4))):  # stop strings that occur (as text the stream produces)...
        if full:
            start = draw(st.integers(0, len(full) - 1))
            stops.append(full[start : start + draw(st.integers(1, 6))])
    stops += draw(st.lists(st.text(min_size=1, max_size=4), max_size=2))  # ...and some that may not
    stops = list(dict.fromkeys(stops))
    visible = [s for s in stops if draw(st.booleans())]
    token_stops = list(dict.fromkeys(draw(st.lists(st.sampled_from(ids), max_size=2)))) if ids else []
    visible_tokens = [i for i in token_stops if draw(st.booleans())]
    config = StopSequenceConfig(
        stop_tokens=[i for i in token_stops if i not in visible_tokens],
        stop_sequences=[s for s in stops if s not in visible],
        visible_stop_tokens=visible_tokens,
        visible_stop_sequences=visible,
    )
    return ids, config, draw(st.booleans())


@pytest.mark.parametrize("name,engine", servable_pairs(VOCABS, ("hf", "labkit")))
def test_stream_equals_full_decode_cut_at_the_first_stop(name, engine):
    tok = load(name, engine)

    @settings(max_examples=100 if engine == "hf" else 50, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
    @given(st.data())
    def check(data):
        ids, config, skip = data.draw(scenario(tok))
        expected = reference(tok, ids, config, skip_special_tokens=skip)
        dec = StopSequenceDecoder(tok, config, skip_special_tokens=skip)
        so_far = ""
        for i in ids:
            out = dec.process_token(i)
            if isinstance(out, (Text, StoppedWithText)):
                so_far += out.text
            # everything emitted is emitted once, in order: always a prefix of the answer
            assert expected.startswith(so_far), (so_far, expected)
            if dec.stopped:
                assert dec.process_token(i) == Stopped()
        if not dec.stopped:
            out = dec.flush()
            so_far += getattr(out, "text", "")
        assert so_far == expected
        for hidden in config.stop_sequences:
            # a hidden stop never shows, except inside a longer visible stop ending at the same character
            at = so_far.find(hidden)
            assert at < 0 or (at + len(hidden) == len(so_far) and dec.stop_reason.visible), (hidden, so_far)

    check()
