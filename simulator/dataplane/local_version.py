"""The version a fake Dataplane reports by default: the local haproxy's major.minor.

The controller admits only pods whose Dataplane reports its own ``haproxy -v`` major.minor (as the
original does), and a real Dataplane sidecar runs next to the same haproxy as the controller image.
"""

from __future__ import annotations

import functools
import logging

from haptic.validation.capabilities import detect_capabilities

__all__ = ["FALLBACK_API_VERSION", "local_api_version"]

FALLBACK_API_VERSION = "v2.6.0 sim"

_log = logging.getLogger(__name__)


@functools.cache
def local_api_version(binary: str = "haproxy") -> str:
    """``v<major>.<minor>.0 sim`` for ``binary -vv``; 2.6 (with a warning) when it cannot run."""
    try:
        capabilities = detect_capabilities(binary)
    except (RuntimeError, OSError) as exc:
        _log.warning("cannot run %s -vv (%s): fake Dataplanes report %s", binary, exc, FALLBACK_API_VERSION)
        return FALLBACK_API_VERSION
    return f"v{capabilities['version_major']}.{capabilities['version_minor']}.0 sim"
