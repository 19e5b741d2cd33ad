"""What the API server fills in for workloads, Pods and Services (``SetDefaults_*`` and the admission plugins
every cluster runs), the status new objects start with, and which kinds carry ``metadata.generation``.

Defaults apply to every write (the server defaults whatever it decodes), so that an unchanged object stays
unchanged; a status skeleton only on create.
"""

from __future__ import annotations

import copy
from typing import Any

from haptic.k8s.api import JSON

from . import models
from .resources import ResourceType

# Built-in kinds whose strategies set metadata.generation (custom resources always have it).
GENERATION_KINDS = frozenset({
    ("apps", "deployments"), ("apps", "statefulsets"), ("apps", "daemonsets"), ("apps", "replicasets"),
    ("batch", "jobs"), ("batch", "cronjobs"), ("", "replicationcontrollers"),
    ("networking.k8s.io", "ingresses"), ("networking.k8s.io", "ingressclasses"),
    ("networking.k8s.io", "networkpolicies"), ("discovery.k8s.io", "endpointslices"),
    ("policy", "poddisruptionbudgets"), ("autoscaling", "horizontalpodautoscalers"),
    ("apiextensions.k8s.io", "customresourcedefinitions"),
    ("admissionregistration.k8s.io", "validatingwebhookconfigurations"),
    ("admissionregistration.k8s.io", "mutatingwebhookconfigurations"),
})
_WORKLOADS = {("apps", "deployments"), ("apps", "statefulsets"), ("apps", "daemonsets"), ("apps", "replicasets"),
              ("batch", "jobs"), ("", "replicationcontrollers")}
_STATUS_ON_CREATE: dict[tuple[str, str], JSON] = {
    **{key: {} for key in (*_WORKLOADS, ("batch", "cronjobs"))},
    ("", "services"): {"loadBalancer": {}},
    ("networking.k8s.io", "ingresses"): {"loadBalancer": {}},
}
_NOT_READY_TOLERATIONS = [
    {"key": "node.kubernetes.io/not-ready", "operator": "Exists", "effect": "NoExecute", "tolerationSeconds": 300},
    {"key": "node.kubernetes.io/unreachable", "operator": "Exists", "effect": "NoExecute", "tolerationSeconds": 300},
]


def has_generation(rt: ResourceType) -> bool:
    return rt.custom or rt.storage_key in GENERATION_KINDS


def _image_pull_policy(image: Any) -> str:
    name = str(image or "")
    if "@" in name:
        return "IfNotPresent"
    last = name.rsplit("/", 1)[-1]
    tag = last.rsplit(":", 1)[1] if ":" in last else "latest"
    return "Always" if tag == "latest" else "IfNotPresent"


def _container(container: Any) -> None:
    if not isinstance(container, dict):
        return
    container.setdefault("imagePullPolicy", _image_pull_policy(container.get("image")))
    container.setdefault("terminationMessagePath", "/dev/termination-log")
    container.setdefault("terminationMessagePolicy", "File")
    container.setdefault("resources", {})
    for port in container.get("ports") or []:
        if isinstance(port, dict):
            port.setdefault("protocol", "TCP")


def pod_spec(spec: Any) -> None:
    """``SetDefaults_PodSpec`` and its containers (pods and pod templates alike)."""
    if not isinstance(spec, dict):
        return
    spec.setdefault("restartPolicy", "Always")
    spec.setdefault("terminationGracePeriodSeconds", 30)
    spec.setdefault("dnsPolicy", "ClusterFirst")
    spec.setdefault("securityContext", {})
    spec.setdefault("schedulerName", "default-scheduler")
    for kind in ("initContainers", "containers"):
        for container in spec.get(kind) or []:
            _container(container)


def _qos_class(spec: JSON) -> str:
    requests = limits = 0
    guaranteed = True
    for container in spec.get("containers") or []:
        resources = (container or {}).get("resources") or {}
        container_limits = resources.get("limits") or {}
        container_requests = resources.get("requests") or {}
        requests += len(container_requests)
        limits += len(container_limits)
        if not {"cpu", "memory"} <= set(container_limits) or any(
                container_requests.get(k, container_limits[k]) != container_limits[k] for k in ("cpu", "memory")):
            guaranteed = False
    if not requests and not limits:
        return "BestEffort"
    return "Guaranteed" if guaranteed else "Burstable"


def _pod(obj: JSON) -> None:
    spec = obj.get("spec")
    if not isinstance(spec, dict):
        return
    pod_spec(spec)
    # ServiceAccount, Priority and DefaultTolerationSeconds admission.
    spec.setdefault("serviceAccountName", spec.get("serviceAccount") or "default")
    spec.setdefault("serviceAccount", spec["serviceAccountName"])
    spec.setdefault("enableServiceLinks", True)
    spec.setdefault("priority", 0)
    spec.setdefault("preemptionPolicy", "PreemptLowerPriority")
    tolerations = spec.setdefault("tolerations", [])
    if isinstance(tolerations, list):
        present = {(t.get("key"), t.get("effect")) for t in tolerations if isinstance(t, dict)}
        tolerations.extend(copy.deepcopy(t) for t in _NOT_READY_TOLERATIONS
                           if (t["key"], t["effect"]) not in present)


