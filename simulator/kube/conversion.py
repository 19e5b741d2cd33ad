"""Conversion between served versions of a built-in kind stored once: ``autoscaling/v1`` and ``autoscaling/v2``
HorizontalPodAutoscalers (stored as v2, the storage version).

As the API server converts them: v1's ``targetCPUUtilizationPercentage`` is v2's CPU ``Utilization``
metric and ``currentCPUUtilizationPercentage`` its current value; what v1 cannot express (other
metrics, ``behavior``, conditions) travels in the ``autoscaling.alpha.kubernetes.io/*`` annotations of
the v1 form, so that a round trip through v1 loses nothing.
"""

from __future__ import annotations

import contextlib
import json
from typing import TYPE_CHECKING, Any

from haptic.k8s.api import JSON

from .patching import json_copy, json_patch, merge_patch, strategic_merge
from .resources import ResourceType, TypeRegistry
from .validation import bad_request

if TYPE_CHECKING:
    from .store import FakeKubeAPI

_HPA = ("autoscaling", "horizontalpodautoscalers")
STORAGE_VERSIONS = {_HPA: "v2"}
_METRICS = "autoscaling.alpha.kubernetes.io/metrics"
_CURRENT = "autoscaling.alpha.kubernetes.io/current-metrics"
_CONDITIONS = "autoscaling.alpha.kubernetes.io/conditions"
_BEHAVIOR = "autoscaling.alpha.kubernetes.io/behavior"


def converts(rt: ResourceType) -> bool:
    """Whether ``rt`` is served in another shape than it is stored in."""
    stored = STORAGE_VERSIONS.get(rt.storage_key)
    return stored is not None and stored != rt.version


def storage_type(types: TypeRegistry, rt: ResourceType) -> ResourceType:
    stored = types.find(rt.group, STORAGE_VERSIONS.get(rt.storage_key, rt.version), rt.plural)
    return stored or rt


def _is_cpu_utilization(metric: Any) -> bool:
    resource = metric.get("resource") or {} if isinstance(metric, dict) else {}
    return (metric.get("type") == "Resource" and resource.get("name") == "cpu"
            and (resource.get("target") or resource.get("current") or {}).get("averageUtilization") is not None
            and (resource.get("target") or {}).get("type", "Utilization") == "Utilization")


def _split_meta(obj: JSON) -> tuple[JSON, dict[str, str]]:
    meta = dict(obj.get("metadata") or {})
    return meta, dict(meta.get("annotations") or {})


def _set_annotations(meta: JSON, annotations: dict[str, str]) -> None:
    if annotations:
        meta["annotations"] = annotations
    else:
        meta.pop("annotations", None)


def _hpa_to_v1(obj: JSON) -> JSON:
    meta, annotations = _split_meta(obj)
    spec = obj.get("spec") or {}
    out: JSON = {**{k: v for k, v in obj.items() if k not in ("spec", "status")}, "apiVersion": "autoscaling/v1"}
    v1_spec: JSON = {k: spec[k] for k in ("scaleTargetRef", "minReplicas", "maxReplicas") if k in spec}
    others = []
    for metric in spec.get("metrics") or []:
        if "targetCPUUtilizationPercentage" not in v1_spec and _is_cpu_utilization(metric):
            v1_spec["targetCPUUtilizationPercentage"] = metric["resource"]["target"]["averageUtilization"]
        else:
            others.append(metric)
    if others:
        annotations[_METRICS] = json.dumps(others, separators=(",", ":"))
    if spec.get("behavior"):
        annotations[_BEHAVIOR] = json.dumps(spec["behavior"], separators=(",", ":"))
    out["spec"] = v1_spec
    if "status" in obj:
        status = obj.get("status") or {}
        v1_status: JSON = {k: status[k] for k in ("observedGeneration", "lastScaleTime", "currentReplicas",
                                                    "desiredReplicas") if k in status}
        v1_status.setdefault("currentReplicas", 0)
        v1_status.setdefault("desiredReplicas", 0)
        current = []
        for metric in status.get("currentMetrics") or []:
            value = ((metric.get("resource") or {}).get("current") or {}).get("averageUtilization")
            if "currentCPUUtilizationPercentage" not in v1_status and metric.get("type") == "Resource" and \
                    (metric.get("resource") or {}).get("name") == "cpu" and value is not None:
                v1_status["currentCPUUtilizationPercentage"] = value
            else:
                current.append(metric)
        if current:
            annotations[_CURRENT] = json.dumps(current, separators=(",", ":"))
        if status.get("conditions"):
            annotations[_CONDITIONS] = json.dumps(status["conditions"], separators=(",", ":"))
        out["status"] = v1_status
    _set_annotations(meta, annotations)
    out["metadata"] = meta
    return out


