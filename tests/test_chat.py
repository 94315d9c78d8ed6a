"""Chat templates: byte-for-byte against transformers' stored renders, transformers' rules,
template loading priority, and encoding a rendered conversation."""
from __future__ import annotations

import copy
import json
import shutil
import warnings
from datetime import datetime

import jinja2
import jinja2.ext
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from jinja2.sandbox import ImmutableSandboxedEnvironment

import labkit
from labkit import chat
from labkit.core import FormatError
from labkit.paths import data_path

REFERENCE = json.loads(data_path("templates/reference_renders.json").read_bytes().decode("utf-8"))
TEMPLATE_NAMES = [name for name in REFERENCE if name != "_meta"]
PINNED = datetime(2024, 7, 26, 12, 0, 0)


def template_text(name: str) -> str:
    return data_path(f"templates/{name}").read_bytes().decode("utf-8")


CELLS = [(name, scenario) for name in TEMPLATE_NAMES for scenario in REFERENCE[name]["scenarios"]]


# ----------------------------------------------------------------------------- reference renders


@pytest.mark.parametrize("name,scenario", CELLS, ids=[f"{n[:20]}-{s}" for n, s in CELLS])
def test_reference_render_byte_for_byte(name, scenario):
    entry = REFERENCE[name]
    cell = entry["scenarios"][scenario]
    args = dict(cell["args"])
    conversation = args.pop("conversation")
    template = chat.ChatTemplate(template_text(name), name=name)
    if "error" in cell:
        assert cell["error"] == "TemplateError"
        with pytest.raises(chat.TemplateRaised) as info:
            template.render(conversation, now=PINNED, **entry["special_tokens"], **args)
        assert str(info.value) == cell["message"]
        assert isinstance(info.value, labkit.LabkitError)
    else:
        out = template.render(conversation, now=PINNED, **entry["special_tokens"], **args)
        assert out.encode("utf-8") == cell["text"].encode("utf-8")


def test_public_render_function_matches_reference():
    name = "Qwen-Qwen3-0.6B.jinja"
    cell = REFERENCE[name]["scenarios"]["thinking_off_gen"]
    args = dict(cell["args"])
    conversation = args.pop("conversation")
    out = labkit.render_chat_template(template_text(name), conversation, **REFERENCE[name]["special_tokens"], **args)
    assert out == cell["text"]


# The recipe from REFERENCES.md, written independently of labkit.chat: the reference for
# conversations that are not in the stored file.
def plain_render(source: str, messages, **variables) -> str:
    env = ImmutableSandboxedEnvironment(trim_blocks=True, lstrip_blocks=True, extensions=[jinja2.ext.loopcontrols])

    def tojson(x, ensure_ascii=False, indent=None, separators=None, sort_keys=False):
        return json.dumps(x, ensure_ascii=ensure_ascii, indent=indent, separators=separators, sort_keys=sort_keys)

    def raise_exception(message):
        raise jinja2.exceptions.TemplateError(message)

    env.filters["tojson"] = tojson
    env.globals["raise_exception"] = raise_exception
    env.globals["strftime_now"] = lambda fmt: PINNED.strftime(fmt)
    aliased = [{**m, "thinking": m["reasoning_content"]} if "reasoning_content" in m and "thinking" not in m else m
               for m in messages]
    variables.setdefault("tools", None)
    variables.setdefault("documents", None)
    return env.from_string(source).render(messages=aliased, **variables)


TEXT = st.text(alphabet=st.characters(codec="utf-8", exclude_categories=("Cs",)), max_size=40) | st.sampled_from(
    ["", " ", "\n", "{{ x }}", "{% if %}", "<|im_end|>", "</think>", "<think>a</think>b", "  pad  ", "日本語 é"]
)
ROLES = st.sampled_from(["user", "assistant"])


