# %%
import labkit; print(labkit.__version__)

# %% [markdown]
# # 14 · The conformance matrix: worked answers to "Try it"
#
# The exercises of `14_conformance_matrix`, answered and checked with the notebook's checkers.

# %%
import tempfile
from pathlib import Path

from labkit.conformance import all_cases
from labkit.exercises.conformance import check_default_engine, check_refused_component

by_name = {c.name: c for c in all_cases(["hf"])}
folder = Path(tempfile.mkdtemp(prefix="labkit-sol14-"))

def refusal(name):
    """The LabkitError text engine='labkit' gives for a configuration, or 'served'."""
    try:
        labkit.load(by_name[name].build(folder / name.replace("/", "_")), engine="labkit")
    except labkit.LabkitError as exc:
        return str(exc)
    return "served"

# %% [markdown]
# **1.** labkit implements every component of this file, FixedLength included (a
# WordLevel model, no normaliser), so the default is labkit. Swap FixedLength for a Split
# on `\h+`, an escape Oniguruma reads (a hexadecimal digit) and `regex` does not, and the
# default becomes `tokenizers`.

# %%
print(refusal("hf/wordlevel-fixed-length"), "|", refusal("hf/wordlevel-split-oniguruma-hex"))
answer_1 = "labkit"
assert check_default_engine(by_name["hf/wordlevel-fixed-length"], answer_1)
assert not check_default_engine(by_name["hf/wordlevel-fixed-length"], "hf")
assert check_default_engine(by_name["hf/wordlevel-split-oniguruma-hex"], "hf")

# %% [markdown]
# **2.** The Split on `\h+` is refused (Oniguruma's `\h` is a hexadecimal digit, an escape
# Python's `regex` does not have); the Qwen2 byte-level configuration with NFC is served (labkit implements every
# one of its components).

# %%
print(refusal("hf/wordlevel-split-oniguruma-hex"))
print(refusal("hf/bpe-bytelevel-qwen2-nfc"))
answer_2a, answer_2b = "pre_tokenizer Split", "none"
assert check_refused_component(by_name["hf/wordlevel-split-oniguruma-hex"], answer_2a)
assert check_refused_component(by_name["hf/bpe-bytelevel-qwen2-nfc"], answer_2b)
assert not check_refused_component(by_name["hf/wordlevel-split-oniguruma-hex"], "Split")
assert not check_refused_component(by_name["hf/bpe-bytelevel-qwen2-nfc"], "normalizer NFC")
