"""examples/gateway passes its embedded validationTests with the real haproxy (``haptic validate``)."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from tests.support.paths import REPO

pytestmark = pytest.mark.haproxy

EXAMPLE = REPO / "examples" / "gateway" / "haproxytemplateconfig.yaml"


def test_the_gateway_example_passes_all_embedded_tests(haproxy_bin: str) -> None:
    out = subprocess.run([sys.executable, "-m", "haptic.cli", "validate", "-f", str(EXAMPLE), "--haproxy-binary",
                          haproxy_bin, "-o", "json"], capture_output=True, text=True, cwd=REPO)
    assert out.returncode == 0, out.stdout + out.stderr
    data = json.loads(out.stdout)
    names = {t["name"] for t in data["tests"]}
    assert {"_global", "path-precedence", "weighted-backends", "filters", "listeners-and-tls", "hostile-input"} <= names
    assert data["summary"]["failed"] == 0 and data["summary"]["passed"] == len(names)
