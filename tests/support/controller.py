"""Builders for component tests of ``haptic.controller``: an ``IterationContext`` from the simulator's
small slot config, a started bus, and a fake Kubernetes API with the CRDs installed.

``make_ctx(**dataplane)`` overrides ``spec.dataplane`` fields (camelCase, as in the CRD); ``kube`` is
the ``KubeAPI`` port the components use (none by default: a component that reaches for it fails).
"""

from __future__ import annotations

from typing import Any

from pydantic import SecretStr

from haptic.config.crds import all_crds
from haptic.config.credentials import Credentials
from haptic.config.models import load_config
from haptic.controller.context import IterationContext
from haptic.controller.metrics import ControllerMetrics
from haptic.controller.ports import ControllerIdentity, ControllerPorts
from haptic.core import EventBus, SequentialIds, VirtualClock
from haptic.k8s.api import KubeAPI
from haptic.templating.engine import compile_templates
from haptic.validation.haproxy_check import HAProxyValidator
from haptic.validation.process import AsyncCommandRunner
from haptic.validation.render_runner import InlineRenderRunner
from simulator.cluster_objects import template_config
from simulator.kube import FakeKubeAPI, InProcessKubeClient

NAMESPACE = "haptic"


def make_ctx(
    *,
    kube: KubeAPI | None = None,
    config: dict[str, Any] | None = None,
    validator: HAProxyValidator | None = None,
    check_runner: AsyncCommandRunner | None = None,
    **dataplane: Any,
) -> IterationContext:
    obj = config if config is not None else template_config(min_deployment_interval="2s")
    obj["metadata"].setdefault("generation", 1)
    obj["spec"]["dataplane"].update(dataplane)
    loaded = load_config(obj)
    extra: dict[str, Any] = {} if check_runner is None else {"check_runner": check_runner}
    # Renders inline, as in the simulator: these contexts run on virtual time, where a render thread's
    # real seconds would race a fixed number of loop turns.
    extra.update(render_runner=InlineRenderRunner(), webhook_render_runner=InlineRenderRunner())
    ports = ControllerPorts(kube=kube if kube is not None else object(),  # type: ignore[arg-type]
                            identity=ControllerIdentity(NAMESPACE, "c0"), clock=VirtualClock(),
                            ids=SequentialIds(), **extra)
    return IterationContext(ports=ports, config=loaded, config_version="1",
                            credentials=Credentials(username="u", password=SecretStr("p")), credentials_version="v1",
                            engine=compile_templates(loaded.spec), validator=validator or HAProxyValidator(),
                            metrics=ControllerMetrics(), stores=loaded.spec.make_stores())


def started_bus() -> EventBus:
    bus = EventBus(VirtualClock(), SequentialIds())
    bus.start()
    return bus


def fake_cluster(namespace: str = NAMESPACE) -> tuple[FakeKubeAPI, InProcessKubeClient]:
    """A fake API serving our CRDs, with ``namespace`` created, and the in-process client to it."""
    api = FakeKubeAPI()
    crd_type = api.types.by_kind("apiextensions.k8s.io/v1", "CustomResourceDefinition")
    namespaces = api.types.by_kind("v1", "Namespace")
    assert crd_type is not None and namespaces is not None
    for crd in all_crds().values():
        api.create(crd_type, None, crd)
    api.create(namespaces, None, {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": namespace}})
    return api, InProcessKubeClient(api)
