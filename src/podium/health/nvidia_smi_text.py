"""Parser for ``nvidia-smi -q`` text (the indented 'Key : Value' report), full or ``-d`` excerpts."""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from podium.errors import ParseError
from podium.health.models import GpuInfo, GpuInventory
from podium.health.values import integer, number, snake, text_or_none, yes_no

SOURCE = "nvidia-smi -q"
_GPU_HEADER = re.compile(r"^GPU\s+([0-9A-Fa-f]{4,8}:[0-9A-Fa-f]{2}:[0-9A-Fa-f]{2}\.[0-9A-Fa-f])\s*$")


@dataclass
class _Node:
    """One 'Key : Value' line and the lines indented under it."""

    key: str
    value: str | None
    children: list[_Node] = field(default_factory=list)

    def find(self, *path: str) -> _Node | None:
        node: _Node | None = self
        for part in path:
            if node is None:
                return None
            node = next((c for c in node.children if c.key == part), None)
        return node

    def get(self, *path: str) -> str | None:
        node = self.find(*path)
        return text_or_none(node.value) if node is not None else None


def _tree(lines: list[tuple[int, str]]) -> _Node:
    root = _Node("gpu", None)
    stack: list[tuple[int, _Node]] = [(-1, root)]
    for indent, content in lines:
        key, sep, value = content.partition(":")
        node = _Node(snake(key), value.strip() if sep else None)
        while stack and stack[-1][0] >= indent:
            stack.pop()
        stack[-1][1].children.append(node)
        stack.append((indent, node))
    return root


def _sum(*values: str | None) -> int | None:
    nums = [integer(v) for v in values]
    present = [n for n in nums if n is not None]
    return sum(present) if present else None


def _ecc(g: _Node, scope: str) -> tuple[int | None, int | None]:
    s = ("ecc_errors", scope)
    corr = _sum(g.get(*s, "sram_correctable"), g.get(*s, "dram_correctable"))
    unc = _sum(
        g.get(*s, "sram_uncorrectable"),
        g.get(*s, "sram_uncorrectable_parity"),
        g.get(*s, "sram_uncorrectable_sec_ded"),
        g.get(*s, "dram_uncorrectable"),
    )
    if corr is None and unc is None:  # pre-Ampere layout
        corr = integer(g.get(*s, "single_bit", "total"))
        unc = integer(g.get(*s, "double_bit", "total"))
    return corr, unc


def _throttle(g: _Node) -> dict[str, bool]:
    block = g.find("clocks_event_reasons") or g.find("clocks_throttle_reasons")
    out: dict[str, bool] = {}
    if block is None:
        return out

    def walk(node: _Node) -> None:
        for c in node.children:
            active = yes_no(c.value)
            if active is not None:
                out[c.key] = active
            walk(c)

    walk(block)
    return out


