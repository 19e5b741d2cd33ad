"""``operation_summary``: the per-pod ``lastOperationSummary`` counts of a plan."""

from __future__ import annotations

from haptic.dataplane.operations import operation_summary
from haptic.dataplane.planner import plan

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
