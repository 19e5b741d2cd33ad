"""``python -m haptic.templating.dialects [NAME...]``: the README tables of the dialects (all by default)."""

from __future__ import annotations

import sys

from haptic.templating.dialects import markdown_table
from haptic.templating.dialects.registry import DIALECTS

for name in sys.argv[1:] or sorted(DIALECTS):
    sys.stdout.write(markdown_table(DIALECTS[name]))