def _deployment(obj: JSON) -> None:
    spec = obj.get("spec")
    if not isinstance(spec, dict):
        return
    spec.setdefault("replicas", 1)
    spec.setdefault("revisionHistoryLimit", 10)
    spec.setdefault("progressDeadlineSeconds", 600)
    strategy = spec.setdefault("strategy", {})
    if isinstance(strategy, dict):
        strategy.setdefault("type", "RollingUpdate")
        if strategy["type"] == "RollingUpdate":
            rolling = strategy.setdefault("rollingUpdate", {})
            if isinstance(rolling, dict):
                rolling.setdefault("maxUnavailable", "25%")
                rolling.setdefault("maxSurge", "25%")


def _template(obj: JSON) -> None:
    spec = obj.get("spec")
    if isinstance(spec, dict) and isinstance(spec.get("template"), dict):
        pod_spec(spec["template"].get("spec"))


# The labels the Job strategy puts on a Job's pods when it generates the selector (legacy names too).
_JOB_NAME_LABELS = ("job-name", "batch.kubernetes.io/job-name")
_JOB_UID_LABELS = ("controller-uid", "batch.kubernetes.io/controller-uid")


def _job(obj: JSON, creating: bool) -> None:
    """``SetDefaults_Job``, and on create the selector the Job strategy generates unless ``manualSelector``."""
    spec = obj.get("spec")
    if not isinstance(spec, dict):
        return
    template = spec.get("template")
    if creating and spec.get("manualSelector") is not True and isinstance(template, dict):
        meta = obj["metadata"]
        template_meta = template.setdefault("metadata", {})
        if isinstance(template_meta, dict):
            labels = template_meta.get("labels")
            labels = template_meta["labels"] = labels if isinstance(labels, dict) else {}
            for name in _JOB_NAME_LABELS:
                labels.setdefault(name, meta.get("name"))
            for name in _JOB_UID_LABELS:
                labels.setdefault(name, meta.get("uid"))
            selector = spec.get("selector")
            selector = spec["selector"] = selector if isinstance(selector, dict) else {}
            match = selector.get("matchLabels")
            match = selector["matchLabels"] = match if isinstance(match, dict) else {}
            match.setdefault(_JOB_UID_LABELS[1], meta.get("uid"))
    if spec.get("completions") is None and spec.get("parallelism") is None:
        spec["completions"] = 1
    spec.setdefault("parallelism", 1)
    spec.setdefault("backoffLimit", 6)
    spec.setdefault("completionMode", "NonIndexed")
    spec.setdefault("suspend", False)
    spec.setdefault("podReplacementPolicy", "Failed" if spec.get("podFailurePolicy") else "TerminatingOrFailed")
    # A Job without labels of its own carries its pods' (the server defaults them when it reads the object).
    template_labels = ((spec.get("template") or {}).get("metadata") or {}).get("labels")
    if isinstance(template_labels, dict) and template_labels and not obj["metadata"].get("labels"):
        obj["metadata"]["labels"] = dict(template_labels)


def _cron_job(obj: JSON) -> None:
    """``SetDefaults_CronJob`` and the pod template of its job template (not the JobSpec's own defaults)."""
    spec = obj.get("spec")
    if not isinstance(spec, dict):
        return
    spec.setdefault("concurrencyPolicy", "Allow")
    spec.setdefault("suspend", False)
    spec.setdefault("successfulJobsHistoryLimit", 3)
    spec.setdefault("failedJobsHistoryLimit", 1)
    job_template = spec.get("jobTemplate")
    if isinstance(job_template, dict):
        _template(job_template)


def apply(rt: ResourceType, obj: JSON, creating: bool) -> None:
    """Defaults ``obj`` in place; on create also gives it the status a new object of its kind has."""
    key = rt.storage_key
    if key == ("", "pods"):
        _pod(obj)
        if creating:
            status: JSON = obj["status"] if isinstance(obj.get("status"), dict) else {}
            status.setdefault("phase", "Pending")
            status.setdefault("qosClass", _qos_class(obj.get("spec") or {}))
            obj["status"] = status
    elif key in _WORKLOADS:
        if key == ("apps", "deployments"):
            _deployment(obj)
        elif key == ("batch", "jobs"):
            _job(obj, creating)
        _template(obj)
    elif key == ("batch", "cronjobs"):
        _cron_job(obj)
    if creating and key in _STATUS_ON_CREATE:
        skeleton = obj.get("status")
        if not isinstance(skeleton, dict):
            skeleton = obj["status"] = {}
        for field, value in {**_required_counters(rt), **_STATUS_ON_CREATE[key]}.items():
            skeleton.setdefault(field, copy.deepcopy(value))


def _required_counters(rt: ResourceType) -> JSON:
    """The status counters Go always serializes (no ``omitempty``: the client's models require them), as 0."""
    root = models.root_model(rt)
    status_model = (models.fields_of(root) or {}).get("status") if root else None
    if not status_model:
        return {}
    types = models.fields_of(status_model) or {}
    return {f: 0 for f in models.required_of(status_model) if types.get(f) == "integer"}
