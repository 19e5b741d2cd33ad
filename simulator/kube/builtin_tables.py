"""Server-side table columns of the built-in kinds, as the API server's printers produce them
(``kubectl get`` shows these; ``-o wide`` adds the priority-1 columns).

Each kind maps to its columns after NAME; a column's cell is computed from the object and the
current time. Values the API server prints for absent data (``<none>``, ``<pending>``,
``<unknown>``) are kept, since users and scripts read them.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from haptic.k8s.api import JSON

from .selectors import label_selector_string

Cell = Callable[[JSON, datetime], Any]


@dataclass(frozen=True)
class Column:
    name: str
    type: str
    description: str
    cell: Cell
    priority: int = 0

    def definition(self) -> JSON:
        return {"name": self.name, "type": self.type, "format": "", "description": self.description,
                "priority": self.priority}


def human_duration(seconds: float) -> str:
    """k8s.io/apimachinery/pkg/util/duration.HumanDuration, which every AGE column uses."""
    if seconds < -1:
        return "<invalid>"
    s = max(0, int(seconds))
    minutes, hours, days = s // 60, s // 3600, s // 86400
    if s < 120:
        return f"{s}s"
    if minutes < 10:
        return f"{minutes}m{s % 60}s" if s % 60 else f"{minutes}m"
    if hours < 3:
        return f"{minutes}m"
    if hours < 8:
        return f"{hours}h{minutes % 60}m" if minutes % 60 else f"{hours}h"
    if hours < 48:
        return f"{hours}h"
    if hours < 192:
        return f"{days}d{hours % 24}h" if hours % 24 else f"{days}d"
    if days < 365 * 2:
        return f"{days}d"
    years = days // 365
    if years < 8:
        return f"{years}y{days % 365}d" if days % 365 else f"{years}y"
    return f"{years}y"


def since(stamp: Any, now: datetime) -> str:
    if not stamp:
        return "<unknown>"
    try:
        then = datetime.strptime(str(stamp)[:19], "%Y-%m-%dT%H:%M:%S").replace(tzinfo=now.tzinfo)
    except ValueError:
        return "<invalid>"
    return human_duration((now - then).total_seconds())


def _get(obj: Any, *path: str) -> Any:
    for key in path:
        if not isinstance(obj, dict):
            return None
        obj = obj.get(key)
    return obj


def _list(obj: JSON, *path: str) -> list[Any]:
    value = _get(obj, *path)
    return value if isinstance(value, list) else []


def _none(value: Any) -> Any:
    return "<none>" if value in (None, "", []) else value


def _int(obj: JSON, *path: str) -> int:
    value = _get(obj, *path)
    return value if isinstance(value, int) and not isinstance(value, bool) else 0


def _age(obj: JSON, now: datetime) -> str:
    return since(_get(obj, "metadata", "creationTimestamp"), now)


def _created_at(obj: JSON, _now: datetime) -> str:
    return str(_get(obj, "metadata", "creationTimestamp") or "")


def _joined(values: Iterable[Any], empty: str = "<none>") -> str:
    items = [str(v) for v in values if v not in (None, "")]
    return ",".join(items) if items else empty


AGE = Column("Age", "string", "CreationTimestamp is a timestamp representing the server time when this object "
             "was created.", _age)
CREATED_AT = Column("Created At", "date", "Time when this object was created.", _created_at)


# -- pods -----------------------------------------------------------------------------------------------


def _pod_ready(pod: JSON, _now: datetime) -> str:
    total = len(_list(pod, "spec", "containers"))
    ready = sum(1 for c in _list(pod, "status", "containerStatuses") if isinstance(c, dict) and c.get("ready"))
    return f"{ready}/{total}"


def _pod_status(pod: JSON, _now: datetime) -> str:
    """printers.go printPod's reason: phase, overridden by the pod's and its containers' reasons."""
    status = pod.get("status") or {}
    reason = str(status.get("reason") or status.get("phase") or "")
    init_specs = len(_list(pod, "spec", "initContainers"))
    for index, container in enumerate(_list(pod, "status", "initContainerStatuses")):
        state = container.get("state") or {}
        terminated, waiting = state.get("terminated"), state.get("waiting")
        if terminated and terminated.get("exitCode") == 0:
            continue
        if terminated:
            reason = "Init:" + (terminated.get("reason") or (f"Signal:{terminated['signal']}" if terminated.get(
                "signal") else f"ExitCode:{terminated.get('exitCode')}"))
        elif waiting and waiting.get("reason") and waiting["reason"] != "PodInitializing":
            reason = f"Init:{waiting['reason']}"
        else:
            reason = f"Init:{index}/{init_specs}"
        break
    else:
        running = False
        for container in reversed(_list(pod, "status", "containerStatuses")):
            state = container.get("state") or {}
            waiting, terminated = state.get("waiting"), state.get("terminated")
            if waiting and waiting.get("reason"):
                reason = waiting["reason"]
            elif terminated and terminated.get("reason"):
                reason = terminated["reason"]
            elif terminated:
                reason = (f"Signal:{terminated['signal']}" if terminated.get("signal")
                          else f"ExitCode:{terminated.get('exitCode')}")
            elif container.get("ready") and state.get("running") is not None:
                running = True
        if reason == "Completed" and running:
            ready = any(c.get("type") == "Ready" and c.get("status") == "True"
                        for c in _list(pod, "status", "conditions"))
            reason = "Running" if ready else "NotReady"
    if _get(pod, "metadata", "deletionTimestamp"):
        reason = "Unknown" if status.get("reason") == "NodeLost" else "Terminating"
    return reason


