"""Prompts for the load generator: random (fixed ISL/OSL with a range ratio), JSONL, ShareGPT.

Random prompts are built from common English words that are one token each in the usual BPE
vocabularies, so ``n`` words is close to ``n`` tokens; the server's ``usage`` (or a local
tokenizer) gives the exact count afterwards. Each prompt starts with a unique number so that
prefix caches cannot make later requests cheaper than earlier ones.
"""

from __future__ import annotations

import json
import random
from dataclasses import dataclass, field
from pathlib import Path

from podium.errors import InputError

# Common words that are single tokens (with a leading space) in GPT-2/Llama/SmolLM vocabularies.
_WORDS = [
    "the",
    "of",
    "and",
    "to",
    "in",
    "is",
    "was",
    "for",
    "on",
    "that",
    "with",
    "as",
    "by",
    "at",
    "from",
    "his",
    "it",
    "an",
    "were",
    "are",
    "which",
    "this",
    "be",
    "or",
    "has",
    "had",
    "first",
    "one",
    "their",
    "its",
    "new",
    "after",
    "but",
    "who",
    "not",
    "they",
    "have",
    "her",
    "she",
    "two",
    "been",
    "other",
    "when",
    "there",
    "all",
    "during",
    "into",
    "school",
    "time",
    "may",
    "years",
    "more",
    "most",
    "only",
    "over",
    "city",
    "some",
    "world",
    "would",
    "where",
    "later",
    "up",
    "such",
    "used",
    "many",
    "can",
    "state",
    "about",
    "national",
    "out",
    "known",
    "university",
    "united",
    "then",
    "made",
    "between",
    "also",
    "part",
    "since",
    "high",
    "following",
    "team",
    "well",
    "under",
    "several",
    "being",
    "south",
    "three",
    "area",
    "early",
    "war",
    "year",
    "north",
    "called",
    "season",
    "these",
    "people",
    "both",
    "series",
    "name",
    "became",
    "life",
    "city",
    "family",
    "group",
    "work",
    "game",
    "old",
    "left",
    "through",
    "own",
    "did",
    "film",
    "back",
    "number",
    "each",
    "while",
    "played",
    "four",
    "home",
    "second",
    "great",
    "long",
    "day",
    "way",
    "small",
    "line",
    "top",
    "local",
    "end",
    "water",
    "power",
    "free",
    "light",
    "music",
    "house",
    "church",
    "river",
    "west",
    "east",
    "best",
    "main",
    "field",
    "book",
    "side",
    "order",
    "law",
    "center",
    "point",
    "place",
    "case",
    "land",
    "club",
    "level",
    "room",
    "open",
]


@dataclass
class PromptItem:
    """One request's input: a prompt (completions) or chat messages, and its requested lengths."""

    prompt: str
    messages: list[dict] | None = None
    input_tokens_estimate: int = 0
    output_tokens: int = 128
    meta: dict = field(default_factory=dict)

    def chat_messages(self) -> list[dict]:
        return self.messages or [{"role": "user", "content": self.prompt}]


def _lengths(rng: random.Random, mean: int, range_ratio: float) -> int:
    if range_ratio <= 0:
        return mean
    lo = max(1, int(mean * (1 - range_ratio)))
    hi = max(lo, int(mean * (1 + range_ratio)))
    return rng.randint(lo, hi)


def random_prompts(
    count: int, input_tokens: int, output_tokens: int, range_ratio: float, seed: int
) -> list[PromptItem]:
    """``count`` random prompts of about ``input_tokens`` tokens, reproducible from ``seed``."""
    rng = random.Random(seed)
    items = []
    for i in range(count):
        isl = _lengths(rng, input_tokens, range_ratio)
        osl = _lengths(rng, output_tokens, range_ratio)
        words = [str(rng.randrange(10**6))] + [rng.choice(_WORDS) for _ in range(max(isl - 1, 0))]
        items.append(
            PromptItem(
                prompt=" ".join(words), input_tokens_estimate=isl, output_tokens=osl, meta={"index": i}
            )
        )
    return items


