"""Config and credentials loading inside a running iteration.

``ConfigWatcher`` / ``SecretWatcher`` watch the one HAProxyTemplateConfig and the one credentials
Secret and publish ``config.resource.changed`` (on a new ``metadata.generation`` only: status writes
do not count) and ``secret.resource.changed`` (Secrets have no generation: on a change of content).
``ConfigLoader`` parses and validates a changed config (models, then template compilation) into
``config.validated`` or ``config.invalid``; ``CredentialsLoader`` turns a Secret into
``credentials.updated`` (swapping the iteration's credentials) or ``credentials.invalid``. Both replay
their last result on ``leader.became`` so leader-only components starting late see current state.
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
from typing import Any

from haptic.config.credentials import load_credentials
from haptic.config.errors import ConfigError
from haptic.config.models import load_config
from haptic.controller.component import IterationComponent
from haptic.controller.context import SECRETS, TEMPLATE_CONFIGS, IterationContext
from haptic.controller.events import (
    BecameLeader,
    ConfigInvalid,
    ConfigParsed,
    ConfigResourceChanged,
    ConfigValidated,
    CredentialsInvalid,
    CredentialsUpdated,
    SecretResourceChanged,
)
from haptic.controller.watch.config_tests import validation_test_failures
from haptic.core import Event, EventBus
from haptic.k8s.api import JSON, ResourceRef, Selectors
from haptic.k8s.watch_loop import list_and_watch
from haptic.templating.engine import TemplateEngine, compile_templates
from haptic.templating.errors import TemplatingError
from haptic.templating.libraries import LibraryError, expand_libraries


def secret_fingerprint(secret: JSON) -> str:
    """A digest of a Secret's data: rotation detection without keeping (or logging) the values."""
    body = {"data": secret.get("data") or {}, "stringData": secret.get("stringData") or {}}
    return hashlib.sha256(json.dumps(body, sort_keys=True).encode()).hexdigest()[:16]


def config_version(obj: JSON) -> str:
    metadata = obj.get("metadata") or {}
    return str(metadata.get("generation") or metadata.get("resourceVersion") or "")


def validate_config_object(obj: JSON, name: str) -> tuple[Any, list[str]]:
    """(config, []) when the object is a usable HAProxyTemplateConfig, (None, errors) otherwise.

    The template libraries its annotation names are merged under its spec first (as ``haptic validate``
    and ``haptic render`` do), so a config built on the Ingress library is complete.
    """
    config, _, errors = compile_config_object(obj, name)
    return config, errors


def compile_config_object(obj: JSON, name: str) -> tuple[Any, TemplateEngine | None, list[str]]:
    """As ``validate_config_object``, with the engine its templates compiled into (None when invalid): an
    iteration built from this config renders with it instead of compiling the templates a second time."""
    try:
        expanded = expand_libraries(obj)
    except LibraryError as exc:
        return None, None, [f"HAProxyTemplateConfig {name}: {exc}"]
    try:
        config = load_config(expanded)
    except ConfigError as exc:
        return None, None, [str(exc)]
    try:
        engine = compile_templates(config.spec)
    except TemplatingError as exc:
        return None, None, [f"HAProxyTemplateConfig {name}: {exc}"]
    return config, engine, []


class _SingleObjectWatcher(IterationComponent):
    ref: ResourceRef

    def __init__(self, bus: EventBus, ctx: IterationContext, object_name: str, namespace: str) -> None:
        super().__init__(bus, ctx)
        self.object_name = object_name
        self.object_namespace = namespace
        self.last_key: str | None = None

    def key_of(self, obj: JSON) -> str:
        raise NotImplementedError

    def event_for(self, obj: JSON) -> Event:
        raise NotImplementedError

    async def on_start(self) -> None:
        selectors = Selectors(field_selector=f"metadata.name={self.object_name}")
        self.spawn(list_and_watch(self.ctx.ports.kube, self.ref, self.object_namespace, selectors, self.clock,
                                  self.logger, self._on_list, self._on_event), "watch")

    def _on_list(self, items: list[JSON]) -> None:
        for obj in items:
            self._on_event("ADDED", obj)

    def _on_event(self, etype: str, obj: JSON) -> None:
        if etype == "DELETED":
            self.logger.warning("%s %s/%s was deleted; keeping the current one", self.ref.kind, self.object_namespace,
                             self.object_name)
            return
        key = self.key_of(obj)
        if key == self.last_key:
            return
        self.last_key = key
        self.bus.publish(self.event_for(obj))


