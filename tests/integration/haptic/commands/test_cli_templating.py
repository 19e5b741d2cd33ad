"""``haptic validate`` and ``haptic render`` as a user runs them, with the real haproxy."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from tests.support.paths import REPO

pytestmark = pytest.mark.haproxy

ROOT = REPO
EXAMPLE = ROOT / "examples" / "ingress" / "haproxytemplateconfig.yaml"


def haptic(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "haptic.cli", *args], capture_output=True, text=True, cwd=ROOT)


def test_example_passes_all_embedded_tests(haproxy_bin: str) -> None:
    out = haptic("validate", "-f", str(EXAMPLE), "--haproxy-binary", haproxy_bin, "-o", "json")
    assert out.returncode == 0, out.stdout + out.stderr
    data = json.loads(out.stdout)
    names = {t["name"] for t in data["tests"]}
    assert {"_global", "tls-termination", "hostile-input", "slot-preservation"} <= names
    assert data["summary"]["failed"] == 0 and data["summary"]["passed"] == len(names)


def test_validate_single_test_yaml_output_and_failure_exit(haproxy_bin: str, tmp_path: Path) -> None:
    out = haptic(
        "validate", "-f", str(EXAMPLE), "--haproxy-binary", haproxy_bin, "--test", "server-slots", "-o", "yaml"
    )
    assert out.returncode == 0 and yaml.safe_load(out.stdout)["summary"] == {"total": 1, "passed": 1, "failed": 0}
    broken = yaml.safe_load(EXAMPLE.read_text())
    broken["spec"]["validationTests"]["server-slots"]["assertions"][0]["expected"] = 4
    path = tmp_path / "broken.yaml"
    path.write_text(yaml.safe_dump(broken))
    out = haptic("validate", "-f", str(path), "--haproxy-binary", haproxy_bin, "--test", "server-slots")
    assert out.returncode == 1
    assert "✗ server-slots" in out.stdout and "3 matches, expected 4" in out.stdout


def test_validate_rejects_a_bad_template_naming_field_and_line(haproxy_bin: str, tmp_path: Path) -> None:
    doc = yaml.safe_load(EXAMPLE.read_text())
    doc["spec"]["templateSnippets"] = {"backends-100-mine": {"template": "backend x\n    {{ oops( }}\n"}}
    path = tmp_path / "bad.yaml"
    path.write_text(yaml.safe_dump(doc))
    out = haptic("validate", "-f", str(path), "--haproxy-binary", haproxy_bin)
    assert out.returncode == 2
    assert "spec.templateSnippets.backends-100-mine.template" in out.stderr and "line 2" in out.stderr


def test_dump_rendered_prints_files_but_not_certificates(haproxy_bin: str) -> None:
    out = haptic(
        "validate", "-f", str(EXAMPLE), "--haproxy-binary", haproxy_bin, "--test", "tls-termination", "--dump-rendered"
    )
    assert out.returncode == 0
    assert "===== tls-termination: haproxy.cfg =====" in out.stdout
    assert "===== tls-termination: crt_lists/crt-list.txt =====" in out.stdout
    assert "BEGIN PRIVATE KEY" not in out.stdout


def test_render_writes_config_and_aux_files_and_skips_hostile_objects(tmp_path: Path) -> None:
    doc = yaml.safe_load(EXAMPLE.read_text())
    fixtures = doc["spec"]["validationTests"]["_global"]["fixtures"]
    tls = doc["spec"]["validationTests"]["tls-termination"]["fixtures"]
    hostile = doc["spec"]["validationTests"]["hostile-input"]["fixtures"]["ingresses"]
    fixtures = {**fixtures, "secrets": tls["secrets"], "ingresses": tls["ingresses"] + hostile}
    fixture_file = tmp_path / "fixtures.yaml"
    fixture_file.write_text(yaml.safe_dump(fixtures))
    out_dir = tmp_path / "out"
    out = haptic("render", "-f", str(EXAMPLE), "--fixtures", str(fixture_file), "-o", str(out_dir))
    assert out.returncode == 0, out.stderr
    written = sorted(str(p.relative_to(out_dir)) for p in out_dir.rglob("*") if p.is_file())
    assert written == [
        "general/crt-list.txt",
        "haproxy.cfg",
        "maps/hosts.map",
        "maps/path-exact.map",
        "maps/path-prefix.map",
        "ssl/shop_shop-tls.pem",
    ]
    config = (out_dir / "haproxy.cfg").read_text()
    assert "backend ing_shop_web_web_80" in config and "evil" not in config
    assert "warning: skipping Ingress 'shop'/'evil-host'" in out.stderr
    stdout_run = haptic("render", "-f", str(EXAMPLE), "--fixtures", str(fixture_file))
    assert stdout_run.returncode == 0 and stdout_run.stdout == config


def test_render_reports_bad_fixtures(tmp_path: Path) -> None:
    fixture_file = tmp_path / "fixtures.yaml"
    fixture_file.write_text(yaml.safe_dump({"gizmos": [{"metadata": {"name": "x"}}]}))
    out = haptic("render", "-f", str(EXAMPLE), "--fixtures", str(fixture_file))
    assert out.returncode == 2 and "fixtures.gizmos: not a watched resource" in out.stderr
