"""The statuses the ``ingress`` library declares (``set_ingress_statuses``) for the Ingresses it serves.

``set_ingress_statuses(ingresses, addresses, port)`` declares for each Ingress (the class-filtered list,
the ones it leaves out included) ``status.loadBalancer.ingress``: one point per address (``ip``, or
``hostname`` for a name). An Ingress this render leaves out (an ``exclude`` notice: a host another
namespace owns, hostile fields; or per-object isolation after ``haproxy -c`` rejected its lines) carries
the reason as its port status error, the one error field an Ingress status has:
``ports: [{port, protocol: TCP, error: haproxy-haptic.org/<Reason>}]``. Rendered again, the error goes.

The addresses come from ``haptic.templating.addresses.published_addresses``.
Pure functions over the current render's notices; no I/O.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from haptic.core.identity import same_input, same_items
from haptic.names import ANNOTATION_PREFIX
from haptic.templating import fragments
from haptic.templating.addresses import is_hostname
from haptic.templating.context import IdentityMemo, current_render
from haptic.templating.notices import REJECTED_BY_HAPROXY, ObjectRef, object_ref
from haptic.templating.statuses import ObjectStatus

#: each Ingress's reference and the status declared for it, by the Ingress's identity (the same object has the
#: same reference); the status is reused while it is the same (equal statuses are kept as one object)
_REFS: IdentityMemo[tuple[ObjectRef, ObjectStatus | None]] = IdentityMemo()
_ROUTED: dict[str, Any] = {}
#: the last call: (its Ingresses as given and as a list, the reasons, the routed status, the port, what it declared
#: by key); the same objects with the same reasons and addresses declare the same statuses, at once
_LAST: list[tuple[Iterable[Any], list[Any], dict[tuple[str, str, str], str], Any, int,
                 dict[tuple[str, str, str], Any]]] = []


def _point(address: str) -> dict[str, Any]:
    return {"hostname": address} if is_hostname(address) else {"ip": address}


def set_ingress_statuses(ingresses: Iterable[Any], addresses: Iterable[Any], port: Any = 8080) -> str:
    """``set_status`` of each Ingress (none without addresses: nothing to publish yet); renders nothing.
    Declared directly (not through ``set_statuses``): thousands of Ingresses share two status values."""
    points = [_point(str(a)) for a in addresses]
    if not points:
        return ""
    fragments.uncacheable()  # reads the render's notices and writes statuses straight into its state
    state = current_render()
    reasons: dict[tuple[str, str, str], str] = {}
    for notice in state.notices.values():
        if notice.excluded:
            reasons.setdefault(notice.ref.key, notice.reason)
    for key in state.skip:
        reasons.setdefault(key, REJECTED_BY_HAPROXY)
    number = port if isinstance(port, int) and 0 < port < 65536 else 8080
    routed = {"loadBalancer": {"ingress": points}}
    if _ROUTED.get("status") == routed:
        routed = _ROUTED["status"]
    _ROUTED["status"] = routed
    given: list[Any] | None = None
    if _LAST:
        last_given, last, last_reasons, last_routed, last_number, declared_by_key = _LAST[0]
        # the very list of the last call (``ingress_class``'s answer over the same store list) at once
        if last_routed is routed and last_number == number and last_reasons == reasons and (
                same_input(ingresses, last_given, last) or same_items(last, given := list(ingresses))):
            state.declare_statuses(declared_by_key)
            return ""
    if given is None:
        given = list(ingresses)
    declared_now: dict[tuple[str, str, str], Any] = {}
    for ing in given:
        hit = _REFS.get(ing)
        if hit is not None:
            ref, declared = hit
        else:
            found = object_ref(ing)
            if found is None:
                continue
            ref, declared = found, None
        reason = reasons.get(ref.key)
        if reason is not None:
            error = {"port": number, "protocol": "TCP", "error": f"{ANNOTATION_PREFIX}{reason}"}
            status = {"loadBalancer": {"ingress": [{**p, "ports": [error]} for p in points]}}
            declared = ObjectStatus(ref, status, ref.api_version or "networking.k8s.io/v1")
        elif declared is None or declared.status is not routed:
            declared = ObjectStatus(ref, routed, ref.api_version or "networking.k8s.io/v1")
        _REFS.put((ref, declared), ing)
        declared_now[ref.key] = declared
    state.declare_statuses(declared_now)
    _LAST[:] = [(ingresses, given, reasons, routed, number, declared_now)]
    return ""