def _pod_restarts(pod: JSON, now: datetime) -> str:
    restarts, last = 0, ""
    for container in _list(pod, "status", "containerStatuses"):
        restarts += int(container.get("restartCount") or 0)
        finished = _get(container, "lastState", "terminated", "finishedAt")
        if finished and str(finished) > last:
            last = str(finished)
    return f"{restarts} ({since(last, now)} ago)" if restarts and last else str(restarts)


def _readiness_gates(pod: JSON, _now: datetime) -> str:
    gates = [g.get("conditionType") for g in _list(pod, "spec", "readinessGates")]
    if not gates:
        return "<none>"
    true = {c.get("type") for c in _list(pod, "status", "conditions") if c.get("status") == "True"}
    return f"{sum(1 for g in gates if g in true)}/{len(gates)}"


POD = (
    Column("Ready", "string", "The aggregate readiness state of this pod for accepting traffic.", _pod_ready),
    Column("Status", "string", "The aggregate status of the containers in this pod.", _pod_status),
    Column("Restarts", "string", "The number of times the containers in this pod have been restarted and when "
           "the last container in this pod has restarted.", _pod_restarts),
    AGE,
    Column("IP", "string", "IP address allocated to the pod. Routable at least within the cluster.",
           lambda p, _n: _none(_get(p, "status", "podIP")), 1),
    Column("Node", "string", "Name of the Node this pod is bound to.",
           lambda p, _n: _none(_get(p, "spec", "nodeName")), 1),
    Column("Nominated Node", "string", "Name of the node that is nominated to run this pod.",
           lambda p, _n: _none(_get(p, "status", "nominatedNodeName")), 1),
    Column("Readiness Gates", "string", "Pod readiness gates.", _readiness_gates, 1),
)


# -- services, endpoints, ingresses -------------------------------------------------------------------------


def _external_ip(svc: JSON, _now: datetime) -> str:
    spec = svc.get("spec") or {}
    kind = spec.get("type") or "ClusterIP"
    external = [str(ip) for ip in spec.get("externalIPs") or []]
    if kind == "ExternalName":
        return str(spec.get("externalName") or "<none>")
    if kind == "LoadBalancer":
        ingress = [i.get("ip") or i.get("hostname") for i in _list(svc, "status", "loadBalancer", "ingress")]
        found = [str(i) for i in ingress if i] + external
        return ",".join(found) if found else "<pending>"
    return ",".join(external) if external else "<none>"


