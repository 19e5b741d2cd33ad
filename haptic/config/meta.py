"""Kubernetes object metadata and conditions, as the published and consumed resources carry them."""

from __future__ import annotations

from datetime import datetime
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field
from pydantic.alias_generators import to_camel


class CamelModel(BaseModel):
    """Structural part of a CRD: camelCase on the wire, unknown fields rejected, attribute docstrings kept."""

    model_config = ConfigDict(
        alias_generator=to_camel,
        populate_by_name=True,
        extra="forbid",
        use_attribute_docstrings=True,
    )


class ObjectMeta(BaseModel):
    """The ``metadata`` fields HAPTIC reads or writes; anything else the API adds is kept as is."""

    model_config = ConfigDict(alias_generator=to_camel, populate_by_name=True, extra="allow")

    name: str | None = None
    namespace: str | None = None
    uid: str | None = None
    resource_version: str | None = None
    generation: int | None = None
    labels: dict[str, str] | None = None
    annotations: dict[str, str] | None = None
    owner_references: list[dict[str, Any]] | None = None

    @property
    def key(self) -> str:
        """``namespace/name`` (or ``name`` when cluster scoped)."""
        return f"{self.namespace}/{self.name}" if self.namespace else str(self.name or "")


class Condition(CamelModel):
    """A ``metav1.Condition``."""

    type: str = Field(min_length=1)
    status: Literal["True", "False", "Unknown"]
    observed_generation: int | None = None
    last_transition_time: datetime
    reason: str = Field(min_length=1)
    message: str = ""
