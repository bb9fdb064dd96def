"""The load generator: closed-loop concurrency or open-loop arrivals, one asyncio loop.

Hot path: the HTTP client (podium.endpoint.http) only stamps and frames bytes while a response
streams; JSON decoding of the chunks is deferred until the level ends (or until the buffered raw
events pass a memory cap), so parsing one stream never delays the timestamps of another.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import random
import time
from collections.abc import Callable
from dataclasses import dataclass

from podium import __version__
from podium.endpoint.datasets import PromptItem
from podium.endpoint.http import Connection, HttpError, Response, Target, build_request, make_ssl_context
from podium.endpoint.metrics import tpot_ms, ttft_and_itl
from podium.endpoint.models import EndpointBenchConfig, RequestRecord
from podium.endpoint.sse import decode_stream, failure_kind_for_status
from podium.endpoint.tokens import TokenCount, TokenCounter, input_tokens_from, output_tokens_from
from podium.secrets import redact

Progress = Callable[[str, int, "int | None"], None]
_PENDING_DECODE_CAP = 64 * 1024 * 1024


def arrival_offsets(rate: float, count: int, arrival: str, burstiness: float, seed: int) -> list[float]:
    """Seconds from level start at which each request is due (seeded Poisson or gamma)."""
    rng = random.Random(seed)
    t, out = 0.0, []
    for _ in range(count):
        if arrival == "gamma":
            t += rng.gammavariate(burstiness, 1.0 / (rate * burstiness))
        else:
            t += rng.expovariate(rate)
        out.append(t)
    return out


@dataclass
class _Sent:
    """A finished exchange waiting to be decoded into a RequestRecord."""

    level: int
    index: int
    warmup: bool
    item: PromptItem
    scheduled_offset_s: float
    queue_ms: float
    connect_ms: float
    sent_unix_ns: int
    resp: Response


class LoadGenerator:
    """Sends requests as the config says and turns each response into a RequestRecord."""

    def __init__(self, config: EndpointBenchConfig, api_key: str | None, counter: TokenCounter):
        self.config = config
        self.counter = counter
        self.target = Target.parse(config.base_url)
        self.ssl = (
            make_ssl_context(config.verify_tls, config.ca_file) if self.target.scheme == "https" else None
        )
        self.path = "/chat/completions" if config.api == "chat" else "/completions"
        self.headers = {
            "Content-Type": "application/json",
            "Accept": "text/event-stream",
            "User-Agent": f"podium/{__version__}",
        }
        if api_key:
            self.headers["Authorization"] = f"Bearer {api_key}"
        self._pending: list[_Sent] = []
        self._pending_bytes = 0
        self.records: list[RequestRecord] = []

    # ---- request construction
    def payload(self, item: PromptItem) -> bytes:
        c = self.config
        body: dict = {"model": c.model, "max_tokens": item.output_tokens, "stream": True}
        body["stream_options"] = {"include_usage": True}
        if c.api == "chat":
            body["messages"] = item.chat_messages()
        else:
            body["prompt"] = item.prompt
        if c.ignore_eos:
            body["ignore_eos"] = True
        body.update(c.extra_body)
        return build_request(self.target, "POST", self.path, self.headers, json.dumps(body).encode())

    # ---- one request
    async def _exchange(
        self,
        conn: Connection,
        payload: bytes,
        level: int,
        index: int,
        warmup: bool,
        item: PromptItem,
        sched_s: float,
        queue_ms: float,
    ) -> None:
        c = self.config
        connect_ms = 0.0
        try:
            connect_ms = await conn.connect() * 1000.0
            sent_unix_ns = time.time_ns()
            resp = await conn.exchange(
                payload, timeout_s=c.timeout_s, idle_timeout_s=c.idle_timeout_s, max_body=c.max_response_bytes
            )
        except HttpError as e:
            sent_unix_ns = time.time_ns()
            resp = Response(error_kind=e.kind, error=str(e))
        self._pending.append(
            _Sent(level, index, warmup, item, sched_s, queue_ms, connect_ms, sent_unix_ns, resp)
        )
        self._pending_bytes += resp.body_bytes
        if self._pending_bytes > _PENDING_DECODE_CAP:
            self.flush()

    # ---- decoding (off the hot path)
    def flush(self) -> None:
        """Decode every finished exchange into a RequestRecord."""
        pending, self._pending, self._pending_bytes = self._pending, [], 0
        self.records.extend(self._record(s) for s in pending)

    def _record(self, s: _Sent) -> RequestRecord:
        resp = s.resp
        rec = RequestRecord(
            level=s.level,
            index=s.index,
            warmup=s.warmup,
            ok=False,
            http_status=resp.status or None,
            request_id=resp.headers.get("x-request-id") or resp.headers.get("request-id"),
            sent_unix_ns=s.sent_unix_ns,
            scheduled_offset_s=round(s.scheduled_offset_s, 6),
            queue_ms=round(s.queue_ms, 4),
            connect_ms=round(s.connect_ms, 4),
        )
        if resp.end_ns and resp.sent_ns:
            rec.e2e_ms = (resp.end_ns - resp.sent_ns) / 1e6
        if resp.error_kind:
            rec.error_kind, rec.error = resp.error_kind, redact(resp.error or "")[:300]
            rec.e2e_ms = None
            return rec
        kind = failure_kind_for_status(resp.status)
        if kind:
            rec.error_kind = kind
            rec.error = redact(
                f"HTTP {resp.status} {resp.reason}: {resp.body[:200].decode('utf-8', 'replace')}"
            )
            rec.e2e_ms = None
            return rec
        if not resp.events and not resp.headers.get("content-type", "").startswith("text/event-stream"):
            rec.error_kind = "malformed_sse"
            rec.error = (
                f"expected text/event-stream, got {resp.headers.get('content-type', 'no content-type')!r}"
            )
            rec.e2e_ms = None
            return rec
        stream = decode_stream(resp.events, self.config.api)
        rec.request_id = rec.request_id or stream.response_id
        rec.finish_reason = stream.finish_reason
        text = stream.text
        rec.output_chars = len(text)
        est = TokenCount(s.item.input_tokens_estimate, "chars-estimate")
        if self.counter.source == "tokenizer" and (not stream.usage or "prompt_tokens" not in stream.usage):
            est = self.counter.count(s.item.prompt)
        inp = input_tokens_from(stream.usage, est)
        rec.input_tokens = inp.tokens
        if stream.error_kind:
            rec.error_kind, rec.error = stream.error_kind, redact(stream.error or "")[:300]
            rec.e2e_ms = None
            return rec
        out = output_tokens_from(stream.usage, text, self.counter)
        rec.output_tokens, rec.token_count_source = out.tokens, out.source
        content_ns = [ch.t_ns for ch in stream.chunks]
        ttft, itl = ttft_and_itl(resp.sent_ns, content_ns)
        rec.ttft_ms = round(ttft, 4) if ttft is not None else None
        rec.itl_ms = [round(x, 4) for x in itl]
        rec.chunk_offsets_ms = [round((t - resp.sent_ns) / 1e6, 4) for t in content_ns]
        rec.e2e_ms = round(rec.e2e_ms, 4) if rec.e2e_ms is not None else None
        tp = tpot_ms(rec.e2e_ms, rec.ttft_ms, rec.output_tokens)
        rec.tpot_ms = round(tp, 4) if tp is not None else None
        rec.ok = True
        return rec

    # ---- load shapes
    async def closed_loop(
        self,
        level: int,
        items: list[PromptItem],
        concurrency: int,
        warmup: int,
        duration_s: float | None,
        progress: Progress | None = None,
        label: str = "",
    ) -> float:
        """``concurrency`` workers each send the next request when their last one ends.

        Returns the measured duration (first measured send to last completion), in seconds.
        """
        conns = [Connection(self.target, self.ssl) for _ in range(concurrency)]
        await self._preconnect(conns)
        if warmup:
            await self._run_workers(level, items[:warmup], conns, True, None, None, label)
        measured = items[warmup:]
        t0 = time.perf_counter()
        await self._run_workers(level, measured, conns, False, duration_s, progress, label)
        elapsed = time.perf_counter() - t0
        for c in conns:
            c.close()
        return elapsed

    async def _preconnect(self, conns: list[Connection]) -> None:
        async def one(c: Connection) -> None:
            # On failure the request retries the connection and records why it failed.
            with contextlib.suppress(HttpError):
                await c.connect()

        await asyncio.gather(*(one(c) for c in conns))

    async def _run_workers(
        self,
        level: int,
        items: list[PromptItem],
        conns: list[Connection],
        warmup: bool,
        duration_s: float | None,
        progress: Progress | None,
        label: str,
    ) -> None:
        loop = asyncio.get_running_loop()
        t_start = loop.time()
        deadline = t_start + duration_s if duration_s else None
        state = {"next": 0, "done": 0}
        total = None if duration_s else len(items)

        async def worker(conn: Connection) -> None:
            while True:
                i = state["next"]
                if i >= len(items) or (deadline is not None and loop.time() >= deadline):
                    return
                state["next"] = i + 1
                item = items[i]
                payload = self.payload(item)
                await self._exchange(conn, payload, level, i, warmup, item, loop.time() - t_start, 0.0)
                state["done"] += 1
                if progress is not None:
                    progress(label, state["done"], total)

        await asyncio.gather(*(worker(c) for c in conns))

    async def open_loop(
        self,
        level: int,
        items: list[PromptItem],
        rate: float,
        max_concurrency: int,
        warmup: int,
        duration_s: float | None,
        seed: int,
        progress: Progress | None = None,
        label: str = "",
    ) -> float:
        """Requests are due at seeded Poisson/gamma times; a late send is queue time, never dropped."""
        c = self.config
        if warmup:
            wconns = [
                Connection(self.target, self.ssl) for _ in range(min(warmup, max_concurrency or warmup))
            ]
            await self._run_workers(level, items[:warmup], wconns, True, None, None, label)
            for conn in wconns:
                conn.close()
        measured = items[warmup:]
        offsets = arrival_offsets(rate, len(measured), c.arrival, c.burstiness, seed)
        if duration_s:
            offsets = [o for o in offsets if o < duration_s]
            measured = measured[: len(offsets)]
        loop = asyncio.get_running_loop()
        idle: list[Connection] = []
        sem = asyncio.Semaphore(max_concurrency) if max_concurrency else None
        tasks: list[asyncio.Task] = []
        done = {"n": 0}
        t_start = loop.time() + 0.01
        perf0 = time.perf_counter() + 0.01

        async def fire(i: int, item: PromptItem, due: float) -> None:
            payload = self.payload(item)
            if sem is not None:
                await sem.acquire()
            try:
                conn = idle.pop() if idle else Connection(self.target, self.ssl)
                queue_ms = max(0.0, (loop.time() - (t_start + due)) * 1000.0)
                await self._exchange(conn, payload, level, i, False, item, due, queue_ms)
                if conn.usable:
                    idle.append(conn)
            finally:
                if sem is not None:
                    sem.release()
            done["n"] += 1
            if progress is not None:
                progress(label, done["n"], len(measured))

        for i, (item, due) in enumerate(zip(measured, offsets, strict=True)):
            delay = t_start + due - loop.time()
            if delay > 0:
                await asyncio.sleep(delay)
            tasks.append(asyncio.ensure_future(fire(i, item, due)))
        await asyncio.gather(*tasks)
        elapsed = time.perf_counter() - perf0
        for conn in idle:
            conn.close()
        return elapsed
