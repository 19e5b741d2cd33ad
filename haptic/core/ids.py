"""Id sources: where event ids, correlation ids and request ids come from.

Ids are injected (never created with a bare ``uuid4()`` elsewhere) so that a simulation with the same
seed produces the same ids, and therefore byte-identical traces.
"""

from __future__ import annotations

import random
import uuid
from typing import Protocol


class IdSource(Protocol):
    """Produces unique string ids."""

    def new_id(self) -> str: ...


class UuidIds:
    """Random UUID4 ids, for the real controller."""

    def new_id(self) -> str:
        return str(uuid.uuid4())


class SequentialIds:
    """``<prefix>1``, ``<prefix>2``, ...: readable ids for tests and simulations."""

    def __init__(self, prefix: str = "id-", start: int = 1) -> None:
        self._prefix = prefix
        self._next = start

    def new_id(self) -> str:
        n = self._next
        self._next = n + 1
        return f"{self._prefix}{n}"


class SeededIds:
    """UUID-shaped ids drawn from a seeded generator: look real, replay identically for one seed."""

    def __init__(self, seed: int) -> None:
        self._random = random.Random(seed)

    def new_id(self) -> str:
        return str(uuid.UUID(int=self._random.getrandbits(128), version=4))
