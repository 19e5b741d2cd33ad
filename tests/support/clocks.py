"""A clock on the running loop's time, so looptime's virtual time drives everything."""

from __future__ import annotations

import asyncio
from datetime import UTC, datetime, timedelta

EPOCH = datetime(2026, 1, 1, tzinfo=UTC)


class LoopClock:
    def monotonic(self) -> float:
        return asyncio.get_running_loop().time()

    def wall(self) -> datetime:
        return EPOCH + timedelta(seconds=self.monotonic())

    async def sleep(self, seconds: float) -> None:
        await asyncio.sleep(seconds)
