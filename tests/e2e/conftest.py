"""End-to-end tier: a Kind cluster with real HAProxy and dataplaneapi (``make e2e``).

Every test here is skipped, with the reason printed, where ``kind``, ``kubectl`` or a usable Docker
engine is missing. ``--keep-cluster`` (or ``HAPTIC_E2E_KEEP_CLUSTER=1``) keeps the cluster afterwards.
"""

from __future__ import annotations

import os
from collections.abc import Iterator

import pytest

from tests.e2e import kind_cluster


def pytest_addoption(parser: pytest.Parser) -> None:
    parser.addoption("--keep-cluster", action="store_true", default=False,
                     help="e2e: keep the Kind cluster after the run")


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    e2e = [item for item in items if "tests/e2e" in str(item.path)]
    if not e2e:
        return
    reason = kind_cluster.unavailable_reason()
    if reason is None:
        return
    for item in e2e:
        item.add_marker(pytest.mark.skip(reason=reason))


@pytest.fixture(scope="session")
def deployed(request: pytest.FixtureRequest) -> Iterator[None]:
    """deploy/ installed on the Kind cluster, controller and HAProxy pods ready."""
    kind_cluster.install()
    try:
        yield
    finally:
        keep = request.config.getoption("--keep-cluster") or os.environ.get("HAPTIC_E2E_KEEP_CLUSTER")
        if not keep:
            kind_cluster.teardown()
