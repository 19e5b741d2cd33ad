"""HAProxy capabilities derived from the local ``haproxy -vv`` output, exposed to templates."""

from __future__ import annotations

import re
from typing import Any

_VERSION = re.compile(r"(?:HAProxy|HA-Proxy) version (\d+)\.(\d+)(?:\.(\d+))?")


def capabilities_from_version_output(text: str) -> dict[str, Any]:
    """Parses ``haproxy -vv`` text. Unknown output gives a conservative 2.6 baseline."""
    match = _VERSION.search(text)
    major, minor, patch = (int(match.group(1)), int(match.group(2)), int(match.group(3) or 0)) if match else (2, 6, 0)
    version = (major, minor)
    features = set(re.findall(r"\+([A-Z0-9_]+)", text))
    return {
        "haproxy_version": f"{major}.{minor}.{patch}",
        "version_major": major,
        "version_minor": minor,
        "is_enterprise": "Enterprise" in text or "hapee" in text.lower(),
        "supports_crt_list": True,
        "supports_map_storage": True,
        "supports_general_storage": True,
        "supports_runtime_maps": True,
        "supports_runtime_servers": True,
        "supports_quic": "QUIC" in features,
        "supports_ocsp_update": version >= (2, 8),
        "supports_http_after_response": version >= (2, 2),
        "supports_prometheus": "PROMEX" in features or "Prometheus exporter" in text,
        "supports_lua": "LUA" in features,
        "supports_pcre2": "PCRE2" in features,
    }