@st.composite
def conversations(draw):
    n = draw(st.integers(1, 5))
    system = draw(st.booleans())
    out = [{"role": "system", "content": draw(TEXT)}] if system else []
    for i in range(n):
        message = {"role": "user" if i % 2 == 0 else "assistant", "content": draw(TEXT)}
        if message["role"] == "assistant" and draw(st.booleans()):
            message["reasoning_content"] = draw(TEXT)
        out.append(message)
    return out


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(name=st.sampled_from(TEMPLATE_NAMES), messages=conversations(), gen=st.booleans(),
       thinking=st.sampled_from([None, True, False]))
def test_guarded_render_equals_plain_recipe(name, messages, gen, thinking):
    variables = dict(REFERENCE[name]["special_tokens"], add_generation_prompt=gen)
    if thinking is not None:
        variables["enable_thinking"] = thinking
    source = template_text(name)
    try:
        expected = plain_render(source, copy.deepcopy(messages), **variables)
    except jinja2.exceptions.TemplateError as exc:
        with pytest.raises(chat.TemplateRaised) as info:
            chat.render_chat_template(source, messages, now=PINNED, **variables)
        assert str(info.value) == exc.message
        return
    assert chat.render_chat_template(source, messages, now=PINNED, **variables) == expected


# ----------------------------------------------------------------------------- transformers' rules

QWEN25 = template_text("Qwen-Qwen2.5-7B-Instruct.jinja")
GEMMA = template_text("google-gemma-2-2b-it.jinja")
CONTINUE = [{"role": "user", "content": "What is BPE?"}, {"role": "assistant", "content": "Byte-pair"}]


def test_continue_final_message_stops_inside_the_last_message():
    out = chat.render_chat_template(QWEN25, CONTINUE, continue_final_message=True)
    assert out == (
        "<|im_start|>system\nYou are Qwen, created by Alibaba Cloud. You are a helpful assistant.<|im_end|>\n"
        "<|im_start|>user\nWhat is BPE?<|im_end|>\n<|im_start|>assistant\nByte-pair"
    )


def test_continue_final_message_when_the_template_trims_the_tag_space():
    # gemma applies | trim to each message, so the tag loses its trailing space: rstrip branch
    messages = [{"role": "user", "content": "Hi"}, {"role": "assistant", "content": "Hello "}]
    out = chat.render_chat_template(GEMMA, messages, continue_final_message=True, bos_token="<bos>")
    assert out == "<bos><start_of_turn>user\nHi<end_of_turn>\n<start_of_turn>model\nHello"


def test_continue_final_message_with_content_blocks_and_no_mutation():
    source = "{% for m in messages %}[{{ m.content[0].text }}]{% endfor %}"
    messages = [{"role": "assistant", "content": [{"type": "text", "text": "abc"}]}]
    before = copy.deepcopy(messages)
    assert chat.render_chat_template(source, messages, continue_final_message=True) == "[abc"
    assert messages == before


def test_continue_final_message_rules_refuse_bad_combinations():
    with pytest.raises(labkit.LabkitError, match="not compatible"):
        chat.render_chat_template(QWEN25, CONTINUE, continue_final_message=True, add_generation_prompt=True)
    with pytest.raises(labkit.LabkitError, match="no \"reasoning\""):
        chat.render_chat_template(QWEN25, CONTINUE, continue_final_message="reasoning")
    with pytest.raises(labkit.LabkitError, match="never mentions"):
        messages = [{"role": "assistant", "content": "x", "notes": "y"}]
        chat.render_chat_template(QWEN25, messages, continue_final_message="notes")
    with pytest.raises(labkit.LabkitError, match="does not appear"):
        chat.render_chat_template("{% for m in messages %}{{ m.content[:2] }}{% endfor %}",
                                  [{"role": "assistant", "content": "abcdef"}], continue_final_message=True)


def test_strftime_now_uses_the_injected_clock():
    source = "{{ strftime_now('%d %b %Y %H:%M') }}"
    assert chat.render_chat_template(source, [], now=PINNED) == "26 Jul 2024 12:00"
    assert chat.render_chat_template(source, [], now=lambda: datetime(2001, 2, 3, 4, 5)) == "03 Feb 2001 04:05"


