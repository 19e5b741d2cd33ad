"""`python bench/X.py` puts bench/ first on sys.path: a script named like a package would shadow it."""

from __future__ import annotations

from tests.support.paths import REPO

ROOT = REPO


def test_no_bench_script_shadows_a_project_package() -> None:
    packages = {p.parent.name for p in ROOT.glob("*/__init__.py")}
    assert {"haptic", "simulator"} <= packages
    clashes = sorted(p.name for p in (ROOT / "bench").glob("*.py") if p.stem in packages)
    assert clashes == [], f"bench scripts shadow project packages: {clashes}"