def load_jsonl(path: Path, default_output_tokens: int) -> list[PromptItem]:
    """JSONL: one object a line with ``prompt`` (or ``messages``) and optional ``output_tokens``."""
    items = []
    try:
        lines = path.read_text(encoding="utf-8").splitlines()
    except (OSError, UnicodeDecodeError) as e:
        raise InputError(path, f"cannot read: {e}") from None
    for n, line in enumerate(lines, 1):
        if not line.strip():
            continue
        try:
            obj = json.loads(line)
        except ValueError:
            raise InputError(path, f"line {n} is not JSON") from None
        if not isinstance(obj, dict):
            raise InputError(path, f"line {n} is not a JSON object")
        messages = obj.get("messages")
        prompt = obj.get("prompt") or obj.get("text")
        if messages is not None and not isinstance(messages, list):
            raise InputError(path, f"line {n}: 'messages' must be a list")
        if not isinstance(prompt, str) and not messages:
            raise InputError(path, f"line {n} has neither 'prompt' nor 'messages'")
        if not isinstance(prompt, str):
            prompt = "\n".join(str(m.get("content", "")) for m in messages if isinstance(m, dict))
        osl = obj.get("output_tokens", obj.get("max_tokens", default_output_tokens))
        if not isinstance(osl, int) or osl < 1:
            raise InputError(path, f"line {n}: output_tokens must be a positive integer")
        items.append(
            PromptItem(
                prompt=prompt, messages=messages, input_tokens_estimate=len(prompt) // 4, output_tokens=osl
            )
        )
    if not items:
        raise InputError(path, "no prompts in file")
    return items


def load_sharegpt(path: Path, max_output_tokens: int) -> list[PromptItem]:
    """ShareGPT: a JSON list of ``{"conversations": [{"from": "human", "value": ...}, {"from": "gpt", ...}]}``.

    The prompt is the first human turn; the output length is the first reply's length (chars/4,
    as vLLM's benchmark does with a tokenizer), capped at ``max_output_tokens``.
    """
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError) as e:
        raise InputError(path, f"cannot read: {e}") from None
    except ValueError:
        raise InputError(path, "not a JSON document (ShareGPT files are one JSON list)") from None
    if not isinstance(data, list):
        raise InputError(path, "ShareGPT file must be a JSON list of conversations")
    items = []
    for conv in data:
        turns = conv.get("conversations") if isinstance(conv, dict) else None
        if not isinstance(turns, list) or len(turns) < 2:
            continue
        human = next((t for t in turns if isinstance(t, dict) and t.get("from") in ("human", "user")), None)
        reply = next(
            (t for t in turns if isinstance(t, dict) and t.get("from") in ("gpt", "assistant")), None
        )
        if not human or not reply or not isinstance(human.get("value"), str):
            continue
        osl = min(max_output_tokens, max(1, len(str(reply.get("value", ""))) // 4))
        items.append(
            PromptItem(
                prompt=human["value"], input_tokens_estimate=len(human["value"]) // 4, output_tokens=osl
            )
        )
    if not items:
        raise InputError(path, "no usable human/gpt conversation pairs")
    return items


def load_dataset(
    dataset: str,
    dataset_format: str,
    count: int,
    input_tokens: int,
    output_tokens: int,
    range_ratio: float,
    seed: int,
) -> list[PromptItem]:
    """The prompts for one run: ``count`` items (file datasets are cycled in a seeded order)."""
    if dataset == "random":
        return random_prompts(count, input_tokens, output_tokens, range_ratio, seed)
    path = Path(dataset)
    if not path.is_file():
        raise InputError(path, "dataset file not found")
    fmt = dataset_format
    if fmt == "auto":
        head = path.read_text(encoding="utf-8", errors="replace").lstrip()[:1]
        fmt = "sharegpt" if head == "[" else "jsonl"
    base = load_sharegpt(path, output_tokens) if fmt == "sharegpt" else load_jsonl(path, output_tokens)
    rng = random.Random(seed)
    order = list(range(len(base)))
    rng.shuffle(order)
    return [base[order[i % len(order)]] for i in range(count)]
