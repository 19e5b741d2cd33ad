"""-k selection, the summary table, JUnit XML and trace files of a run."""

from __future__ import annotations

import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

from simulator.scenario.backends import get_factory
from simulator.scenario.reports import junit_xml, progress_line, summary_table, write_reports
from simulator.scenario.runner import CellResult, Failure
from simulator.scenario.selection import SelectionError, compile_selection


def test_selection_expressions() -> None:
    ids = ["faults-combined[outage=10s]", "faults-kube-outage", "basics-add-ingress", "ha-leader-failover"]
    pick = lambda expr: [i for i in ids if compile_selection(expr)(i)]  # noqa: E731
    assert pick("faults") == ids[:2]
    assert pick("faults and not combined") == ["faults-kube-outage"]
    assert pick("ingress or LEADER") == ["basics-add-ingress", "ha-leader-failover"]
    assert pick("(basics or ha) and not add") == ["ha-leader-failover"]
    assert pick("outage=10s") == ["faults-combined[outage=10s]"]
    assert pick("") == ids
    for bad in ("faults and", "(faults", "or x", "a )"):
        with pytest.raises(SelectionError):
            compile_selection(bad)


def results() -> list[CellResult]:
    ok = CellResult(id="ok", backend="sim", source="s/ok.yaml", seed=1, steps_run=3, virtual_seconds=12.5,
                    wall_seconds=0.25, trace_lines=['{"seq":0}', '{"seq":1}'], not_applicable=["step 1 traffic: x"])
    bad = CellResult(id="bad[n=2]", backend="sim", source="s/bad.yaml", seed=2, status="failed",
                     failures=[Failure(1, 9, "expect", "config[haproxy-0].contains", "missing 'x'", "-x\n")])
    na = CellResult(id="ok", backend="kind", source="s/ok.yaml", seed=1, status="unavailable", message="no kind")
    return [ok, bad, na]


def test_summary_and_progress() -> None:
    table = summary_table(results())
    assert table.splitlines()[0].split() == ["scenario", "backend", "result", "steps", "virtual", "s", "wall", "s"]
    assert "bad[n=2]  sim      FAIL" in table
    assert table.endswith("1 passed, 1 failed, 1 unavailable")
    assert progress_line(2, 10, results()[0]) == \
        "[ 2/10] PASS  ok [sim] virtual 12.5s, wall 0.25s (1 check(s) not applicable)"


def test_junit_and_trace_files(tmp_path: Path) -> None:
    root = ET.fromstring(junit_xml(results()))
    assert (root.get("tests"), root.get("failures"), root.get("errors"), root.get("skipped")) == ("3", "1", "0", "1")
    cases = root.findall("testcase")
    assert [c.get("name") for c in cases] == ["ok", "bad[n=2]", "ok"]
    failure = cases[1].find("failure")
    assert failure is not None and failure.get("message") == "config[haproxy-0].contains: missing 'x'"
    assert "s/bad.yaml:9: step 2 (expect)" in (failure.text or "")
    assert cases[2].find("skipped") is not None
    write_reports(tmp_path, results())
    assert (tmp_path / "traces" / "ok.sim.jsonl").read_bytes() == b'{"seq":0}\n{"seq":1}\n'
    assert (tmp_path / "junit.xml").is_file() and (tmp_path / "summary.txt").is_file()


def test_unknown_backends_are_refused_and_kind_is_the_cluster_backend() -> None:
    assert get_factory("kind").name == "kind" and type(get_factory("kind")) is type(get_factory("cluster"))
    with pytest.raises(ValueError):
        get_factory("docker")