def test_tojson_is_json_dumps_without_ascii_escaping():
    value = {"b": "é<>&", "a": [1, 2]}
    assert chat.render_chat_template("{{ v|tojson }}", [], v=value) == '{"b": "é<>&", "a": [1, 2]}'
    assert chat.render_chat_template("{{ v|tojson(sort_keys=true) }}", [], v=value) == '{"a": [1, 2], "b": "é<>&"}'
    assert chat.render_chat_template("{{ v|tojson(separators=(',', ':')) }}", [], v=value) == '{"b":"é<>&","a":[1,2]}'
    assert chat.render_chat_template("{{ v|tojson(indent=1) }}", [], v={"a": [1]}) == '{\n "a": [\n  1\n ]\n}'
    assert chat.render_chat_template("{{ v|tojson(ensure_ascii=true) }}", [], v="é") == '"\\u00e9"'


def test_raise_exception_message_is_the_error_text():
    with pytest.raises(chat.TemplateRaised) as info:
        chat.render_chat_template("{{ raise_exception('Roles must alternate') }}", [])
    assert str(info.value) == "Roles must alternate"
    assert info.value.template_line == 1


def test_runtime_errors_become_labkit_errors_with_the_line():
    with pytest.raises(chat.ChatTemplateError, match="line 2: TypeError"):
        chat.render_chat_template("ok\n{{ 'a' + messages[0].content }}", [{"role": "user", "content": None}])
    with pytest.raises(chat.ChatTemplateError, match="line 1: syntax error"):
        chat.ChatTemplate("{% for %}")


def test_reasoning_content_is_shown_as_thinking_without_mutation():
    messages = [{"role": "assistant", "content": "4", "reasoning_content": "2+2"}]
    before = copy.deepcopy(messages)
    assert chat.render_chat_template("{{ messages[0].thinking }}", messages) == "2+2"
    assert messages == before


def test_generation_block_renders_its_body():
    assert chat.render_chat_template("a{% generation %}b{% endgeneration %}c", []) == "abc"


def test_batch_of_conversations_renders_to_a_list():
    out = chat.render_chat_template("{{ messages|length }}", [[{"role": "user", "content": "a"}], []])
    assert out == ["1", "0"]


@pytest.mark.parametrize("messages,match", [
    ("hello", "list of dicts"),
    ([["not", "a dict"]], "message 0"),
    ([{"role": "user", "content": "x"}, 3], "message 1"),
])
def test_bad_messages_raise_labkit_error(messages, match):
    with pytest.raises(labkit.LabkitError, match=match):
        chat.render_chat_template(QWEN25, messages)


def test_bad_tools_and_documents_raise_labkit_error():
    with pytest.raises(labkit.LabkitError, match="tools"):
        chat.render_chat_template(QWEN25, CONTINUE, tools=[print])
    with pytest.raises(labkit.LabkitError, match="documents"):
        chat.render_chat_template(QWEN25, CONTINUE, documents=["text"])
    with pytest.raises(labkit.LabkitError, match="str"):
        chat.ChatTemplate(b"{{ x }}")


# ----------------------------------------------------------------------------- the tokenizer surface


@pytest.fixture(scope="module")
def qwen2():
    return labkit.load("qwen2")


@pytest.fixture(scope="module")
def qwen2_hf():
    return labkit.load("qwen2", engine="hf")


def test_tokenizer_special_tokens_are_variables_and_kwargs_override(qwen2):
    messages = [{"role": "user", "content": "hi"}]
    phi = template_text("microsoft-Phi-3.5-mini-instruct.jinja")
    default = qwen2.apply_chat_template(messages, chat_template=phi)
    assert default == "<|user|>\nhi<|end|>\n<|endoftext|>"  # qwen2's GGUF eos is <|endoftext|>
    assert qwen2.apply_chat_template(messages, chat_template=phi, eos_token="<EOS>") == "<|user|>\nhi<|end|>\n<EOS>"


