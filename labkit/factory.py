"""``labkit.load``: resolve a source, read it into VocabData, build an engine.

detect -> read -> build engine. Introduced in notebook ``11_factory_formats_hub``.

Example (an OpenAI model name is served by its encoding, cl100k_base, with labkit's own BPE):
    >>> import labkit
    >>> labkit.load("gpt-4").engine
    'labkit'
"""
from __future__ import annotations

import importlib
import os
import time
from pathlib import Path

from labkit.core import MODELS, EngineUnavailable, FormatError, LabkitError, Tokenizer, VocabData
from labkit.paths import BUNDLED, MODEL_ALIASES, bundled_path

# engine name -> "module:function"; each function takes a VocabData and returns a Tokenizer,
# or raises EngineUnavailable when it cannot serve that vocabulary.
REFERENCE_ENGINES = {
    "hf": "labkit.engines.hf:build",
    "tiktoken": "labkit.engines.tiktoken_engine:build",
    "sentencepiece": "labkit.engines.sentencepiece_engine:build",
    "mock": "labkit.engines.mock:build",
}
# model family -> labkit's own pure-Python engine for it
LABKIT_ENGINES = {
    "bpe_byte": "labkit.engines.labkit_bpe_byte:build",
    "spm_bpe": "labkit.engines.labkit_llama_spm:build",  # a GGUF as llama.cpp, a .model as sentencepiece
    "wordpiece": "labkit.engines.labkit_llama_wpm:build",  # a GGUF as llama.cpp, other files as tokenizers
    "unigram": "labkit.engines.labkit_unigram:build",
    "spm_char": "labkit.engines.labkit_spm_pieces:build",  # a .model as sentencepiece
    "spm_word": "labkit.engines.labkit_spm_pieces:build",
    "rwkv": "labkit.engines.labkit_llama_rwkv:build",  # a GGUF as llama.cpp runs it
    "plamo2": "labkit.engines.labkit_llama_plamo2:build",  # a GGUF as llama.cpp runs it
}
# a GGUF whose tokenizer model adds a rule of its own to its family's (hybriddna: DNA read as k-mers)
OPTION_ENGINES = {"dna_kmers": "labkit.engines.labkit_llama_hybriddna:build"}
# a tokenizer.json pipeline no family engine serves, run component by component
PIPELINE_ENGINE = "labkit.engines.labkit_pipeline:build"
ENGINES = ("labkit", *REFERENCE_ENGINES)
# the reference engine tried when engine=None and labkit cannot serve a file, by format
_FALLBACK = {
    "tiktoken": ("tiktoken", "hf"),
    "spm_model": ("sentencepiece",),  # the hf engine refuses .model files (engines/hf.py: MODEL_FILE_REFUSAL)
    "gguf": ("hf", "sentencepiece", "tiktoken"),
    "hf_json": ("hf",),
    "vocab_merges": ("hf",),
    "mock": ("mock",),
}


def _builder(spec: str):
    module_name, func = spec.split(":")
    try:
        module = importlib.import_module(module_name)
    except ModuleNotFoundError as exc:
        if exc.name == module_name:  # the engine module itself is not written (yet)
            raise EngineUnavailable(f"engine module {module_name} is not available") from None
        raise
    return getattr(module, func)


def convert_model_file(source) -> Tokenizer:
    """``tokenizers``' conversion of a SentencePiece ``.model``, asked for by name, for code above
    the factory (``engine="hf"`` refuses ``.model`` files: see ``labkit.engines.hf.convert_model_file``).

    Example:
        >>> from labkit.factory import convert_model_file
        >>> convert_model_file("botchan-bpe").engine_note
        "tokenizers' conversion of a .model, not exact: compare, do not serve"
    """
    return _builder("labkit.engines.hf:convert_model_file")(source)


