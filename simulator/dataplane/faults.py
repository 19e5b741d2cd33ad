"""Faults the fake can be told to produce, as plain data (set by methods or the admin endpoint)."""

from __future__ import annotations

from dataclasses import asdict, dataclass
from typing import Any


@dataclass
class Faults:
    error_status: int = 503  # the status of injected errors
    error_count: int = 0  # the next N API requests answer ``error_status``
    error_path: str = ""  # only requests whose path contains this (empty: all)
    delay: float = 0.0  # every API answer is delayed by this many seconds (loop clock)
    conflict_count: int = 0  # the next N version-checked writes answer 409
    fail_reloads: int = 0  # the next N reloads fail (status ``failed``, previous config kept)
    haproxy_down: bool = False  # haproxy is not running: runtime endpoints answer 500, reloads fail

    def as_json(self) -> dict[str, Any]:
        return asdict(self)

    def update(self, values: dict[str, Any]) -> None:
        for key, value in values.items():
            if key not in self.__dataclass_fields__:
                raise ValueError(f"unknown fault {key!r}")
            current = getattr(self, key)
            setattr(self, key, type(current)(value))
