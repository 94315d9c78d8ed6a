"""Read transformers' side files of a vocabulary: ``tokenizer_config.json`` and the chat templates.

Any vocabulary file (tokenizer.json, ``.model``, vocab.json, vocab.txt, ``.gguf``,
``.tiktoken``) may sit in a folder with ``tokenizer_config.json`` (named special tokens,
BOS/EOS flags, extra added tokens, a chat template) and chat template files. The chat
templates are found here, once, at load, in transformers' order of priority:

1. ``chat_template.jinja`` (its ``additional_chat_templates/<name>.jinja`` are named extras);
2. ``chat_template.json`` (``{"chat_template": ...}``);
3. ``tokenizer_config.json``'s ``chat_template`` (a str, or a list of ``{name, template}``);
4. a GGUF file's ``tokenizer.chat_template`` and ``tokenizer.chat_template.<name>`` keys.

The reader stores what it found in ``VocabData.chat_templates`` (name -> source; ``default``
is the one used) and ``VocabData.chat_template_origin``; :mod:`labkit.chat` only renders.
Every defect is a :class:`labkit.FormatError` naming the file.
Introduced in notebook ``07_special_tokens_chat_templates`` (loading priority) and
``11_factory_formats_hub`` (tokenizer_config.json).

Example:
    >>> from labkit.formats.detect import read_vocab
    >>> from labkit.paths import data_path
    >>> read_vocab(data_path("hf/all-MiniLM-L6-v2")).metadata["tokenizer_config"]["tokenizer_class"]
    'BertTokenizer'
"""
from __future__ import annotations

import os
import re
import stat
from pathlib import Path
from typing import Any, Mapping

from labkit.core import TOKEN_CONTROL, TOKEN_UNUSED, TOKEN_USER_DEFINED, FormatError, VocabData
from labkit.formats.files import present
from labkit.formats.hf_json import MAX_ID_HOLES, SPECIAL_NAMES, expect, load_json_file, parse_added_tokens

CONFIG_NAME = "tokenizer_config.json"
JINJA_NAME = "chat_template.jinja"
TEMPLATE_JSON_NAME = "chat_template.json"
EXTRA_TEMPLATES_DIR = "additional_chat_templates"
# real chat templates are under 40 KB; a side file this big is a mistake or an attack
MAX_TEMPLATE_BYTES = 1 << 20
MAX_EXTRA_TEMPLATES = 64
GGUF_TEMPLATE_KEY = "tokenizer.chat_template"


# ----------------------------------------------------------------------------- template files


def read_template_file(path) -> str:
    """The text of one ``.jinja`` file: a regular file of at most MAX_TEMPLATE_BYTES, UTF-8
    (a leading BOM is not template text). A pipe, a device or an oversized file is refused
    before anything is read.

    Example:
        >>> import os, tempfile
        >>> path = Path(tempfile.mkdtemp()) / "chat_template.jinja"
        >>> _ = path.write_bytes(b"\\xef\\xbb\\xbf{{ messages[0].content }}")
        >>> read_template_file(path)
        '{{ messages[0].content }}'
        >>> read_template_file(os.devnull)
        Traceback (most recent call last):
        labkit.core.FormatError: /dev/null: a chat template must be a regular file (this is a pipe, device or folder)
    """
    path = Path(path)
    try:
        info = os.stat(path)  # follows a symlink: /dev/zero behind a link is a device
    except OSError as exc:
        raise FormatError(f"{path}: cannot read chat template ({exc.strerror or exc})") from None
    if not stat.S_ISREG(info.st_mode):
        raise FormatError(f"{path}: a chat template must be a regular file (this is a pipe, device or folder)")
    if info.st_size > MAX_TEMPLATE_BYTES:
        raise FormatError(f"{path}: chat template of {info.st_size:,} bytes is over the {MAX_TEMPLATE_BYTES:,}-byte limit")
    try:
        with open(path, "rb") as handle:
            raw = handle.read(MAX_TEMPLATE_BYTES + 1)  # the file may grow between stat and read
    except OSError as exc:
        raise FormatError(f"{path}: cannot read chat template ({exc.strerror or exc})") from None
    if len(raw) > MAX_TEMPLATE_BYTES:
        raise FormatError(f"{path}: chat template is over the {MAX_TEMPLATE_BYTES:,}-byte limit")
    try:
        return raw.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        raise FormatError(f"{path}: chat template is not UTF-8 text (byte {exc.start}: {exc.reason})") from None


