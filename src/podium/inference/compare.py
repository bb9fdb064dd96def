"""``podium inference compare``: Pareto fronts per system and precision, values at a target
interactivity, and ratios between systems at equal interactivity.

A system is keyed by ``(hw, precision)`` and named by its ``hw``; when more than one precision
appears among the inputs, every name gets ``-<precision>`` so the chart says what is compared.
Cost is on the total-token basis (input + output), like InferenceX's default; the output-token
basis is given alongside.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from pathlib import Path

from pydantic import BaseModel, ConfigDict, Field

from podium.errors import UsageError
from podium.inference.metrics import SweepPoint, cost_per_million_tokens, tokens_per_megawatt
from podium.inference.pareto import FrontPoint, InterpolationMethod, interpolate, pareto_front
from podium.inference.system import EconomicsSource, resolve_economics

FORMULAS = {
    "cost_per_million_tokens": "USD per GPU-hour / (tokens per s per GPU x 3600 / 1e6)",
    "tokens_per_mw": "tokens per s per GPU x 1000 / all-in kW per GPU",
    "interactivity_inferencex": "1000 / median TPOT_ms (tok/s/user)",
    "interactivity_vllm": "output tokens per s / concurrency (tok/s/user)",
    "interpolation": "monotone cubic (Fritsch-Carlson PCHIP) along the Pareto front; no extrapolation",
}


class ComparePoint(BaseModel):
    """One point of a system's curve, on the chart axes."""

    model_config = ConfigDict(extra="forbid")

    interactivity: float
    throughput_per_gpu: float = Field(description="Total (input + output) tok/s per GPU")
    output_throughput_per_gpu: float
    cost_per_million_tokens: float | None = Field(None, description="USD per million total tokens")
    cost_per_million_output_tokens: float | None = None
    tokens_per_mw: float | None = Field(None, description="Total tok/s per all-in MW")
    concurrency: int
    source: str = Field(description="File the point came from")


class AtTarget(BaseModel):
    """Interpolated values at the target interactivity."""

    model_config = ConfigDict(extra="forbid")

    interactivity: float
    throughput_per_gpu: float
    cost_per_million_tokens: float | None
    tokens_per_mw: float | None = None
    method: str = Field(description="pchip | linear | exact")


class CompareSystem(BaseModel):
    """One system (hw + precision) in a comparison."""

    model_config = ConfigDict(extra="forbid")

    name: str
    hw: str
    precision: str
    models: list[str] = Field(default_factory=list)
    workloads: list[str] = Field(default_factory=list, description="ISL/OSL pairs seen, e.g. '1024/1024'")
    sources: list[str] = Field(default_factory=list)
    economics: EconomicsSource
    points: list[ComparePoint] = Field(default_factory=list, description="Every usable point")
    pareto: list[ComparePoint] = Field(default_factory=list, description="The front, by interactivity")
    at_target: AtTarget | None = None
    at_target_reason: str | None = Field(None, description="Why at_target is null")


class SystemRatio(BaseModel):
    """a ÷ b at the same interactivity."""

    model_config = ConfigDict(extra="forbid")

    a: str
    b: str
    interactivity: float
    throughput_per_gpu_ratio: float
    cost_per_million_tokens_ratio: float | None


class CompareReport(BaseModel):
    """Output of ``podium inference compare --json``."""

    model_config = ConfigDict(extra="forbid")

    target_interactivity: float | None
    interactivity_convention: str
    interpolation: str
    systems: list[CompareSystem]
    ratios: list[SystemRatio] = Field(default_factory=list)
    warnings: list[str] = Field(default_factory=list)
    formulas: dict[str, str] = Field(default_factory=lambda: dict(FORMULAS))


class _Series:
    def __init__(self, hw: str, precision: str):
        self.hw, self.precision = hw, precision
        self.points: list[tuple[SweepPoint, str]] = []
        self.models: set[str] = set()
        self.workloads: set[str] = set()
        self.sources: list[str] = []
        self.own_price: float | None = None
        self.own_power: float | None = None
        self.own_prices: set[float] = set()


