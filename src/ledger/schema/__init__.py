"""Record models: the envelope every record carries and one pydantic model per kind."""

from .envelope import FORMAT_VERSION, Allocation, Envelope, Links, Source, Tool
from .kinds import (
    Ceiling,
    Contract,
    Decision,
    Environment,
    FlopAudit,
    Gate,
    GpuState,
    HealthVerdict,
    Hypothesis,
    Issue,
    Measurement,
    Mutation,
    Note,
    PeakConvention,
    Sandwich,
    summarize,
)
from .registry import KINDS, model_for, record_adapter, register_kind

__all__ = [
    "FORMAT_VERSION", "Allocation", "Envelope", "Links", "Source", "Tool",
    "Ceiling", "Contract", "Decision", "Environment", "FlopAudit", "Gate", "GpuState",
    "HealthVerdict", "Hypothesis", "Issue", "Measurement", "Mutation", "Note",
    "PeakConvention", "Sandwich", "summarize", "KINDS", "model_for", "record_adapter",
    "register_kind",
]
