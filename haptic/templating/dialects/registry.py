"""The dialects by name (what ``extraContext.annotationDialect`` and ``migrate-report --dialect`` name)."""

from __future__ import annotations

from haptic.templating.dialects import Dialect
from haptic.templating.dialects.haproxytech import HAPROXYTECH
from haptic.templating.dialects.nginx import NGINX

DIALECTS: dict[str, Dialect] = {d.name: d for d in (NGINX, HAPROXYTECH)}


def dialect(name: str) -> Dialect:
    try:
        return DIALECTS[name]
    except KeyError:
        raise ValueError(f"unknown annotation dialect {name!r} (known: {', '.join(sorted(DIALECTS))})") from None
