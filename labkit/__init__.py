"""labkit: the package behind the tokenizer lab book.

The public surface (listed in the README) and nothing else. Names are imported lazily so that
``import labkit`` stays fast and each idea lives in its own module.

Example:
    >>> import labkit
    >>> labkit.load("gpt2").encode("Hello world").ids
    [15496, 995]
"""
from __future__ import annotations

import importlib

from labkit.core import Encoding, LabkitError, SpecialTokens, Tokenizer

__version__ = "0.1.0"

_LAZY = {
    "load": "labkit.factory",
    "render_chat_template": "labkit.chat",
    "DecodeStream": "labkit.streaming.decode_stream",
    "Sequence": "labkit.streaming.sequence",
    "StopSequenceConfig": "labkit.streaming.stop",
    "StopSequenceDecoder": "labkit.streaming.stop",
    "Text": "labkit.streaming.stop",
    "Held": "labkit.streaming.stop",
    "Stopped": "labkit.streaming.stop",
    "StoppedWithText": "labkit.streaming.stop",
    "CacheConfig": "labkit.cache.cached_tokenizer",
    "CachedTokenizer": "labkit.cache.cached_tokenizer",
}

__all__ = ["Encoding", "LabkitError", "SpecialTokens", "Tokenizer", "__version__", *_LAZY]


def __getattr__(name: str):
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module 'labkit' has no attribute {name!r}")
    value = getattr(importlib.import_module(module), name)
    globals()[name] = value
    return value


def __dir__():
    return sorted(__all__)