def _service_ports(svc: JSON, _now: datetime) -> str:
    out = []
    for port in _list(svc, "spec", "ports"):
        protocol = port.get("protocol") or "TCP"
        if port.get("nodePort"):
            out.append(f"{port.get('port')}:{port['nodePort']}/{protocol}")
        else:
            out.append(f"{port.get('port')}/{protocol}")
    return ",".join(out) if out else "<none>"


def _map_selector(selector: Any) -> str:
    return label_selector_string(selector) if selector else "<none>"


SERVICE = (
    Column("Type", "string", "type determines how the Service is exposed.",
           lambda s, _n: _get(s, "spec", "type") or "ClusterIP"),
    Column("Cluster-IP", "string", "clusterIP is the IP address of the service.",
           lambda s, _n: _none(_get(s, "spec", "clusterIP"))),
    Column("External-IP", "string", "List of IP addresses for which nodes in the cluster will also accept "
           "traffic for this service.", _external_ip),
    Column("Port(s)", "string", "The list of ports that are exposed by this service.", _service_ports),
    AGE,
    Column("Selector", "string", "Route service traffic to pods with label keys and values matching this "
           "selector.", lambda s, _n: _map_selector(_get(s, "spec", "selector")), 1),
)


def _endpoints(obj: JSON, _now: datetime) -> str:
    addresses: list[str] = []
    for subset in _list(obj, "subsets"):
        ports = [p.get("port") for p in subset.get("ports") or []] or [None]
        for address in subset.get("addresses") or []:
            for port in ports:
                addresses.append(f"{address.get('ip')}:{port}" if port is not None else str(address.get("ip")))
    return _truncated(addresses)


def _truncated(values: list[str], limit: int = 3) -> str:
    if not values:
        return "<none>"
    shown = ",".join(values[:limit])
    return f"{shown} + {len(values) - limit} more..." if len(values) > limit else shown


def _slice_ports(obj: JSON, _now: datetime) -> str:
    ports = [str(p.get("port")) for p in _list(obj, "ports") if p.get("port") is not None]
    return _truncated(ports) if _list(obj, "ports") else "<unset>"


def _slice_endpoints(obj: JSON, _now: datetime) -> str:
    return _truncated([str(a) for e in _list(obj, "endpoints") for a in e.get("addresses") or []])


def _ingress_hosts(ing: JSON, _now: datetime) -> str:
    hosts = [str(r.get("host")) for r in _list(ing, "spec", "rules") if r.get("host")]
    if not hosts:
        return "*"
    return _truncated(hosts, 4)


def _ingress_address(ing: JSON, _now: datetime) -> str:
    found = [i.get("ip") or i.get("hostname") for i in _list(ing, "status", "loadBalancer", "ingress")]
    return ",".join(str(f) for f in found if f)


def _ingress_ports(ing: JSON, _now: datetime) -> str:
    return "80, 443" if _list(ing, "spec", "tls") else "80"


INGRESS = (
    Column("Class", "string", "The name of the IngressClass resource that should be used for this Ingress.",
           lambda i, _n: _none(_get(i, "spec", "ingressClassName"))),
    Column("Hosts", "string", "Hosts that incoming requests are matched against before the ingress rule",
           _ingress_hosts),
    Column("Address", "string", "Address is a list containing ingress points for the load-balancer",
           _ingress_address),
    Column("Ports", "string", "Ports of TLS configurations that open", _ingress_ports),
    AGE,
)


def _ingress_class_parameters(obj: JSON, _now: datetime) -> str:
    params = _get(obj, "spec", "parameters")
    if not isinstance(params, dict):
        return "<none>"
    group = f"{params['apiGroup']}/" if params.get("apiGroup") else ""
    return f"{group}{params.get('kind', '')}/{params.get('name', '')}"


# -- workloads -------------------------------------------------------------------------------------------------


def _containers(obj: JSON, *template: str) -> list[JSON]:
    return [c for c in _list(obj, *template, "spec", "containers") if isinstance(c, dict)]


