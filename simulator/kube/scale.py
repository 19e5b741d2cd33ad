"""The ``scale`` subresource (``autoscaling/v1`` ``Scale``) of Deployments, ReplicaSets, StatefulSets and
ReplicationControllers, as ``kubectl scale`` and HorizontalPodAutoscalers use it.

A Scale is a view of its parent: ``spec.replicas`` and ``status.replicas`` are the parent's, the
selector is the parent's label selector in string form, and ``metadata`` (``resourceVersion``
included) is the parent's. Writing a Scale writes the parent's ``spec.replicas`` with the Scale's
``resourceVersion`` as a precondition, so a stale Scale gets the parent's 409.
"""

from __future__ import annotations

from typing import Any

from haptic.k8s.api import JSON, ApiError, NotFound

from . import field_errors
from .field_errors import invalid_value
from .patching import json_patch, merge_patch
from .resources import ResourceType
from .selectors import label_selector_string
from .store import FakeKubeAPI
from .validation import bad_request, check_body

SCALE_GROUP_VERSION = ("autoscaling", "v1")
_SCALE_RT = ResourceType("autoscaling", "v1", "Scale", "scale", True)


def _selector_of(rt: ResourceType, obj: JSON) -> str:
    spec = obj.get("spec") or {}
    selector = spec.get("selector")
    if rt.group == "" and not selector:
        # A ReplicationController without a selector selects its template's labels.
        selector = ((spec.get("template") or {}).get("metadata") or {}).get("labels") or {}
    return label_selector_string(selector)


def scale_of(rt: ResourceType, obj: JSON) -> JSON:
    meta = obj["metadata"]
    spec = obj.get("spec") or {}
    replicas = spec.get("replicas")
    status: JSON = {"replicas": int((obj.get("status") or {}).get("replicas") or 0)}
    selector = _selector_of(rt, obj)
    if selector:
        status["selector"] = selector
    return {
        "kind": "Scale",
        "apiVersion": "autoscaling/v1",
        "metadata": {k: meta[k] for k in ("name", "namespace", "uid", "resourceVersion", "creationTimestamp")
                     if k in meta},
        "spec": {"replicas": 1 if replicas is None else replicas},
        "status": status,
    }


def _check_scale(rt: ResourceType, name: str, body: Any) -> int:
    if not isinstance(body, dict):
        raise bad_request("the body of a Scale request must be a JSON object")
    kind, api_version = body.get("kind"), body.get("apiVersion")
    if kind not in (None, "Scale") or api_version not in (None, "autoscaling/v1"):
        raise bad_request(f'the body of a scale request must be an autoscaling/v1 Scale, not {api_version} {kind}')
    check_body(_SCALE_RT, {k: v for k, v in body.items() if k not in ("kind", "apiVersion")}, name)
    replicas = (body.get("spec") or {}).get("replicas")
    if replicas is None:
        replicas = 0  # an omitted spec.replicas is the zero value, as the server decodes it
    if not isinstance(replicas, int) or isinstance(replicas, bool):
        raise bad_request(f"Scale in version \"v1\" cannot be handled as a Scale: json: cannot unmarshal "
                          f"{type(replicas).__name__} into Go struct field ScaleSpec.spec.replicas of type int32")
    if replicas < 0:
        raise field_errors.invalid("Scale", "autoscaling", name, [invalid_value(
            "spec.replicas", replicas, "must be greater than or equal to 0")])
    return replicas


def _scalable(rt: ResourceType) -> None:
    if "scale" not in rt.subresources:
        raise NotFound(f"the server could not find the requested resource ({rt.describe()}/scale)",
                       {"kind": rt.plural, "group": rt.group})


def read(api: FakeKubeAPI, rt: ResourceType, namespace: str | None, name: str) -> JSON:
    _scalable(rt)
    return scale_of(rt, api.get(rt, namespace, name))


def write(api: FakeKubeAPI, rt: ResourceType, namespace: str | None, name: str, body: Any,
          manager: str | None) -> JSON:
    """PUT of a Scale: sets the parent's ``spec.replicas`` (a set ``resourceVersion`` must be current)."""
    _scalable(rt)
    replicas = _check_scale(rt, name, body)
    current = api.get(rt, namespace, name)
    wanted_rv = (body.get("metadata") or {}).get("resourceVersion") or current["metadata"]["resourceVersion"]
    patch = {"metadata": {"resourceVersion": str(wanted_rv)}, "spec": {"replicas": replicas}}
    return scale_of(rt, api.patch(rt, namespace, name, "merge", patch, None, manager))


def patch(api: FakeKubeAPI, rt: ResourceType, namespace: str | None, name: str, patch_type: str, body: Any,
          manager: str | None) -> JSON:
    """PATCH of a Scale (merge, strategic or JSON patch, applied to the Scale view)."""
    _scalable(rt)
    current = scale_of(rt, api.get(rt, namespace, name))
    if patch_type in ("merge", "strategic"):
        if not isinstance(body, dict):
            raise bad_request("a merge patch must be a JSON object")
        patched = merge_patch(current, body)  # a Scale has no lists: strategic merge is a merge
    elif patch_type == "json":
        patched = json_patch(current, body)
    else:
        raise ApiError(415, "UnsupportedMediaType", f"the scale subresource does not support {patch_type} patches")
    return write(api, rt, namespace, name, patched, manager)
