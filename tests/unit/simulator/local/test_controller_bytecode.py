"""A local controller subprocess keeps compiled bytecode outside the source tree, whatever the developer's
environment says (``PYTHONDONTWRITEBYTECODE``): a controller image ships it, and without it every start
compiled all of haptic's sources again."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from simulator.local.process import bytecode_env

ROOT = Path(__file__).resolve().parents[4]


def test_a_controller_process_writes_its_bytecode_to_a_cache_outside_the_tree() -> None:
    env = {**os.environ, "PYTHONDONTWRITEBYTECODE": "1", **bytecode_env()}  # merged as ControllerProcess does
    probe = "import json, sys; print(json.dumps([sys.dont_write_bytecode, sys.pycache_prefix]))"
    out = subprocess.run([sys.executable, "-c", probe], env=env, capture_output=True, text=True, check=True)
    dont_write, prefix = json.loads(out.stdout)
    assert dont_write is False
    assert prefix and not Path(prefix).resolve().is_relative_to(ROOT)
