"""Token counts: the server's ``usage`` first, else a local tokenizer, else a characters estimate.

Every count says where it came from, and the bench report names the source it used.
"""

from __future__ import annotations

from dataclasses import dataclass

# Average characters per token for English BPE vocabularies (the usual rule of thumb).
CHARS_PER_TOKEN = 4.0


@dataclass
class TokenCount:
    """Tokens with the source of the number: 'usage', 'tokenizer' or 'chars-estimate'."""

    tokens: int
    source: str


class TokenCounter:
    """Counts tokens of text with a local tokenizer when one is given, else estimates from chars."""

    def __init__(self, tokenizer_path: str | None = None):
        self._tok = None
        self.tokenizer_path = tokenizer_path
        if tokenizer_path:
            self._tok = load_local_tokenizer(tokenizer_path)

    @property
    def source(self) -> str:
        return "tokenizer" if self._tok is not None else "chars-estimate"

    def count(self, text: str) -> TokenCount:
        if self._tok is not None:
            return TokenCount(len(self._tok.encode(text, add_special_tokens=False)), "tokenizer")
        return TokenCount(max(1, round(len(text) / CHARS_PER_TOKEN)) if text else 0, "chars-estimate")


def load_local_tokenizer(path: str):
    """transformers.AutoTokenizer from a local folder only (never the hub); an InputError if absent."""
    from podium.errors import InputError

    try:
        from transformers import AutoTokenizer  # optional; heavy, imported only when asked for
    except ImportError:
        raise InputError("--tokenizer", "needs the 'transformers' package installed") from None
    try:
        return AutoTokenizer.from_pretrained(path, local_files_only=True)
    except Exception as e:  # transformers raises many types for a bad folder
        raise InputError(path, f"cannot load a tokenizer: {str(e).splitlines()[0][:200]}") from None


def output_tokens_from(usage: dict | None, text: str, counter: TokenCounter) -> TokenCount:
    """Output tokens of one response."""
    if usage and isinstance(usage.get("completion_tokens"), int):
        return TokenCount(usage["completion_tokens"], "usage")
    return counter.count(text)


def input_tokens_from(usage: dict | None, prompt_tokens_estimate: TokenCount) -> TokenCount:
    """Input tokens of one request."""
    if usage and isinstance(usage.get("prompt_tokens"), int):
        return TokenCount(usage["prompt_tokens"], "usage")
    return prompt_tokens_estimate
