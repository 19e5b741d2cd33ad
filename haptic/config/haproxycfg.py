"""The ``HAProxyCfg`` resource (short name ``hpcfg``): what the controller rendered and deployed, per pod.

Named ``<templateConfigName>-haproxycfg`` in the HAProxyTemplateConfig's namespace, labelled with
``haproxy-haptic.org/template-config=<name>`` and owned by it. ``spec.checksum`` is the pipeline
content checksum (16 hex chars over config plus sorted aux files, as the original stores it);
``spec.content`` is zstd-compressed and base64-encoded when ``spec.compressed`` is true.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any, Literal

from pydantic import Field

from haptic.config.durations import Duration
from haptic.config.meta import CamelModel, Condition, ObjectMeta

HAPROXYCFG_KIND = "HAProxyCfg"
DEFAULT_CONFIG_PATH = "/etc/haproxy/haproxy.cfg"


def runtime_config_name(template_config_name: str) -> str:
    """The HAProxyCfg name published for a HAProxyTemplateConfig."""
    return f"{template_config_name}-haproxycfg"


class HAProxyCfgSpec(CamelModel):
    path: str = DEFAULT_CONFIG_PATH
    content: str
    checksum: str
    compressed: bool = False


class OperationSummary(CamelModel):
    """Counts of the Dataplane API operations of the last sync to one pod."""

    total_api_operations: int = Field(default=0, ge=0, alias="totalAPIOperations")
    backends_added: int = Field(default=0, ge=0)
    backends_removed: int = Field(default=0, ge=0)
    backends_modified: int = Field(default=0, ge=0)
    servers_added: int = Field(default=0, ge=0)
    servers_removed: int = Field(default=0, ge=0)
    servers_modified: int = Field(default=0, ge=0)
    frontends_added: int = Field(default=0, ge=0)
    frontends_removed: int = Field(default=0, ge=0)
    frontends_modified: int = Field(default=0, ge=0)


class PodDeploymentStatus(CamelModel):
    pod_name: str = Field(min_length=1)
    deployed_at: datetime | None = None
    """Updated only when a sync changed something (or on drift checks)."""
    checksum: str | None = None
    last_reload_at: datetime | None = None
    last_reload_id: str | None = Field(default=None, alias="lastReloadID")
    sync_duration: Duration | None = None
    version_conflict_retries: int = Field(default=0, ge=0)
    fallback_used: bool = False
    last_operation_summary: OperationSummary | None = None
    last_error: str | None = None
    consecutive_errors: int = Field(default=0, ge=0)
    last_error_at: datetime | None = None


class AuxiliaryFileRef(CamelModel):
    kind: str = Field(min_length=1)
    name: str = Field(min_length=1)
    namespace: str | None = None


class AuxiliaryFiles(CamelModel):
    """References to the resources holding the published auxiliary files."""

    map_files: list[AuxiliaryFileRef] = Field(default_factory=list)
    ssl_certificates: list[AuxiliaryFileRef] = Field(default_factory=list)
    general_files: list[AuxiliaryFileRef] = Field(default_factory=list)
    crt_list_files: list[AuxiliaryFileRef] = Field(default_factory=list)


class HAProxyCfgMetadata(CamelModel):
    total_size: int = Field(default=0, ge=0)
    """Bytes of haproxy.cfg plus all auxiliary files."""
    content_size: int = Field(default=0, ge=0)
    """Bytes of haproxy.cfg (uncompressed)."""
    rendered_at: datetime | None = None
    validated_at: datetime | None = None


class HAProxyCfgStatus(CamelModel):
    deployed_to_pods: list[PodDeploymentStatus] = Field(default_factory=list)
    auxiliary_files: AuxiliaryFiles | None = None
    metadata: HAProxyCfgMetadata | None = None
    validation_error: str | None = None
    observed_generation: int | None = None
    conditions: list[Condition] = Field(default_factory=list)


class HAProxyCfg(CamelModel):
    api_version: Literal["haproxy-haptic.org/v1alpha1"] = "haproxy-haptic.org/v1alpha1"
    kind: Literal["HAProxyCfg"] = "HAProxyCfg"
    metadata: ObjectMeta = Field(default_factory=ObjectMeta)
    spec: HAProxyCfgSpec
    status: HAProxyCfgStatus | None = None

    def to_json(self) -> dict[str, Any]:
        """The wire form: camelCase, unset optionals omitted."""
        return self.model_dump(mode="json", by_alias=True, exclude_none=True)
