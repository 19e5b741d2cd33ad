"""`haptic-sim run --junit FILE` writes JUnit XML that CI systems read: one testcase per scenario cell,
failures with the runner's report, not-applicable backends as skipped."""

from __future__ import annotations

import os
import subprocess
import sys
import xml.etree.ElementTree as ET
from pathlib import Path

from tests.support.paths import REPO


def test_junit_xml_for_a_passing_and_a_failing_scenario(tmp_path: Path) -> None:
    good = (REPO / "scenarios" / "basics" / "add-ingress.yaml").read_text()
    bad = good.replace("name: add-ingress", "name: add-ingress-wrong").replace(
        '"server SRV_1 10.2.0.1:8080"', '"server SRV_1 10.9.9.9:8080"')
    for name, text in (("good.yaml", good), ("bad.yaml", bad)):
        (tmp_path / name).write_text(text.replace("../configs/", f"{REPO}/scenarios/configs/")
                                     .replace("../objects/", f"{REPO}/scenarios/objects/"))
    junit = tmp_path / "out" / "junit.xml"
    env = {**os.environ, "PATH": f"/usr/sbin:{os.environ.get('PATH', '')}", "PYTHONPATH": str(REPO)}
    done = subprocess.run([sys.executable, "-m", "simulator.cli", "run", "--backend", "sim", "--junit", str(junit),
                           "good.yaml", "bad.yaml"], cwd=tmp_path, env=env, capture_output=True, text=True,
                          timeout=300, check=False)
    assert done.returncode == 1, done.stdout + done.stderr
    suite = ET.parse(junit).getroot()
    assert (suite.tag, suite.get("tests"), suite.get("failures")) == ("testsuite", "2", "1")
    cases = {c.get("name"): c for c in suite.iter("testcase")}
    assert set(cases) == {"add-ingress", "add-ingress-wrong"}
    failure = cases["add-ingress-wrong"].find("failure")
    assert failure is not None and "10.9.9.9" in (failure.text or "")
    assert cases["add-ingress"].find("failure") is None