def _workload_extras(*template: str, selector: bool = True) -> tuple[Column, ...]:
    columns: tuple[Column, ...] = (
        Column("Containers", "string", "Names of each container in the template.",
               lambda o, _n: ",".join(str(c.get("name", "")) for c in _containers(o, *template)), 1),
        Column("Images", "string", "Images referenced by each container in the template.",
               lambda o, _n: ",".join(str(c.get("image", "")) for c in _containers(o, *template)), 1),
    )
    if selector:
        columns += (Column("Selector", "string", "The label selector.",
                           lambda o, _n: _map_selector(_get(o, "spec", "selector")), 1),)
    return columns


def _status(field: str) -> Cell:
    return lambda o, _n: _int(o, "status", field)


def _desired(o: JSON, _n: datetime) -> int:
    replicas = _get(o, "spec", "replicas")
    return 1 if replicas is None else int(replicas)


DEPLOYMENT = (
    Column("Ready", "string", "Number of the pod with ready state",
           lambda o, _n: f"{_int(o, 'status', 'readyReplicas')}/{_desired(o, _n)}"),
    Column("Up-to-date", "string", "Total number of non-terminated pods targeted by this deployment that have the "
           "desired template spec.", _status("updatedReplicas")),
    Column("Available", "string", "Total number of available pods (ready for at least minReadySeconds) targeted "
           "by this deployment.", _status("availableReplicas")),
    AGE,
    *_workload_extras("spec", "template"),
)
REPLICA_SET = (
    Column("Desired", "integer", "Replicas is the number of desired replicas.", _desired),
    Column("Current", "integer", "Replicas is the most recently observed number of replicas.", _status("replicas")),
    Column("Ready", "integer", "The number of ready replicas for this replica set.", _status("readyReplicas")),
    AGE,
    *_workload_extras("spec", "template"),
)
STATEFUL_SET = (
    Column("Ready", "string", "Number of the pod with ready state",
           lambda o, _n: f"{_int(o, 'status', 'readyReplicas')}/{_desired(o, _n)}"),
    AGE,
    *_workload_extras("spec", "template", selector=False),
)
DAEMON_SET = (
    Column("Desired", "integer", "The total number of nodes that should be running the daemon pod.",
           _status("desiredNumberScheduled")),
    Column("Current", "integer", "The number of nodes that are running at least 1 daemon pod.",
           _status("currentNumberScheduled")),
    Column("Ready", "integer", "The number of nodes that should be running the daemon pod and have one or more of "
           "the daemon pod running and ready.", _status("numberReady")),
    Column("Up-to-date", "integer", "The total number of nodes that are running updated daemon pod",
           _status("updatedNumberScheduled")),
    Column("Available", "integer", "The number of nodes that should be running the daemon pod and have one or more "
           "of the daemon pod running and available.", _status("numberAvailable")),
    Column("Node Selector", "string", "NodeSelector is a selector which must be true for the pod to fit on a node.",
           lambda o, _n: _map_selector(_get(o, "spec", "template", "spec", "nodeSelector"))),
    AGE,
    *_workload_extras("spec", "template"),
)


def _job_status(job: JSON, _now: datetime) -> str:
    conditions = {c.get("type"): c.get("status") for c in _list(job, "status", "conditions")}
    for kind, shown in (("Complete", "Complete"), ("Failed", "Failed"), ("SuccessCriteriaMet", "SuccessCriteriaMet"),
                        ("FailureTarget", "FailureTarget"), ("Suspended", "Suspended")):
        if conditions.get(kind) == "True":
            return shown
    return "Terminating" if _get(job, "metadata", "deletionTimestamp") else "Running"


def _job_completions(job: JSON, _now: datetime) -> str:
    completions = _get(job, "spec", "completions")
    succeeded = _int(job, "status", "succeeded")
    if completions is not None:
        return f"{succeeded}/{completions}"
    parallelism = _get(job, "spec", "parallelism")
    return f"{succeeded}/1 of {parallelism}" if isinstance(parallelism, int) and parallelism > 1 else f"{succeeded}/1"


def _job_duration(job: JSON, now: datetime) -> str:
    start = _get(job, "status", "startTime")
    if not start:
        return ""
    end = _get(job, "status", "completionTime")
    if not end:
        return since(start, now)
    try:
        begun = datetime.strptime(str(start)[:19], "%Y-%m-%dT%H:%M:%S")
        ended = datetime.strptime(str(end)[:19], "%Y-%m-%dT%H:%M:%S")
    except ValueError:
        return "<invalid>"
    return human_duration((ended - begun).total_seconds())


