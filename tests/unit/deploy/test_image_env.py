"""The controller image's environment is the one haptic.core.process_env says the controller runs with (the
benches and the local tier start it so): a figure measured there is the image's."""

from __future__ import annotations

import re

from haptic.core.process_env import MALLOC_TUNABLES
from tests.unit.deploy.test_manifests import DEPLOY


def test_the_image_runs_with_the_controllers_malloc_tunables() -> None:
    text = re.sub(r"\\\n", " ", (DEPLOY / "Dockerfile").read_text())
    env_words = [word for line in text.splitlines() if line.strip().startswith("ENV ") for word in line.split()]
    assert f"GLIBC_TUNABLES={MALLOC_TUNABLES}" in env_words, env_words
