"""``HAProxyValidator.relocate`` moves the configured directories into the validation's temporary root, where a
directory stands on its own (not continuing a path or a word), as the look-behind pattern it replaced did."""

from __future__ import annotations

import random
import re
from pathlib import Path

from haptic.validation.haproxy_check import HAProxyValidator


def test_relocation_rewrites_exactly_what_a_look_behind_pattern_rewrites() -> None:
    validator = HAProxyValidator()
    root = Path("/tmp/haptic-validate-x")
    dirs = ["/etc/haproxy/general", "/etc/haproxy/maps", "/etc/haproxy/ssl", "/etc/haproxy"]
    bounded = re.compile(r"(?<![\w./-])(" + "|".join(re.escape(d) for d in dirs) + r")(?=/|\s|$|\"|')")
    rng = random.Random(5)
    atoms = ["/etc/haproxy", "/maps", "/ssl", "x", "é", ".", "-", "_", " ", "\n", '"', "'", "/", "~", "crt ",
             "/etc/haproxy/maps/a.map", "a/etc/haproxy"]
    for _ in range(5000):
        text = "".join(rng.choice(atoms) for _ in range(rng.randint(0, 10)))
        expected = bounded.sub(lambda m: str(root) + m.group(1), text)
        assert validator.relocate(text, root) == expected, repr(text)
