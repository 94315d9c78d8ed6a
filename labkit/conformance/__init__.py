"""The conformance matrix: real tokenizers built in the test run, every engine held against
the library that defines them.

A *configuration* (:class:`~labkit.conformance.cases.ConfigCase`) is one tokenizer a user
could bring: a small vocabulary trained on the botchan corpus with one choice of model,
normaliser, pre-tokenizer, decoder, post-processor and added tokens (or a SentencePiece
``.model``, or a GGUF). Provider modules in this package register the configurations of one
family each (``hf_*`` for tokenizer.json, ``spm_*`` for SentencePiece, ``gguf_*`` for GGUF);
:func:`~labkit.conformance.runner.run_matrix` loads every configuration with every engine,
compares ids, tokens, offsets and decode with the reference on a mixed corpus
(:mod:`~labkit.conformance.corpus`), and reports each cell as exact, refused (at load, with
the component named) or differs (a silent difference: always a bug).
Introduced in notebook ``14_conformance_matrix``.

Example (one configuration, one string, three engines: the full matrix is the tests' job):
    >>> import tempfile
    >>> from pathlib import Path
    >>> from labkit.conformance.cases import all_cases
    >>> from labkit.conformance.runner import run_matrix
    >>> case = next(c for c in all_cases(["hf"]) if c.name == "hf/wordlevel-whitespace")
    >>> summary = run_matrix([case], Path(tempfile.mkdtemp()), texts=["Hello world"]).summary()
    >>> summary["cells"], summary["exact"], summary["differs"]
    (3, 3, 0)
"""
from __future__ import annotations

from labkit.conformance.cases import ConfigCase, Reference, all_cases, register
from labkit.conformance.runner import Cell, MatrixResult, run_case, run_matrix

__all__ = ["ConfigCase", "Reference", "Cell", "MatrixResult", "all_cases", "register", "run_case", "run_matrix"]
