"""The committed JSON Schema matches the models, and it accepts/rejects what the models do."""

from __future__ import annotations

import json
from pathlib import Path

import jsonschema

from simulator.cli import main
from simulator.scenario.json_schema import render_json_schema
from tests.support.paths import REPO

COMMITTED = REPO / "scenarios" / "scenario.schema.json"


def test_committed_schema_is_current() -> None:
    assert COMMITTED.read_text(encoding="utf-8") == render_json_schema(), (
        "scenarios/scenario.schema.json is stale: run `haptic-sim schema -o scenarios/scenario.schema.json`"
    )


def test_schema_command_check_detects_stale_file(tmp_path: Path) -> None:
    out = tmp_path / "s.json"
    assert main(["schema", "-o", str(out)]) == 0
    assert main(["schema", "-o", str(out), "--check"]) == 0
    out.write_text("{}\n")
    assert main(["schema", "-o", str(out), "--check"]) == 1


def test_schema_validates_like_the_models() -> None:
    schema = json.loads(render_json_schema())
    good = {"name": "x", "description": "d", "setup": {"config": {"file": "c.yaml"}},
            "steps": [{"advance": "5s"}, {"expect": {"reloads": {"delta": 0}}}]}
    jsonschema.validate(good, schema)
    bad = {**good, "steps": [{"advance": "5 parsecs"}]}
    validator = jsonschema.Draft202012Validator(schema)
    assert list(validator.iter_errors(bad))
    assert list(validator.iter_errors({**good, "extra": 1}))