def _parse_overrides(items: Iterable[str], flag: str) -> dict[str, float]:
    out: dict[str, float] = {}
    for item in items:
        name, sep, value = item.partition("=")
        try:
            number = float(value)
        except ValueError:
            number = -1.0
        if not sep or not name.strip() or number <= 0:
            raise UsageError(f"{flag} '{item}': expected SYSTEM=POSITIVE_NUMBER, e.g. b200=1.95")
        out[name.strip().lower()] = number
    return out


def parse_price_flags(items: Iterable[str]) -> dict[str, float]:
    """``--price SYSTEM=USD_PER_GPU_HOUR`` values (SYSTEM is a compare name or an hw)."""
    return _parse_overrides(items, "--price")


def parse_power_flags(items: Iterable[str]) -> dict[str, float]:
    """``--power SYSTEM=KW_PER_GPU`` values."""
    return _parse_overrides(items, "--power")


def _collect(paths: Iterable[str | Path]) -> tuple[dict[tuple[str, str], _Series], list[str]]:
    from podium.inference.inferencex import row_system, row_to_point
    from podium.inference.results import SweepResult, load_result_file

    series: dict[tuple[str, str], _Series] = {}
    warnings: list[str] = []
    for path in paths:
        kind, payload = load_result_file(path)
        entries: list[tuple[object, SweepPoint]] = []
        if kind == "sweep":
            assert isinstance(payload, SweepResult)
            entries = [(payload.system, pt) for pt in payload.points]
            systems = [payload.system]
            for note in payload.notes:
                warnings.append(f"{Path(path).name}: {note}")
        else:
            rows = payload  # list[InferenceXRow]
            systems = [row_system(r) for r in rows]  # type: ignore[union-attr]
            entries = [(s, row_to_point(r)) for s, r in zip(systems, rows, strict=True)]  # type: ignore[arg-type]
        for system, point in entries:
            key = (system.hw, system.precision)  # type: ignore[attr-defined]
            s = series.setdefault(key, _Series(*key))
            s.points.append((point, str(path)))
            s.models.add(system.model)  # type: ignore[attr-defined]
            s.workloads.add(f"{system.isl}/{system.osl}")  # type: ignore[attr-defined]
            if str(path) not in s.sources:
                s.sources.append(str(path))
            price = getattr(system, "price_usd_per_gpu_hour", None)
            if price is not None:
                s.own_prices.add(price)
                s.own_price = s.own_price if s.own_price is not None else price
            power = getattr(system, "power_kw_per_gpu", None)
            if power is not None and s.own_power is None:
                s.own_power = power
    for s in series.values():
        if len(s.own_prices) > 1:
            warnings.append(
                f"{s.hw} {s.precision}: result files carry different prices {sorted(s.own_prices)}; "
                f"using {s.own_price}"
            )
    return series, warnings


def _name(hw: str, precision: str, several_precisions: bool) -> str:
    return f"{hw}-{precision}" if several_precisions else hw


