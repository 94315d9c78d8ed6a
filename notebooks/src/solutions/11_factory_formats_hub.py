# %%
import labkit; print(labkit.__version__)

# %% [markdown]
# # 11 · Files, formats and the Hub: worked answers to "Try it"
#
# The exercises of `11_factory_formats_hub`, answered and checked with the notebook's
# checkers. Every file is written in a temporary folder.

# %%
import os
import shutil
import tempfile
from pathlib import Path

from labkit.exercises.formats import check_error_names_file_and_place, check_private_repo, check_sniff
from labkit.formats.detect import sniff
from labkit.formats.hub_server import LocalHub
from labkit.paths import data_dir

DATA = data_dir()
work = Path(tempfile.mkdtemp(prefix="labkit-sol11-"))

# %% [markdown]
# **1.** The reader checks every length against what is left of the file before it reads, so
# the error names the file and the place where the data ran out.

# %%
truncated_path = work / "cut.gguf"
truncated_path.write_bytes((DATA / "gguf/ggml-vocab-gpt-2.gguf").read_bytes()[:1000])
try:
    labkit.load(truncated_path)
except labkit.LabkitError as exc:
    error, message = exc, str(exc)
print(message.replace(str(work), "<tmp>"))
assert check_error_names_file_and_place(truncated_path, message)
assert not check_error_names_file_and_place(truncated_path, repr(error))  # the likely slip

# %% [markdown]
# **2.** The first byte of a `.model` is `0x0a`, the protobuf tag of its first piece; flipped,
# no format's signature matches.

# %%
original = (DATA / "sentencepiece/botchan_en_unigram_1000.model").read_bytes()
flipped_path = work / "flipped.model"
flipped_path.write_bytes(bytes([original[0] ^ 0xFF]) + original[1:])
try:
    answer_format = sniff(flipped_path)
except labkit.LabkitError as exc:
    print(str(exc).replace(str(work), "<tmp>"))
    answer_format = "unknown"
print(f"first byte 0x{original[0]:02x} -> 0x{original[0] ^ 0xFF:02x}: {answer_format}")
assert check_sniff(flipped_path, answer_format)
assert not check_sniff(flipped_path, "spm_model")

# %% [markdown]
# **3.** Without the token the private repo answers 401 and the load fails; with `HF_TOKEN`
# set to the repo's token it works.

# %%
os.environ["HF_HOME"] = str(work / "hf-home")
os.environ["HF_HUB_DISABLE_PROGRESS_BARS"] = "1"
os.environ.pop("HF_HUB_OFFLINE", None)
os.environ.pop("HF_TOKEN", None)
files = {n: (DATA / "hf/all-MiniLM-L6-v2" / n).read_bytes() for n in ("tokenizer.json", "tokenizer_config.json", "vocab.txt")}
hub = LocalHub({"me/tok": files}, private={"me/tok"}, token="secret").start()
os.environ["HF_ENDPOINT"] = hub.url
try:
    try:
        labkit.load("me/tok")
        loaded_without_token = True
    except labkit.LabkitError as exc:
        print("without the token:", str(exc).replace(hub.url, "http://127.0.0.1:PORT")[:160])
        loaded_without_token = False
    os.environ["HF_TOKEN"] = "secret"
    loaded_with_token = labkit.load("me/tok").vocab_size > 0
finally:
    os.environ.pop("HF_TOKEN", None)
    hub.stop()
print(loaded_without_token, loaded_with_token)
assert check_private_repo(loaded_without_token, loaded_with_token)
assert not check_private_repo(True, True)
shutil.rmtree(work, ignore_errors=True)
