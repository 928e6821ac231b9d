"""The record kinds. Each is a pydantic model: the envelope plus the kind's body.

Field names follow our users' words (contract, allocation, sandwich, decision, owed).
Derived summary numbers (n, min, median, max, IQR) are computed from raw samples when
samples are given, and refused when they contradict them.
"""

from __future__ import annotations

import math
from typing import Annotated, Any, ClassVar, Literal

from pydantic import AfterValidator, Field, StringConstraints, model_validator

from .envelope import Envelope, Finite, Model, NonNegative, RecordId, Slug
from .readings import ClockReading, PercentReading, PowerReading, TemperatureReading

Outcome = Literal["ok", "oom", "failed"]


def _recipe_path(value: str) -> str:
    if value.startswith(("/", ":", "!")) or ".." in value.split("/") or "\\" in value:
        raise ValueError(
            f"{value!r} must be a relative path or glob inside the measured repository "
            "(no leading / : or !, no .. and no backslash)"
        )
    return value


#: A path or glob inside the measured repository (git's glob pathspec: `*` stays within a
#: folder, `**` crosses folders, a folder names everything under it).
RecipePath = Annotated[
    str, StringConstraints(min_length=1, max_length=300, pattern=r"^[^\x00\n\r]+$"), AfterValidator(_recipe_path)
]
#: The decision family a measurement, sandwich or hypothesis belongs to (a decision's `family`).
FamilyRef = Annotated[str, StringConstraints(min_length=1, max_length=500)]
Health = Literal["healthy", "degraded", "unknown"]


ParameterValue = int | float | str


class SweptParameter(Model):
    """A parameter a contract sweeps, and the base value speedup and efficiency are measured against."""

    name: Slug = Field(..., description="e.g. `threads`, `batch`, `seq_len`.")
    unit: str | None = Field(None, description="e.g. `threads`, `tokens`.")
    base: ParameterValue | None = Field(
        None, description="The base value ratios are taken against (default: the smallest value measured)."
    )
    ideal: Literal["linear", "none"] = Field(
        "none",
        description="`linear` when the ideal speedup is value / base (workers, threads, GPUs): efficiency "
        "is then speedup / (value / base). `none`: no efficiency is computed.",
    )
    values: list[ParameterValue] = Field(default_factory=list, description="The values planned, in order.")


FAMILY_DOC = (
    "The decision family this belongs to (a decision's `family`, e.g. `max-autotune`). A new record in a "
    "family whose latest decision is rejected is flagged unless it states a `mechanism` that decision did not try."
)
MECHANISM_DOC = "The mechanism this tries: what makes it different from what was tried before."


class Contract(Envelope):
    """What must match for two numbers to be comparable. Comparisons across contracts are refused."""

    KIND: ClassVar[str] = "contract"
    UNIQUE_KEYS: ClassVar[tuple[str, ...]] = ("name",)
    SUMMARY_FIELD: ClassVar[str] = "name"
    kind: Literal["contract"] = "contract"

    name: Slug = Field(..., description="Unique name of the contract, e.g. `ltx2-t2v-fp32master-81x480x832`.")
    model: str = Field(..., min_length=1, description="What is measured: a model, a kernel, a command.")
    param_precision: str | None = Field(None, description="Precision of registered/master parameters, e.g. fp32.")
    optimizer_state_precision: str | None = Field(
        None, description="Precision of optimizer state, e.g. fp32 Adam moments."
    )
    compute_precision: str | None = Field(None, description="Working compute precision, e.g. bf16.")
    reduction_precision: str | None = None
    shape: dict[str, int | float | str] = Field(
        default_factory=dict, description="Input shape: frames, height, width, tokens, batch..."
    )
    attention: str | None = Field(None, description="Attention implementation, e.g. `FA4 dense`.")
    compile: str | None = Field(None, description="Compile mode, e.g. `regional`.")
    checkpointing: str | None = Field(None, description="Activation checkpointing, e.g. `none`.")
    warmup_steps: int | None = Field(None, ge=0)
    measured_steps: int | None = Field(None, ge=1)
    statistic: Literal["median", "mean", "min"] = "median"
    rank_reduction: Literal["slowest-rank", "mean-rank", "rank0", "single"] = "slowest-rank"
    extra: dict[str, str] = Field(default_factory=dict)
    description: str | None = None
    sweep: list[SweptParameter] = Field(
        default_factory=list,
        description="Parameters this contract sweeps (threads, batch, sequence length...): measurements "
        "under it carry their values in `parameters`, and differ only in them.",
    )

    @model_validator(mode="after")
    def _sweep_names(self) -> Contract:
        names = [p.name for p in self.sweep]
        if len(names) != len(set(names)):
            raise ValueError(f"sweep names a parameter twice: {names}")
        return self

    recipe_paths: list[RecipePath] = Field(
        default_factory=list,
        description="Files or globs in the measured repository that define the recipe (`src/model/**`, "
        "`runners/run_current.sh`). When the measured source moves and the change touches them, the "
        "stopping point is re-gate owed; without any, every change of the measured source counts.",
    )


