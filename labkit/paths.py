"""Where labkit finds its bundled data, whether run from the repo or installed editable.

Example:
    >>> from labkit.paths import data_path
    >>> data_path("gguf/ggml-vocab-gpt-2.gguf").name
    'ggml-vocab-gpt-2.gguf'
"""
from __future__ import annotations

import os
from pathlib import Path

from labkit.core import LabkitError

# Bundled names -> files (or folders) under data/.
BUNDLED = {
    "gpt2": "gguf/ggml-vocab-gpt-2.gguf",
    "llama-spm": "gguf/ggml-vocab-llama-spm.gguf",
    "qwen2": "gguf/ggml-vocab-qwen2.gguf",
    "bert-bge": "gguf/ggml-vocab-bert-bge.gguf",
    "cl100k_base": "tiktoken/cl100k_base.tiktoken",
    "botchan-unigram": "sentencepiece/botchan_en_unigram_1000.model",
    "botchan-bpe": "sentencepiece/botchan_en_bpe_1000.model",
    "minilm": "hf/all-MiniLM-L6-v2",
}

# OpenAI model names -> bundled names (tiktoken's model-to-encoding table, for the
# encodings this book ships).
MODEL_ALIASES = {
    "gpt-4": "cl100k_base",
    "gpt-4-32k": "cl100k_base",
    "gpt-4-turbo": "cl100k_base",
    "gpt-3.5-turbo": "cl100k_base",
    "gpt-3.5-turbo-16k": "cl100k_base",
    "gpt-35-turbo": "cl100k_base",
    "text-embedding-ada-002": "cl100k_base",
    "text-embedding-3-small": "cl100k_base",
    "text-embedding-3-large": "cl100k_base",
    "cl100k": "cl100k_base",
    "gpt-2": "gpt2",
    "r50k_base": "gpt2",
    "davinci": "gpt2",
    "curie": "gpt2",
    "babbage": "gpt2",
    "ada": "gpt2",
    "text-davinci-001": "gpt2",
    "openai-community/gpt2": "gpt2",
}


def data_dir() -> Path:
    """The data/ folder: $LABKIT_DATA, else the repo's data/ next to the package."""
    env = os.environ.get("LABKIT_DATA")
    if env:
        return Path(env)
    here = Path(__file__).resolve().parent
    for candidate in (here.parent / "data", here / "data"):
        if (candidate / "MANIFEST.tsv").is_file():
            return candidate
    raise LabkitError(f"labkit: cannot find the data/ folder near {here}; set LABKIT_DATA")


def data_path(relative: str) -> Path:
    """A file under data/, checked to exist.

    Example:
        >>> data_path("corpus/botchan.txt").is_file()
        True
        >>> data_path("corpus/missing.txt")  # doctest: +ELLIPSIS
        Traceback (most recent call last):
        labkit.core.LabkitError: labkit: bundled data file 'corpus/missing.txt' is missing from ...
    """
    path = data_dir() / relative
    if not path.exists():
        raise LabkitError(f"labkit: bundled data file {relative!r} is missing from {data_dir()}")
    return path


def bundled_path(name: str) -> Path:
    """The file behind a bundled name.

    Example:
        >>> bundled_path("qwen2").name
        'ggml-vocab-qwen2.gguf'
    """
    name = MODEL_ALIASES.get(name, name)
    if name not in BUNDLED:
        raise LabkitError(f"labkit: unknown bundled name {name!r}; known: {', '.join(sorted(BUNDLED))}")
    return data_path(BUNDLED[name])