def build_engine(vocab: VocabData, engine: str) -> Tokenizer:
    """Build one named engine over ``vocab``; EngineUnavailable says which engines can."""
    try:
        return _build_engine(vocab, engine)
    except LabkitError as exc:
        if vocab.name in str(exc):
            raise
        # an error deep in an algorithm (a corrupt charsmap, say) still names the file
        kind = type(exc) if type(exc) in (LabkitError, FormatError, EngineUnavailable) else LabkitError
        raise kind(f"{vocab.name}: {exc}") from None


def _build_engine(vocab: VocabData, engine: str) -> Tokenizer:
    if engine == "labkit":
        meta = vocab.metadata if isinstance(vocab.metadata, dict) else {}
        if vocab.format == "hf_json" and meta.get("labkit_refusal"):
            # no family engine serves this pipeline: the component-by-component engine may
            refusal = meta.get("labkit_pipeline_refusal")
            if refusal:
                # the reader found a component labkit does not implement exactly: never guess
                raise EngineUnavailable(f"{vocab.name}: labkit's engine does not implement {refusal}")
            return _builder(PIPELINE_ENGINE)(vocab)
        for option, builder in OPTION_ENGINES.items():
            if vocab.options.get(option):
                return _builder(builder)(vocab)
        if vocab.model not in LABKIT_ENGINES:
            raise EngineUnavailable(f"{vocab.name}: labkit has no engine for model {vocab.model!r}")
        return _builder(LABKIT_ENGINES[vocab.model])(vocab)
    if engine not in REFERENCE_ENGINES:
        raise LabkitError(f"unknown engine {engine!r}; known: {', '.join(ENGINES)}")
    if engine == "tiktoken" and vocab.format == "hf_json":
        _check_tiktoken_serves(vocab)
    return _builder(REFERENCE_ENGINES[engine])(vocab)


def _check_tiktoken_serves(vocab: VocabData) -> None:
    """tiktoken runs a byte-level BPE with one split regex and nothing else: a tokenizer.json
    with any other component (what labkit's byte-level engine also refuses) or an added
    token that strips spaces or must stand alone is refused, never served differently."""
    meta = vocab.metadata if isinstance(vocab.metadata, dict) else {}
    if vocab.model != "bpe_byte":
        raise EngineUnavailable(f"{vocab.name}: tiktoken does not implement model {meta.get('model_type', vocab.model)} "
                                "(it runs byte-level BPE only)")
    refusal = meta.get("labkit_refusal")
    if refusal:
        raise EngineUnavailable(f"{vocab.name}: tiktoken does not implement {refusal}")
    for token in vocab.added_tokens:
        if token.lstrip or token.rstrip or token.single_word:
            raise EngineUnavailable(f"{vocab.name}: tiktoken does not implement added token {token.content[:40]!r} "
                                    "with lstrip/rstrip/single_word")
    # without parse_special, tokenizers still finds a special token and leaves it as text, so an
    # ordinary added token overlapping it is not found there; tiktoken leaves the special out of
    # its search and finds the other
    specials = [t.content for t in vocab.added_tokens if t.special and t.content]
    for token in vocab.added_tokens:
        if not token.special and token.content:
            clash = next((s for s in specials if _spellings_overlap(s, token.content)), None)
            if clash is not None:
                raise EngineUnavailable(
                    f"{vocab.name}: added tokens {clash[:40]!r} (special) and {token.content[:40]!r} overlap; tiktoken "
                    "cannot leave the special one as text and not find the other (parse_special=False)")


def _spellings_overlap(a: str, b: str) -> bool:
    """True if some text holds ``a`` and ``b`` over shared characters (one inside the other, or
    an end of one the start of the other).

    Example:
        >>> from labkit.factory import _spellings_overlap
        >>> _spellings_overlap("xyz", "yzw"), _spellings_overlap("<|im_end|>", "m_e"), _spellings_overlap("ab", "cd")
        (True, True, False)
    """
    if a in b or b in a:
        return True
    return any(a.endswith(b[:k]) or b.endswith(a[:k]) for k in range(1, min(len(a), len(b))))


