"""Export: `tokenizers` loads the tokenizer.json and gives the same ids; labkit reloads the
folder with the DEFAULT engine and gives identical ids, tokens, offsets and decode (issue 19)."""
from __future__ import annotations

import json
import os
import stat

import pytest
import tokenizers

import labkit
from labkit.bench.harness import corpus_lines
from labkit.conformance.corpus import mixed_corpus
from labkit.engines.hf_export import export_tokenizer_json
from labkit.paths import BUNDLED
from labkit.vectors import VECTOR_NAMES, load_vectors
from support.engines import loaded


def _texts(name: str) -> list[str]:
    texts = corpus_lines()[:150] + ["", " ", "héllo  wörld\n\n", "日本語のテキスト 🤗🫨"]
    if name in VECTOR_NAMES:
        texts += [text for text, _ in load_vectors(name)]
    return texts


@pytest.fixture(scope="module")
def exported(tmp_path_factory):
    """``exported(name)``: (the session's tokenizer, the folder it was exported to), once per name.

    Exporting and loading a 150k vocabulary takes seconds; both tests below read the same export.
    The folder is two levels below a fresh directory, so the export must create it.
    """
    folders = {}

    def export(name):
        if name not in folders:
            tok = loaded(name)
            folder = tmp_path_factory.mktemp(name) / "not" / "yet" / "there"
            path = export_tokenizer_json(tok, folder)
            assert path == folder / "tokenizer.json"
            folders[name] = folder
        return loaded(name), folders[name]

    return export


@pytest.mark.parametrize("name", sorted(BUNDLED))
def test_exported_file_gives_the_same_ids(name, exported):
    tok, folder = exported(name)
    exported_file = tokenizers.Tokenizer.from_file(str(folder / "tokenizer.json"))
    for text in _texts(name):
        assert exported_file.encode(text, add_special_tokens=False).ids == tok.encode(text).ids, (name, text)


@pytest.mark.parametrize("name", sorted(BUNDLED))
def test_reload_with_the_default_engine_is_identical(name, exported):
    tok, folder = exported(name)
    assert folder.is_dir()
    again = labkit.load(folder)
    assert again.engine == tok.engine
    specials = [s for s in (tok.special_tokens.bos, tok.special_tokens.eos, tok.special_tokens.cls) if s]
    texts = _texts(name)[:60] + mixed_corpus(specials, botchan=0)
    for text in texts:
        for add in (False, True):
            a, b = tok.encode(text, add_special_tokens=add), again.encode(text, add_special_tokens=add)
            assert (a.ids, a.tokens, a.offsets) == (b.ids, b.tokens, b.offsets), (name, text, add)
        ids = tok.encode(text, add_special_tokens=True).ids
        for skip in (False, True):
            assert tok.decode(ids, skip_special_tokens=skip) == again.decode(ids, skip_special_tokens=skip), (name, text)


def test_botchan_unigram_export_reloads_as_it_was(tmp_path):
    # issue 19: the export reloaded as ['H', 'e', 'll', 'o', '▁world']
    tok = labkit.load("botchan-unigram")
    export_tokenizer_json(tok, tmp_path / "out")
    assert labkit.load(tmp_path / "out").encode("Hello world").tokens == ["▁He", "ll", "o", "▁world"]
    assert tok.encode("Hello world").tokens == ["▁He", "ll", "o", "▁world"]


def test_export_writes_a_folder_with_config_and_ordinary_permissions(tmp_path):
    tok = labkit.load("qwen2")
    tok.chat_template = "{% for m in messages %}{{ m['content'] }}{% endfor %}"
    folder = tmp_path / "qwen2-export"
    export_tokenizer_json(tok, folder)
    names = sorted(p.name for p in folder.iterdir())
    assert names == ["ggml-vocab-qwen2.gguf", "tokenizer.json", "tokenizer_config.json"]
    umask = os.umask(0)
    os.umask(umask)
    for path in folder.iterdir():
        assert stat.S_IMODE(path.stat().st_mode) == 0o666 & ~umask, path
    config = json.loads((folder / "tokenizer_config.json").read_text(encoding="utf-8"))
    assert config["chat_template"] == tok.chat_template
    assert config["eos_token"] == tok.special_tokens.eos
    assert config["labkit_source"] == "ggml-vocab-qwen2.gguf"
    again = labkit.load(folder)
    assert again.chat_template == tok.chat_template
    messages = [{"role": "user", "content": "hi"}]
    assert again.apply_chat_template(messages) == tok.apply_chat_template(messages) == "hi"


def test_export_of_a_tokenizer_json_writes_no_source_copy(tmp_path):
    export_tokenizer_json(labkit.load("minilm"), tmp_path)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["tokenizer.json", "tokenizer_config.json"]
    config = json.loads((tmp_path / "tokenizer_config.json").read_text(encoding="utf-8"))
    assert "labkit_source" not in config and config["cls_token"] == "[CLS]"


def test_export_to_a_json_path_names_the_file(tmp_path):
    path = export_tokenizer_json(labkit.load("gpt2"), tmp_path / "sub" / "gpt2.json")
    assert path.name == "gpt2.json" and path.is_file()
    assert tokenizers.Tokenizer.from_file(str(path)).encode("Hello world").ids == [15496, 995]


def test_export_refuses_a_file_as_folder(tmp_path):
    target = tmp_path / "plain"
    target.write_text("x")
    with pytest.raises(labkit.LabkitError, match="not a folder"):
        export_tokenizer_json(labkit.load("gpt2"), target)


def test_export_refuses_what_is_not_a_tokenizer(tmp_path):
    with pytest.raises(labkit.LabkitError):
        export_tokenizer_json("gpt2", tmp_path)
    assert list(tmp_path.iterdir()) == []


def test_labkit_source_must_name_a_file_in_the_folder(tmp_path):
    export_tokenizer_json(labkit.load("botchan-bpe"), tmp_path)
    config = json.loads((tmp_path / "tokenizer_config.json").read_text(encoding="utf-8"))
    config["labkit_source"] = "../elsewhere.model"
    (tmp_path / "tokenizer_config.json").write_text(json.dumps(config), encoding="utf-8")
    with pytest.raises(labkit.LabkitError, match="labkit_source"):
        labkit.load(tmp_path)