def templates_from_field(value: Any, source: str, where: str = "chat_template") -> dict[str, str]:
    """``chat_template`` as transformers stores it -> {name: template}: a str is ``default``;
    a list of ``{name, template}`` or a ``{name: template}`` dict names each one.

    Example:
        >>> from labkit.formats.hf_config import templates_from_field
        >>> templates_from_field([{"name": "default", "template": "T"}], "x")
        {'default': 'T'}
    """
    if isinstance(value, str):
        return {"default": value}
    if isinstance(value, list):
        named = {}
        for n, item in enumerate(value):
            expect(item, dict, source, f"{where}[{n}]")
            name = expect(item.get("name"), str, source, f"{where}[{n}].name")
            named[name] = expect(item.get("template"), str, source, f"{where}[{n}].template")
        return named
    if isinstance(value, dict):  # {name: template}, as transformers keeps several in memory
        return {name: expect(template, str, source, f"{where}[{name!r}]") for name, template in value.items()}
    raise FormatError(f"{source}: {where} should be a string or a list of {{name, template}}, got {type(value).__name__}")


def gguf_templates(kv: Mapping[str, Any]) -> dict[str, str]:
    """The templates a GGUF file names: ``tokenizer.chat_template`` is ``default``,
    ``tokenizer.chat_template.<name>`` is ``<name>`` (llama.cpp's convention).

    Example:
        >>> from labkit.formats.hf_config import gguf_templates
        >>> gguf_templates({"tokenizer.chat_template": "T"})
        {'default': 'T'}
    """
    named = {}
    if isinstance(kv.get(GGUF_TEMPLATE_KEY), str):
        named["default"] = kv[GGUF_TEMPLATE_KEY]
    prefix = GGUF_TEMPLATE_KEY + "."
    for key, value in kv.items():
        if isinstance(key, str) and key.startswith(prefix) and isinstance(value, str):
            named[key[len(prefix):]] = value
    return named


def set_chat_templates(vocab: VocabData, named: Mapping[str, str], origin: str) -> None:
    """Store the templates a reader found on ``vocab`` (``chat_template`` is the default one).

    Example:
        >>> from labkit.core import VocabData
        >>> vocab = VocabData("demo", "mock", "mock", tokens=["a"], token_types=[1])
        >>> set_chat_templates(vocab, {"default": "{{ x }}", "tool_use": "{{ y }}"}, "chat_template.jinja")
        >>> vocab.chat_template, sorted(vocab.chat_templates), vocab.chat_template_origin
        ('{{ x }}', ['default', 'tool_use'], 'chat_template.jinja')
    """
    vocab.chat_templates = dict(named)
    vocab.chat_template = vocab.chat_templates.get("default")
    vocab.chat_template_origin = origin


def _extra_templates(folder: Path) -> dict[str, str]:
    extra = folder / EXTRA_TEMPLATES_DIR
    if not extra.is_dir():
        return {}
    files = sorted(extra.glob("*.jinja"))
    if len(files) > MAX_EXTRA_TEMPLATES:
        raise FormatError(f"{extra}: {len(files)} templates is over the limit of {MAX_EXTRA_TEMPLATES}")
    return {p.stem: read_template_file(p) for p in files}