_RANGE_DOC = "; a range [LOW, HIGH] (or text such as `{example}`) when a report states one"


class GpuState(Model):
    index: int = Field(..., ge=0)
    name: str
    uuid: str | None = None
    sm_clock_mhz: ClockReading | None = Field(
        None, description="SM clock, MHz" + _RANGE_DOC.format(example="1.4-1.8 GHz") + "."
    )
    sm_clock_max_mhz: NonNegative | None = Field(
        None, description="The device's maximum SM clock, MHz: its clock bin (2062 or 1965 on GB200)."
    )
    mem_clock_mhz: ClockReading | None = Field(
        None, description="Memory clock, MHz" + _RANGE_DOC.format(example="2619") + "."
    )
    mem_clock_max_mhz: NonNegative | None = None
    power_draw_w: PowerReading | None = Field(
        None, description="Power draw, W" + _RANGE_DOC.format(example="0.91-1.17 kW") + "."
    )
    power_limit_w: NonNegative | None = None
    power_default_limit_w: NonNegative | None = None
    temperature_c: TemperatureReading | None = Field(
        None, description="Temperature, degrees C" + _RANGE_DOC.format(example="55-71") + "."
    )
    clock_event_reasons: list[str] = Field(default_factory=list)
    ecc_errors_corrected: int | None = Field(None, ge=0)
    ecc_errors_uncorrected: int | None = Field(None, ge=0)
    memory_total_bytes: int | None = Field(None, ge=0)
    utilization_percent: PercentReading | None = Field(
        None, description="GPU utilization, percent" + _RANGE_DOC.format(example="97-100") + "."
    )


class HealthVerdict(Model):
    verdict: Health = "unknown"
    reasons: list[str] = Field(default_factory=list)


class GpuSeries(Model):
    index: int = Field(..., ge=0)
    samples: int = Field(..., ge=0)
    busy_samples: int = Field(0, ge=0, description="Samples in which the GPU was not idle (the ones judged).")
    sm_clock_min_mhz: NonNegative | None = None
    sm_clock_median_mhz: NonNegative | None = None
    sm_clock_max_mhz: NonNegative | None = None
    power_min_w: NonNegative | None = None
    power_median_w: NonNegative | None = None
    power_max_w: NonNegative | None = None
    clock_event_reasons: dict[str, int] = Field(
        default_factory=dict, description="How many judged samples showed each clock-event reason."
    )
    degraded_samples: int = Field(0, ge=0, description="Judged samples the health rule calls degraded on their own.")


class LoadSeries(Model):
    samples: int = Field(..., ge=0)
    seconds: NonNegative = 0.0
    rule: str | None = None
    gpus: list[GpuSeries] = Field(default_factory=list)


class Environment(Envelope):
    """The machine at measurement time: GPUs, clocks, power, throttling, versions, flags, load."""

    KIND: ClassVar[str] = "environment"
    SUMMARY_FIELD: ClassVar[str] = "hostname"
    kind: Literal["environment"] = "environment"

    hostname: str | None = None
    gpus: list[GpuState] = Field(default_factory=list)
    no_gpu_reason: str | None = Field(None, description="Why no GPU was recorded (no driver, no device...).")
    driver: str | None = None
    cuda: str | None = None
    cudnn: str | None = None
    nccl: str | None = None
    torch: str | None = None
    triton: str | None = None
    flash_attn: str | None = None
    python: str | None = None
    env_flags: dict[str, str] = Field(
        default_factory=dict, description="Allowlisted performance-relevant environment variables."
    )
    load_avg: list[NonNegative] = Field(
        default_factory=list,
        max_length=3,
        description="The 1-, 5- and 15-minute load averages when the environment was read (`uptime`).",
    )
    cpu_count: int | None = Field(None, ge=1)
    work_cores: NonNegative | None = Field(
        None,
        description="Cores the measured work itself kept busy while `load_avg` was read (its threads): the rest "
        "of the load is contention, judged by baseline-eligibility's `max_load_per_core`.",
    )
    cpu_model: str | None = None
    under_load: bool | None = Field(
        None,
        description="True when the GPUs were sampled while busy with the measured work (clocks are judged only then).",
    )
    health: HealthVerdict = Field(default_factory=HealthVerdict)
    load_series: LoadSeries | None = Field(
        None,
        description="NVML readings taken through the measured work: `gpus` are then their per-GPU medians, "
        "and `health` is judged from those.",
    )


class Ceiling(Envelope):
    """Measured matmul and copy rates of a device: the positive control beside measurements."""

    KIND: ClassVar[str] = "ceiling"
    REFERENCE_FIELDS: ClassVar[tuple[str, ...]] = ("environment",)
    SUMMARY_FIELD: ClassVar[str] = "device"
    kind: Literal["ceiling"] = "ceiling"

    device: str
    environment: RecordId | None = None
    matmul_tflops: NonNegative | None = None
    matmul_dtype: str | None = None
    matmul_shape: list[int] = Field(default_factory=list)
    copy_tbps: NonNegative | None = None
    copy_bytes: int | None = Field(None, ge=0)
    samples: dict[str, list[NonNegative]] = Field(default_factory=dict)