def _gpu(index: int, bus_id: str, g: _Node) -> GpuInfo:
    vol_c, vol_u = _ecc(g, "volatile")
    agg_c, agg_u = _ecc(g, "aggregate")
    power = g.find("gpu_power_readings") or g.find("power_readings")
    power_draw = None
    power_limit = None
    if power is not None:
        power_draw = number(
            power.get("power_draw") or power.get("instant_power_draw") or power.get("average_power_draw")
        )
        power_limit = number(
            power.get("current_power_limit") or power.get("enforced_power_limit") or power.get("power_limit")
        )
    procs = g.find("processes")
    link = ("pci", "gpu_link_info")
    temp = ("temperature",)
    return GpuInfo(
        index=index,
        bus_id=bus_id,
        name=g.get("product_name"),
        uuid=g.get("gpu_uuid"),
        serial=g.get("serial_number"),
        architecture=g.get("product_architecture"),
        persistence_mode=yes_no(g.get("persistence_mode")),
        mig_mode=g.get("mig_mode", "current"),
        ecc_mode=g.get("ecc_mode", "current"),
        ecc_volatile_correctable=vol_c,
        ecc_volatile_uncorrectable=vol_u,
        ecc_aggregate_correctable=agg_c,
        ecc_aggregate_uncorrectable=agg_u,
        sram_threshold_exceeded=yes_no(g.get("ecc_errors", "aggregate", "sram_threshold_exceeded")),
        retired_pages_sbe=integer(g.get("retired_pages", "single_bit_ecc")),
        retired_pages_dbe=integer(g.get("retired_pages", "double_bit_ecc")),
        retired_pages_pending=yes_no(g.get("retired_pages", "pending_page_blacklist")),
        remapped_rows_correctable=integer(g.get("remapped_rows", "correctable_error")),
        remapped_rows_uncorrectable=integer(g.get("remapped_rows", "uncorrectable_error")),
        remap_pending=yes_no(g.get("remapped_rows", "pending")),
        remap_failure=yes_no(g.get("remapped_rows", "remapping_failure_occurred")),
        throttle_reasons=_throttle(g),
        temperature_c=number(g.get(*temp, "gpu_current_temp")),
        memory_temperature_c=number(g.get(*temp, "memory_current_temp")),
        slowdown_temperature_c=number(g.get(*temp, "gpu_slowdown_temp")),
        shutdown_temperature_c=number(g.get(*temp, "gpu_shutdown_temp")),
        power_draw_w=power_draw,
        power_limit_w=power_limit,
        utilization_gpu_pct=number(g.get("utilization", "gpu")),
        sm_clock_mhz=number(g.get("clocks", "sm")),
        max_sm_clock_mhz=number(g.get("max_clocks", "sm")),
        pcie_gen_current=integer(g.get(*link, "pcie_generation", "current")),
        pcie_gen_max=integer(g.get(*link, "pcie_generation", "max")),
        pcie_width_current=integer(g.get(*link, "link_width", "current")),
        pcie_width_max=integer(g.get(*link, "link_width", "max")),
        fabric_state=g.get("fabric", "state"),
        fabric_status=g.get("fabric", "status"),
        reset_required=yes_no(g.get("gpu_reset_status", "reset_required")),
        drain_and_reset_recommended=yes_no(g.get("gpu_reset_status", "drain_and_reset_recommended")),
        process_count=(
            sum(1 for c in procs.children if c.key == "process_id") if procs is not None else None
        ),
    )


def parse_nvidia_smi_text(text: str, source: str = SOURCE) -> GpuInventory:
    """Parse ``nvidia-smi -q`` (or a ``-q -d SECTION`` excerpt) into a :class:`GpuInventory`.

    Raises :class:`ParseError` when the text has no NVSMI header and no GPU sections.
    """
    if not text or not text.strip():
        raise ParseError(source, "empty nvidia-smi -q output")
    header: dict[str, str] = {}
    sections: list[tuple[str, list[tuple[int, str]]]] = []
    for raw in text.splitlines():
        if not raw.strip() or raw.lstrip().startswith("====="):
            continue
        m = _GPU_HEADER.match(raw.rstrip())
        if m:
            sections.append((m.group(1), []))
            continue
        indent = len(raw) - len(raw.lstrip(" \t"))
        if sections and indent > 0:
            sections[-1][1].append((indent, raw.strip()))
        elif indent == 0 and ":" in raw:
            key, _, value = raw.partition(":")
            header[snake(key)] = value.strip()
            if sections:  # a top-level line after a GPU block ends it
                sections.append(("", []))
    sections = [s for s in sections if s[0]]
    if "driver_version" not in header and not sections:
        raise ParseError(source, "no 'Driver Version' header and no 'GPU <bus id>' sections")
    attached = integer(header.get("attached_gpus"))
    gpus = [_gpu(i, bus, _tree(lines)) for i, (bus, lines) in enumerate(sections)]
    if attached is not None and len(gpus) > attached:
        raise ParseError(source, f"{len(gpus)} GPU sections but 'Attached GPUs : {attached}'")
    return GpuInventory(
        source="nvidia-smi-text",
        driver_version=text_or_none(header.get("driver_version")),
        cuda_version=text_or_none(header.get("cuda_version")),
        attached_gpus=attached,
        gpus=gpus,
    )