def folder_templates(folder: Path, config: Any = None) -> tuple[dict[str, str], str] | None:
    """The chat templates in ``folder`` by transformers' priority (see the module docs), with
    where they came from; None when the folder holds none. ``config`` is the parsed
    tokenizer_config.json when the caller has already read it.

    Example:
        >>> from labkit.paths import data_path
        >>> folder_templates(data_path("hf/all-MiniLM-L6-v2")) is None
        True
    """
    folder = Path(folder)
    jinja_path = folder / JINJA_NAME
    if present(jinja_path):
        return {"default": read_template_file(jinja_path), **_extra_templates(folder)}, str(jinja_path)
    json_path = folder / TEMPLATE_JSON_NAME
    if present(json_path):
        doc = load_json_file(json_path)
        expect(doc, dict, str(json_path), "the top level")
        if doc.get("chat_template") is None:
            raise FormatError(f"{json_path}: expected an object with a 'chat_template' key")
        return templates_from_field(doc["chat_template"], str(json_path)), str(json_path)
    config_path = folder / CONFIG_NAME
    if config is None and present(config_path):
        config = load_json_file(config_path)
    if isinstance(config, dict) and config.get("chat_template") is not None:
        return templates_from_field(config["chat_template"], str(config_path)), f"{config_path}: chat_template"
    return None


def apply_template_files(vocab: VocabData, folder: Path, config: Any = None) -> None:
    """Fill ``vocab``'s chat templates from the files in ``folder``, which win over what the
    vocabulary file itself carries (a GGUF key), as transformers and llama.cpp servers do.

    Example:
        >>> import tempfile
        >>> from labkit.core import VocabData
        >>> folder = Path(tempfile.mkdtemp())
        >>> _ = (folder / "chat_template.jinja").write_text("{{ x }}")
        >>> vocab = VocabData("model.gguf", "gguf", "bpe_byte", ["a"], [1], chat_template="{{ from_gguf }}")
        >>> apply_template_files(vocab, folder)
        >>> vocab.chat_template
        '{{ x }}'
    """
    found = folder_templates(folder, config)
    if found is not None:
        set_chat_templates(vocab, *found)


# ----------------------------------------------------------------------------- tokenizer_config.json


def _special_content(value: Any, source: str, key: str) -> str | None:
    """A special-token entry: a string, or an AddedToken dict with "content"."""
    if value is None:
        return None
    if isinstance(value, str):
        return value
    if isinstance(value, dict):
        return expect(value.get("content"), str, source, f"{key}.content")
    raise FormatError(f"{source}: {key} should be a string or an object with 'content', got {type(value).__name__}")


def _grow_to(vocab: VocabData, size: int) -> None:
    """Append ``<|unused_N|>`` placeholders so ids up to ``size - 1`` exist."""
    for hole in range(len(vocab.tokens), size):
        vocab.tokens.append(f"<|unused_{hole}|>")
        vocab.token_types.append(TOKEN_UNUSED)
        if vocab.scores is not None:
            vocab.scores.append(0.0)
        if vocab.token_bytes is not None:
            vocab.token_bytes.append(None)


def apply_added_tokens_decoder(vocab: VocabData, decoder: Any, source: str) -> None:
    """``added_tokens_decoder`` ({"id": AddedToken dict}): tokens the vocabulary lacks are added.

    The vocabulary may grow by at most MAX_ID_HOLES ids in total, checked against the size
    it had before this record, before anything is appended.

    Example (id 2 is a hole, filled with a placeholder):
        >>> from labkit.core import VocabData
        >>> vocab = VocabData("vocab.txt", "hf_json", "wordpiece", ["[UNK]", "a"], [2, 1])
        >>> apply_added_tokens_decoder(vocab, {"3": {"content": "<x>", "special": True}}, "tokenizer_config.json")
        >>> vocab.tokens, [token.content for token in vocab.added_tokens]
        (['[UNK]', 'a', '<|unused_2|>', '<x>'], ['<x>'])
    """
    expect(decoder, dict, source, "added_tokens_decoder")
    present = {a.content: a.id for a in vocab.added_tokens}
    extra = []
    for key, entry in decoder.items():
        if not re.fullmatch(r"[0-9]{1,12}", key):
            raise FormatError(f"{source}: added_tokens_decoder key {key[:20]!r} is not an id")
        expect(entry, dict, source, f"added_tokens_decoder[{key}]")
        if entry.get("content") in present:
            continue
        extra.extend(parse_added_tokens([dict(entry, id=int(key))], source, f"added_tokens_decoder[{key}]"))
    size = len(vocab.tokens)
    highest = max((token.id for token in extra), default=-1)
    if highest - size > MAX_ID_HOLES:  # one bound for the whole record, before any growth
        raise FormatError(
            f"{source}: added token id {highest} is far past the vocabulary of {size:,} "
            f"(at most {MAX_ID_HOLES:,} new ids)"
        )
    _grow_to(vocab, highest + 1)
    for token in extra:
        vocab.tokens[token.id] = token.content
        vocab.token_types[token.id] = TOKEN_CONTROL if token.special else TOKEN_USER_DEFINED
        if vocab.token_bytes is not None and token.special:
            vocab.token_bytes[token.id] = None
        vocab.added_tokens.append(token)
        present[token.content] = token.id


