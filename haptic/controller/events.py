"""The domain events of the controller: typed, frozen, with stable ``type`` names.

Every class is a frozen dataclass subclassing ``haptic.core.Event``: the envelope (``event_id``,
``correlation_id``, ``causation_id``, ``timestamp``) is sealed by the bus on publish. ``type`` is the
stable name used in logs, traces and scenario expectations; ``to_dict()`` renders an event JSON-safe
for traces. Secrets never travel in a rendered event: ``CredentialsUpdated`` renders only the Secret's
version, ``SecretResourceChanged`` omits the Secret object. Bulky payloads (parsed configs, whole
resources, auxiliary files) are omitted from ``to_dict()`` and rendered config text becomes a digest.

Payloads are typed with the pure libraries' own types (the ``HAProxyTemplateConfig`` model,
``Credentials``, ``AuxFiles``): consumers use them as they are, never narrow or default them.
A validated render travels once: ``ValidationCompleted`` carries the config and auxiliary files it
validated, so nobody pairs ``TemplateRendered`` with ``ValidationCompleted`` by checksum.

Who publishes / subscribes what (after the original, see DESIGN.md):

- watchers → ``resource.index.updated``, ``resource.sync.complete``; index tracker → ``index.synchronized``
- CR / Secret watchers → ``config.resource.changed``, ``secret.resource.changed``
- config loader → ``config.parsed``; credentials loader → ``credentials.updated`` / ``credentials.invalid``
- config loader → ``config.validated`` / ``config.invalid``
- reconciler → ``reconciliation.triggered``; coordinator (leader) → ``reconciliation.started``,
  ``template.rendered`` / ``template.render.failed``, ``validation.completed`` (with the validated render) /
  ``validation.failed``,
  ``reconciliation.completed`` / ``reconciliation.failed``
- scheduler (leader) → ``deployment.scheduled``, ``deployment.cancel.request``; deployer (leader) →
  ``deployment.started``, ``instance.deployed`` / ``instance.deployment.failed``, ``config.applied.to.pod``,
  ``deployment.completed`` / ``deployment.cancelled``; drift monitor (leader) → ``drift.prevention.triggered``
- coordinator (leader) → ``resource.excluded`` / ``resource.readmitted`` / ``resource.warning`` (the
  render's notices about single objects) → object event recorder (Kubernetes Events), Ingress status
- discovery → ``haproxy.pods.discovered``, ``haproxy.pod.terminated``
- config publisher (leader) → ``config.published``; leader election → ``leader.*``
- admission webhook (``haptic.controller.loop.webhook_binding.decision_events``) → ``webhook.validation.*``
"""

from __future__ import annotations

import enum
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import ClassVar

from haptic.config.credentials import Credentials
from haptic.config.models import HAProxyTemplateConfig
from haptic.core import DIGEST, OMIT, SECRET, Event
from haptic.dataplane.aux_files import AuxFiles
from haptic.templating.statuses import ObjectStatus


class TriggerReason(enum.StrEnum):
    """Why a reconciliation was triggered (``ReconciliationTriggered.reason`` and downstream copies)."""

    INITIAL_SYNC_COMPLETE = "initial_sync_complete"
    INDEX_SYNCHRONIZED = "index_synchronized"
    RESOURCE_CHANGE = "resource_change"
    DEBOUNCE_TIMER = "debounce_timer"
    CONFIG_CHANGE = "config_change"
    DRIFT_PREVENTION = "drift_prevention"
    BECAME_LEADER = "became_leader"
    DEPLOYMENT_TIMEOUT_RECOVERY = "deployment_timeout_recovery"
    HTTP_CONTENT_CHANGED = "http_content_changed"


@dataclass(frozen=True, slots=True)
class DataplaneEndpoint:
    """One HAProxy pod's Dataplane API. Credentials are not part of it (see ``CredentialsUpdated``)."""

    url: str
    pod_name: str
    pod_namespace: str


# -- configuration -------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class ConfigResourceChanged(Event):
    """The HAProxyTemplateConfig resource changed (spec change or initial sync)."""

    type: ClassVar[str] = "config.resource.changed"
    name: str
    namespace: str
    resource_version: str
    resource: Mapping[str, object] = field(default_factory=dict, metadata=OMIT)


@dataclass(frozen=True, slots=True)
class ConfigParsed(Event):
    type: ClassVar[str] = "config.parsed"
    version: str
    config: HAProxyTemplateConfig = field(repr=False, metadata=OMIT)




