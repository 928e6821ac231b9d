"""The envelope every record carries: identity, stamps, links and the content hash."""

from __future__ import annotations

import re
from datetime import UTC, datetime
from typing import Annotated, ClassVar, Literal

from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    StringConstraints,
    field_validator,
    model_validator,
)

#: The record format this version of ledger writes. Older versions are upgraded on
#: read by :mod:`ledger.schema.migrate`; see docs/reference/format.md.
FORMAT_VERSION = 1

# A ULID: 26 characters of Crockford base32, the first 10 of which are the
# millisecond timestamp, so ids sort by creation time without coordination.
ID_PATTERN = r"^[0-9A-HJKMNP-TV-Z]{26}$"
RecordId = Annotated[str, StringConstraints(pattern=ID_PATTERN)]

FULL_SHA_RE = re.compile(r"^[0-9a-f]{40}$")
ABBREV_SHA_RE = re.compile(r"^[0-9a-f]{7,39}$")


# Declared as pydantic constraints (checked in pydantic-core, not in Python): whole-ledger
# checks validate every sample of every record, and Python validators tripled that cost.
#: A finite float (no NaN, no infinity).
Finite = Annotated[float, Field(allow_inf_nan=False)]
#: A finite float at or above zero: durations, rates, byte counts as floats.
NonNegative = Annotated[float, Field(ge=0, allow_inf_nan=False)]
Slug = Annotated[str, StringConstraints(pattern=r"^[A-Za-z0-9][A-Za-z0-9._:/+-]{0,127}$")]


class Model(BaseModel):
    """Base of every schema model: unknown fields are refused, so a typo is an error."""

    # defer_build: a model's validator is built the first time it validates, so a process
    # that reads one kind (`ledger push` checking five measurements) does not build all
    # fourteen at import (0.24 s of every `ledger` process before).
    model_config = ConfigDict(extra="forbid", validate_assignment=False, str_strip_whitespace=False, defer_build=True)


class Source(Model):
    """The commit of the measured source (which may be another checkout than the ledger's)."""

    repo: str | None = Field(
        None,
        description="Remote URL of the measured repository (credentials removed), or `git-root:<sha>` of its root commit when it has no remote; never a local folder.",
    )
    sha: str = Field(
        ..., description="The commit SHA: 40 hex, or an abbreviated historical SHA (then `abbreviated` is true)."
    )
    abbreviated: bool = Field(False, description="True when `sha` is shorter than 40 hex (historical evidence).")
    dirty: bool = Field(False, description="True when tracked files differed from the commit.")
    diff_sha256: str | None = Field(None, description="sha256 of `git diff HEAD` when dirty.")
    branch: str | None = None

    @field_validator("sha")
    @classmethod
    def _sha_shape(cls, value: str) -> str:
        value = value.strip().lower()
        if not (FULL_SHA_RE.match(value) or ABBREV_SHA_RE.match(value)):
            raise ValueError("must be a git commit SHA: 40 hex digits, or at least 7 for an abbreviated historical SHA")
        return value

    @model_validator(mode="after")
    def _consistent(self) -> Source:
        if len(self.sha) < 40:
            # An abbreviated SHA is accepted, and marked as such, never passed as a full one.
            self.abbreviated = True
        elif self.abbreviated:
            raise ValueError("abbreviated is true but sha has all 40 hex digits")
        if not self.dirty and self.diff_sha256 is not None:
            raise ValueError("diff_sha256 is only meaningful when dirty is true")
        return self


#: The id of an allocation known by its topology but not by id (a report that names no job):
#: it never matches another record's allocation, so no environment, comparison or chart joins
#: two such records as one machine.
UNKNOWN_ALLOCATION = "unknown"


class Allocation(Model):
    """Where the record was measured: the job or machine, and its GPU topology."""

    id: str = Field(
        ...,
        min_length=1,
        description="Scheduler job id (e.g. SLURM_JOB_ID) or `local-HOST-BOOT`; `unknown` when no record "
        "kept it (the allocation is then known by its topology only).",
    )
    scheduler: str = Field("local", description="slurm, torchrun, github-actions, gitlab-ci, local, ...")
    topology: str | None = Field(None, description="Human topology such as `4x GB200` or `cpu`.")
    nodes: int | None = Field(None, ge=1)
    gpus_per_node: int | None = Field(None, ge=0)
    hosts: list[str] = Field(default_factory=list)

    @property
    def known(self) -> bool:
        """False when the id was not kept (`unknown`): the allocation is its topology only."""
        return self.id != UNKNOWN_ALLOCATION


def same_allocation_key(allocation: Allocation | None) -> str | None:
    """The key records share when they ran on one allocation: its id, None when unknown."""
    return allocation.id if allocation is not None and allocation.known else None


