"""``controller_env()``: the environment the controller's process runs with (its image sets the same).

``GLIBC_TUNABLES=glibc.malloc.hugetlb=1``: glibc marks the memory it maps for large blocks and its heap as
transparent-huge-page candidates (``madvise(MADV_HUGEPAGE)``; glibc 2.35 and newer, ignored by older ones and
by other C libraries). Every change of a 10,000-Ingress cluster builds a few 4 MB texts (the rendered config,
its pieces joined); in 4 KiB pages each fresh one cost about 1,100 page faults, 2 in huge pages: on the 2-core
bench machine an endpoint change at 10,000 Ingresses went from 49 to 35 ms of controller CPU, and a new Ingress
from 433 to 346 ms, peak RSS the same (``bench/reconcile.py``). The kernel decides: with transparent huge pages
``never`` it is a no-op. A ``GLIBC_TUNABLES`` already set is the operator's choice and is kept.
"""

from __future__ import annotations

import os
from collections.abc import Mapping

__all__ = ["MALLOC_TUNABLES", "controller_env"]

MALLOC_TUNABLES = "glibc.malloc.hugetlb=1"


def controller_env(environ: Mapping[str, str] | None = None) -> dict[str, str]:
    """What to add to ``environ`` (default: this process's) for a controller process started from it."""
    source = os.environ if environ is None else environ
    return {} if "GLIBC_TUNABLES" in source else {"GLIBC_TUNABLES": MALLOC_TUNABLES}
