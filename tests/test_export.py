"""Export to tokenizer.json: `tokenizers` loads the file and gives the same ids."""
from __future__ import annotations

import pytest
import tokenizers

import labkit
from labkit.bench.harness import corpus_lines
from labkit.engines.hf_export import export_tokenizer_json
from labkit.paths import BUNDLED
from labkit.vectors import VECTOR_NAMES, load_vectors


@pytest.mark.parametrize("name", sorted(BUNDLED))
def test_exported_file_gives_the_same_ids(name, tmp_path):
    tok = labkit.load(name)
    path = export_tokenizer_json(tok, tmp_path)
    assert path.name == "tokenizer.json" and [p.name for p in tmp_path.iterdir()] == ["tokenizer.json"]
    exported = tokenizers.Tokenizer.from_file(str(path))
    texts = corpus_lines()[:150] + ["", " ", "héllo  wörld\n\n", "日本語のテキスト 🤗🫨"]
    if name in VECTOR_NAMES:
        texts += [text for text, _ in load_vectors(name)]
    for text in texts:
        assert exported.encode(text, add_special_tokens=False).ids == tok.encode(text).ids, (name, text)
    # and the exported file can itself be loaded by labkit
    again = labkit.load(tmp_path, engine="hf")
    assert again.encode(texts[0]).ids == tok.encode(texts[0]).ids


def test_export_refuses_what_is_not_a_tokenizer(tmp_path):
    with pytest.raises(labkit.LabkitError):
        export_tokenizer_json("gpt2", tmp_path)
    assert list(tmp_path.iterdir()) == []
