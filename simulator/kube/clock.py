"""Time and identity for the fake API: timestamps from an injected clock, seeded uids and names.

The default clock is the asyncio loop's clock added to a fixed epoch, so runs under a virtual clock
produce identical timestamps.
"""

from __future__ import annotations

import asyncio
import random
from collections.abc import Callable
from datetime import UTC, datetime, timedelta

EPOCH = datetime(2026, 1, 1, tzinfo=UTC)
_GENERATE_ALPHABET = "bcdfghjklmnpqrstvwxz2456789"


def default_now() -> datetime:
    """Loop time added to a fixed epoch: deterministic under a virtual clock."""
    try:
        offset = asyncio.get_running_loop().time()
    except RuntimeError:
        offset = 0.0
    return EPOCH + timedelta(seconds=offset)


def timestamp(moment: datetime) -> str:
    """RFC 3339 at second precision, as the API writes timestamps."""
    return moment.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


class Stamper:
    """``now()`` formatted as a timestamp, memoised per second (many writes share one)."""

    def __init__(self, now: Callable[[], datetime]) -> None:
        self.now = now
        self._second: object = None
        self._text = ""

    def __call__(self) -> str:
        if self.now is default_now:
            # Hot path: no datetime arithmetic while the loop clock stays within the same second.
            try:
                second: object = int(asyncio.get_running_loop().time())
            except RuntimeError:
                second = 0
            if second != self._second:
                self._second = second
                self._text = timestamp(EPOCH + timedelta(seconds=int(str(second))))
            return self._text
        moment = self.now()
        second = moment.replace(microsecond=0)
        if second != self._second:
            self._second = second
            self._text = timestamp(moment)
        return self._text


class SeededIds:
    """Version-4 shaped UUIDs and ``generateName`` suffixes from one seeded generator."""

    def __init__(self, seed: int) -> None:
        self._rng = random.Random(seed)

    def uid(self) -> str:
        h = f"{self._rng.getrandbits(128):032x}"
        return f"{h[:8]}-{h[8:12]}-4{h[13:16]}-{'89ab'[int(h[16], 16) & 3]}{h[17:20]}-{h[20:]}"

    def suffix(self) -> str:
        return "".join(self._rng.choice(_GENERATE_ALPHABET) for _ in range(5))