JOB = (
    Column("Status", "string", "Status of the job.", _job_status),
    Column("Completions", "string", "The completion status of the job.", _job_completions),
    Column("Duration", "string", "Time required to complete the job.", _job_duration),
    AGE,
    *_workload_extras("spec", "template"),
)


def _last_schedule(cron: JSON, now: datetime) -> str:
    last = _get(cron, "status", "lastScheduleTime")
    return since(last, now) if last else "<none>"


CRON_JOB = (
    Column("Schedule", "string", "The schedule in Cron format.", lambda o, _n: _get(o, "spec", "schedule") or ""),
    Column("Timezone", "string", "The time zone name for the given schedule.",
           lambda o, _n: _none(_get(o, "spec", "timeZone"))),
    Column("Suspend", "boolean", "This flag tells the controller to suspend subsequent executions.",
           lambda o, _n: bool(_get(o, "spec", "suspend"))),
    Column("Active", "integer", "A list of pointers to currently running jobs.",
           lambda o, _n: len(_list(o, "status", "active"))),
    Column("Last Schedule", "string", "Information when was the last time the job was successfully scheduled.",
           _last_schedule),
    AGE,
    *_workload_extras("spec", "jobTemplate", "spec", "template"),
)
REPLICATION_CONTROLLER = (
    Column("Desired", "integer", "Replicas is the number of desired replicas.", _desired),
    Column("Current", "integer", "Replicas is the most recently observed number of replicas.", _status("replicas")),
    Column("Ready", "integer", "The number of ready replicas for this replication controller.",
           _status("readyReplicas")),
    AGE,
    *_workload_extras("spec", "template"),
)


def _hpa_reference(hpa: JSON, _now: datetime) -> str:
    ref = _get(hpa, "spec", "scaleTargetRef") or {}
    return f"{ref.get('kind', '')}/{ref.get('name', '')}"


def _hpa_targets(hpa: JSON, _now: datetime) -> str:
    """The resource-utilisation targets as ``current/target`` (``<unknown>`` before a measurement)."""
    current = {}
    for metric in _list(hpa, "status", "currentMetrics"):
        resource = metric.get("resource") or {}
        value = _get(resource, "current", "averageUtilization")
        if value is not None:
            current[resource.get("name")] = f"{value}%"
    shown = []
    for metric in _list(hpa, "spec", "metrics"):
        if metric.get("type") != "Resource":
            shown.append("<unknown>/<unknown>")
            continue
        resource = metric.get("resource") or {}
        target = resource.get("target") or {}
        goal = (f"{target['averageUtilization']}%" if "averageUtilization" in target
                else str(target.get("averageValue") or target.get("value") or "<unknown>"))
        name = resource.get("name", "")
        shown.append(f"{name}: {current.get(name, '<unknown>')}/{goal}")
    if not shown:
        return "<none>"
    return ", ".join(shown[:2]) + (f" + {len(shown) - 2} more..." if len(shown) > 2 else "")


HPA = (
    Column("Reference", "string", "The reference to the resource being scaled.", _hpa_reference),
    Column("Targets", "string", "The metrics of the resource being scaled.", _hpa_targets),
    Column("MinPods", "string", "Lower limit for the number of pods that can be set by the autoscaler.",
           lambda o, _n: "<unset>" if _get(o, "spec", "minReplicas") is None else str(_get(o, "spec", "minReplicas"))),
    Column("MaxPods", "integer", "Upper limit for the number of pods that can be set by the autoscaler.",
           lambda o, _n: _int(o, "spec", "maxReplicas")),
    Column("Replicas", "integer", "Current number of replicas of pods managed by this autoscaler.",
           _status("currentReplicas")),
    AGE,
)
PDB = (
    Column("Min Available", "string", "The minimum number of pods that must be available.",
           lambda o, _n: "N/A" if _get(o, "spec", "minAvailable") is None else _get(o, "spec", "minAvailable")),
    Column("Max Unavailable", "string", "The maximum number of pods that may be unavailable.",
           lambda o, _n: "N/A" if _get(o, "spec", "maxUnavailable") is None else _get(o, "spec", "maxUnavailable")),
    Column("Allowed Disruptions", "integer", "Calculated number of pods that may be disrupted at this time.",
           _status("disruptionsAllowed")),
    AGE,
)


