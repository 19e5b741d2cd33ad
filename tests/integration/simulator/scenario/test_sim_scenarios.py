"""Scenarios on the ``sim`` backend through the CLI and the pytest plugin, in subprocesses.

The determinism test runs the same scenario (two replicas, faults, a failover) with different
``PYTHONHASHSEED`` values and requires byte-identical JSONL traces.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from tests.support.paths import REPO

REPO = REPO
SIM = [sys.executable, "-m", "simulator.cli"]

BUSY = """\
name: busy
description: two replicas, changes, faults and a failover (for the determinism test)
seed: 5
setup:
  pods: 2
  replicas: 2
  config: {file: configs/slots.yaml}
  objects: [{file: objects/web.yaml}]
steps:
  - fault: {inject: {kind: dataplane_5xx, pod: 1, count: 2}}
  - patch: {kind: EndpointSlice, namespace: default, name: web-slice,
            patch: {endpoints: [{addresses: [10.1.0.7], conditions: {ready: true}}]}}
  - advance: 20s
  - fault: {inject: {kind: leader_loss, duration: 30s}}
  - advance: 60s
  - fault: {inject: {kind: watch_drop}}
  - settle:
  - expect:
      config: {contains: "server SRV_1 10.1.0.7:8080"}
      events: {since: start, present: [{type: leader.became, fields: {source: controller-1}}]}
"""


@pytest.fixture
def scenario_dir(tmp_path: Path, haproxy_bin: str) -> Path:
    (tmp_path / "configs").mkdir()
    (tmp_path / "objects").mkdir()
    shutil.copy(REPO / "scenarios" / "configs" / "slots.yaml", tmp_path / "configs" / "slots.yaml")
    for name in ("web.yaml", "api.yaml"):
        shutil.copy(REPO / "scenarios" / "objects" / name, tmp_path / "objects" / name)
    return tmp_path


def run(args: list[str], cwd: Path, hash_seed: str = "0") -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PYTHONHASHSEED": hash_seed, "PATH": f"/usr/sbin:{os.environ.get('PATH', '')}"}
    env["PYTHONPATH"] = str(REPO)
    return subprocess.run(args, cwd=cwd, env=env, capture_output=True, text=True, timeout=300, check=False)


def test_trace_is_byte_identical_across_runs_and_hash_seeds(scenario_dir: Path) -> None:
    (scenario_dir / "busy.yaml").write_text(BUSY)
    traces = []
    for n, hash_seed in enumerate(["0", "1", "12345", "1"]):
        report = scenario_dir / f"report-{n}"
        done = run([*SIM, "run", "busy.yaml", "--report", str(report)], scenario_dir, hash_seed)
        assert done.returncode == 0, done.stdout + done.stderr
        traces.append((report / "traces" / "busy.sim.jsonl").read_bytes())
    assert len(traces[0].splitlines()) > 50
    assert all(t == traces[0] for t in traces[1:])
    other = scenario_dir / "report-seed"
    done = run([*SIM, "run", "busy.yaml", "--seed", "6", "--report", str(other)], scenario_dir)
    assert done.returncode == 0, done.stdout + done.stderr
    assert (other / "traces" / "busy.sim.jsonl").read_bytes() != traces[0], "the seed must matter"


def test_cli_reports_a_failure_with_diff_and_trace(scenario_dir: Path) -> None:
    (scenario_dir / "fails.yaml").write_text(textwrap.dedent("""\
        name: fails
        description: expects a server that is not there
        setup: {pods: 1, config: {file: configs/slots.yaml}, objects: [{file: objects/web.yaml}]}
        steps:
          - advance: 1s
          - expect: {config: {contains: "server SRV_1 10.9.9.9:8080"}}
        """))
    done = run([*SIM, "run", ".", "--report", "rep"], scenario_dir)
    assert done.returncode == 1
    out = done.stdout
    expected = "fails.yaml:6: step 2 (expect): expectation config[haproxy-0].contains: missing 'server SRV_1 10.9.9.9"
    assert expected in out
    assert "+++ actual" in out and "-server SRV_1 10.9.9.9:8080" in out
    assert "trace before the failure" in out and "deployment.completed" in out
    junit = (scenario_dir / "rep" / "junit.xml").read_text()
    assert 'failures="1"' in junit and "<failure message=\"config[haproxy-0].contains" in junit


def test_bad_scenario_fails_before_running(scenario_dir: Path) -> None:
    (scenario_dir / "bad.yaml").write_text("name: bad\ndescription: d\nsetup: {config: {file: configs/slots.yaml}}\n"
                                           "steps:\n  - settle:\n  - wait: 5s\n")
    done = run([*SIM, "run", "bad.yaml"], scenario_dir)
    assert done.returncode == 2
    assert "bad.yaml:6: steps[1]: unknown step 'wait'" in done.stderr
    assert "nothing ran" in done.stderr


def test_pytest_plugin_collects_cells_and_reports(scenario_dir: Path) -> None:
    root = scenario_dir / "scenarios"
    root.mkdir()
    shutil.move(scenario_dir / "configs", root / "configs")
    shutil.move(scenario_dir / "objects", root / "objects")
    (root / "ok.yaml").write_text(textwrap.dedent("""\
        name: ok
        description: passes in every cell
        matrix: {pods: [1, 2]}
        setup: {pods: "${pods}", config: {file: configs/slots.yaml}, objects: [{file: objects/web.yaml}]}
        steps:
          - expect: {config: {contains: be_default_web_1}, traffic: {host: web.example, status: 200}}
        """))
    (root / "ko.yaml").write_text(textwrap.dedent("""\
        name: ko
        description: fails
        setup: {pods: 1, config: {file: configs/slots.yaml}}
        steps:
          - expect: {reloads: {total: 99}}
        """))
    (root / "broken.yaml").write_text("name: broken\ndescription: d\nsetup: {config: {file: nope.yaml}}\n"
                                      "steps: [{settle: }]\n")
    (scenario_dir / "pytest.ini").write_text("[pytest]\n")
    done = run([sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "-n", "2", "-rA", "scenarios"],
               scenario_dir)
    out = done.stdout
    assert done.returncode == 1, out
    assert "2 failed, 2 passed" in out
    assert "PASSED scenarios/ok.yaml::ok[pods=1][sim]" in out and "PASSED scenarios/ok.yaml::ok[pods=2][sim]" in out
    assert "expectation reloads[*].total: expected == 99, got 1" in out
    assert "scenarios/broken.yaml:3: setup.config.file: file not found: nope.yaml" in out


def test_readme_example_runs(scenario_dir: Path) -> None:
    """The complete example of the README's scenario section passes as written."""
    readme = (REPO / "README.md").read_text()
    example = readme.split("## Writing scenarios", 1)[1].split("```yaml", 1)[1].split("```", 1)[0]
    (scenario_dir / "docs").mkdir()
    (scenario_dir / "docs" / "example.yaml").write_text(example)
    done = run([*SIM, "run", "docs/example.yaml"], scenario_dir)
    assert done.returncode == 0, done.stdout + done.stderr
    assert "2 passed" in done.stdout


