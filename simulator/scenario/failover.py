"""What ``fault: {inject: {kind: leader_loss}}`` (a crash) means on every backend: a failover.

The crashed leader's replica comes back only once another replica leads. Restarted at once with its
own identity it would find the Lease still held by itself, renew it and lead on, so no follower would
ever take over and the scenario would test nothing. With a single replica there is nobody to take
over: it comes back once its Lease expired, so it has to acquire it anew. A takeover that does not
happen within ``TAKEOVER_LEASES`` Lease durations (followers cut off from the API, say) does not keep
the replica down forever; the trace shows it.

``duration`` keeps the replica down for exactly that long instead (backends schedule that themselves).
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Mapping
from typing import Any

from haptic.config.durations import parse_duration

DEFAULT_LEASE_DURATION = 15.0
TAKEOVER_LEASES = 4
_POLL = 0.5


def lease_duration_of(config: Mapping[str, Any]) -> float:
    """``spec.controller.leaderElection.leaseDuration`` of a HAProxyTemplateConfig, in seconds."""
    election = (((config.get("spec") or {}).get("controller") or {}).get("leaderElection") or {})
    value = election.get("leaseDuration")
    if value is None:
        return DEFAULT_LEASE_DURATION
    try:
        return parse_duration(str(value)).total_seconds() if isinstance(value, str) else float(value)
    except ValueError:
        return DEFAULT_LEASE_DURATION


async def restart_after_takeover(index: int, leader: Callable[[], int | None], replicas: int,
                                 lease_duration: float, revive: Callable[[], object],
                                 note: Callable[[str], None] | None = None) -> None:
    """Waits (on the loop's clock) until a replica other than ``index`` leads, then calls ``revive``.

    ``leader()`` is the index of the replica leading now (None: nobody). With one replica: revives once
    ``lease_duration`` passed."""
    loop = asyncio.get_running_loop()
    start = loop.time()
    bound = lease_duration if replicas <= 1 else TAKEOVER_LEASES * lease_duration
    while True:
        current = leader()
        if replicas > 1 and current is not None and current != index:
            break
        if loop.time() - start >= bound:
            if replicas > 1 and note is not None:
                note(f"no replica took over within {bound:g}s of the crash of replica {index}")
            break
        await asyncio.sleep(_POLL)
    outcome = revive()
    if asyncio.iscoroutine(outcome):
        await outcome
