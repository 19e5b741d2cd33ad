"""``operation_summary``: the per-pod ``lastOperationSummary`` counts of a plan."""

from __future__ import annotations

import random

import pytest

from haptic.dataplane.operations import operation_summary
from haptic.dataplane.parser import parse_config
from haptic.dataplane.planner import plan, plan_parsed, replacement_summary
from simulator.dataplane.instance import DEFAULT_CONFIG
from tests.support.realworld import REALWORLD_CFG
from tests.unit.haptic.dataplane.test_planner_properties import mutate

BASE = """global
    daemon
defaults
    mode http
frontend fe
    bind :80
    default_backend a
backend a
    server s1 10.0.0.1:80
    server s2 10.0.0.2:80
"""


def test_sections_and_servers_are_counted_by_what_changed() -> None:
    desired = (BASE.replace("server s2 10.0.0.2:80", "server s2 10.0.0.3:80")
               + "backend b\n    server s1 10.0.1.1:80\n")
    sync = plan(BASE, desired)
    summary = operation_summary(sync.operations)
    assert summary == {"totalAPIOperations": len(sync.operations), "backendsAdded": 1, "serversAdded": 1,
                       "serversModified": 1}


def test_a_removed_frontend_and_its_rules_count_once_as_a_frontend() -> None:
    desired = BASE.replace("frontend fe\n    bind :80\n    default_backend a\n", "")
    summary = operation_summary(plan(BASE, desired).operations)
    assert summary["frontendsRemoved"] == 1
    assert summary["totalAPIOperations"] >= 1
    assert not any(key.startswith(("backends", "servers")) for key in summary)


@pytest.mark.parametrize("seed", range(30))
def test_replacement_summary_counts_what_the_plan_would(seed: int) -> None:
    """Over seeded random edits of a realistic config, against a fresh instance's config and each other."""
    rng = random.Random(seed)
    current = mutate(REALWORLD_CFG, rng)
    desired = mutate(current, rng)
    for before, after in ((DEFAULT_CONFIG, desired), (current, desired), (desired, current), (desired, desired)):
        old, new = parse_config(before), parse_config(after)
        planned = plan_parsed(old, new)
        assert replacement_summary(old, new) == (operation_summary(planned.operations) if planned.operations
                                                 else None)


def test_replacement_summary_of_changed_sections_counts_their_operations() -> None:
    desired = (BASE.replace("server s2 10.0.0.2:80", "server s2 10.0.0.3:80").replace("mode http", "mode tcp")
               + "backend b\n    acl x path /x\n    http-request deny if x\n    server s1 10.0.1.1:80\n"
               + "ring r\n    server s 127.0.0.1:514\n")
    before, after = parse_config(BASE), parse_config(desired)
    assert replacement_summary(before, after) == operation_summary(plan_parsed(before, after).operations)
    assert replacement_summary(after, before) == operation_summary(plan_parsed(after, before).operations)
