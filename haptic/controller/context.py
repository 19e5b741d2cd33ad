"""``IterationContext``: what every component of one iteration shares (ports, config, stores, credentials).

Built once per iteration from a validated configuration; components read it and never replace it.
Credentials are the one mutable part: the credentials loader swaps them on rotation, the deployer
and discovery read them at each use.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass, field
from typing import Any

from haptic.config.credentials import Credentials
from haptic.config.haproxycfg import runtime_config_name
from haptic.config.models import HAProxyTemplateConfig, HAProxyTemplateConfigSpec
from haptic.controller.metrics import ControllerMetrics
from haptic.controller.ports import ControllerPorts
from haptic.httpstore.store import HttpStore
from haptic.k8s.api import ResourceRef
from haptic.k8s.leaderelection import NO_FENCE, WriteFence
from haptic.k8s.store import ResourceStore
from haptic.names import GROUP_VERSION, HAPROXY_PODS
from haptic.templating.context import StorageDirs
from haptic.templating.engine import TemplateEngine
from haptic.validation.haproxy_check import HAProxyValidator

TEMPLATE_CONFIGS = ResourceRef(GROUP_VERSION, "haproxytemplateconfigs", True, "HAProxyTemplateConfig")
HAPROXY_CFGS = ResourceRef(GROUP_VERSION, "haproxycfgs", True, "HAProxyCfg")
SECRETS = ResourceRef("v1", "secrets", True, "Secret")
PODS = ResourceRef("v1", "pods", True, "Pod")
INGRESSES = ResourceRef("networking.k8s.io/v1", "ingresses", True, "Ingress")
ENDPOINT_SLICE_PLURAL = "endpointslices"


@dataclass
class IterationContext:
    ports: ControllerPorts
    config: HAProxyTemplateConfig
    config_version: str
    credentials: Credentials
    credentials_version: str
    engine: TemplateEngine
    validator: HAProxyValidator
    metrics: ControllerMetrics
    stores: dict[str, ResourceStore] = field(default_factory=dict)
    #: The deployed haproxy.cfg published before this iteration (slot preservation), if any.
    current_config: str | None = None
    #: The local ``haproxy -vv`` capabilities (version_major/minor for discovery, ``capabilities`` in templates).
    capabilities: dict[str, Any] = field(default_factory=dict)
    #: Asked by the deployer before each Dataplane write: does this replica still (provably) lead?
    fence: WriteFence = NO_FENCE
    #: What templates' ``http.fetch`` reads (None: not available, e.g. in tests that build a bare context).
    http: HttpStore | None = None

    @property
    def spec(self) -> HAProxyTemplateConfigSpec:
        return self.config.spec

    @property
    def namespace(self) -> str:
        return self.ports.identity.namespace

    @property
    def config_name(self) -> str:
        return self.ports.identity.config_name

    @property
    def runtime_config_name(self) -> str:
        return runtime_config_name(self.config_name)

    @property
    def generation(self) -> int | None:
        return self.config.metadata.generation

    @property
    def dirs(self) -> StorageDirs:
        return StorageDirs.from_spec(self.spec.dataplane)

    def watched_ref(self, name: str) -> ResourceRef:
        if name == HAPROXY_PODS:
            return PODS
        watched = self.spec.watched_resources[name]
        return ResourceRef(watched.api_version, watched.resources, True)

    def is_endpoint_type(self, name: str) -> bool:
        """EndpointSlice-like stores: their changes skip the reconciler's debounce."""
        watched = self.spec.watched_resources.get(name)
        return watched is not None and watched.resources == ENDPOINT_SLICE_PLURAL

    def logger(self, name: str) -> logging.Logger:
        return self.ports.logger(name)
