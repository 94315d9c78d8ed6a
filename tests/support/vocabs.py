"""Vocabularies derived from the shipped ones for the tests (kinds no shipped file covers)."""
from __future__ import annotations


def t5_gguf_vocab(src, *, charsmap: bool = True):
    """A Unigram VocabData's arrays written under t5 GGUF keys and read back (no t5 GGUF is shipped);
    ``charsmap=False`` leaves the precompiled charsmap out (the hf engine refuses a t5 GGUF with one)."""
    import gguf

    from labkit.formats.gguf import gguf_to_vocab

    keys = gguf.Keys.Tokenizer
    kv = {
        keys.MODEL: "t5", keys.LIST: list(src.tokens), keys.TOKEN_TYPE: list(src.token_types),
        keys.SCORES: list(src.scores), keys.UNK_ID: 0, keys.BOS_ID: 1, keys.EOS_ID: 2,
        keys.ADD_PREFIX: True, keys.REMOVE_EXTRA_WS: True, keys.ADD_BOS: False,
    }
    if charsmap:
        kv[keys.PRECOMPILED_CHARSMAP] = list(src.normalizer["charsmap"])
    return gguf_to_vocab(kv, "synthetic-t5.gguf")
