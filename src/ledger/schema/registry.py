"""The kinds, registered as data: kind name -> model class."""

from __future__ import annotations

from functools import lru_cache
from typing import Annotated, Any, Union, cast

from pydantic import Field, TypeAdapter, ValidationError

from .envelope import Envelope
from .kinds import (
    Ceiling,
    Contract,
    Decision,
    Environment,
    Finding,
    FlopAudit,
    Gate,
    Hypothesis,
    Issue,
    Measurement,
    MemoryProfile,
    Mutation,
    Note,
    Sandwich,
)

KINDS: dict[str, type[Envelope]] = {
    model.KIND: model
    for model in (
        Contract,
        Environment,
        Ceiling,
        FlopAudit,
        Measurement,
        Sandwich,
        Decision,
        Hypothesis,
        Gate,
        Mutation,
        Issue,
        Note,
        MemoryProfile,
        Finding,
    )
}


def register_kind(model: type[Envelope]) -> type[Envelope]:
    """Add a kind (used by extensions; the built-in kinds are listed above)."""
    KINDS[model.KIND] = model
    record_adapter.cache_clear()
    return model


@lru_cache(maxsize=1)
def record_adapter() -> TypeAdapter:
    """One validator for every kind, dispatched on `kind` (fast path for whole-ledger checks)."""
    # Union[...] of a runtime tuple: PEP 604's `|` cannot be spelled over a tuple.
    union = Annotated[Union[tuple(KINDS.values())], Field(discriminator="kind")]  # type: ignore[valid-type]  # noqa: UP007
    return TypeAdapter(cast(Any, union))


def validate_record(data: object) -> Envelope:
    """The record `data` holds, validated by its kind's model. A record of a known kind is
    validated by that model alone (with `defer_build`, a process that reads five measurements
    builds the measurement model only, not all the kinds); anything else, and any record that
    fails, goes through `record_adapter`, so errors read the same either way (their location
    starts with the kind, as the discriminated union gives it)."""
    kind = data.get("kind") if isinstance(data, dict) else None
    model = KINDS.get(kind) if isinstance(kind, str) else None
    if model is not None:
        try:
            return model.model_validate(data)
        except ValidationError:
            pass
    return record_adapter().validate_python(data)


def build_all() -> None:
    """Build every kind's validator now (before forking workers that would each build them)."""
    for model in KINDS.values():
        model.model_rebuild()
    record_adapter()


def model_for(kind: str) -> type[Envelope]:
    try:
        return KINDS[kind]
    except KeyError:
        raise KeyError(kind) from None