def test_explore_prints_failing_seeds_with_replay(scenario_dir: Path) -> None:
    (scenario_dir / "tight.yaml").write_text(textwrap.dedent("""\
        name: tight
        description: a convergence bound no slow pod can meet, so every seed violates it
        setup: {pods: 2, config: {file: configs/slots.yaml}, objects: [{file: objects/web.yaml}]}
        steps:
          - fault: {inject: {kind: dataplane_slow, pod: 1, delay: 20s}}
          - apply: {file: objects/api.yaml}
          - fault: {clear: dataplane_slow}
          - advance: 10s
        invariants: {converge_after_faults: 2s}
        """))
    done = run([*SIM, "explore", "tight.yaml", "--seeds", "1..3", "-j", "2"], scenario_dir)
    assert done.returncode == 1, done.stdout + done.stderr
    failing = re.findall(r"replay: haptic-sim explore tight.yaml --seeds (\d+) --show-steps", done.stdout)
    assert failing, done.stdout
    assert f"{3 - len(failing)} of 3 runs kept every invariant" in done.stdout
    assert "invariant " in done.stdout
    seed = failing[0]
    again = run([*SIM, "explore", "tight.yaml", "--seeds", seed, "--show-steps"], scenario_dir)
    assert again.returncode == 1
    report = done.stdout.split(f"FAILED tight [sim, seed {seed}]\n", 1)[1].splitlines()[0]
    assert report in again.stdout, "a failing seed replays exactly"


def test_expect_error_fails_when_the_apply_is_accepted(scenario_dir: Path) -> None:
    """Without a webhook nothing refuses the object: the step must fail, naming the expected error."""
    (scenario_dir / "accepted.yaml").write_text(textwrap.dedent("""\
        name: accepted
        description: expects a refusal that does not come
        setup:
          pods: 1
          config: {file: configs/slots.yaml}
        steps:
          - apply: {file: objects/api.yaml}
            expect_error: "denied the request"
        """))
    done = run([*SIM, "run", "accepted.yaml"], scenario_dir)
    assert done.returncode == 1, done.stdout + done.stderr
    assert "expect_error: the apply was accepted; expected it refused with an error matching 'denied the request'" \
        in done.stdout, done.stdout


def test_explore_reports_a_runaway_seed_as_a_failure_with_its_replay_command(scenario_dir: Path) -> None:
    (scenario_dir / "long.yaml").write_text(textwrap.dedent("""\
        name: long
        description: a seed that would run for two virtual hours
        setup: {pods: 1, config: {file: configs/slots.yaml}, objects: [{file: objects/web.yaml}]}
        steps:
          - advance: 2h
        """))
    done = run([*SIM, "explore", "long.yaml", "--seeds", "1", "--max-virtual", "120"], scenario_dir)
    assert done.returncode == 1, done.stdout + done.stderr
    assert "exceeded its time limit of 120s" in done.stdout
    assert "replay: haptic-sim explore long.yaml --seeds 1 --show-steps" in done.stdout
    walled = run([*SIM, "explore", "long.yaml", "--seeds", "2", "--max-wall", "0.2"], scenario_dir)
    assert walled.returncode == 1 and "wall-time limit of 0.2s and was killed" in walled.stdout, walled.stdout
    starved = run([*SIM, "explore", "long.yaml", "--seeds", "3", "--max-memory", "16"], scenario_dir)
    assert starved.returncode == 1 and "memory limit" in starved.stdout, starved.stdout
    assert "replay: haptic-sim explore long.yaml --seeds 3 --show-steps" in starved.stdout
