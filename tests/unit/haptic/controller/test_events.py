"""The domain event catalogue: stable names, frozen dataclasses, JSON-safe rendering without secrets."""

from __future__ import annotations

import collections.abc
import dataclasses
import json
import re
import types
import typing

import pytest
from blake3 import blake3
from pydantic import SecretStr

from haptic.config.credentials import Credentials
from haptic.config.models import HAProxyTemplateConfig, load_config
from haptic.controller import events as ev
from haptic.core import Event, EventBus, SequentialIds, VirtualClock
from haptic.dataplane.aux_files import AuxFiles
from haptic.templating.notices import ObjectRef
from haptic.templating.statuses import ObjectStatus
from simulator.cluster_objects import template_config

ENDPOINT = ev.DataplaneEndpoint(url="http://10.0.0.5:5555/v3", pod_name="haproxy-0", pod_namespace="ingress")


def sample(annotation: object) -> object:
    """A plausible value for a field annotation."""
    origin = typing.get_origin(annotation)
    args = typing.get_args(annotation)
    if annotation is str:
        return "x"
    if annotation is bool:
        return True
    if annotation is int:
        return 2
    if annotation is float:
        return 1.5
    if annotation is ev.DataplaneEndpoint:
        return ENDPOINT
    if annotation is ev.SyncMetadata:
        return ev.SyncMetadata(reload_triggered=True, operation_counts={"servers_modified": 2})
    if origin is tuple:
        return (sample(args[0]),)
    if origin is collections.abc.Mapping:
        return {"k": sample(args[1])}
    # Bulky or secret payloads carry the marker "opaque": it must never reach a rendered event.
    if annotation is object:
        return {"opaque": "payload"}
    if annotation is AuxFiles:
        return AuxFiles(maps={"opaque.map": "payload"}, certificates={"opaque.pem": "key"})
    if annotation is Credentials:
        return Credentials(username="opaque", password=SecretStr("opaque"))
    if annotation is HAProxyTemplateConfig:
        return load_config(template_config(name="opaque"))
    if annotation is ObjectStatus:
        return ObjectStatus(ObjectRef("Gateway", "ns", "opaque"), {"opaque": "payload"}, "v1")
    if origin in (typing.Union, types.UnionType):
        return sample(args[0])
    raise AssertionError(f"no sample for {annotation!r}")


def build(cls: type[Event]) -> Event:
    hints = typing.get_type_hints(cls)
    kwargs = {
        f.name: sample(hints[f.name])
        for f in dataclasses.fields(cls)
        if f.name not in ("event_id", "correlation_id", "causation_id", "timestamp")
    }
    return cls(**kwargs)


CATALOGUE = list(ev.DOMAIN_EVENTS.values())


def test_catalogue_covers_the_reconciliation_path() -> None:
    required = {
        "resource.index.updated", "index.synchronized", "reconciliation.triggered", "template.rendered",
        "template.render.failed", "validation.completed", "validation.failed", "deployment.scheduled",
        "deployment.started", "deployment.completed", "instance.deployment.failed", "drift.prevention.triggered",
        "config.parsed", "config.validated", "config.invalid", "credentials.updated", "credentials.invalid",
        "haproxy.pods.discovered", "haproxy.pod.terminated", "leader.became", "leader.lost", "leader.observed",
        "config.published", "reconciliation.started", "reconciliation.completed", "reconciliation.failed",
        "deployment.cancel.request", "config.applied.to.pod",
    }
    assert required <= set(ev.DOMAIN_EVENTS)
    assert list(ev.DOMAIN_EVENTS) == sorted(ev.DOMAIN_EVENTS)


@pytest.mark.parametrize("cls", CATALOGUE, ids=lambda c: c.type)
def test_each_event_is_a_frozen_dataclass_with_a_stable_name(cls: type[Event]) -> None:
    assert re.fullmatch(r"[a-z_]+(\.[a-z_]+)+", cls.type)
    assert ev.DOMAIN_EVENTS[cls.type] is cls
    event = build(cls)
    field = next(f.name for f in dataclasses.fields(cls) if f.name != "event_id")
    with pytest.raises(dataclasses.FrozenInstanceError):
        setattr(event, field, "changed")


@pytest.mark.parametrize("cls", CATALOGUE, ids=lambda c: c.type)
async def test_each_event_renders_to_json_with_its_type_and_envelope(cls: type[Event]) -> None:
    bus = EventBus(VirtualClock(epoch=0.0), SequentialIds("e"))
    event = build(cls)
    bus.start()
    bus.publish(event)
    rendered = event.to_dict()
    text = json.dumps(rendered, sort_keys=True)
    assert json.loads(text) == rendered
    assert rendered["type"] == cls.type
    assert rendered["event_id"] == "e1"
    assert "opaque" not in text  # bulky or secret payloads (configs, files, credentials): never rendered


def test_credentials_events_render_only_the_version() -> None:
    credentials = ev.CredentialsUpdated(secret_version="42", credentials={"username": "admin", "password": "hunter2"})
    assert credentials.to_dict()["secret_version"] == "42"
    assert "hunter2" not in json.dumps(credentials.to_dict())
    assert "hunter2" not in repr(credentials)
    secret = ev.SecretResourceChanged(name="creds", namespace="ns", resource_version="9",
                                      resource={"data": {"dataplane_password": "aHVudGVyMg=="}})
    assert "aHVudGVyMg" not in json.dumps(secret.to_dict())
    assert "aHVudGVyMg" not in repr(secret)


def test_rendered_config_becomes_a_digest() -> None:
    config = "global\n  daemon\n" * 100
    event = ev.TemplateRendered(haproxy_config=config, content_checksum="abc", auxiliary_files=AuxFiles())
    rendered = event.to_dict()
    assert rendered["haproxy_config"] == {"blake3": blake3(config.encode()).hexdigest(), "bytes": len(config)}
    assert "daemon" not in json.dumps(rendered)
    assert "daemon" not in repr(event)


def test_nested_values_render_as_plain_data() -> None:
    event = ev.ConfigAppliedToPod(pod_name="haproxy-0", pod_namespace="ingress", checksum="c1",
                                  sync=ev.SyncMetadata(reload_triggered=True, reload_id="r1",
                                                       operation_counts={"servers_modified": 3}))
    assert event.to_dict()["sync"] == {
        "reload_triggered": True, "reload_id": "r1", "sync_duration_s": 0.0, "version_conflict_retries": 0,
        "fallback_used": False, "operation_counts": {"servers_modified": 3}, "error": "",
    }
    discovered = ev.HAProxyPodsDiscovered(endpoints=(ENDPOINT,))
    assert discovered.count == 1
    assert discovered.to_dict()["endpoints"] == [
        {"url": "http://10.0.0.5:5555/v3", "pod_name": "haproxy-0", "pod_namespace": "ingress"},
    ]
    trigger = ev.ReconciliationTriggered(reason=ev.TriggerReason.DRIFT_PREVENTION, coalescible=False)
    assert trigger.to_dict()["reason"] == "drift_prevention"

