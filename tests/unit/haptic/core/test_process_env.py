"""The controller's process environment: glibc's huge-page tunable, unless the operator set tunables."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from haptic.core.process_env import MALLOC_TUNABLES, controller_env

_THP = Path("/sys/kernel/mm/transparent_hugepage/enabled")

# A child holding a 64 MB text, as large as a few rendered configs of 10,000 Ingresses: how much of its
# anonymous memory is in huge pages (kB).
_CHILD = """
text = "x" * (64 << 20)
for line in open("/proc/self/smaps_rollup"):
    if line.startswith("AnonHugePages:"):
        print(int(line.split()[1]))
"""


def test_adds_the_tunable_when_none_is_set() -> None:
    assert controller_env({"PATH": "/bin"}) == {"GLIBC_TUNABLES": MALLOC_TUNABLES}


def test_keeps_tunables_the_operator_set() -> None:
    assert controller_env({"GLIBC_TUNABLES": "glibc.malloc.arena_max=2"}) == {}


def _huge_kib(env: dict[str, str]) -> int:
    out = subprocess.run([sys.executable, "-c", _CHILD], capture_output=True, text=True, check=True, env=env)
    return int(out.stdout)


def test_large_texts_get_huge_pages_with_it() -> None:
    mode = _THP.read_text().strip() if _THP.exists() else ""
    if "[madvise]" not in mode:
        pytest.skip(f"transparent huge pages are not 'madvise' here ({_THP}: {mode or 'absent'}): with 'always' "
                    "every process gets them, with 'never' none does, and the tunable changes nothing")
    assert _huge_kib({"PATH": "/usr/bin:/bin"}) == 0
    assert _huge_kib({"PATH": "/usr/bin:/bin", **controller_env({})}) >= 32 << 10