def test_gguf_template_is_used_and_encodes_with_single_special_ids(qwen2, qwen2_hf):
    messages = [{"role": "system", "content": "Be brief."}, {"role": "user", "content": "What is BPE?"}]
    text = qwen2.apply_chat_template(messages, add_generation_prompt=True)
    assert text == ("<|im_start|>system\nBe brief.<|im_end|>\n<|im_start|>user\nWhat is BPE?<|im_end|>\n"
                    "<|im_start|>assistant\n")
    enc = chat.encode_rendered(qwen2, text)
    im_start, im_end = 151644, 151645
    assert enc.ids.count(im_start) == text.count("<|im_start|>") == 3
    assert enc.ids.count(im_end) == text.count("<|im_end|>") == 2
    assert enc.ids == qwen2_hf.encode(text, parse_special=True).ids
    assert chat.encode_chat(qwen2, messages, add_generation_prompt=True).ids == enc.ids
    assert qwen2.apply_chat_template(messages, add_generation_prompt=True, tokenize=True) == enc.ids
    # parse_special=False would spell the same tokens out as many pieces
    assert len(qwen2.encode(text, parse_special=False).ids) > len(enc.ids)


def test_duplicate_bos_warning_like_llama_cpp():
    tok = labkit.load("llama-spm")
    assert tok.special_tokens.add_bos and tok.special_tokens.bos == "<s>"
    mistral = template_text("mistralai-Mistral-Nemo-Instruct-2407.jinja")
    messages = [{"role": "user", "content": "Hi"}]
    text = tok.apply_chat_template(messages, chat_template=mistral)
    assert text == "<s>[INST]Hi[/INST]"
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        once = chat.encode_rendered(tok, text, add_special_tokens=False)
    assert once.ids[0] == tok.special_tokens.bos_id and once.ids[1] != tok.special_tokens.bos_id
    with pytest.warns(chat.DuplicateSpecialTokenWarning, match="2 BOS"):
        twice = chat.encode_rendered(tok, text, add_special_tokens=True)
    assert twice.ids[:2] == [tok.special_tokens.bos_id] * 2
    assert twice.ids[1:] == once.ids


# ----------------------------------------------------------------------------- finding templates


def write(path, text):
    path.write_bytes(text.encode("utf-8"))
    return path


def test_loading_priority_in_a_folder(tmp_path):
    with pytest.raises(labkit.LabkitError, match="no chat template found"):
        chat.find_chat_templates(tmp_path)
    write(tmp_path / "tokenizer_config.json", json.dumps({"chat_template": "config"}))
    assert chat.load_chat_template(tmp_path) == "config"
    write(tmp_path / "chat_template.json", json.dumps({"chat_template": "json"}))
    assert chat.load_chat_template(tmp_path) == "json"
    write(tmp_path / "chat_template.jinja", "\ufeffjinja")
    assert chat.load_chat_template(tmp_path) == "jinja"
    assert chat.load_chat_template(tmp_path / "tokenizer_config.json") == "jinja"  # a file: look beside it
    explicit = write(tmp_path / "mine.jinja", "explicit")
    assert chat.load_chat_template(tmp_path, explicit=explicit) == "explicit"
    assert chat.load_chat_template(tmp_path, explicit=str(explicit)) == "explicit"
    assert chat.load_chat_template(tmp_path, explicit="{{ 'text' }}") == "{{ 'text' }}"
    with pytest.raises(labkit.LabkitError, match="not found"):
        chat.load_chat_template(tmp_path, explicit=tmp_path / "missing.jinja")


