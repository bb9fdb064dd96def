"""Strict parsing of OpenAI-style server-sent event streams (pure; no I/O).

A stream is a failure, with a reason, when: a ``data:`` payload is not JSON (and not ``[DONE]``),
an event carries an ``error`` object, the stream ends without ``[DONE]`` and without a
``finish_reason`` (cut mid-way), or no chunk carried any content (a 200 with zero tokens).
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field


@dataclass
class ContentChunk:
    """One chunk that carried content: when it arrived and the text it carried."""

    t_ns: int
    text: str


@dataclass
class DecodedStream:
    """The useful part of a streamed completion."""

    chunks: list[ContentChunk] = field(default_factory=list)
    role_only_chunks: int = 0
    usage: dict | None = None
    finish_reason: str | None = None
    done: bool = False
    response_id: str | None = None
    error_kind: str | None = None
    error: str | None = None

    @property
    def text(self) -> str:
        return "".join(c.text for c in self.chunks)


def event_data(raw: bytes) -> str | None:
    """The joined ``data:`` lines of one event block, or None for a comment/keep-alive block."""
    data_lines = []
    for line in raw.decode("utf-8", errors="replace").split("\n"):
        if line.startswith("data:"):
            data_lines.append(line[6:] if line.startswith("data: ") else line[5:])
        elif line and not line.startswith(":") and ":" not in line and line.strip():
            # A field-less line that is not a comment is not SSE at all.
            data_lines.append("\0" + line)
    if not data_lines:
        return None
    return "\n".join(data_lines)


def chunk_content(obj: dict, api: str) -> tuple[str, bool]:
    """Text carried by one chunk (content or reasoning) and whether the chunk was role-only."""
    choices = obj.get("choices") or []
    if not choices or not isinstance(choices, list):
        return "", False
    c0 = choices[0] if isinstance(choices[0], dict) else {}
    if api == "completions":
        text = c0.get("text")
        return (text if isinstance(text, str) else ""), False
    delta = c0.get("delta") or {}
    if not isinstance(delta, dict):
        return "", False
    parts = [delta.get(k) for k in ("content", "reasoning_content", "reasoning")]
    text = "".join(p for p in parts if isinstance(p, str))
    role_only = not text and "role" in delta
    return text, role_only


def decode_stream(events: list[tuple[int, bytes]], api: str) -> DecodedStream:
    """Turn raw (arrival ns, event bytes) pairs into content chunks, usage and a verdict."""
    out = DecodedStream()
    for t_ns, raw in events:
        if raw.startswith(b"data: ") and b"\n" not in raw:
            # The common one-line event: parse the bytes directly (the general path is 3x slower).
            payload = raw[6:]
            if payload.strip() == b"[DONE]":
                out.done = True
                continue
            try:
                obj = json.loads(payload)
            except ValueError:
                out.error_kind = "malformed_sse"
                out.error = f"non-JSON SSE data: {payload[:80].decode('utf-8', 'replace')!r}"
                return out
        else:
            data = event_data(raw)
            if data is None:
                continue
            if data.strip() == "[DONE]":
                out.done = True
                continue
            try:
                obj = json.loads(data)
            except ValueError:
                out.error_kind = "malformed_sse"
                out.error = f"non-JSON SSE data: {data.replace(chr(0), '')[:80]!r}"
                return out
        if not isinstance(obj, dict):
            out.error_kind, out.error = (
                "malformed_sse",
                f"SSE data is not an object: {raw[:80].decode('utf-8', 'replace')!r}",
            )
            return out
        if obj.get("error"):
            err = obj["error"]
            msg = err.get("message") if isinstance(err, dict) else str(err)
            out.error_kind, out.error = "error_event", f"error in stream: {str(msg)[:200]}"
            return out
        if out.response_id is None and isinstance(obj.get("id"), str):
            out.response_id = obj["id"]
        if isinstance(obj.get("usage"), dict):
            out.usage = obj["usage"]
        text, role_only = chunk_content(obj, api)
        if text:
            out.chunks.append(ContentChunk(t_ns, text))
        elif role_only:
            out.role_only_chunks += 1
        choices = obj.get("choices") or []
        if choices and isinstance(choices[0], dict) and choices[0].get("finish_reason"):
            out.finish_reason = str(choices[0]["finish_reason"])
    if not out.done and out.finish_reason is None:
        out.error_kind, out.error = "stream_cut", "stream ended without [DONE] or finish_reason"
    elif not out.chunks:
        out.error_kind, out.error = "empty_response", "HTTP 200 stream carried no content tokens"
    return out


def failure_kind_for_status(status: int) -> str | None:
    """Failure kind of an HTTP status (None for 2xx)."""
    if 200 <= status < 300:
        return None
    if status in (401, 402, 403, 404, 429):
        return f"http_{status}"
    if status >= 500:
        return "http_5xx"
    return "http_4xx"
