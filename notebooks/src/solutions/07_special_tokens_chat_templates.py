# %%
import labkit; print(labkit.__version__)

# %% [markdown]
# # 07 · Special tokens and chat templates: worked answers to "Try it"
#
# The exercises of `07_special_tokens_chat_templates`, answered and checked with the
# notebook's checkers.

# %%
from labkit.chat import END_OF_TURN_SPELLINGS
from labkit.exercises.chat import check_plain_template, check_stop_ids, check_token_count

qwen2 = labkit.load("qwen2")

# %% [markdown]
# **1.** Three ids: the marker `<|im_start|>` (one id, parsed), `assistant`, and `\n`. As plain
# text (not parsed) BPE cuts the marker into several pieces: that count is the likely slip.

# %%
encoding = qwen2.encode("<|im_start|>assistant\n")
print(encoding.tokens)
answer_1 = len(encoding.ids)
assert answer_1 == 3
assert check_token_count(qwen2, "<|im_start|>assistant\n", answer_1)
assert not check_token_count(qwen2, "<|im_start|>assistant\n", len(qwen2.encode("<|im_start|>assistant\n", parse_special=False).ids))

# %% [markdown]
# **2.** The newline goes before `{% endfor %}`, where trim_blocks (which drops the newline
# right *after* a tag) does not touch it; the generation prompt has no newline.

# %%
answer_2 = ("{% for m in messages %}{{ m.role }}: {{ m.content }}\n{% endfor %}"
            "{% if add_generation_prompt %}assistant:{% endif %}")
print(labkit.render_chat_template(answer_2, [{"role": "user", "content": "Hi"}], add_generation_prompt=True))
assert check_plain_template(answer_2)
# the same template with the newline after the tag instead: trim_blocks removes it
assert not check_plain_template(answer_2.replace("}}\n{% endfor %}", "}}{% endfor %}\n"))

# %% [markdown]
# **3.** The EOS id and the end-of-turn spelling the vocabulary has: `<|endoftext|>` and
# `<|im_end|>`.

# %%
turn_ends = [s for s in END_OF_TURN_SPELLINGS if qwen2.token_to_id(s) is not None]
answer_3 = {qwen2.token_to_id("<|endoftext|>"), *(qwen2.token_to_id(s) for s in turn_ends)}
print(turn_ends, sorted(answer_3))
assert answer_3 == {151643, 151645}
assert check_stop_ids(qwen2, answer_3)
assert not check_stop_ids(qwen2, {151643})