class PeakConvention(Model):
    name: str = Field(..., description="e.g. `house-2450` or `vendor-dense-bf16`.")
    tflops_per_gpu: NonNegative = Field(..., description="Denominator of MFU, TFLOP/s per GPU.")
    vendor_tflops_per_gpu: NonNegative | None = None
    note: str | None = None


class FlopAudit(Envelope):
    """The MFU numerator, audited: analytic count == FlopCounterMode count + itemised terms."""

    KIND: ClassVar[str] = "flop-audit"
    REFERENCE_FIELDS: ClassVar[tuple[str, ...]] = ("contract",)
    SUMMARY_FIELD: ClassVar[str] = "flop_per_sample"
    kind: Literal["flop-audit"] = "flop-audit"

    contract: RecordId | None = None
    flop_per_sample: int = Field(..., gt=0, description="The MFU numerator: model FLOP per sample.")
    derivation: str = Field(..., min_length=1, description="How the count was derived.")
    counted_flop_per_sample: int | None = Field(None, ge=0, description="FlopCounterMode total for one sample.")
    itemised: dict[str, int] = Field(
        default_factory=dict, description="Terms explaining analytic minus counted (e.g. flash-attn ops)."
    )
    peak: PeakConvention
    peaks: list[PeakConvention] = Field(default_factory=list, description="Other conventions reported beside `peak`.")

    @model_validator(mode="after")
    def _reconciles(self) -> FlopAudit:
        if self.counted_flop_per_sample is not None:
            explained = self.counted_flop_per_sample + sum(self.itemised.values())
            if explained != self.flop_per_sample:
                raise ValueError(
                    f"counted_flop_per_sample + itemised = {explained:,} but flop_per_sample = "
                    f"{self.flop_per_sample:,}: the audit does not reconcile; itemise the difference "
                    f"({self.flop_per_sample - explained:+,})"
                )
        return self

    @property
    def exact(self) -> bool:
        return self.counted_flop_per_sample is not None and not self.itemised


class Rate(Model):
    """A rate the measurement achieved: a value and its unit (tokens/s, frames/s, GFLOP/s...)."""

    value: NonNegative
    unit: str = Field(..., min_length=1, description="e.g. `tokens/s`, `frames/s`, `GFLOP/s`.")
    what: str | None = Field(None, description="What is counted, e.g. `decoded frames`, `output tokens`.")


class NamedPeak(Model):
    """A named peak FLOP rate of the whole device(s) measured: a CPU box or GPUs."""

    name: str = Field(..., min_length=1, description="e.g. `20-core AVX2 fp32 FMA peak`, `house-2450`.")
    gflops: NonNegative = Field(..., gt=0, description="The peak, GFLOP/s, for everything the measurement used.")
    device: Literal["cpu", "gpu", "other"] = "other"
    note: str | None = None


