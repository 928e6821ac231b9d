"""The kinds, registered as data: kind name -> model class."""

from __future__ import annotations

from functools import lru_cache
from typing import Annotated, Any, Union, cast

from pydantic import Field, TypeAdapter

from .envelope import Envelope
from .kinds import (
    Ceiling,
    Contract,
    Decision,
    Environment,
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


def model_for(kind: str) -> type[Envelope]:
    try:
        return KINDS[kind]
    except KeyError:
        raise KeyError(kind) from None