def apply_named_specials(vocab: VocabData, config: dict, source: str) -> None:
    """``bos_token``, ``eos_token``, ... (a str or an AddedToken dict) -> ``vocab.specials``.

    Example:
        >>> from labkit.core import VocabData
        >>> vocab = VocabData("vocab.txt", "hf_json", "wordpiece", ["[UNK]", "[SEP]", "hi"], [2, 3, 1])
        >>> apply_named_specials(vocab, {"sep_token": {"content": "[SEP]"}, "unk_token": "[UNK]"}, "tokenizer_config.json")
        >>> (vocab.specials.sep, vocab.specials.sep_id), (vocab.specials.unk, vocab.specials.unk_id)
        (('[SEP]', 1), ('[UNK]', 0))
    """
    sp = vocab.specials
    present = {a.content: a.id for a in vocab.added_tokens}
    index = None

    def find(content: str) -> int | None:
        nonlocal index
        if content in present:
            return present[content]
        if index is None:
            index = {}
            for i, token in enumerate(vocab.tokens):
                index.setdefault(token, i)  # the first id, as list.index would
        return index.get(content)

    for name in SPECIAL_NAMES:
        key = f"{name}_token"
        if key not in config:
            continue
        content = _special_content(config[key], source, key)
        setattr(sp, name, content)
        setattr(sp, f"{name}_id", find(content) if content is not None else None)
    if sp.eos_id is not None:
        sp.eos_ids = tuple(dict.fromkeys((sp.eos_id, *[i for i in sp.eos_ids if i != sp.eos_id])))


def apply_framing_flags(vocab: VocabData, config: dict, source: str, *, framing_from_post_processor: bool) -> None:
    """``add_bos_token`` / ``add_eos_token``, unless a tokenizer.json post-processor frames the
    text (it is what the ``tokenizers`` engine runs, so it stays in charge).

    Example:
        >>> from labkit.core import VocabData
        >>> config = {"add_bos_token": True}
        >>> plain = VocabData("tokenizer.model", "spm_model", "unigram", ["<unk>"], [2])
        >>> framed = VocabData("tokenizer.json", "hf_json", "unigram", ["<unk>"], [2])
        >>> apply_framing_flags(plain, config, "c.json", framing_from_post_processor=False)
        >>> apply_framing_flags(framed, config, "c.json", framing_from_post_processor=True)
        >>> plain.specials.add_bos, framed.specials.add_bos
        (True, False)
    """
    for flag in ("add_bos", "add_eos"):
        value = expect(config.get(f"{flag}_token"), bool, source, f"{flag}_token", optional=True)
        if value is not None and not framing_from_post_processor:
            setattr(vocab.specials, flag, value)