def test_named_templates_in_tokenizer_config(tmp_path):
    named = [{"name": "default", "template": "D"}, {"name": "tool_use", "template": "T"}, {"name": "rag", "template": "R"}]
    write(tmp_path / "tokenizer_config.json", json.dumps({"chat_template": named}))
    assert chat.load_chat_template(tmp_path) == "D"
    assert chat.load_chat_template(tmp_path, tools=[{"type": "function"}]) == "T"
    assert chat.load_chat_template(tmp_path, name="rag") == "R"
    with pytest.raises(labkit.LabkitError, match="no chat template named 'nope'"):
        chat.load_chat_template(tmp_path, name="nope")
    write(tmp_path / "tokenizer_config.json", json.dumps({"chat_template": named[1:]}))
    with pytest.raises(labkit.LabkitError, match="none is 'default'"):
        chat.load_chat_template(tmp_path)
    write(tmp_path / "tokenizer_config.json", json.dumps({"chat_template": [{"name": 1}]}))
    with pytest.raises(FormatError, match=r"chat_template\[0\]\.name"):
        chat.load_chat_template(tmp_path)
    write(tmp_path / "tokenizer_config.json", "{not json")
    with pytest.raises(FormatError, match="invalid JSON"):
        chat.load_chat_template(tmp_path)


def test_gguf_key_and_a_jinja_file_beside_it(tmp_path):
    gguf = tmp_path / "model.gguf"
    shutil.copyfile(data_path("gguf/ggml-vocab-qwen2.gguf"), gguf)
    from labkit.formats.gguf import read_gguf_kv

    key_template = read_gguf_kv(gguf)["tokenizer.chat_template"]
    assert chat.load_chat_template(gguf) == key_template
    tok = labkit.load(str(gguf))
    assert tok.chat_template == key_template
    assert tok.vocab.chat_template_origin.endswith("model.gguf: tokenizer.chat_template")
    # templates are found when the file is read: a file written later needs a new load
    write(tmp_path / "chat_template.jinja", "{{ 'beside' }}")
    assert tok.chat_template == key_template
    assert chat.load_chat_template(gguf) == "{{ 'beside' }}"
    tok = labkit.load(str(gguf))
    assert tok.chat_template == "{{ 'beside' }}"
    assert tok.vocab.chat_template_origin == str(tmp_path / "chat_template.jinja")
    assert tok.apply_chat_template([]) == "beside"
    tok.chat_template = "{{ 'override' }}"
    assert tok.chat_template == "{{ 'override' }}"
    assert tok.apply_chat_template([]) == "override"
    explicit = write(tmp_path / "x.jinja", "{{ 'file' }}")
    assert tok.apply_chat_template([], chat_template=explicit) == "file"
    with pytest.raises(labkit.LabkitError, match="takes template text"):
        tok.chat_template = explicit


def test_named_gguf_templates_from_metadata():
    from labkit.formats.gguf import gguf_to_vocab, read_gguf_kv

    kv = dict(read_gguf_kv(data_path("gguf/ggml-vocab-qwen2.gguf")))
    kv["tokenizer.chat_template.tool_use"] = "{{ 'tools!' }}"
    vocab = gguf_to_vocab(kv, "named.gguf")
    found = chat.find_chat_templates(vocab)
    assert sorted(found.templates) == ["default", "tool_use"]
    assert found.pick(tools=[{}]) == "{{ 'tools!' }}"
    assert found.pick() == vocab.chat_template


def test_no_template_is_an_error_unless_a_fallback_is_asked_for():
    tok = labkit.load("gpt2")
    assert tok.chat_template is None
    with pytest.raises(labkit.LabkitError, match="no chat template found"):
        tok.apply_chat_template([{"role": "user", "content": "hi"}])
    out = tok.apply_chat_template([{"role": "user", "content": "hi"}], fallback="chatml", add_generation_prompt=True)
    assert out == "<|im_start|>user\nhi<|im_end|>\n<|im_start|>assistant\n"
    with pytest.raises(labkit.LabkitError, match="unknown fallback"):
        tok.apply_chat_template([], fallback="alpaca")


def test_hf_folder_without_template():
    tok = labkit.load("minilm")
    assert tok.chat_template is None
    with pytest.raises(labkit.LabkitError, match="no chat template found"):
        tok.apply_chat_template([])