@dataclass(frozen=True, slots=True)
class ConfigValidated(Event):
    type: ClassVar[str] = "config.validated"
    version: str
    config: HAProxyTemplateConfig = field(repr=False, metadata=OMIT)


@dataclass(frozen=True, slots=True)
class ConfigInvalid(Event):
    type: ClassVar[str] = "config.invalid"
    version: str
    #: validator name -> its error messages
    errors: Mapping[str, tuple[str, ...]]


@dataclass(frozen=True, slots=True)
class SecretResourceChanged(Event):
    """The credentials Secret changed. The Secret itself is never rendered."""

    type: ClassVar[str] = "secret.resource.changed"
    name: str
    namespace: str
    resource_version: str
    resource: Mapping[str, object] = field(default_factory=dict, repr=False, metadata=SECRET)


@dataclass(frozen=True, slots=True)
class CredentialsUpdated(Event):
    """New Dataplane API credentials. Rendered and logged with their version only."""

    type: ClassVar[str] = "credentials.updated"
    secret_version: str
    credentials: Credentials = field(repr=False, metadata=SECRET)


@dataclass(frozen=True, slots=True)
class CredentialsInvalid(Event):
    type: ClassVar[str] = "credentials.invalid"
    secret_version: str
    error: str


# -- resources -----------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class ResourceIndexUpdated(Event):
    """A watched resource type's store changed (after the watcher's debounce)."""

    type: ClassVar[str] = "resource.index.updated"
    resource_type: str
    created: int = 0
    modified: int = 0
    deleted: int = 0
    initial_sync: bool = False


@dataclass(frozen=True, slots=True)
class ResourceSyncComplete(Event):
    type: ClassVar[str] = "resource.sync.complete"
    resource_type: str
    initial_count: int


@dataclass(frozen=True, slots=True)
class IndexSynchronized(Event):
    """Every watched resource type finished its initial sync."""

    type: ClassVar[str] = "index.synchronized"
    resource_counts: Mapping[str, int]


# -- reconciliation ------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class ReconciliationTriggered(Event):
    type: ClassVar[str] = "reconciliation.triggered"
    reason: str
    #: Coalescible triggers may be merged ("latest wins"); the others must each run.
    coalescible: bool = True


@dataclass(frozen=True, slots=True)
class ReconciliationStarted(Event):
    type: ClassVar[str] = "reconciliation.started"
    trigger: str


@dataclass(frozen=True, slots=True)
class ReconciliationCompleted(Event):
    type: ClassVar[str] = "reconciliation.completed"
    duration_s: float


@dataclass(frozen=True, slots=True)
class ReconciliationFailed(Event):
    type: ClassVar[str] = "reconciliation.failed"
    error: str
    #: "render" or "validate"
    phase: str


@dataclass(frozen=True, slots=True)
class TemplateRendered(Event):
    type: ClassVar[str] = "template.rendered"
    haproxy_config: str = field(repr=False, metadata=DIGEST)
    content_checksum: str
    auxiliary_files: AuxFiles = field(repr=False, metadata=OMIT)
    auxiliary_file_count: int = 0
    duration_s: float = 0.0
    trigger_reason: str = ""
    coalescible: bool = True


@dataclass(frozen=True, slots=True)
class TemplateRenderFailed(Event):
    type: ClassVar[str] = "template.render.failed"
    template_name: str
    error: str



@dataclass(frozen=True, slots=True)
class ValidationCompleted(Event):
    """A render passed validation; it carries that render (config and auxiliary files, not rendered in
    traces: ``template.rendered`` has the digest) so consumers need no other event."""

    type: ClassVar[str] = "validation.completed"
    content_checksum: str
    haproxy_config: str = field(repr=False, metadata=OMIT)
    auxiliary_files: AuxFiles = field(repr=False, metadata=OMIT)
    warnings: tuple[str, ...] = ()
    duration_s: float = 0.0
    trigger_reason: str = ""
    coalescible: bool = True
    #: "haproxy -c", or "structural" when proven from the last haproxy -c pass (runtime-only server changes)
    method: str = "haproxy -c"
    #: the statuses the render declared for watched objects (``set_status``), written once it is deployed
    statuses: tuple[ObjectStatus, ...] = field(default=(), repr=False, metadata=OMIT)


@dataclass(frozen=True, slots=True)
class ValidationFailed(Event):
    type: ClassVar[str] = "validation.failed"
    errors: tuple[str, ...]
    content_checksum: str = ""
    duration_s: float = 0.0
    trigger_reason: str = ""