class Measurement(Envelope):
    """One measured configuration: raw per-step samples after warmup and what follows from them."""

    KIND: ClassVar[str] = "measurement"
    REFERENCE_FIELDS: ClassVar[tuple[str, ...]] = ("contract", "environment", "flop_audit", "ceiling")
    SUMMARY_FIELD: ClassVar[str] = "metric"
    kind: Literal["measurement"] = "measurement"

    contract: RecordId | None = Field(None, description="The contract this was measured under.")
    environment: RecordId | None = None
    flop_audit: RecordId | None = None
    ceiling: RecordId | None = None
    metric: str = Field("step_time", description="What was measured.")
    unit: str = "s"
    lower_is_better: bool = True
    samples: list[NonNegative] = Field(
        default_factory=list, description="Raw per-step values after warmup (slowest rank per step)."
    )
    warmup_steps: int | None = Field(None, ge=0)
    statistic: Literal["median", "mean", "min", "olympic-average"] = Field(
        "median",
        description="The headline figure: the median of the samples, or their mean, minimum, or MLPerf's "
        "olympic average (the samples are the runs kept after dropping the fastest and the slowest; "
        "the headline is `score` when set, else their mean).",
    )
    score: NonNegative | None = Field(
        None,
        description="The headline when a tool scores the result by its own rule rather than as a statistic of "
        "the samples: MLPerf's score of a result set (the olympic average times the review committee's scaling "
        "factor; a weak-scaling set's models per minute). `extra.decimals.score` gives its published digits.",
    )
    n: int | None = Field(None, ge=0)
    min: NonNegative | None = None
    median: NonNegative | None = None
    max: NonNegative | None = None
    iqr: NonNegative | None = None
    world_size: int | None = Field(None, ge=1)
    local_batch: int | None = Field(None, ge=1)
    grad_accum: int | None = Field(None, ge=1)
    global_batch: int | None = Field(None, ge=1)
    throughput: NonNegative | None = None
    throughput_unit: str | None = Field(
        "samples/s", description="Unit of `throughput`; samples/s for training records, else unset unless given."
    )
    mfu_percent: NonNegative | None = None
    peak_convention: str | None = None
    mfu_vs_ceiling_percent: NonNegative | None = None
    peak_allocated_bytes: int | None = Field(None, ge=0)
    peak_reserved_bytes: int | None = Field(None, ge=0)
    outcome: Outcome = "ok"
    health: Health = "unknown"
    health_reasons: list[str] = Field(default_factory=list)
    comparable: bool = Field(
        True, description="False for runs kept as diagnostics that must not be compared to the contract."
    )
    non_comparable_reason: str | None = None
    command: str | None = None
    notes: str | None = None
    parameters: dict[str, ParameterValue] = Field(
        default_factory=dict, description="Values of the contract's swept parameters, e.g. {threads: 16}."
    )
    sweep_order: list[Literal["ascending", "descending", "interleaved", "random"]] = Field(
        default_factory=list,
        description="The order the sweep's values were run in, e.g. [ascending, descending]: runs taken both "
        "ways show an ordering drift as spread instead of hiding it in a trend.",
    )
    percentiles: dict[str, NonNegative] = Field(
        default_factory=dict,
        description="Latency percentiles in `unit`, keyed p50, p90, p99, p99.9 (from the samples when given).",
    )
    rates: list[Rate] = Field(
        default_factory=list,
        description="Rates of any campaign: tokens/s, frames/s, GFLOP/s, requests/s (beside `throughput`).",
    )
    flop: NonNegative | None = Field(
        None, description="FLOP of one measured unit of work (e.g. one decode); FLOP/s = flop / median."
    )
    peak_flops: NamedPeak | None = Field(
        None, description="The named peak FLOP-based utilisation is taken against (CPU or GPU)."
    )
    family: FamilyRef | None = Field(None, description=FAMILY_DOC)
    mechanism: str | None = Field(None, description=MECHANISM_DOC)
    extra: dict[str, Any] = Field(default_factory=dict)

    @model_validator(mode="before")
    @classmethod
    def _fill_summary(cls, data: Any) -> Any:
        # Summaries are derived from samples so they can never drift from them.
        if not isinstance(data, dict):
            return data
        if "throughput_unit" not in data and not (data.get("global_batch") or data.get("local_batch")):
            # Not a training step: no samples/s unless the record says so (tokens/s, frames/s go in `rates`).
            data = {**data, "throughput_unit": None}
        samples = data.get("samples")
        # Only plain finite non-negative numbers are summarised; anything else is left
        # for the field validators to report at its own index.
        if not samples or not isinstance(samples, list) or not set(map(type, samples)) <= _NUMBERS:
            return data
        ordered = sorted(samples)
        if ordered[0] < 0 or not math.isfinite(math.fsum(ordered)):
            return data
        derived = summarize(ordered, presorted=True)
        for key, value in derived.items():
            given = data.get(key)
            if given is None:
                data = {**data, key: value}
            elif not _close(given, value):
                raise ValueError(
                    f"{key} = {given} contradicts the samples, which give {value}; omit it and ledger derives it"
                )
        return data

    @model_validator(mode="after")
    def _consistent(self) -> Measurement:
        if self.outcome == "ok" and self.median is None and not self.samples and (self.min is None or self.max is None):
            raise ValueError(
                "an ok measurement needs samples, a median, or a min and max; an OOM or failed run sets outcome"
            )
        if self.outcome != "ok" and self.samples:
            raise ValueError(f"outcome {self.outcome!r} means no valid step, but samples were given")
        if not self.comparable and not self.non_comparable_reason:
            raise ValueError("comparable is false: say why in non_comparable_reason")
        return self

    @property
    def baseline_eligible(self) -> bool:
        """A degraded, failed or non-comparable run never becomes a baseline."""
        return self.outcome == "ok" and self.health != "degraded" and self.comparable

    def summary(self) -> str:
        if self.title:
            return self.title
        if self.outcome != "ok":
            return f"{self.metric}: {self.outcome}"
        value = self.headline
        return f"{self.metric} {self.headline_label} {value:g} {self.unit}" if value is not None else self.metric

    @property
    def headline_field(self) -> str:
        """The field the headline is quoted as (its digits: `extra.decimals[field]`)."""
        return "score" if self.score is not None else "median"

    @property
    def headline_label(self) -> str:
        """What the headline is: the statistic, or `score` for a tool's score of one value."""
        return "score" if self.score is not None and self.statistic == "median" else self.statistic

    @property
    def headline(self) -> float | None:
        """The tool's `score` when it has one; else the value `statistic` names: the mean of the
        samples for mean and olympic-average, their minimum for min, else the median."""
        if self.score is not None:
            return self.score
        if self.statistic in ("mean", "olympic-average") and self.samples:
            return math.fsum(self.samples) / len(self.samples)
        if self.statistic == "min" and self.min is not None:
            return self.min
        return self.median


_NUMBERS = frozenset({int, float})