# -- config, identity, cluster ----------------------------------------------------------------------------------


def _data_count(obj: JSON, _now: datetime) -> int:
    return len(obj.get("data") or {}) + len(obj.get("binaryData") or {})


def _subjects(kind: str) -> Cell:
    def cell(binding: JSON, _now: datetime) -> str:
        names = []
        for subject in _list(binding, "subjects"):
            if subject.get("kind") != kind:
                continue
            if kind == "ServiceAccount":
                names.append(f"{subject.get('namespace') or _get(binding, 'metadata', 'namespace') or ''}/"
                             f"{subject.get('name', '')}")
            else:
                names.append(str(subject.get("name", "")))
        return ", ".join(names)

    return cell


BINDING = (
    Column("Role", "string", "Role bound", lambda b, _n: f"{_get(b, 'roleRef', 'kind')}/{_get(b, 'roleRef', 'name')}"),
    AGE,
    Column("Users", "string", "Users in the binding", _subjects("User"), 1),
    Column("Groups", "string", "Groups in the binding", _subjects("Group"), 1),
    Column("ServiceAccounts", "string", "ServiceAccounts in the binding", _subjects("ServiceAccount"), 1),
)


def _node_status(node: JSON, _now: datetime) -> str:
    conditions = {c.get("type"): c.get("status") for c in _list(node, "status", "conditions")}
    ready = conditions.get("Ready")
    text = "Ready" if ready == "True" else "NotReady" if ready in ("False",) else "Unknown"
    if _get(node, "spec", "unschedulable"):
        text += ",SchedulingDisabled"
    return text


def _node_roles(node: JSON, _now: datetime) -> str:
    prefix = "node-role.kubernetes.io/"
    labels = _get(node, "metadata", "labels") or {}
    roles = sorted(k[len(prefix):] for k in labels if k.startswith(prefix) and k[len(prefix):])
    roles += sorted({str(v) for k, v in labels.items() if k == "kubernetes.io/role" and v} - set(roles))
    return ",".join(roles) if roles else "<none>"


def _event_object(event: JSON, _now: datetime) -> str:
    ref = event.get("involvedObject") or event.get("regarding") or {}
    return f"{str(ref.get('kind', '')).lower()}/{ref.get('name', '')}"


def _event_last_seen(event: JSON, now: datetime) -> str:
    stamp = (event.get("lastTimestamp") or event.get("deprecatedLastTimestamp") or event.get("eventTime")
             or _get(event, "metadata", "creationTimestamp"))
    return since(stamp, now)


EVENT = (
    Column("Last Seen", "string", "Time when last occurrence of this event was recorded.", _event_last_seen),
    Column("Type", "string", "Type of this event (Normal, Warning), new types could be added in the future.",
           lambda e, _n: e.get("type") or ""),
    Column("Reason", "string", "This should be a short, machine understandable string that gives the reason for "
           "this event being generated.", lambda e, _n: e.get("reason") or ""),
    Column("Object", "string", "The object this Event is about.", _event_object),
    Column("Message", "string", "A human-readable description of the status of this operation.",
           lambda e, _n: str(e.get("message") or e.get("note") or "").strip()),
)


def _api_service_available(obj: JSON, _now: datetime) -> str:
    for condition in _list(obj, "status", "conditions"):
        if condition.get("type") == "Available":
            status = str(condition.get("status", "Unknown"))
            return status if status == "True" else f"{status} ({condition.get('reason', '')})"
    return "Unknown"


