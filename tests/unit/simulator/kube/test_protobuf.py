"""The protobuf envelope kubectl's typed clients send, decoded for the kinds the fake understands."""

from __future__ import annotations

import pytest

from haptic.k8s.api import ApiError
from simulator.kube import protobuf

# Captured from `kubectl create configmap pc --from-literal=a=1` (kubectl 1.32).
CONFIGMAP = (b'k8s\x00\n\x0f\n\x02v1\x12\tConfigMap\x12\x1c\n\x12\n\x02pc\x12\x00\x1a\x00"\x00*\x002\x008\x00B\x00'
             b'\x12\x06\n\x01a\x12\x011\x1a\x00"\x00')


def test_configmap_decodes_and_empty_fields_mean_unset() -> None:
    assert protobuf.decode(CONFIGMAP) == {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "pc"},
                                          "data": {"a": "1"}}


def test_unknown_kinds_and_garbage_are_refused() -> None:
    deployment = CONFIGMAP.replace(b"\n\x0f\n\x02v1\x12\tConfigMap", b"\n\x10\n\x07apps/v1\x12\x05Deplo")
    with pytest.raises(ApiError) as info:
        protobuf.decode(deployment)
    assert info.value.code == 415
    with pytest.raises(ApiError) as info:
        protobuf.decode(b"k8s\x00\n\xff")
    assert info.value.code == 400
    with pytest.raises(ApiError) as info:
        protobuf.decode(b'{"kind": "ConfigMap"}')
    assert info.value.code == 415


def _varint(value: int) -> bytes:
    value &= (1 << 64) - 1
    out = b""
    while True:
        byte, value = value & 0x7F, value >> 7
        out += bytes([byte | (0x80 if value else 0)])
        if not value:
            return out


def _field(number: int, value: int | bytes | str) -> bytes:
    if isinstance(value, int):
        return _varint(number << 3) + _varint(value)
    data = value.encode() if isinstance(value, str) else value
    return _varint(number << 3 | 2) + _varint(len(data)) + data


def _envelope(api_version: str, kind: str, raw: bytes) -> bytes:
    return protobuf.MAGIC + _field(1, _field(1, api_version) + _field(2, kind)) + _field(2, raw)


def _deployment(spec: bytes) -> bytes:
    return _envelope("apps/v1", "Deployment", _field(1, _field(1, "web")) + _field(2, spec) + _field(3, _field(1, 0)))


def test_deployment_fields_follow_go_zero_value_rules() -> None:
    container = _field(1, "web") + _field(2, "nginx") + _field(5, "") + _field(8, b"") + _field(16, 0)
    template = _field(1, b"") + _field(2, _field(2, container) + _field(3, "Always") + _field(11, 0))
    surge = _field(1, 1) + _field(3, "25%")  # IntOrString: type 1 is a string
    spec = (_field(1, 0) + _field(3, template) + _field(4, _field(1, "RollingUpdate") + _field(2, _field(2, surge)))
            + _field(5, 0) + _field(6, -1))
    assert protobuf.decode(_deployment(spec)) == {
        "apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "web"},
        "spec": {
            "replicas": 0,  # a pointer: zero is a value
            "template": {"metadata": {}, "spec": {"containers": [{"name": "web", "image": "nginx", "resources": {}}],
                                                  "restartPolicy": "Always"}},
            "strategy": {"type": "RollingUpdate", "rollingUpdate": {"maxSurge": "25%"}},
            "revisionHistoryLimit": -1,  # negative numbers travel as 64-bit two's complement
        },
    }


def test_a_field_the_tables_do_not_know_is_refused_unless_it_is_zero() -> None:
    assert protobuf.decode(_deployment(_field(99, 0) + _field(98, b"") + _field(97, _field(1, 0))))["spec"] == {}
    with pytest.raises(ApiError) as info:
        protobuf.decode(_deployment(_field(99, "something")))
    assert info.value.code == 415 and "protobuf field 99 of DeploymentSpec" in info.value.message
    # A pod template's affinity is not in the tables: sent, it is refused rather than dropped.
    template = _field(2, _field(18, _field(1, _field(1, "x"))))
    with pytest.raises(ApiError) as info:
        protobuf.decode(_deployment(_field(3, template)))
    assert "protobuf field 18 of PodSpec" in info.value.message
