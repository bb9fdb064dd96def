"""Passive GPU facts through NVML (``nvidia-ml-py``, the optional ``nvml`` extra), imported lazily."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from podium.health.models import GpuInfo, GpuInventory

# NVML clock event reason bits (nvml.h, nvmlClocksEventReason*)
_REASONS = {
    0x1: "gpu_idle",
    0x2: "applications_clocks_setting",
    0x4: "sw_power_cap",
    0x8: "hw_slowdown",
    0x10: "sync_boost",
    0x20: "sw_thermal_slowdown",
    0x40: "hw_thermal_slowdown",
    0x80: "hw_power_brake_slowdown",
    0x100: "display_clocks_setting",
}


def nvml_available() -> bool:
    try:
        import pynvml  # noqa: F401
    except ImportError:
        return False
    return True


def _safe(fn: Callable[[], Any]) -> Any:
    try:
        return fn()
    except Exception:  # NVMLError_NotSupported & co: the field is simply not known
        return None


def _s(v: Any) -> str | None:
    return v.decode() if isinstance(v, bytes) else (str(v) if v is not None else None)


def collect_nvml() -> GpuInventory | None:
    """GPU inventory from NVML, or None when NVML cannot be initialised (no driver / no GPU)."""
    import pynvml as n

    try:
        n.nvmlInit()
    except Exception:
        return None
    try:
        count = n.nvmlDeviceGetCount()
        gpus = []
        for i in range(count):
            h = n.nvmlDeviceGetHandleByIndex(i)
            reasons = _safe(lambda h=h: n.nvmlDeviceGetCurrentClocksEventReasons(h)) or _safe(
                lambda h=h: n.nvmlDeviceGetCurrentClocksThrottleReasons(h)
            )
            remap = _safe(lambda h=h: n.nvmlDeviceGetRemappedRows(h))  # (corr, unc, pending, failure)
            power = _safe(lambda h=h: n.nvmlDeviceGetPowerUsage(h))
            limit = _safe(lambda h=h: n.nvmlDeviceGetEnforcedPowerLimit(h))
            util = _safe(lambda h=h: n.nvmlDeviceGetUtilizationRates(h))
            mig = _safe(lambda h=h: n.nvmlDeviceGetMigMode(h))
            procs = _safe(lambda h=h: n.nvmlDeviceGetComputeRunningProcesses(h))
            pci = _safe(lambda h=h: n.nvmlDeviceGetPciInfo(h))
            fabric = _safe(lambda h=h: n.nvmlDeviceGetGpuFabricInfo(h))
            gpus.append(
                GpuInfo(
                    index=i,
                    bus_id=_s(pci.busId) if pci is not None else None,
                    name=_s(_safe(lambda h=h: n.nvmlDeviceGetName(h))),
                    uuid=_s(_safe(lambda h=h: n.nvmlDeviceGetUUID(h))),
                    serial=_s(_safe(lambda h=h: n.nvmlDeviceGetSerial(h))),
                    persistence_mode=_safe(lambda h=h: n.nvmlDeviceGetPersistenceMode(h) == 1),
                    mig_mode=("Enabled" if mig[0] == 1 else "Disabled") if mig else None,
                    ecc_volatile_uncorrectable=_safe(
                        lambda h=h: n.nvmlDeviceGetTotalEccErrors(
                            h, n.NVML_MEMORY_ERROR_TYPE_UNCORRECTED, n.NVML_VOLATILE_ECC
                        )
                    ),
                    ecc_volatile_correctable=_safe(
                        lambda h=h: n.nvmlDeviceGetTotalEccErrors(
                            h, n.NVML_MEMORY_ERROR_TYPE_CORRECTED, n.NVML_VOLATILE_ECC
                        )
                    ),
                    ecc_aggregate_uncorrectable=_safe(
                        lambda h=h: n.nvmlDeviceGetTotalEccErrors(
                            h, n.NVML_MEMORY_ERROR_TYPE_UNCORRECTED, n.NVML_AGGREGATE_ECC
                        )
                    ),
                    ecc_aggregate_correctable=_safe(
                        lambda h=h: n.nvmlDeviceGetTotalEccErrors(
                            h, n.NVML_MEMORY_ERROR_TYPE_CORRECTED, n.NVML_AGGREGATE_ECC
                        )
                    ),
                    remapped_rows_correctable=remap[0] if remap else None,
                    remapped_rows_uncorrectable=remap[1] if remap else None,
                    remap_pending=bool(remap[2]) if remap else None,
                    remap_failure=bool(remap[3]) if remap else None,
                    throttle_reasons={name: bool(reasons & bit) for bit, name in _REASONS.items()}
                    if reasons is not None
                    else {},
                    temperature_c=_safe(
                        lambda h=h: float(n.nvmlDeviceGetTemperature(h, n.NVML_TEMPERATURE_GPU))
                    ),
                    slowdown_temperature_c=_safe(
                        lambda h=h: float(
                            n.nvmlDeviceGetTemperatureThreshold(h, n.NVML_TEMPERATURE_THRESHOLD_SLOWDOWN)
                        )
                    ),
                    power_draw_w=power / 1000.0 if power is not None else None,
                    power_limit_w=limit / 1000.0 if limit is not None else None,
                    utilization_gpu_pct=float(util.gpu) if util is not None else None,
                    sm_clock_mhz=_safe(lambda h=h: float(n.nvmlDeviceGetClockInfo(h, n.NVML_CLOCK_SM))),
                    max_sm_clock_mhz=_safe(
                        lambda h=h: float(n.nvmlDeviceGetMaxClockInfo(h, n.NVML_CLOCK_SM))
                    ),
                    pcie_gen_current=_safe(lambda h=h: n.nvmlDeviceGetCurrPcieLinkGeneration(h)),
                    pcie_gen_max=_safe(lambda h=h: n.nvmlDeviceGetMaxPcieLinkGeneration(h)),
                    pcie_width_current=_safe(lambda h=h: n.nvmlDeviceGetCurrPcieLinkWidth(h)),
                    pcie_width_max=_safe(lambda h=h: n.nvmlDeviceGetMaxPcieLinkWidth(h)),
                    fabric_state={0: "Not Supported", 1: "Not Started", 2: "In Progress", 3: "Completed"}.get(
                        getattr(fabric, "state", None)
                    )
                    if fabric is not None and getattr(fabric, "state", 0) != 0
                    else None,
                    fabric_status=("Success" if getattr(fabric, "status", 1) == 0 else "Failure")
                    if fabric is not None and getattr(fabric, "state", 0) != 0
                    else None,
                    process_count=len(procs) if procs is not None else None,
                )
            )
        return GpuInventory(
            source="nvml",
            driver_version=_s(_safe(n.nvmlSystemGetDriverVersion)),
            cuda_version=None,
            attached_gpus=count,
            gpus=gpus,
        )
    finally:
        _safe(n.nvmlShutdown)
