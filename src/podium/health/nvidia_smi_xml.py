"""Parser for ``nvidia-smi -q -x`` (all DTD versions seen: no DTD/old, v11, v12, v13, Windows WDDM)."""

from __future__ import annotations

import xml.etree.ElementTree as ET

from podium.errors import ParseError
from podium.health.models import GpuInfo, GpuInventory
from podium.health.values import integer, number, text_or_none, yes_no

SOURCE = "nvidia-smi -q -x"


def _t(el: ET.Element | None, *paths: str) -> str | None:
    """Text of the first path that exists under ``el`` (N/A -> None)."""
    if el is None:
        return None
    for p in paths:
        found = el.find(p)
        if found is not None and found.text is not None:
            v = text_or_none(found.text)
            if v is not None:
                return v
    return None


def _sum(el: ET.Element | None, *paths: str) -> int | None:
    """Sum of the integer values at ``paths``; None when none of them has a value."""
    values = [integer(_t(el, p)) for p in paths]
    present = [v for v in values if v is not None]
    return sum(present) if present else None


def _ecc(ecc: ET.Element | None, scope: str) -> tuple[int | None, int | None]:
    """(correctable, uncorrectable) for 'volatile' or 'aggregate', new (sram/dram) or old (bit) layout."""
    if ecc is None:
        return None, None
    corr = _sum(ecc, f"{scope}/sram_correctable", f"{scope}/dram_correctable")
    unc = _sum(
        ecc,
        f"{scope}/sram_uncorrectable",
        f"{scope}/sram_uncorrectable_parity",
        f"{scope}/sram_uncorrectable_secded",
        f"{scope}/dram_uncorrectable",
    )
    if corr is None and unc is None:  # pre-Ampere schema: single_bit/double_bit totals
        corr = integer(_t(ecc, f"{scope}/single_bit/total"))
        unc = integer(_t(ecc, f"{scope}/double_bit/total"))
    return corr, unc


def _throttle(gpu: ET.Element) -> dict[str, bool]:
    block = gpu.find("clocks_event_reasons")
    if block is None:
        block = gpu.find("clocks_throttle_reasons")
    out: dict[str, bool] = {}
    if block is None:
        return out
    for child in block:
        name = child.tag
        for prefix in ("clocks_event_reason_", "clocks_throttle_reason_"):
            if name.startswith(prefix):
                name = name[len(prefix) :]
        active = yes_no(child.text)
        if active is not None:
            out[name] = active
    return out


def _gpu(index: int, gpu: ET.Element) -> GpuInfo:
    ecc = gpu.find("ecc_errors")
    vol_c, vol_u = _ecc(ecc, "volatile")
    agg_c, agg_u = _ecc(ecc, "aggregate")
    power = gpu.find("gpu_power_readings")
    if power is None:
        power = gpu.find("power_readings")
    temp = gpu.find("temperature")
    link = gpu.find("pci/pci_gpu_link_info")
    procs = gpu.find("processes")
    remap = gpu.find("remapped_rows")
    return GpuInfo(
        index=index,
        bus_id=gpu.get("id"),
        name=_t(gpu, "product_name"),
        uuid=_t(gpu, "uuid"),
        serial=_t(gpu, "serial"),
        architecture=_t(gpu, "product_architecture"),
        persistence_mode=yes_no(_t(gpu, "persistence_mode")),
        mig_mode=_t(gpu, "mig_mode/current_mig"),
        ecc_mode=_t(gpu, "ecc_mode/current_ecc"),
        ecc_volatile_correctable=vol_c,
        ecc_volatile_uncorrectable=vol_u,
        ecc_aggregate_correctable=agg_c,
        ecc_aggregate_uncorrectable=agg_u,
        sram_threshold_exceeded=yes_no(
            _t(ecc, "aggregate/sram_threshold_exceeded", "sram_threshold_exceeded")
        ),
        retired_pages_sbe=integer(_t(gpu, "retired_pages/multiple_single_bit_retirement/retired_count")),
        retired_pages_dbe=integer(_t(gpu, "retired_pages/double_bit_retirement/retired_count")),
        retired_pages_pending=yes_no(
            _t(gpu, "retired_pages/pending_retirement", "retired_pages/pending_blacklist")
        ),
        remapped_rows_correctable=integer(_t(remap, "remapped_row_corr")),
        remapped_rows_uncorrectable=integer(_t(remap, "remapped_row_unc")),
        remap_pending=yes_no(_t(remap, "remapped_row_pending")),
        remap_failure=yes_no(_t(remap, "remapped_row_failure")),
        throttle_reasons=_throttle(gpu),
        temperature_c=number(_t(temp, "gpu_temp")),
        memory_temperature_c=number(_t(temp, "memory_temp")),
        slowdown_temperature_c=number(_t(temp, "gpu_temp_slow_threshold")),
        shutdown_temperature_c=number(_t(temp, "gpu_temp_max_threshold")),
        power_draw_w=number(_t(power, "power_draw", "instant_power_draw", "average_power_draw")),
        power_limit_w=number(_t(power, "current_power_limit", "enforced_power_limit", "power_limit")),
        utilization_gpu_pct=number(_t(gpu, "utilization/gpu_util")),
        sm_clock_mhz=number(_t(gpu, "clocks/sm_clock")),
        max_sm_clock_mhz=number(_t(gpu, "max_clocks/sm_clock")),
        pcie_gen_current=integer(_t(link, "pcie_gen/current_link_gen")),
        pcie_gen_max=integer(_t(link, "pcie_gen/max_link_gen")),
        pcie_width_current=integer(_t(link, "link_widths/current_link_width")),
        pcie_width_max=integer(_t(link, "link_widths/max_link_width")),
        fabric_state=_t(gpu, "fabric/state"),
        fabric_status=_t(gpu, "fabric/status"),
        reset_required=yes_no(_t(gpu, "gpu_reset_status/reset_required")),
        drain_and_reset_recommended=yes_no(_t(gpu, "gpu_reset_status/drain_and_reset_recommended")),
        process_count=len(procs.findall("process_info")) if procs is not None else None,
    )


def parse_nvidia_smi_xml(text: str, source: str = SOURCE) -> GpuInventory:
    """Parse ``nvidia-smi -q -x`` output into a :class:`GpuInventory`.

    Raises :class:`ParseError` on empty, truncated or non-nvidia-smi XML.
    """
    if not text or not text.strip():
        raise ParseError(source, "empty nvidia-smi XML output")
    try:
        root = ET.fromstring(text.encode("utf-8", "replace"))
    except ET.ParseError as e:
        raise ParseError(source, f"not well-formed XML ({e})") from None
    if root.tag != "nvidia_smi_log":
        raise ParseError(source, f"root element is <{root.tag}>, expected <nvidia_smi_log>")
    gpus = [_gpu(i, g) for i, g in enumerate(root.findall("gpu"))]
    attached = integer(_t(root, "attached_gpus"))
    if attached is None and not gpus:
        raise ParseError(source, "no <attached_gpus> and no <gpu> elements")
    return GpuInventory(
        source="nvidia-smi-xml",
        driver_version=_t(root, "driver_version"),
        cuda_version=_t(root, "cuda_version"),
        attached_gpus=attached,
        gpus=gpus,
    )