# -- objects the render reports on ----------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class ResourceExcluded(Event):
    """The render leaves one object out of the config (hostile input, a host owned by another
    namespace, lines ``haproxy -c`` rejects). Published when the exclusion starts or its reason or
    message changes; the object gets a Kubernetes Event (``reason``, ``message``) and, for an Ingress,
    the status error ``haproxy-haptic.org/<reason>``."""

    type: ClassVar[str] = "resource.excluded"
    kind: str
    namespace: str
    name: str
    reason: str
    message: str
    field: str = ""
    api_version: str = ""
    uid: str = ""


@dataclass(frozen=True, slots=True)
class ResourceReadmitted(Event):
    """An excluded object is rendered again (fixed, or the conflict is gone)."""

    type: ClassVar[str] = "resource.readmitted"
    kind: str
    namespace: str
    name: str
    #: the reason it had been excluded for
    reason: str
    #: False when the object is gone (deleted) rather than fixed
    exists: bool = True


@dataclass(frozen=True, slots=True)
class ResourceWarning(Event):
    """A render warning about one object that stays rendered (e.g. a TLS Secret not found); published
    once while it lasts, and a Kubernetes Event of type Warning on the object."""

    type: ClassVar[str] = "resource.warning"
    kind: str
    namespace: str
    name: str
    reason: str
    message: str
    field: str = ""
    api_version: str = ""
    uid: str = ""


# -- deployment ----------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class DeploymentScheduled(Event):
    type: ClassVar[str] = "deployment.scheduled"
    haproxy_config: str = field(repr=False, metadata=DIGEST)
    content_checksum: str
    endpoints: tuple[DataplaneEndpoint, ...]
    reason: str
    auxiliary_files: AuxFiles = field(repr=False, metadata=OMIT)
    runtime_config_name: str = ""
    runtime_config_namespace: str = ""
    coalescible: bool = True


@dataclass(frozen=True, slots=True)
class DeploymentStarted(Event):
    type: ClassVar[str] = "deployment.started"
    endpoints: tuple[DataplaneEndpoint, ...]
    content_checksum: str = ""


@dataclass(frozen=True, slots=True)
class InstanceDeployed(Event):
    type: ClassVar[str] = "instance.deployed"
    endpoint: DataplaneEndpoint
    duration_s: float = 0.0
    reload_required: bool = False


@dataclass(frozen=True, slots=True)
class InstanceDeploymentFailed(Event):
    type: ClassVar[str] = "instance.deployment.failed"
    endpoint: DataplaneEndpoint
    error: str
    retryable: bool = True


@dataclass(frozen=True, slots=True)
class DeploymentCompleted(Event):
    type: ClassVar[str] = "deployment.completed"
    total: int
    succeeded: int
    failed: int
    duration_s: float = 0.0
    reloads_triggered: int = 0
    total_api_operations: int = 0
    #: "<section>_<action>" (e.g. "servers_modified") -> count
    operation_breakdown: Mapping[str, int] = field(default_factory=dict)
    content_checksum: str = ""


@dataclass(frozen=True, slots=True)
class DeploymentCancelled(Event):
    """A started deployment ended without completing (cancel request, watchdog, leadership lost, stop):
    observers that track "deploying" must not wait for a ``DeploymentCompleted`` that never comes."""

    type: ClassVar[str] = "deployment.cancelled"
    content_checksum: str = ""


@dataclass(frozen=True, slots=True)
class DeploymentCancelRequest(Event):
    type: ClassVar[str] = "deployment.cancel.request"
    reason: str


@dataclass(frozen=True, slots=True)
class DriftPreventionTriggered(Event):
    type: ClassVar[str] = "drift.prevention.triggered"
    time_since_last_deployment_s: float


@dataclass(frozen=True, slots=True)
class SyncMetadata:
    """How one pod was synchronized (part of ``ConfigAppliedToPod``)."""

    reload_triggered: bool = False
    reload_id: str = ""
    sync_duration_s: float = 0.0
    version_conflict_retries: int = 0
    fallback_used: bool = False
    operation_counts: Mapping[str, int] = field(default_factory=dict)
    error: str = ""