def compare_results(
    paths: Iterable[str | Path],
    target_interactivity: float | None = None,
    prices: Mapping[str, float] | None = None,
    powers: Mapping[str, float] | None = None,
    convention: str = "inferencex",
    method: InterpolationMethod = "pchip",
) -> CompareReport:
    """Load result files (podium sweeps and/or InferenceX rows) and compare their systems."""
    if convention not in ("inferencex", "vllm"):
        raise UsageError(f"--convention '{convention}': one of inferencex, vllm")
    if target_interactivity is not None and not target_interactivity > 0:
        raise UsageError("--target-interactivity must be a positive number of tok/s/user")
    prices = {k.lower(): v for k, v in (prices or {}).items()}
    powers = {k.lower(): v for k, v in (powers or {}).items()}
    series, warnings = _collect(paths)
    several = len({p for _, p in series}) > 1
    names = {key: _name(key[0], key[1], several) for key in series}
    known = set(names.values()) | {hw for hw, _ in series}
    for flag, given in (("--price", prices), ("--power", powers)):
        for unknown in sorted(set(given) - known):
            raise UsageError(f"{flag} {unknown}=...: no such system; systems are {', '.join(sorted(known))}")
    if len({w for s in series.values() for w in s.workloads}) > 1:
        warnings.append("inputs mix ISL/OSL workloads; throughput is only comparable within one workload")
    if len({m for s in series.values() for m in s.models}) > 1:
        warnings.append("inputs mix models; throughput is only comparable for the same model")

    systems: list[CompareSystem] = []
    for key in sorted(series):
        s = series[key]
        name = names[key]
        econ = resolve_economics(
            s.hw,
            system_price=s.own_price,
            system_power=s.own_power,
            flag_price=prices.get(name, prices.get(s.hw)),
            flag_power=powers.get(name, powers.get(s.hw)),
        )
        points: list[ComparePoint] = []
        for pt, src in s.points:
            x = pt.interactivity(convention)
            if x is None or not x > 0:
                warnings.append(
                    f"{name}: concurrency {pt.concurrency} from {src} has no interactivity; left out"
                )
                continue
            t = pt.throughput_per_gpu
            price, power = econ.price_usd_per_gpu_hour, econ.power_kw_per_gpu
            points.append(
                ComparePoint(
                    interactivity=x,
                    throughput_per_gpu=t.total,
                    output_throughput_per_gpu=t.output,
                    cost_per_million_tokens=cost_per_million_tokens(price, t.total) if price else None,
                    cost_per_million_output_tokens=cost_per_million_tokens(price, t.output)
                    if price
                    else None,
                    tokens_per_mw=tokens_per_megawatt(t.total, power) if power else None,
                    concurrency=pt.concurrency,
                    source=src,
                )
            )
        front = pareto_front([FrontPoint(p.interactivity, p.throughput_per_gpu, p) for p in points])
        system = CompareSystem(
            name=name,
            hw=s.hw,
            precision=s.precision,
            models=sorted(s.models),
            workloads=sorted(s.workloads),
            sources=s.sources,
            economics=econ,
            points=sorted(points, key=lambda p: (p.interactivity, p.throughput_per_gpu)),
            pareto=[fp.item for fp in front if fp.item is not None],
        )
        if target_interactivity is None:
            system.at_target_reason = "no --target-interactivity given"
        else:
            got = interpolate(front, target_interactivity, method)
            if got.y is None:
                system.at_target_reason = got.reason
            else:
                price, power = econ.price_usd_per_gpu_hour, econ.power_kw_per_gpu
                system.at_target = AtTarget(
                    interactivity=target_interactivity,
                    throughput_per_gpu=got.y,
                    cost_per_million_tokens=cost_per_million_tokens(price, got.y) if price else None,
                    tokens_per_mw=tokens_per_megawatt(got.y, power) if power else None,
                    method=got.method or method,
                )
                if price is None:
                    warnings.append(
                        f"{name}: no price known; give --price {name}=USD_PER_GPU_HOUR for $/M tokens"
                    )
        systems.append(system)

    ratios: list[SystemRatio] = []
    with_target = [s for s in systems if s.at_target is not None]
    for i, a in enumerate(with_target):
        for b in with_target[i + 1 :]:
            ta, tb = a.at_target, b.at_target
            assert ta is not None and tb is not None
            if tb.throughput_per_gpu <= 0:
                continue
            cost_ratio = None
            if ta.cost_per_million_tokens is not None and tb.cost_per_million_tokens:
                cost_ratio = ta.cost_per_million_tokens / tb.cost_per_million_tokens
            ratios.append(
                SystemRatio(
                    a=a.name,
                    b=b.name,
                    interactivity=ta.interactivity,
                    throughput_per_gpu_ratio=ta.throughput_per_gpu / tb.throughput_per_gpu,
                    cost_per_million_tokens_ratio=cost_ratio,
                )
            )
    return CompareReport(
        target_interactivity=target_interactivity,
        interactivity_convention=convention,
        interpolation=method,
        systems=systems,
        ratios=ratios,
        warnings=warnings,
    )