class Tool(Model):
    name: Literal["ledger"] = "ledger"
    version: str


class Links(Model):
    """Where else this evidence lives: tracker runs, issue, pull request, URLs."""

    tracker_runs: list[str] = Field(default_factory=list, description="Tracker run ids, e.g. W&B `iopu4dwm`.")
    issue: int | None = Field(None, ge=0)
    pr: int | None = Field(None, ge=0)
    closed_prs: list[Annotated[int, Field(ge=0)]] = Field(
        default_factory=list,
        description="Pull requests closed in favour of `pr`: the work moved there (#1018, closed, superseded by #1038).",
    )
    urls: list[str] = Field(default_factory=list)
    jobs: list[str] = Field(default_factory=list, description="Scheduler job ids other than this allocation.")


class Envelope(Model):
    """Fields shared by every kind. Subclasses add the kind's body fields."""

    KIND: ClassVar[str] = ""
    #: Names of body fields that hold record ids (single id or list of ids).
    REFERENCE_FIELDS: ClassVar[tuple[str, ...]] = ()
    #: Body fields whose value must be unique across all records of the kind.
    UNIQUE_KEYS: ClassVar[tuple[str, ...]] = ()
    #: Body fields holding durations (seconds); they must be finite and non-negative.
    SUMMARY_FIELD: ClassVar[str] = "title"

    format_version: int = Field(FORMAT_VERSION, ge=1, description="Record format version.")
    id: RecordId = Field(..., description="ULID: time-sortable, unique without coordination.")
    kind: str
    created_at: datetime = Field(..., description="When the record was written (UTC).")
    observed_at: datetime | None = Field(
        None, description="When the evidence was taken, if not at `created_at` (historical evidence)."
    )
    observed_at_precision: Literal["exact", "minute", "hour", "day", "month", "year"] | None = Field(
        None,
        description="How precisely `observed_at` is known: an approximate date read from a document is `day` "
        "or `month` (write the first instant of the period).",
    )
    title: str | None = Field(None, max_length=500, description="One line saying what this record is.")
    source: Source | None = Field(
        None, description="The measured source's commit; absent only with `source_unknown` saying why."
    )
    source_unknown: str | None = Field(
        None,
        min_length=1,
        description="Why the measured commit is unknown (evidence re-entered from a document that names none). "
        "Documented unknown provenance: `ledger add` then stamps no source.",
    )
    allocation: Allocation | None = None
    tool: Tool
    links: Links = Field(default_factory=Links)
    supersedes: list[RecordId] = Field(
        default_factory=list, description="Ids of records this one corrects. Nothing is edited or deleted."
    )
    tags: list[Slug] = Field(default_factory=list)
    attachments: dict[str, str] = Field(
        default_factory=dict,
        description="Compact attachments: path relative to the records folder -> sha256 of its bytes.",
    )
    sha256: str = Field(
        ..., pattern=r"^[0-9a-f]{64}$", description="sha256 of the canonical JSON of the record without this field."
    )

    @field_validator("created_at", "observed_at")
    @classmethod
    def _utc(cls, value: datetime | None) -> datetime | None:
        if value is None:
            return None
        if value.tzinfo is None:
            return value.replace(tzinfo=UTC)
        return value.astimezone(UTC)

    @model_validator(mode="after")
    def _provenance(self) -> Envelope:
        if self.source_unknown and self.source is not None:
            raise ValueError("source_unknown says the commit is unknown, but source names one: keep one of them")
        if self.observed_at_precision and self.observed_at is None:
            raise ValueError("observed_at_precision qualifies observed_at, which is not given")
        return self

    @property
    def when(self) -> datetime:
        """When the evidence was taken: `observed_at` if given, else `created_at`."""
        return self.observed_at or self.created_at

    def references(self) -> list[tuple[str, str]]:
        """(field path, record id) for every record this one points at."""
        out: list[tuple[str, str]] = [(f"supersedes[{i}]", ref) for i, ref in enumerate(self.supersedes)]
        for name in self.REFERENCE_FIELDS:
            value = getattr(self, name)
            if value is None:
                continue
            if isinstance(value, str):
                out.append((name, value))
            elif isinstance(value, dict):
                out.extend((f"{name}.{k}", v) for k, v in value.items() if v)
            else:
                out.extend((f"{name}[{i}]", v) for i, v in enumerate(value))
        return out

    def summary(self) -> str:
        """A one-line description for listings."""
        if self.title:
            return self.title
        value = getattr(self, self.SUMMARY_FIELD, None)
        return str(value) if value is not None else ""


ENVELOPE_FIELDS = frozenset(Envelope.model_fields)
#: Envelope fields that `ledger add` always writes afresh.
GENERATED_FIELDS = frozenset({"format_version", "id", "created_at", "tool", "sha256"})