@dataclass(frozen=True, slots=True)
class ConfigAppliedToPod(Event):
    type: ClassVar[str] = "config.applied.to.pod"
    pod_name: str
    pod_namespace: str
    checksum: str
    runtime_config_name: str = ""
    runtime_config_namespace: str = ""
    is_drift_check: bool = False
    sync: SyncMetadata = field(default_factory=SyncMetadata)


# -- discovery -----------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class HAProxyPodsDiscovered(Event):
    """The full current set of admitted HAProxy pods (not a delta)."""

    type: ClassVar[str] = "haproxy.pods.discovered"
    endpoints: tuple[DataplaneEndpoint, ...]

    @property
    def count(self) -> int:
        return len(self.endpoints)


@dataclass(frozen=True, slots=True)
class HAProxyPodTerminated(Event):
    type: ClassVar[str] = "haproxy.pod.terminated"
    pod_name: str
    pod_namespace: str


# -- publishing ----------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class ConfigPublished(Event):
    type: ClassVar[str] = "config.published"
    runtime_config_name: str
    runtime_config_namespace: str
    map_file_count: int = 0
    secret_count: int = 0



# -- leadership ----------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class LeaderElectionStarted(Event):
    type: ClassVar[str] = "leader.election.started"
    identity: str
    lease_name: str
    lease_namespace: str


@dataclass(frozen=True, slots=True)
class BecameLeader(Event):
    type: ClassVar[str] = "leader.became"
    identity: str
    #: "lease_acquired" or "standalone" (leader election disabled)
    reason: str = "lease_acquired"


@dataclass(frozen=True, slots=True)
class LostLeadership(Event):
    type: ClassVar[str] = "leader.lost"
    identity: str
    reason: str = "lease_lost"


@dataclass(frozen=True, slots=True)
class LeaderObserved(Event):
    type: ClassVar[str] = "leader.observed"
    leader_identity: str
    is_self: bool








# -- admission webhook ---------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class WebhookValidationRequest(Event):
    type: ClassVar[str] = "webhook.validation.request"
    request_uid: str
    kind: str
    name: str
    namespace: str
    operation: str


@dataclass(frozen=True, slots=True)
class WebhookValidationAllowed(Event):
    type: ClassVar[str] = "webhook.validation.allowed"
    request_uid: str
    kind: str
    name: str
    namespace: str


@dataclass(frozen=True, slots=True)
class WebhookValidationDenied(Event):
    type: ClassVar[str] = "webhook.validation.denied"
    request_uid: str
    kind: str
    name: str
    namespace: str
    reason: str


@dataclass(frozen=True, slots=True)
class WebhookValidationError(Event):
    type: ClassVar[str] = "webhook.validation.error"
    request_uid: str
    kind: str
    name: str
    namespace: str
    error: str


@dataclass(frozen=True, slots=True)
class CrdChanged(Event):
    """A CustomResourceDefinition backing watched ``resources`` was installed, removed or changed."""

    type: ClassVar[str] = "crd.changed"
    crd: str
    change: str
    served: tuple[str, ...] = ()
    resources: tuple[str, ...] = ()


@dataclass(frozen=True, slots=True)
class NamespaceSelectionChanged(Event):
    """The namespaces a ``namespaceSelector`` picks changed (``added``/``removed``) for ``resources``."""

    type: ClassVar[str] = "namespace.selection.changed"
    resources: tuple[str, ...]
    added: tuple[str, ...] = ()
    removed: tuple[str, ...] = ()


# -- HTTP content (``http.fetch``) ----------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class HttpResourceUpdated(Event):
    """New content fetched for a URL; pending until a render with it validates."""

    type: ClassVar[str] = "http.resource.updated"
    url: str
    content_checksum: str
    content_size: int


@dataclass(frozen=True, slots=True)
class HttpResourceAccepted(Event):
    type: ClassVar[str] = "http.resource.accepted"
    url: str
    content_checksum: str
    content_size: int


@dataclass(frozen=True, slots=True)
class HttpResourceRejected(Event):
    """Pending content dropped (its render failed), or a fetch failed; the last good content stays."""

    type: ClassVar[str] = "http.resource.rejected"
    url: str
    reason: str
    content_checksum: str = ""


def _catalogue() -> dict[str, type[Event]]:
    found = {
        obj.type: obj
        for obj in globals().values()
        if isinstance(obj, type) and issubclass(obj, Event) and obj.__module__ == __name__
    }
    return dict(sorted(found.items()))


#: Every domain event class by its ``type`` name, sorted by name.
DOMAIN_EVENTS: dict[str, type[Event]] = _catalogue()