def apply_wordpiece_options(vocab: VocabData, config: dict, source: str) -> None:
    """BERT's normaliser switches: ``do_lower_case``, ``strip_accents``, ``tokenize_chinese_chars``.

    Example:
        >>> from labkit.core import VocabData
        >>> vocab = VocabData("vocab.txt", "hf_json", "wordpiece", ["[UNK]"], [2], normalizer={"lowercase": True})
        >>> apply_wordpiece_options(vocab, {"do_lower_case": False, "strip_accents": None}, "c.json")
        >>> vocab.normalizer
        {'lowercase': False, 'strip_accents': None}
    """
    if vocab.model != "wordpiece":
        return
    lower = config.get("do_lower_case")
    if lower is not None:
        vocab.normalizer["lowercase"] = expect(lower, bool, source, "do_lower_case")
    if "strip_accents" in config:
        vocab.normalizer["strip_accents"] = expect(config["strip_accents"], bool, source, "strip_accents", optional=True)
    if "tokenize_chinese_chars" in config:
        vocab.normalizer["handle_chinese_chars"] = expect(config["tokenize_chinese_chars"], bool, source, "tokenize_chinese_chars")


def apply_config_template(vocab: VocabData, config: dict, source: str) -> None:
    """The config's own ``chat_template``, if any (template files beside it win later).

    Example:
        >>> from labkit.core import VocabData
        >>> named = [{"name": "default", "template": "{{ x }}"}, {"name": "rag", "template": "{{ y }}"}]
        >>> vocab = VocabData("tokenizer.json", "hf_json", "bpe_byte", ["a"], [1])
        >>> apply_config_template(vocab, {"chat_template": named}, "tokenizer_config.json")
        >>> vocab.chat_templates, vocab.chat_template_origin
        ({'default': '{{ x }}', 'rag': '{{ y }}'}, 'tokenizer_config.json: chat_template')
    """
    if config.get("chat_template") is not None:
        set_chat_templates(vocab, templates_from_field(config["chat_template"], source), f"{source}: chat_template")


def apply_tokenizer_config(vocab: VocabData, config: Any, source: str, *, framing_from_post_processor: bool = False) -> None:
    """Apply a tokenizer_config.json dict, one record kind at a time: added tokens from
    ``added_tokens_decoder``, named special tokens, BOS/EOS flags, BERT options, the chat template.

    Example:
        >>> from labkit.paths import data_path
        >>> from labkit.formats.hf_json import read_hf_json, load_json_file
        >>> folder = data_path("hf/all-MiniLM-L6-v2")
        >>> vocab = read_hf_json(folder / "tokenizer.json")
        >>> apply_tokenizer_config(vocab, load_json_file(folder / "tokenizer_config.json"), "tokenizer_config.json")
        >>> vocab.metadata["tokenizer_config"]["tokenizer_class"], vocab.specials.mask
        ('BertTokenizer', '[MASK]')
    """
    expect(config, dict, source, "the top level")
    vocab.metadata["tokenizer_config"] = config
    if config.get("added_tokens_decoder") is not None:
        apply_added_tokens_decoder(vocab, config["added_tokens_decoder"], source)
    apply_named_specials(vocab, config, source)
    apply_framing_flags(vocab, config, source, framing_from_post_processor=framing_from_post_processor)
    apply_wordpiece_options(vocab, config, source)
    apply_config_template(vocab, config, source)


def apply_folder_files(vocab: VocabData, folder: Path, *, framing_from_post_processor: bool = False) -> None:
    """Apply what sits beside a vocabulary file: tokenizer_config.json, then the chat
    template files by priority (``chat_template.jinja`` > ``chat_template.json`` > the config).

    Example:
        >>> from labkit.paths import data_path
        >>> from labkit.formats.vocab_merges import read_vocab_txt
        >>> vocab = read_vocab_txt(data_path("hf/all-MiniLM-L6-v2/vocab.txt"))
        >>> apply_folder_files(vocab, data_path("hf/all-MiniLM-L6-v2"))
        >>> vocab.normalizer["lowercase"], vocab.specials.cls
        (True, '[CLS]')
    """
    folder = Path(folder)
    config_path = folder / CONFIG_NAME
    config = None
    if present(config_path):
        config = load_json_file(config_path)
        apply_tokenizer_config(vocab, config, str(config_path), framing_from_post_processor=framing_from_post_processor)
    apply_template_files(vocab, folder, config)