COLUMNS: dict[tuple[str, str], tuple[Column, ...]] = {
    ("", "pods"): POD,
    ("", "services"): SERVICE,
    ("", "endpoints"): (Column("Endpoints", "string", "Endpoints is the list of endpoints.", _endpoints), AGE),
    ("", "configmaps"): (Column("Data", "string", "Data contains the configuration data.", _data_count), AGE),
    ("", "secrets"): (
        Column("Type", "string", "The type of the secret", lambda s, _n: s.get("type") or "Opaque"),
        Column("Data", "string", "Data contains the secret data.", _data_count),
        AGE,
    ),
    ("", "serviceaccounts"): (
        Column("Secrets", "string", "Secrets is a list of the secrets in the same namespace that pods running using "
               "this ServiceAccount are allowed to use.", lambda o, _n: len(_list(o, "secrets"))),
        AGE,
    ),
    ("", "namespaces"): (
        Column("Status", "string", "The status of the namespace", lambda o, _n: _get(o, "status", "phase") or ""),
        AGE,
    ),
    ("", "nodes"): (
        Column("Status", "string", "The status of the node", _node_status),
        Column("Roles", "string", "The roles of the node", _node_roles),
        AGE,
        Column("Version", "string", "Kubelet Version reported by the node.",
               lambda o, _n: _get(o, "status", "nodeInfo", "kubeletVersion") or ""),
    ),
    ("", "events"): EVENT,
    ("events.k8s.io", "events"): EVENT,
    ("", "replicationcontrollers"): REPLICATION_CONTROLLER,
    ("apps", "deployments"): DEPLOYMENT,
    ("apps", "replicasets"): REPLICA_SET,
    ("apps", "statefulsets"): STATEFUL_SET,
    ("apps", "daemonsets"): DAEMON_SET,
    ("batch", "jobs"): JOB,
    ("batch", "cronjobs"): CRON_JOB,
    ("autoscaling", "horizontalpodautoscalers"): HPA,
    ("policy", "poddisruptionbudgets"): PDB,
    ("networking.k8s.io", "ingresses"): INGRESS,
    ("networking.k8s.io", "ingressclasses"): (
        Column("Controller", "string", "Controller that is responsible for handling this class",
               lambda o, _n: _get(o, "spec", "controller") or ""),
        Column("Parameters", "string", "A reference to a resource with additional parameters",
               _ingress_class_parameters),
        AGE,
    ),
    ("networking.k8s.io", "networkpolicies"): (
        Column("Pod-Selector", "string", "Selects the pods to which this NetworkPolicy object applies.",
               lambda o, _n: label_selector_string(_get(o, "spec", "podSelector")) or "<none>"),
        AGE,
    ),
    ("discovery.k8s.io", "endpointslices"): (
        Column("AddressType", "string", "The type of address carried by this EndpointSlice.",
               lambda o, _n: o.get("addressType") or ""),
        Column("Ports", "string", "Ports allocated for this EndpointSlice.", _slice_ports),
        Column("Endpoints", "string", "Endpoints included in this EndpointSlice.", _slice_endpoints),
        AGE,
    ),
    ("coordination.k8s.io", "leases"): (
        Column("Holder", "string", "The holder of the lease.", lambda o, _n: _get(o, "spec", "holderIdentity") or ""),
        AGE,
    ),
    ("rbac.authorization.k8s.io", "roles"): (CREATED_AT,),
    ("rbac.authorization.k8s.io", "clusterroles"): (CREATED_AT,),
    ("rbac.authorization.k8s.io", "rolebindings"): BINDING,
    ("rbac.authorization.k8s.io", "clusterrolebindings"): BINDING,
    ("apiextensions.k8s.io", "customresourcedefinitions"): (CREATED_AT,),
    ("apiregistration.k8s.io", "apiservices"): (
        Column("Service", "string", "The reference to the service that hosts this API endpoint.",
               lambda o, _n: (f"{_get(o, 'spec', 'service', 'namespace')}/{_get(o, 'spec', 'service', 'name')}"
                              if _get(o, "spec", "service") else "Local")),
        Column("Available", "string", "Whether this service is available.", _api_service_available),
        AGE,
    ),
    ("admissionregistration.k8s.io", "validatingwebhookconfigurations"): (
        Column("Webhooks", "integer", "Webhooks indicates the number of webhooks registered in this configuration.",
               lambda o, _n: len(_list(o, "webhooks"))),
        AGE,
    ),
}