def _annotation_list(annotations: dict[str, str], key: str) -> list[Any]:
    raw = annotations.pop(key, None)
    if raw is None:
        return []
    try:
        value = json.loads(raw)
    except ValueError:
        return []
    return value if isinstance(value, list) else []


def _hpa_to_v2(obj: JSON) -> JSON:
    meta, annotations = _split_meta(obj)
    spec = obj.get("spec") or {}
    out: JSON = {**{k: v for k, v in obj.items() if k not in ("spec", "status")},
                 "apiVersion": "autoscaling/v2"}
    v2_spec: JSON = {k: spec[k] for k in ("scaleTargetRef", "minReplicas", "maxReplicas") if k in spec}
    metrics = _annotation_list(annotations, _METRICS)
    if spec.get("targetCPUUtilizationPercentage") is not None:
        metrics.insert(0, {"type": "Resource", "resource": {"name": "cpu", "target": {
            "type": "Utilization", "averageUtilization": spec["targetCPUUtilizationPercentage"]}}})
    if metrics:
        v2_spec["metrics"] = metrics
    behavior = annotations.pop(_BEHAVIOR, None)
    if behavior is not None:
        with contextlib.suppress(ValueError):  # a hand-edited annotation that is no JSON is dropped
            v2_spec["behavior"] = json.loads(behavior)
    out["spec"] = v2_spec
    current = _annotation_list(annotations, _CURRENT)
    conditions = _annotation_list(annotations, _CONDITIONS)
    if "status" in obj:
        status = obj.get("status") or {}
        v2_status: JSON = {k: status[k] for k in ("observedGeneration", "lastScaleTime", "currentReplicas",
                                                    "desiredReplicas") if k in status}
        if status.get("currentCPUUtilizationPercentage") is not None:
            current.insert(0, {"type": "Resource", "resource": {"name": "cpu", "current": {
                "averageUtilization": status["currentCPUUtilizationPercentage"]}}})
        if current:
            v2_status["currentMetrics"] = current
        if conditions:
            v2_status["conditions"] = conditions
        out["status"] = v2_status
    _set_annotations(meta, annotations)
    out["metadata"] = meta
    return out


def to_served(rt: ResourceType, obj: JSON) -> JSON:
    """The stored object as ``rt``'s version shows it."""
    if not converts(rt) or obj.get("apiVersion") == rt.api_version:
        return obj
    return _hpa_to_v1(json_copy(obj))


def to_storage(rt: ResourceType, body: Any) -> Any:
    """A body written through ``rt``'s version, in the storage version's shape."""
    if not converts(rt) or not isinstance(body, dict):
        return body
    return _hpa_to_v2(json_copy(body))


def patch(api: FakeKubeAPI, rt: ResourceType, namespace: str | None, name: str, patch_type: str, body: Any,
          subresource: str | None, manager: str | None) -> JSON:
    """A merge, JSON or strategic patch written against ``rt``'s version: applied to that version's view of
    the stored object, then stored (with the view's resourceVersion as precondition)."""
    stored_rt = storage_type(api.types, rt)
    view = to_served(rt, api.get(stored_rt, namespace, name))
    if patch_type == "json":
        patched = json_patch(view, body)
    elif not isinstance(body, dict):
        raise bad_request(f"a {patch_type} patch must be a JSON object")
    elif patch_type == "strategic":
        patched = strategic_merge(view, body, (), rt.kind)
    else:
        patched = merge_patch(view, body)
    return api.update(stored_rt, namespace, name, to_storage(rt, patched), subresource, manager)
