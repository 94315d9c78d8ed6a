"""Chat-shaped request streams for the cache benchmark, generated deterministically from a seed.

Each workload is a list of prompts in arrival order, rendered in ChatML (the Qwen2 chat
format), with text drawn from botchan.txt so it reads like language, not noise:

- ``realistic_chat``: one shared system prompt, a short user turn per request, some users
  sending the same question twice (a retry); 95%+ of each prompt is the shared prefix.
- ``customer_service``: one long policy system prompt and many short questions.
- ``multi_turn``: conversations that grow turn by turn; each request re-sends the history.
- ``code_review``: a large shared code context followed by one review question each.
- ``no_reuse``: every prompt different from its first character (the baseline).

Introduced in notebook ``10_cache_boundaries``.

Example:
    >>> from labkit.bench.workloads import make_workload
    >>> len(make_workload("customer_service", seed=0).prompts)
    200
"""
from __future__ import annotations

import random
from dataclasses import dataclass

from labkit.bench.harness import corpus_lines
from labkit.core import LabkitError

WORKLOADS = ("realistic_chat", "customer_service", "multi_turn", "code_review", "no_reuse")


@dataclass(frozen=True)
class Workload:
    """A named, seeded list of prompts.

    Example:
        >>> from labkit.bench.workloads import make_workload
        >>> make_workload("multi_turn").prompts[0][:30]
        '<|im_start|>system\\nYou are a p'
    """

    name: str
    prompts: list[str]
    description: str

    def shared_prefix_fraction(self) -> float:
        """Mean fraction of each prompt's characters shared with an earlier prompt's prefix."""
        seen: list[str] = []
        total = 0.0
        for prompt in self.prompts:
            best = 0
            for earlier in seen[-50:]:
                n = 0
                limit = min(len(prompt), len(earlier))
                while n < limit and prompt[n] == earlier[n]:
                    n += 1
                best = max(best, n)
            total += best / max(1, len(prompt))
            seen.append(prompt)
        return total / max(1, len(self.prompts))


def chatml(messages: list[tuple[str, str]], add_generation_prompt: bool = True) -> str:
    """Render (role, content) pairs in ChatML, as Qwen2's template does."""
    out = "".join(f"<|im_start|>{role}\n{content}<|im_end|>\n" for role, content in messages)
    return out + ("<|im_start|>assistant\n" if add_generation_prompt else "")


class _Text:
    """Sentences from botchan, drawn with a private random generator."""

    def __init__(self, seed: int):
        self.rng = random.Random(seed)
        self.lines = corpus_lines()

    def sentences(self, n_chars: int) -> str:
        parts, size = [], 0
        while size < n_chars:
            line = self.rng.choice(self.lines).strip()
            parts.append(line)
            size += len(line) + 1
        return " ".join(parts)

    def question(self) -> str:
        words = self.rng.choice(self.lines).split()[:12]
        return " ".join(words).rstrip(".,;:") + "?"


def _code_context(rng: random.Random, n_functions: int = 60) -> str:
    names = ["parse", "render", "merge", "split", "encode", "decode", "load", "store", "check", "count"]
    nouns = ["token", "vocab", "chunk", "prefix", "buffer", "score", "offset", "record", "entry", "node"]
    blocks = []
    for index in range(n_functions):
        verb, noun = rng.choice(names), rng.choice(nouns)
        body = [
            f"def {verb}_{noun}_{index}(items, limit={rng.randint(1, 512)}):",
            f'    """{verb.capitalize()} each {noun} up to the limit."""',
            "    out = []",
            "    for position, item in enumerate(items):",
            "        if position >= limit or item is None:",
            "            break",
            f"        out.append(item * {rng.randint(2, 9)} + position)",
            "    return out",
            "",
        ]
        blocks.append("\n".join(body))
    return "```python\n" + "\n".join(blocks) + "```"


def make_workload(name: str, *, seed: int = 0, n_requests: int = 200) -> Workload:
    """Build one workload by name (see the module docstring for the shapes)."""
    if name not in WORKLOADS:
        raise LabkitError(f"unknown workload {name!r}; known: {', '.join(WORKLOADS)}")
    text = _Text(seed)
    rng = text.rng
    prompts: list[str] = []
    if name == "realistic_chat":
        system = "You are a helpful assistant who answers questions about the novel. " + text.sentences(4000)
        questions = [text.question() for _ in range(max(1, n_requests * 3 // 4))]
        for _ in range(n_requests):
            prompts.append(chatml([("system", system), ("user", rng.choice(questions))]))
        description = "shared ~4 KB system prompt, short user turns, 1 in 4 questions repeated"
    elif name == "customer_service":
        system = "You are the support agent of a bookshop. Policies follow. " + text.sentences(8000)
        for _ in range(n_requests):
            prompts.append(chatml([("system", system), ("user", text.question())]))
        description = "one ~8 KB policy prompt, many short unique questions"
    elif name == "multi_turn":
        system = "You are a patient tutor. " + text.sentences(600)
        n_conversations = max(1, n_requests // 10)
        conversations = [[("system", system)] for _ in range(n_conversations)]
        for index in range(n_requests):
            history = conversations[index % n_conversations]
            history.append(("user", text.sentences(200)))
            prompts.append(chatml(history))
            history.append(("assistant", text.sentences(400)))
        description = f"{n_conversations} conversations growing turn by turn (history re-sent each turn)"
    elif name == "code_review":
        context = _code_context(rng)
        system = "You review Python code carefully and point out bugs."
        for _ in range(n_requests):
            prompts.append(chatml([("system", system), ("user", context), ("user", text.question())]))
        description = "a shared ~15 KB code context, then one review question each"
    else:  # no_reuse
        for index in range(n_requests):
            prompts.append(chatml([("system", f"[{index}] " + text.sentences(800)), ("user", text.question())]))
        description = "every prompt differs from its first characters on"
    return Workload(name, prompts, description)