def summarize(samples: list[float], *, presorted: bool = False) -> dict[str, float | int]:
    """n, min, median, max and IQR of raw samples (quartiles by the inclusive method).

    The arithmetic is `statistics.median` and `statistics.quantiles(method="inclusive")`'s,
    written out because the checker runs it for every record and the module's generality
    cost more than the rest of a record's validation.
    """
    x = [float(s) for s in samples] if presorted else sorted(float(s) for s in samples)
    n = len(x)
    half = n // 2
    median = x[half] if n % 2 else (x[half - 1] + x[half]) / 2
    if n >= 2:
        m = n - 1
        quartiles = []
        for i in (1, 3):
            j, delta = divmod(i * m, 4)
            quartiles.append((x[j] * (4 - delta) + x[j + 1] * delta) / 4 if delta else x[j])
        iqr = quartiles[1] - quartiles[0]
    else:
        iqr = 0.0
    return {"n": n, "min": x[0], "median": median, "max": x[-1], "iqr": iqr}


def _close(a: Any, b: float) -> bool:
    try:
        return abs(float(a) - float(b)) <= 1e-9 * max(1.0, abs(float(b)))
    except (TypeError, ValueError):
        return False


SandwichVerdict = Literal["faster", "slower", "neutral"]


class Sandwich(Envelope):
    """A, candidate, B (a second run of A) on one allocation, and the verdict."""

    KIND: ClassVar[str] = "sandwich"
    REFERENCE_FIELDS: ClassVar[tuple[str, ...]] = ("contract", "control_a", "candidate", "control_b")
    SUMMARY_FIELD: ClassVar[str] = "verdict"
    kind: Literal["sandwich"] = "sandwich"

    contract: RecordId | None = None
    control_a: RecordId | None = Field(None, description="Measurement id of arm A.")
    candidate: RecordId | None = Field(None, description="Measurement id of the candidate arm.")
    control_b: RecordId | None = Field(None, description="Measurement id of arm B (A again).")
    candidate_label: str | None = Field(None, description="What the candidate changes, e.g. a commit or env flags.")
    metric: str = "step_time"
    unit: str = "s"
    lower_is_better: bool = True
    rounds: int = Field(1, ge=1)
    a_value: NonNegative
    candidate_value: NonNegative
    b_value: NonNegative | None = Field(
        None,
        description="B's value. Absent when B was not run: then the record is a pair (A against the "
        "candidate), its midpoint is A and its drift is not measured.",
    )
    midpoint: NonNegative
    delta: Finite = Field(..., description="candidate - midpoint, in `unit`.")
    delta_percent: Finite
    drift_percent: NonNegative | None = Field(
        None, description="|A - B| / midpoint, percent; absent exactly when `b_value` is (a pair)."
    )
    drift_vs_a_percent: NonNegative | None = Field(
        None,
        description="|A - B| / A, percent: the control drift against arm A, as some campaigns state it "
        "(beside `drift_percent`, against the midpoint; checked against the arms when given).",
    )
    floor_percent: NonNegative = Field(..., description="The smallest |delta| that counts, percent.")
    verdict: SandwichVerdict
    extra_deltas: dict[str, Finite] = Field(default_factory=dict, description="e.g. `mfu_points`.")
    regate: bool = Field(
        False,
        description="True when the candidate is the measured source moved to a newer commit (this record's "
        "`source`) and the controls are the contract's recipe: a neutral re-gate carries the stopping point "
        "forward to that commit.",
    )
    family: FamilyRef | None = Field(None, description=FAMILY_DOC)
    mechanism: str | None = Field(None, description=MECHANISM_DOC)

    @property
    def is_pair(self) -> bool:
        """True when B was not run: A against the candidate, the drift not measured."""
        return self.b_value is None

    @model_validator(mode="after")
    def _pair_or_sandwich(self) -> Sandwich:
        if self.b_value is None:
            present = [n for n in ("drift_percent", "drift_vs_a_percent", "control_b") if getattr(self, n) is not None]
            if present:
                raise ValueError(
                    f"{', '.join(present)} given without b_value: a record without B is a pair, whose drift is "
                    "not measured; give b_value (B's value), or leave these out"
                )
        elif self.drift_percent is None:
            raise ValueError("b_value is given but drift_percent is not: give |A - B| / midpoint, percent")
        return self


class AllocationClass(Model):
    """A class of allocation: its topology, and whether it must be healthy."""

    topology: str = Field(..., min_length=1, description="e.g. `8x GB200`, as allocations' `topology`.")
    health: Literal["healthy", "any"] = Field(
        "healthy", description="healthy: its environment and health records make it baseline-eligible."
    )


DecisionVerdict = Literal["accepted", "rejected", "timing-neutral", "research", "planned", "blocked"]


class Decision(Envelope):
    """A decision about a family of changes, pointing at its evidence."""

    KIND: ClassVar[str] = "decision"
    REFERENCE_FIELDS: ClassVar[tuple[str, ...]] = ("evidence",)
    SUMMARY_FIELD: ClassVar[str] = "family"
    kind: Literal["decision"] = "decision"

    family: str = Field(..., min_length=1)
    verdict: DecisionVerdict
    qualifier: str | None = Field(None, description="e.g. `largest practical wins`, `topology sensitive`.")
    mechanism: str | None = None
    tried: list[str] = Field(
        default_factory=list,
        description="Mechanisms this decision tried, beside `mechanism` (a rejected family is not "
        "repeated without a mechanism outside these).",
    )
    where_to_continue: str | None = None
    evidence: list[RecordId] = Field(default_factory=list)
    pending_on: AllocationClass | None = Field(
        None,
        description="The class of allocation the decision still waits for (e.g. a healthy-class `8x GB200`): "
        "shown as pending until a measurement or sandwich of the family exists on that class.",
    )


