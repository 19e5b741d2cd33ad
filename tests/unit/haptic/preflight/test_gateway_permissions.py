"""A gateway-library config needs list/watch of the Gateway API objects and patch of the statuses it writes."""

from __future__ import annotations

import yaml

from haptic.config.models import load_config
from haptic.preflight.permissions import required_permissions
from haptic.templating.libraries import expand_libraries
from tests.support.paths import REPO


def test_gateway_config_permissions() -> None:
    doc = yaml.safe_load((REPO / "examples" / "gateway" / "haproxytemplateconfig.yaml").read_text())
    spec = load_config(expand_libraries(doc)).spec
    needed = {(p.verb, p.group, p.resource, p.subresource)
              for p in required_permissions(spec, namespace="haptic-system", config_name="c", secret_name="s",
                                            webhook=False)}
    group = "gateway.networking.k8s.io"
    for resource in ("gatewayclasses", "gateways", "httproutes"):
        assert ("patch", group, resource, "status") in needed
        assert ("watch", group, resource, "") in needed
    assert ("list", group, "referencegrants", "") in needed
    assert ("patch", group, "referencegrants", "status") not in needed
    assert ("list", "", "namespaces", "") in needed
