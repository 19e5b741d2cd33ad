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
