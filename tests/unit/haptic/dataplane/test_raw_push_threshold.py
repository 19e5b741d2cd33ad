"""``dataplane.rawPushThreshold`` (the original's rule): a structural change of at most that many planned
operations goes as fine-grained operations in one Dataplane transaction, when every operation is one the
API takes as is (server creates, updates, deletes); more operations, or any other kind, is one raw push."""

from __future__ import annotations

import pytest

from haptic.dataplane.aux_files import AuxFiles
from haptic.dataplane.client import DataplaneClient
from haptic.dataplane.planner import plan
from haptic.dataplane.synchronizer import SyncOptions, VersionCache, sync
from simulator.dataplane.instance import FakeDataplane
from tests.support.dataplane import FRONTEND_FE

pytestmark = pytest.mark.looptime

BASE = FRONTEND_FE + "    default_backend web\n\nbackend web\n" + "".join(
    f"    server SRV_{i} 10.0.0.{i}:80\n" for i in (1, 2))
# slot growth: two more servers (two creates) and one gone (a delete)
GROWN = BASE.replace("    server SRV_2 10.0.0.2:80\n", "") + "".join(
    f"    server SRV_{i} 127.0.0.1:1 disabled\n" for i in (3, 4))


async def _deployed(client: DataplaneClient) -> VersionCache:
    cache = VersionCache()
    first = await sync(client, BASE, AuxFiles(), cache=cache)
    assert first.ok and first.mode == "raw", first  # a fresh API (version 1): raw first, always
    return cache


async def test_at_or_below_the_threshold_server_operations_go_in_one_transaction(
        client: DataplaneClient, fake: FakeDataplane) -> None:
    cache = await _deployed(client)
    raw_pushes, commits, reloads = fake.counters.raw_pushes, fake.counters.commits, fake.counters.reloads
    result = await sync(client, GROWN, AuxFiles(), cache=cache, options=SyncOptions(raw_push_threshold=3))
    assert result.ok, result.errors
    assert result.mode == "transaction" and len(result.operations) == 3
    assert fake.counters.commits == commits + 1 and fake.counters.raw_pushes == raw_pushes
    assert fake.counters.reloads == reloads + 1 and result.reload_triggered
    # what the pod runs now is the desired configuration
    assert plan(fake.document.body(), GROWN).is_empty
    # and the cache knows the version: the same config again is a no-op
    again = await sync(client, GROWN, AuxFiles(), cache=cache, options=SyncOptions(raw_push_threshold=3))
    assert again.mode == "noop"


async def test_above_the_threshold_the_configuration_is_pushed_raw(client: DataplaneClient,
                                                                  fake: FakeDataplane) -> None:
    cache = await _deployed(client)
    raw_pushes, commits = fake.counters.raw_pushes, fake.counters.commits
    result = await sync(client, GROWN, AuxFiles(), cache=cache, options=SyncOptions(raw_push_threshold=2))
    assert result.ok, result.errors
    assert result.mode == "raw" and fake.counters.raw_pushes == raw_pushes + 1 and fake.counters.commits == commits
    assert plan(fake.document.body(), GROWN).is_empty


async def test_a_change_beyond_servers_is_pushed_raw_whatever_its_size(client: DataplaneClient,
                                                                      fake: FakeDataplane) -> None:
    cache = await _deployed(client)
    raw_pushes = fake.counters.raw_pushes
    changed = BASE.replace("backend web\n", "backend web\n    balance leastconn\n")
    result = await sync(client, changed, AuxFiles(), cache=cache, options=SyncOptions(raw_push_threshold=100))
    assert result.ok and result.mode == "raw" and fake.counters.raw_pushes == raw_pushes + 1


async def test_a_refused_transaction_falls_back_to_one_raw_push(client: DataplaneClient,
                                                               fake: FakeDataplane) -> None:
    cache = await _deployed(client)
    fake.inject_errors(1, status=500, path="/servers")  # the first server operation fails
    result = await sync(client, GROWN, AuxFiles(), cache=cache, options=SyncOptions(raw_push_threshold=100))
    assert result.ok, result.errors
    assert result.mode == "raw" and result.fallback_used and "fine-grained" in result.fallbacks[0]
    assert not fake.transactions  # the failed transaction was aborted
    assert plan(fake.document.body(), GROWN).is_empty