def engines_for(vocab: VocabData) -> list[str]:
    """The engines that can serve ``vocab`` (tries each build; slow, for messages and tests)."""
    out = []
    for name in ENGINES:
        if name == "mock" and vocab.format != "mock":
            continue
        try:
            build_engine(vocab, name)
        except LabkitError:  # unavailable, or this engine finds the file unusable
            continue
        out.append(name)
    return out


# endings that make a load() argument a path rather than a name
_FILE_SUFFIXES = (".gguf", ".json", ".model", ".tiktoken", ".txt", ".jinja")


def resolve_source(source) -> Path:
    """A path, bundled name, OpenAI model name or Hub id -> a local file or folder."""
    if isinstance(source, os.PathLike) or (isinstance(source, str) and os.path.exists(source)):
        path = Path(source)
        if not path.exists():
            raise LabkitError(f"{path}: no such file or folder")
        return path
    if not isinstance(source, str) or not source:
        raise LabkitError(f"load() takes a path or a name, got {source!r}")
    if source in BUNDLED or source in MODEL_ALIASES:
        return bundled_path(source)
    if source.count("/") == 1 and not source.startswith((".", "/", "~")) and not source.endswith("/"):
        from labkit.formats.hub import download_tokenizer_files

        return download_tokenizer_files(source)
    if source.startswith((".", "/", "~")) or os.sep in source or Path(source).suffix in _FILE_SUFFIXES:
        # it is spelled like a path: say that the path is missing rather than list bundled names
        raise LabkitError(f"{source}: no such file or folder (cwd {os.getcwd()})")
    raise LabkitError(
        f"{source!r} is neither a file, a bundled name ({', '.join(sorted(BUNDLED))}), "
        f"an OpenAI model name, nor a Hub id 'org/model'"
    )


def load(source, *, engine: str | None = None, pre: str | None = None) -> Tokenizer:
    """Load a tokenizer from a file, folder, bundled name, OpenAI model name or Hub id.

    Example:
        >>> import labkit
        >>> labkit.load("qwen2", engine="hf").encode("Hello world").ids
        [9707, 1879]
    """
    from labkit import metrics
    from labkit.formats.detect import read_vocab

    started = time.perf_counter()
    try:
        if engine is not None and engine not in ENGINES:
            raise LabkitError(f"unknown engine {engine!r}; known: {', '.join(ENGINES)}")
        path = resolve_source(source)
        vocab = read_vocab(path, pre=pre)
        tok = _choose_engine(vocab, engine)
    except LabkitError:
        metrics.record_load_error(str(source))
        raise
    metrics.record_load(tok, time.perf_counter() - started)
    return tok


def _engine_note(picked: str, errors: list[str]) -> str:
    """One line saying why engine=None picked ``picked`` (the refusals before it)."""
    if not errors:
        return f"engine=None picked {picked!r}: it serves this file exactly"
    first = errors[0].split(": ", 1)[-1]
    return f"engine=None picked {picked!r}: {first}"


def _choose_engine(vocab: VocabData, engine: str | None) -> Tokenizer:
    if vocab.model not in MODELS and vocab.format != "mock":
        raise LabkitError(f"{vocab.name}: unsupported model {vocab.model!r}")
    if engine is not None:
        try:
            return build_engine(vocab, engine)
        except EngineUnavailable as exc:
            can = [e for e in engines_for(vocab) if e != engine]
            raise EngineUnavailable(
                f"{vocab.name}: engine {engine!r} cannot serve this file ({exc}); engines that can: {', '.join(can) or 'none'}"
            ) from None
    errors = []
    for name in ("labkit", *_FALLBACK.get(vocab.format, ("hf",))):
        try:
            tok = build_engine(vocab, name)
        except EngineUnavailable as exc:
            errors.append(f"{name}: {exc}")
            continue
        tok.engine_note = _engine_note(name, errors)
        return tok
    raise EngineUnavailable(f"{vocab.name}: no engine can serve this file ({'; '.join(errors)})")