class Hypothesis(Envelope):
    """A claim under test. A refuted hypothesis stays in the ledger so nobody reaches it again."""

    KIND: ClassVar[str] = "hypothesis"
    REFERENCE_FIELDS: ClassVar[tuple[str, ...]] = ("evidence",)
    SUMMARY_FIELD: ClassVar[str] = "statement"
    kind: Literal["hypothesis"] = "hypothesis"

    statement: str = Field(..., min_length=1)
    status: Literal["open", "supported", "refuted", "unverified"] = "open"
    evidence: list[RecordId] = Field(default_factory=list)
    settled_by: str | None = Field(None, description="The probe or trace that would settle it.")
    owner: str | None = None
    family: FamilyRef | None = Field(None, description=FAMILY_DOC)
    mechanism: str | None = Field(None, description=MECHANISM_DOC)


class Margin(Model):
    """A golden's distance from its reference against the tolerance it is held to: a gate that
    passes says how close it came (the decode's worst golden sat at 56% of tolerance)."""

    name: str = Field(..., min_length=1, description="The golden or case, e.g. `Conv video decoder`.")
    value: NonNegative = Field(..., description="The measured difference, e.g. max|diff| 1.72853e-06.")
    tolerance: float = Field(..., gt=0, description="What the case allows, e.g. 5e-06.")

    @property
    def fraction(self) -> float:
        return self.value / self.tolerance


class Gate(Envelope):
    """A test run: exit code, counts, skips, and the machine's load while it ran. A positive
    control or an armed check (a grep run on a synthetic line holding the message, a checker on
    a commit it must refuse) is a gate that must fail: `expect: fail`."""

    KIND: ClassVar[str] = "gate"
    SUMMARY_FIELD: ClassVar[str] = "command"
    kind: Literal["gate"] = "gate"

    command: str | None = None
    exit_code: int | None = None
    executed: int = Field(0, ge=0, description="Tests that ran (passed + failed + errors).")
    passed: int = Field(0, ge=0)
    failed: int = Field(0, ge=0)
    errors: int = Field(0, ge=0)
    skipped: int = Field(0, ge=0)
    skipped_names: list[str] = Field(default_factory=list)
    duration_s: NonNegative | None = None
    load_avg: list[NonNegative] = Field(
        default_factory=list,
        description="The machine's load average while the gate ran: the 1-, 5- and 15-minute figures "
        "`uptime` prints, or readings taken across the run (lowest to highest, e.g. [4.70, 15.88]).",
    )
    cpu_count: int | None = Field(
        None, ge=1, description="Cores of the machine the gate ran on: a load of 82-94 means little without them."
    )
    format: str | None = Field(None, description="junit, ctest, ...")
    outcome: Literal["pass", "fail", "no-tests"]
    failed_names: list[str] = Field(default_factory=list, description="Tests that failed or errored.")
    exit_code_only: bool = Field(
        False,
        description="True for a gate whose only evidence is its exit code (a build, a script, a grep): it "
        "passes with exit code 0 and no test counts.",
    )
    expect: Literal["pass", "fail"] = Field(
        "pass",
        description="`fail` for a positive control or an armed check: its failing is the expected result, "
        "and a pass says the check is not armed (owed work in `ledger status`).",
    )
    margins: list[Margin] = Field(
        default_factory=list,
        description="Goldens against their tolerance: `[{name, value, tolerance}]`, shown as a share of it.",
    )
    extra: dict[str, Any] = Field(default_factory=dict, description="Importer details, e.g. provenance_gaps.")

    @property
    def as_expected(self) -> bool:
        """Whether the outcome is the one the gate must have: pass, or fail for an armed check."""
        return self.outcome == self.expect

    @model_validator(mode="after")
    def _honest(self) -> Gate:
        if self.executed != self.passed + self.failed + self.errors:
            raise ValueError(
                f"executed = {self.executed} but passed + failed + errors = {self.passed + self.failed + self.errors}"
            )
        if self.outcome == "pass" and self.executed == 0 and not self.exit_code_only:
            raise ValueError(
                "a gate that executed no test is outcome no-tests, never pass; a gate that only has an exit "
                "code (a build, a script) sets exit_code_only: true and exit_code: 0"
            )
        if self.exit_code_only and (self.exit_code is None or self.executed):
            raise ValueError("exit_code_only needs exit_code and no test counts: its verdict is the exit code alone")
        if self.outcome == "pass" and (self.failed or self.errors or (self.exit_code not in (None, 0))):
            raise ValueError("outcome pass with failures or a non-zero exit code")
        over = [m.name for m in self.margins if m.value > m.tolerance]
        if over and self.outcome == "pass" and self.expect == "pass":
            raise ValueError(f"outcome pass with margins over their tolerance ({', '.join(over)}): such a gate failed")
        return self


