"""The permission list (haptic/preflight/permissions.py, which deploy/rbac.yaml is tested against) covers
every request a running controller really makes: a local stack's controller subprocess talks to the
fake API over HTTP; its request log, turned into RBAC attributes, must hold nothing the list lacks."""

from __future__ import annotations

from collections.abc import AsyncIterator
from urllib.parse import parse_qs, urlsplit

import pytest

from haptic.config.models import load_config
from haptic.preflight.permissions import Permission, required_permissions
from simulator.local.stack import LocalStack, StackOptions

pytestmark = pytest.mark.haproxy
NS, CONFIG = "haptic-system", "haptic-config"


def attributes(method: str, path_qs: str) -> Permission | None:
    """What the API server's RequestInfo makes of one request (None: not a resource request)."""
    url = urlsplit(path_qs)
    parts = [p for p in url.path.split("/") if p]
    if parts[:1] == ["api"] and len(parts) >= 2:
        group, rest = "", parts[2:]
    elif parts[:1] == ["apis"] and len(parts) >= 3:
        group, rest = parts[1], parts[3:]
    else:
        return None
    namespace = None
    if len(rest) >= 2 and rest[0] == "namespaces" and len(rest) != 2:
        namespace, rest = rest[1], rest[2:]
    if not rest:
        return None
    resource, name, sub = rest[0], rest[1] if len(rest) > 1 else "", rest[2] if len(rest) > 2 else ""
    query = parse_qs(url.query)
    selector = (query.get("fieldSelector") or [""])[0]
    if not name and selector.startswith("metadata.name="):
        name = selector.removeprefix("metadata.name=")
    if method == "GET":
        verb = "watch" if (query.get("watch") or [""])[0] in ("true", "1") else "get" if rest[1:] else "list"
    else:
        verb = {"POST": "create", "PUT": "update", "PATCH": "patch", "DELETE": "delete"}[method]
    return Permission(verb, group, resource, sub, namespace, name)


def covered(request: Permission, needed: list[Permission]) -> bool:
    return any(p.verb == request.verb and p.group == request.group and p.resource == request.resource
               and p.subresource == request.subresource and (p.namespace is None or p.namespace == request.namespace)
               and (not p.name or p.name == request.name or request.verb == "create") for p in needed)


@pytest.fixture
async def stack(haproxy_bin: str) -> AsyncIterator[LocalStack]:
    options = StackOptions(pods=2, replicas=1, haproxy_bin=haproxy_bin, namespace=NS, config_name=CONFIG,
                           log_level="warning")
    async with LocalStack(options) as running:
        assert await running.settle(60.0)
        yield running


async def test_every_request_of_the_controller_is_in_the_permission_list(stack: LocalStack) -> None:
    assert stack.kube_server is not None
    config = load_config(stack.template_config())
    needed = required_permissions(config.spec, namespace=NS, config_name=CONFIG,
                                  secret_name=config.spec.credentials_secret_ref.name, webhook=False)
    made = {a for method, path, _ in stack.kube_server.request_log if (a := attributes(method, path)) is not None}
    assert {p.resource for p in made} >= {"pods", "haproxytemplateconfigs", "haproxycfgs", "leases", "secrets"}
    assert sorted(p.describe() for p in made if not covered(p, needed)) == []
    assert attributes("GET", "/api/v1/namespaces/x/pods?watch=true") == Permission("watch", "", "pods", "", "x", "")
