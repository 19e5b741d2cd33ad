"""The fast paths of write validation (remembered valid keys and values, the one-map data check) refuse
exactly what the full checks refuse: a value accepted once does not make a different one pass, and a
refused one is refused again with the same words."""

from __future__ import annotations

from typing import Any

import pytest

from haptic.k8s.api import ApiError, Invalid
from simulator.kube import FakeKubeAPI


def create(api: FakeKubeAPI, name: str, **fields: Any) -> None:
    body: dict[str, Any] = {"metadata": {"name": name, **fields.pop("metadata", {})}, **fields}
    api.create(api.resolve("v1", "configmaps"), "default", body)


def refusal(api: FakeKubeAPI, name: str, **fields: Any) -> str:
    rv = api.resource_version
    with pytest.raises(ApiError) as info:
        create(api, name, **fields)
    assert api.resource_version == rv, "a refused write stores nothing"
    return info.value.message


def test_labels_seen_valid_do_not_let_a_bad_one_pass_and_a_bad_one_is_refused_every_time() -> None:
    api = FakeKubeAPI()
    create(api, "a", metadata={"labels": {"app": "web", "tier": "front"}})
    message = refusal(api, "b", metadata={"labels": {"app": "web", "tier": "-front"}})
    assert message.startswith('ConfigMap "b" is invalid: metadata.labels: Invalid value: "-front": a valid label')
    assert refusal(api, "c", metadata={"labels": {"app": "web", "tier": "-front"}}) == message.replace('"b"', '"c"')
    assert "name part must consist" in refusal(api, "d", metadata={"labels": {"app": "web", "-x": "web"}})
    # A value of the wrong type is a decoding error (400), even beside keys and values known to be valid.
    with pytest.raises(ApiError) as info:
        create(api, "e", metadata={"labels": {"app": "web", "tier": 3}})
    assert info.value.code == 400 and "into Go struct field ObjectMeta.metadata.labels of type string" in \
        info.value.message
    with pytest.raises(ApiError) as info:
        create(api, "f", metadata={"labels": {"app": ["web"]}})
    assert info.value.code == 400


def test_annotation_keys_are_checked_lowercased_and_sized() -> None:
    api = FakeKubeAPI()
    create(api, "a", metadata={"annotations": {"Example.COM/Owner": "me"}})
    assert "prefix part" in refusal(api, "b", metadata={"annotations": {"exa_mple.com/owner": "me"}})
    big = {f"k{i}": "x" * 1024 for i in range(260)}
    assert refusal(api, "c", metadata={"annotations": big}).endswith(
        "metadata.annotations: Too long: must have at most 262144 bytes")


def test_data_keys_and_size_on_the_one_map_path_and_the_two_map_path() -> None:
    api = FakeKubeAPI()
    create(api, "a", data={"key": "v"})
    assert "a valid config key" in refusal(api, "b", data={"key": "v", "bad key": "v"})
    assert "duplicate of key present in data" in refusal(api, "c", data={"key": "v"}, binaryData={"key": "dg=="})
    create(api, "d", data={"key": "v"}, binaryData={"other": "dg=="})
    with pytest.raises(Invalid) as info:
        create(api, "e", data={"key": "x" * (1024 * 1024)})
    assert info.value.message.endswith("Too long: must have at most 1048576 bytes")
    # A value that is not a string leaves the counting fast path (it is counted as the server prints it).
    create(api, "f", data={"key": 1})