class Mutation(Envelope):
    """A deliberate defect and whether the gate caught it: built, exit code, detected by. One
    that built and passed (exit code 0, detected by nothing) is owed work in `ledger status`
    until a test catches it; `links.issue` gives it the issue's owner and closes it with the
    issue."""

    KIND: ClassVar[str] = "mutation"
    REFERENCE_FIELDS: ClassVar[tuple[str, ...]] = ("gate",)
    SUMMARY_FIELD: ClassVar[str] = "mutation"
    kind: Literal["mutation"] = "mutation"

    mutation: str = Field(..., min_length=1, description="What was mutated.")
    gate: RecordId | None = None
    built: bool
    exit_code: int | None = None
    detected_by: str | None = Field(None, description="The test that caught it; empty when nothing did.")

    @model_validator(mode="after")
    def _meaningful(self) -> Mutation:
        if not self.built and self.detected_by:
            raise ValueError("a mutation that does not build establishes nothing: detected_by must be empty")
        return self

    @property
    def detected(self) -> bool:
        return self.built and self.exit_code not in (None, 0)


class Issue(Envelope):
    """An issue row; numbers are unique across the ledger, except that a record correcting the
    issue (listing it in `supersedes`) repeats its number: that is how an issue is given an
    owner, closed or retitled. The issue's state is its live record's."""

    KIND: ClassVar[str] = "issue"
    UNIQUE_KEYS: ClassVar[tuple[str, ...]] = ("number",)
    SUMMARY_FIELD: ClassVar[str] = "title"
    kind: Literal["issue"] = "issue"

    number: int = Field(..., ge=0)
    title: str = Field(..., min_length=1, max_length=500)
    owner: str | None = None
    status: Literal["open", "owned", "closed"] = Field(
        "open", description="open (nobody has it), owned (someone has it: `owner`), closed. Corrections move it."
    )
    closed_by: str | None = Field(None, description="What closed it: a pull request, a commit, a record id.")
    spec: str | None = Field(None, description="Spec page this issue belongs to.")

    @model_validator(mode="after")
    def _state(self) -> Issue:
        if self.status == "owned" and not self.owner:
            raise ValueError("status owned needs an owner")
        return self


class ProcessMemory(Model):
    """One sampled process: how it was found and the peaks of its series."""

    pid: int = Field(..., ge=0)
    name: str = Field(..., description="The process name (comm) when first seen.")
    found_by: Literal["pid", "name", "child", "descendant"] = Field(
        ..., description="Exact pid, exact name (comm or argv[0] basename), or the launched command's process tree."
    )
    samples: int = Field(0, ge=0)
    anon_peak_bytes: int | None = Field(None, ge=0, description="Peak RssAnon.")
    file_peak_bytes: int | None = Field(None, ge=0, description="Peak RssFile (file-backed, e.g. mmap'd weights).")
    shmem_peak_bytes: int | None = Field(None, ge=0)
    gpu_peak_bytes: int | None = Field(None, ge=0, description="Peak GPU memory of the process (NVML compute apps).")
    cpu_cores_max: NonNegative | None = Field(None, description="Most cores busy between two samples.")
    cpu_cores_mean: NonNegative | None = None


class PhaseProcessDelta(Model):
    process: str = Field(..., description="`name[pid]`.")
    anon_delta_bytes: int | None = None
    file_delta_bytes: int | None = None
    gpu_delta_bytes: int | None = None
    anon_peak_rise_bytes: int | None = Field(
        None, description="Highest RssAnon inside the phase minus its value at the start."
    )
    cpu_cores_mean: NonNegative | None = None


class PhaseSummary(Model):
    name: str = Field(..., min_length=1)
    start_s: NonNegative | None = Field(
        None, description="Seconds after sampling began (sampled profiles; unknown for transcribed phases)."
    )
    end_s: NonNegative | None = None
    duration_s: NonNegative | None = Field(None, description="How long the phase lasted, when only that is known.")
    source: Literal["api", "marker", "transcribed"] = "api"
    cpu_cores_mean: NonNegative | None = Field(None, description="Cores busy on average (a regime: 1.000 core).")
    note: str | None = None
    mem_available_delta_bytes: int | None = Field(
        None, description="MemAvailable at the end minus at the start (negative: memory was taken)."
    )
    mem_available_min_bytes: int | None = Field(None, ge=0)
    gpu_utilization_max_percent: NonNegative | None = None
    processes: list[PhaseProcessDelta] = Field(default_factory=list)


class GpuSampling(Model):
    nvml: bool = Field(False, description="True when NVML answered.")
    reason: str | None = Field(None, description="Why there is no GPU column, when there is none.")
    devices: int = Field(0, ge=0)
    utilization_max_percent: NonNegative | None = None
    utilization_nonzero_samples: int | None = Field(None, ge=0)
    memory_used_peak_bytes: int | None = Field(
        None, ge=0, description="Device memory used (may be unsupported, e.g. on unified-memory parts)."
    )


