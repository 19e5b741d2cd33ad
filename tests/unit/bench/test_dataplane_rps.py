"""bench/dataplane_rps.py's configs: both get the same global/defaults, and the idle-connection pool the
library's maxconn gives haproxy survives the lower maxconn the machine's descriptor limit imposes."""

from __future__ import annotations

import importlib
import sys
from collections.abc import Iterator
from pathlib import Path
from types import ModuleType

import pytest

from tests.support.paths import REPO

GENERATED = """global
    default-path origin /x
    maxconn 50000

defaults
    mode http
    timeout client 50s

frontend http
    bind 127.0.0.1:1
    use_backend %[var(txn.backend)] if { var(txn.backend) -m found }

backend b
    server SRV_1 127.0.0.1:2
"""


@pytest.fixture
def rps(monkeypatch: pytest.MonkeyPatch) -> Iterator[ModuleType]:
    # the script imports its sibling bench/render.py as `render`, as `python bench/dataplane_rps.py` would
    monkeypatch.syspath_prepend(str(REPO / "bench"))
    module = importlib.import_module("dataplane_rps")
    yield module
    sys.modules.pop("dataplane_rps", None)


def test_maxconn_is_the_library_s_unless_the_descriptors_cannot_hold_it(rps: ModuleType) -> None:
    assert rps.bench_maxconn(50000, 1_048_576) == 50000
    assert rps.bench_maxconn(50000, 20000) == 9900


def test_idle_pool_shares_keep_the_library_s_pool_size_as_far_as_descriptors_allow(rps: ModuleType) -> None:
    assert rps.idle_pool_ratios(50000, 50000) == (20, 25)  # haproxy's defaults: nothing changed
    assert rps.idle_pool_ratios(50000, 40000) == (25, 32)  # the same pool, in connections
    assert rps.idle_pool_ratios(50000, 9900) == (80, 90)  # capped: the rest is for connections in use


def test_every_config_gets_the_same_global_and_defaults(rps: ModuleType, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(rps, "fd_limit", lambda: 20000)
    text = rps._one_core(GENERATED)
    head = text.split("\nfrontend ", 1)[0]
    assert "    maxconn 9900\n" in head
    assert "    nbthread 1\n    tune.pool-low-fd-ratio 80\n    tune.pool-high-fd-ratio 90\n" in head
    assert rps.single(text, 3, 2).startswith(head + "\nfrontend http\n")
    assert rps.frontend_only(text, 2).startswith(head + "\nfrontend http\n")
    assert rps.tuning(text) == "tune.pool-low-fd-ratio 80, tune.pool-high-fd-ratio 90, maxconn 9900"


def test_upstream_processes_hold_every_idle_connection(rps: ModuleType) -> None:
    assert rps.idle_pool_size("global\n    maxconn 9900\n    tune.pool-high-fd-ratio 90\n") == 17820
    assert rps.upstream_processes(17820, 20000) == 2
    assert rps.upstream_processes(0, 20000) == 1


def test_the_upstream_listens_on_every_port_the_endpoints_spread_over(rps: ModuleType, tmp_path: Path) -> None:
    config = rps.upstream_config([5001, 5002, 5003], tmp_path / "up.sock")
    assert [line.strip() for line in config.splitlines() if "bind" in line] == [
        "bind 127.0.0.1:5001", "bind 127.0.0.1:5002", "bind 127.0.0.1:5003"]
