"""``SharedPlans``: the pods of one deployment on the same configuration share one plan."""

from __future__ import annotations

import pytest

from haptic.dataplane.aux_files import AuxFiles
from haptic.dataplane.parser import parse_config
from haptic.dataplane.synchronizer import SharedPlans, VersionCache, sync
from simulator.dataplane.inprocess import client_for
from simulator.dataplane.instance import FakeDataplane, InstanceOptions
from tests.support.dataplane import FRONTEND_FE

pytestmark = pytest.mark.looptime

FIRST = FRONTEND_FE + "    default_backend web\n\nbackend web\n    server s1 10.0.0.1:80\n"
SECOND = FIRST.replace("10.0.0.1:80", "10.0.0.9:80")


async def test_pods_on_one_version_share_one_plan_and_each_gets_the_change() -> None:
    fakes = [FakeDataplane(InstanceOptions(name=f"haproxy-{i}")) for i in range(4)]
    caches = [VersionCache() for _ in fakes]
    first = parse_config(FIRST)
    for fake, cache in zip(fakes, caches, strict=True):
        async with client_for(fake) as client:
            assert (await sync(client, FIRST, AuxFiles(), cache=cache, parsed_desired=first)).ok
    shared = SharedPlans()
    second = parse_config(SECOND)
    results = []
    for fake, cache in zip(fakes, caches, strict=True):
        async with client_for(fake) as client:
            results.append(await sync(client, SECOND, AuxFiles(), cache=cache, parsed_desired=second, shared=shared))
    assert shared.computed == 1
    assert all(r.ok and r.mode == "runtime" and r.runtime_updates == 1 for r in results), results
    assert all("10.0.0.9" in fake.raw() for fake in fakes)


async def test_pods_read_without_a_cache_parse_the_same_text_once() -> None:
    fakes = [FakeDataplane(InstanceOptions(name=f"haproxy-{i}", initial_config=FIRST)) for i in range(3)]
    shared = SharedPlans()
    second = parse_config(SECOND)
    for fake in fakes:
        async with client_for(fake) as client:
            result = await sync(client, SECOND, AuxFiles(), parsed_desired=second, shared=shared)
            # a freshly started API (version 1) always gets one raw push first: counted, not planned
            assert result.ok and result.mode == "raw", result
            assert result.summary == {"totalAPIOperations": 1, "serversModified": 1}
    assert shared.texts_parsed == 1 and shared.computed == 0