class MemoryProfile(Envelope):
    """A process sampler's run: MemAvailable, per-process anon/file RSS, GPU memory, phases.

    The summary lives here; the full series is a compact attachment (gzip'd JSON Lines)
    whose path and sha256 are in `attachments`.
    """

    KIND: ClassVar[str] = "memory-profile"
    SUMMARY_FIELD: ClassVar[str] = "command"
    kind: Literal["memory-profile"] = "memory-profile"

    command: str | None = None
    exit_code: int | None = None
    targets: list[str] = Field(
        default_factory=list, description="How processes were chosen, e.g. `name=python3`, `pid=123`, `child`."
    )
    transcribed: bool = Field(
        False,
        description="True when the profile is observations transcribed from a document or a log (phase deltas "
        "without a series); then interval_s, duration_s and samples may be unknown.",
    )
    transcribed_from: str | None = Field(None, description="Where the observations were read (a PR, a log, a page).")
    interval_s: NonNegative | None = None
    duration_s: NonNegative | None = None
    samples: int | None = Field(None, ge=0)
    mem_total_bytes: int | None = Field(None, ge=0)
    mem_available_start_bytes: int | None = Field(None, ge=0)
    mem_available_min_bytes: int | None = Field(None, ge=0)
    mem_available_end_bytes: int | None = Field(None, ge=0)
    processes: list[ProcessMemory] = Field(default_factory=list)
    phases: list[PhaseSummary] = Field(default_factory=list)
    gpu: GpuSampling = Field(default_factory=GpuSampling)
    series: str | None = Field(
        None, description="The attachment (relative to the records folder) holding the full series."
    )

    @model_validator(mode="after")
    def _series_attached(self) -> MemoryProfile:
        if self.series is not None and self.series not in self.attachments:
            raise ValueError(f"series {self.series!r} is not in attachments: its sha256 must be recorded")
        if not self.transcribed:
            missing = [n for n in ("interval_s", "duration_s", "samples") if getattr(self, n) is None]
            if missing:
                raise ValueError(
                    f"a sampled profile needs {', '.join(missing)}; observations without a series set transcribed: true"
                )
            untimed = [p.name for p in self.phases if p.start_s is None or p.end_s is None]
            if untimed:
                raise ValueError(
                    f"phase(s) {', '.join(untimed)} have no start_s/end_s; a sampled profile times its phases "
                    "(transcribed phase deltas set transcribed: true)"
                )
        elif self.series is not None:
            raise ValueError("a transcribed profile has no series; a sampled one sets transcribed: false")
        for p in self.phases:
            if p.start_s is not None and p.end_s is not None and p.end_s < p.start_s:
                raise ValueError(f"phase {p.name!r} ends ({p.end_s}) before it starts ({p.start_s})")
        return self

    def summary(self) -> str:
        if self.title:
            return self.title
        return ("transcribed: " if self.transcribed else "") + (self.command or f"{len(self.phases)} phase(s)")


class Finding(Envelope):
    """A review finding: what the reviewer claimed, how it was verified, the verdict, and the
    repair or the owed item that answers it. A finding is a hypothesis until verified."""

    KIND: ClassVar[str] = "finding"
    REFERENCE_FIELDS: ClassVar[tuple[str, ...]] = ("evidence",)
    SUMMARY_FIELD: ClassVar[str] = "claim"
    kind: Literal["finding"] = "finding"

    finding: Slug = Field(..., description="The finding's id within its review, e.g. `F1`.")
    review: str = Field(..., min_length=1, description="Which review raised it, e.g. `PR #1041 review`.")
    claim: str = Field(..., min_length=1, description="What the reviewer said.")
    verified_how: str | None = Field(None, description="How it was re-verified before anything was changed.")
    verdict: Literal["unverified", "confirmed", "rejected", "partly-confirmed"] = "unverified"
    blocking: bool = False
    repair: str | None = Field(None, description="What was changed because of it.")
    owed: str | None = Field(None, description="What is owed instead of a repair (and where, e.g. `#1044`).")
    issue: int | None = Field(None, ge=0, description="The issue that carries the owed part.")
    evidence: list[RecordId] = Field(default_factory=list)

    @model_validator(mode="after")
    def _answered(self) -> Finding:
        if self.verdict in ("confirmed", "partly-confirmed") and not (self.repair or self.owed):
            raise ValueError("a confirmed finding names its repair or what is owed (repair, owed)")
        if self.verdict != "unverified" and not self.verified_how:
            raise ValueError(f"verdict {self.verdict} needs verified_how: a finding is a hypothesis until verified")
        return self

    def summary(self) -> str:
        return self.title or f"{self.finding}: {self.claim}"


class Note(Envelope):
    """Anything else worth keeping."""

    KIND: ClassVar[str] = "note"
    SUMMARY_FIELD: ClassVar[str] = "body"
    kind: Literal["note"] = "note"

    body: str = Field(..., min_length=1)
