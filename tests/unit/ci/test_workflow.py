"""The CI workflow runs what developers run: every step is a make target the Makefile defines, and the
jobs cover lint/types, make test on each supported Python, the local tier and the Kind e2e tier."""

from __future__ import annotations

import re

import yaml

from tests.support.paths import REPO


def make_targets() -> set[str]:
    return set(re.findall(r"^([a-z][a-z0-9-]*):", (REPO / "Makefile").read_text(), re.MULTILINE))


def test_every_step_is_a_make_target() -> None:
    workflow = yaml.safe_load((REPO / ".github" / "workflows" / "ci.yml").read_text())
    targets = make_targets()
    called: dict[str, set[str]] = {}
    for name, job in workflow["jobs"].items():
        for step in job["steps"]:
            command = step.get("run")
            if command is None:
                continue
            match = re.fullmatch(r"(?:sudo )?make ((?:[a-z0-9-]+ ?)+?)(?: PY=python)?", command.strip())
            assert match, f"job {name}: {command!r} is not a make target"
            words = set(match[1].split())
            assert words <= targets, f"job {name}: unknown target(s) {words - targets}"
            called.setdefault(name, set()).update(words)
    assert {"lint", "typecheck"} <= called["lint"]
    assert "test" in called["test"] and "test-local" in called["local-tier"] and "e2e" in called["e2e"]
    assert workflow["jobs"]["test"]["strategy"]["matrix"]["python"] == ["3.11", "3.12", "3.13"]


def test_the_readme_job_for_users_runs_their_scenarios_with_junit() -> None:
    readme = (REPO / "README.md").read_text()
    block = readme.split("# .github/workflows/scenarios.yml")[1].split("```")[0]
    job = yaml.safe_load("# .github/workflows/scenarios.yml" + block)
    commands = [s.get("run", "") for j in job["jobs"].values() for s in j["steps"]]
    assert any("haptic-sim run --backend sim" in c and "--junit" in c for c in commands)
    assert any("haptic-sim run --backend local" in c and "--junit" in c for c in commands)