class ConfigWatcher(_SingleObjectWatcher):
    name = "config-watcher"
    ref = TEMPLATE_CONFIGS

    def __init__(self, bus: EventBus, ctx: IterationContext) -> None:
        super().__init__(bus, ctx, ctx.config_name, ctx.namespace)
        self.last_key = ctx.config_version

    def key_of(self, obj: JSON) -> str:
        return config_version(obj)

    def event_for(self, obj: JSON) -> Event:
        meta = obj.get("metadata") or {}
        return ConfigResourceChanged(name=self.object_name, namespace=self.object_namespace,
                                     resource_version=str(meta.get("resourceVersion") or ""), resource=obj)


class SecretWatcher(_SingleObjectWatcher):
    name = "secret-watcher"
    ref = SECRETS

    def __init__(self, bus: EventBus, ctx: IterationContext, secret_name: str) -> None:
        super().__init__(bus, ctx, secret_name, ctx.namespace)
        self.last_key = ctx.credentials_version

    def key_of(self, obj: JSON) -> str:
        return secret_fingerprint(obj)

    def event_for(self, obj: JSON) -> Event:
        return SecretResourceChanged(name=self.object_name, namespace=self.object_namespace,
                                     resource_version=secret_fingerprint(obj), resource=obj)


class _ReplayingLoader(IterationComponent):
    """Keeps its last outcome and publishes it again when this replica becomes leader."""

    def __init__(self, bus: EventBus, ctx: IterationContext) -> None:
        super().__init__(bus, ctx)
        self.last: Event | None = None

    async def handle(self, event: Event) -> None:
        if isinstance(event, BecameLeader):
            if self.last is not None:
                self.publish(_copy(self.last))
            return
        self.last = await self.load(event)
        self.publish(self.last)

    async def load(self, event: Event) -> Event:
        raise NotImplementedError


class ConfigLoader(_ReplayingLoader):
    """``config.resource.changed`` → ``config.parsed`` → ``config.validated`` / ``config.invalid``."""

    name = "config-loader"
    subscribes = (ConfigResourceChanged, BecameLeader)

    def initial(self) -> ConfigValidated:
        """The bootstrap event for the config this iteration was built from."""
        event = ConfigValidated(version=self.ctx.config_version, config=self.ctx.config)
        self.last = event
        return event

    async def load(self, event: Event) -> Event:
        assert isinstance(event, ConfigResourceChanged)
        obj = dict(event.resource)
        version = config_version(obj)
        config, errors = validate_config_object(obj, f"{event.namespace}/{event.name}")
        if config is None:
            out: Event = ConfigInvalid(version=version, errors={"config": tuple(errors)})
            self.logger.error("HAProxyTemplateConfig %s/%s generation %s is invalid: %s", event.namespace, event.name,
                           version, "; ".join(errors))
            return out
        self.publish(ConfigParsed(version=version, config=config))
        failures = await validation_test_failures(config.spec, self.ctx.ports, self.ctx.capabilities)
        if failures:
            self.logger.error("HAProxyTemplateConfig %s/%s generation %s not adopted, its validationTests fail: %s",
                              event.namespace, event.name, version, "; ".join(failures))
            return ConfigInvalid(version=version, errors={"validationTests": tuple(failures)})
        return ConfigValidated(version=version, config=config)


class CredentialsLoader(_ReplayingLoader):
    """``secret.resource.changed`` → ``credentials.updated`` (credentials swapped) / ``credentials.invalid``."""

    name = "credentials-loader"
    subscribes = (SecretResourceChanged, BecameLeader)

    def initial(self) -> CredentialsUpdated:
        event = CredentialsUpdated(secret_version=self.ctx.credentials_version, credentials=self.ctx.credentials)
        self.last = event
        return event

    async def load(self, event: Event) -> Event:
        assert isinstance(event, SecretResourceChanged)
        try:
            credentials = load_credentials(event.resource)
        except ConfigError as exc:
            out: Event = CredentialsInvalid(secret_version=event.resource_version, error=str(exc))
            self.logger.warning("credentials Secret %s/%s is invalid: %s", event.namespace, event.name, exc)
        else:
            self.ctx.credentials = credentials
            self.ctx.credentials_version = event.resource_version
            out = CredentialsUpdated(secret_version=event.resource_version, credentials=credentials)
        return out


def _copy(event: Event) -> Event:
    """A fresh (unsealed) copy of a published event, for replays."""
    return dataclasses.replace(event, event_id="", correlation_id="", causation_id="", timestamp=0.0)
