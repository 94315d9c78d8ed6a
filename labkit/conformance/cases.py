"""One configuration of the matrix, and the registry that provider modules fill.

A provider is a function returning a list of :class:`ConfigCase`; it registers itself with
``@register("family")`` in a module of this package named ``hf_*``, ``spm_*`` or
``gguf_*``. :func:`all_cases` imports those modules and calls the providers, so a new
family plugs in by adding a module, nothing else.
Introduced in notebook ``14_conformance_matrix``.

Example:
    >>> from labkit.conformance.cases import all_cases
    >>> [c.name for c in all_cases(["hf"])][:1]
    ['hf/bpe-bytelevel-gpt2']
"""
from __future__ import annotations

import importlib
import pkgutil
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable, Protocol, Sequence

from labkit.core import LabkitError

# module-name prefixes that hold providers, one family each
PROVIDER_PREFIXES = ("hf_", "spm_", "gguf_")


class Reference(Protocol):
    """The reference library called directly on the configuration's file.

    Example (a WordLevel vocabulary without "Hello" or "world": two unknowns):
        >>> import tempfile
        >>> from pathlib import Path
        >>> case = next(c for c in all_cases(["hf"]) if c.name == "hf/wordlevel-whitespace")
        >>> reference = case.reference(case.build(Path(tempfile.mkdtemp())))
        >>> reference.encode("Hello world", False)
        ([0, 0], ['<unk>', '<unk>'], [(0, 5), (6, 11)])
    """

    def encode(self, text: str, add_special_tokens: bool) -> tuple[list[int], list[str], list[tuple[int, int]]]:
        ...

    def decode(self, ids: list[int], skip_special_tokens: bool) -> str:
        ...


@dataclass(frozen=True)
class ConfigCase:
    """One tokenizer a user could bring, ready to build and compare.

    ``build(folder)`` writes its files under ``folder`` and returns what ``labkit.load`` takes;
    ``reference(path)`` opens the same file with the reference library. ``components`` are
    (kind, label) pairs, e.g. ``("normalizer", "NFKC")``: the matrix's rows.
    ``specials`` are its added-token spellings (the corpus adds text that looks like them);
    ``texts`` are further strings only this configuration needs.
    ``compare_offsets`` is False only where the reference itself has no offsets.

    Example:
        >>> case = next(c for c in all_cases(["hf"]) if c.name == "hf/wordlevel-whitespace")
        >>> case.family, case.components[:3]
        ('hf', (('model', 'WordLevel'), ('normalizer', 'none'), ('pre_tokenizer', 'Whitespace')))
    """

    name: str
    family: str
    components: tuple[tuple[str, str], ...]
    build: Callable[[Path], Path]
    reference: Callable[[Path], Reference]
    specials: tuple[str, ...] = ()
    texts: tuple[str, ...] = ()
    compare_offsets: bool = True
    notes: str = ""
    extra: dict = field(default_factory=dict, compare=False, hash=False)


_PROVIDERS: dict[str, list[Callable[[], list[ConfigCase]]]] = {}


def register(family: str):
    """Decorator: register a provider of ConfigCases for ``family`` ("hf", "spm", "gguf").

    Example (a provider module registers its family; here the one already registered):
        >>> from labkit.conformance import spm_matrix
        >>> "spm" in families(), spm_matrix.spm_cases in _PROVIDERS["spm"]
        (True, True)
    """

    def wrap(provider: Callable[[], list[ConfigCase]]):
        _PROVIDERS.setdefault(family, [])
        if provider not in _PROVIDERS[family]:
            _PROVIDERS[family].append(provider)
        return provider

    return wrap


def _import_providers() -> None:
    package = importlib.import_module("labkit.conformance")
    for info in pkgutil.iter_modules(package.__path__):
        if info.name.startswith(PROVIDER_PREFIXES):
            importlib.import_module(f"labkit.conformance.{info.name}")


def families() -> list[str]:
    """The families some provider registered.

    Example:
        >>> sorted(families())
        ['gguf', 'hf', 'spm']
    """
    _import_providers()
    return list(_PROVIDERS)


def all_cases(family_names: Sequence[str] | None = None) -> list[ConfigCase]:
    """Every registered configuration (of the named families), names unique.

    Example:
        >>> from labkit.conformance.cases import all_cases
        >>> 60 <= len(all_cases(["hf"]))  # the count grows as configurations are added
        True
    """
    _import_providers()
    chosen = list(_PROVIDERS) if family_names is None else list(family_names)
    out: list[ConfigCase] = []
    seen: set[str] = set()
    for family in chosen:
        if family not in _PROVIDERS:
            raise LabkitError(f"conformance: no provider registered for family {family!r}; known: {', '.join(_PROVIDERS)}")
        for provider in _PROVIDERS[family]:
            for case in provider():
                if case.name in seen:
                    raise LabkitError(f"conformance: two configurations are named {case.name!r}")
                seen.add(case.name)
                out.append(case)
    return out
