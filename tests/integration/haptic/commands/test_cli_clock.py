"""``haptic render`` hands templates the system's wall time for ``now()`` (the controller hands its clock)."""

from __future__ import annotations

import subprocess
import sys
from datetime import UTC, datetime, timedelta
from pathlib import Path

import yaml

from tests.support.paths import REPO

CONFIG = {
    "credentialsSecretRef": {"name": "creds"},
    "podSelector": {"matchLabels": {"app": "haproxy"}},
    "watchedResources": {"things": {"apiVersion": "v1", "resources": "things", "indexBy": ["metadata.name"]}},
    "haproxyConfig": {"template": "# rendered {{ now() | format_time }}\n"},
}


def test_render_command_gives_now_the_system_time(tmp_path: Path) -> None:
    config, fixtures = tmp_path / "config.yaml", tmp_path / "fixtures.yaml"
    config.write_text(yaml.safe_dump(CONFIG))
    fixtures.write_text(yaml.safe_dump({"things": []}))
    before = datetime.now(UTC).replace(microsecond=0)
    out = subprocess.run([sys.executable, "-m", "haptic.cli", "render", "-f", str(config), "--fixtures", str(fixtures)],
                         capture_output=True, text=True, cwd=REPO)
    assert out.returncode == 0, out.stderr
    stamp = datetime.strptime(out.stdout.strip().removeprefix("# rendered "), "%Y-%m-%dT%H:%M:%S%z")
    # Ordering only (no duration is asserted): the stamp lies between the command's start and now.
    assert before <= stamp <= datetime.now(UTC) + timedelta(seconds=1)
