"""The result of comparing two configs: ordered operations and whether they need a reload."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Literal

Action = Literal["create", "update", "delete"]


@dataclass(frozen=True)
class Operation:
    """One change to apply through the Dataplane API.

    ``payload`` is, for server creates and updates, the v3 server model of the desired server.
    ``config_lines`` holds the desired normalised haproxy.cfg lines of the changed object (the
    section header and its attributes for a section; the line(s) of a child), empty on delete.
    """

    action: Action
    section_type: str
    section_name: str | None
    child_type: str | None
    child_name: str | None
    index: int | None
    description: str
    runtime: bool = False
    payload: dict[str, Any] | None = field(default=None, hash=False, compare=True)
    config_lines: tuple[str, ...] = field(default=(), repr=False)
    #: for server updates, the v3 server model of the current server
    previous: dict[str, Any] | None = field(default=None, hash=False, compare=False, repr=False)


_SUMMARY_ACTIONS = {"create": "Added", "delete": "Removed", "update": "Modified"}
_SUMMARY_OBJECTS = {"backend": "backends", "frontend": "frontends", "server": "servers"}


def operation_summary(operations: tuple[Operation, ...] | list[Operation]) -> dict[str, int]:
    """Counts as the HAProxyCfg's ``lastOperationSummary`` holds them: ``totalAPIOperations`` and
    ``backendsAdded`` … ``frontendsModified`` (a server is counted as a server, not as its backend's change)."""
    counts = {"totalAPIOperations": len(operations)}
    for op in operations:
        count_operation(counts, op.action, op.section_type, op.child_type)
    return counts


def count_operation(counts: dict[str, int], action: Action, section_type: str, child_type: str | None,
                    number: int = 1) -> None:
    """Adds ``number`` operations of one kind to an ``operation_summary`` (its ``totalAPIOperations`` aside)."""
    noun = _SUMMARY_OBJECTS.get(child_type or section_type) if child_type in (None, "server") else None
    if noun is not None and number:
        key = noun + _SUMMARY_ACTIONS[action]
        counts[key] = counts.get(key, 0) + number


@dataclass(frozen=True)
class SyncPlan:
    """Operations in execution order, and whether applying them needs an HAProxy reload."""

    operations: tuple[Operation, ...]
    reload_required: bool

    @property
    def runtime_operations(self) -> tuple[Operation, ...]:
        return tuple(op for op in self.operations if op.runtime)

    @property
    def is_empty(self) -> bool:
        return not self.operations
