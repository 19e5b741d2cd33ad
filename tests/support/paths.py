"""The repository root, for tests that read its files (examples, deploy manifests, scenarios).

One place, so that moving a test file never changes which file it reads.
"""

from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
