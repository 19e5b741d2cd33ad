"""Patch semantics of the fake API: RFC 7386 merge, RFC 6902 JSON patch, strategic merge directives."""

from __future__ import annotations

import pytest

from haptic.k8s.api import ApiError, Invalid
from simulator.kube.patching import json_copy, json_patch, merge_patch, strategic_merge


def test_merge_patch_rfc7386() -> None:
    target = {"a": "b", "c": {"d": "e", "f": "g"}, "l": [1, 2]}
    assert merge_patch(target, {"a": "z", "c": {"f": None}, "l": [3]}) == {"a": "z", "c": {"d": "e"}, "l": [3]}
    assert target == {"a": "b", "c": {"d": "e", "f": "g"}, "l": [1, 2]}, "the target is not modified"
    assert merge_patch({"a": 1}, {"a": {"b": None}}) == {"a": {}}


def test_json_patch_operations_and_errors() -> None:
    doc = {"a": {"b": [1, 2]}}
    assert json_patch(doc, [{"op": "add", "path": "/a/b/-", "value": 3},
                            {"op": "move", "from": "/a/b", "path": "/c"}]) == {"a": {}, "c": [1, 2, 3]}
    with pytest.raises(Invalid):
        json_patch(doc, [{"op": "test", "path": "/a/b/0", "value": 9}])
    with pytest.raises(Invalid):
        json_patch(doc, [{"op": "remove", "path": "/missing"}])
    with pytest.raises(ApiError) as info:
        json_patch(doc, {"op": "add"})
    assert info.value.code == 400


def test_strategic_merge_directives() -> None:
    pod = {"spec": {"containers": [{"name": "a", "image": "a:1", "ports": [{"containerPort": 80, "name": "http"}]},
                                   {"name": "b", "image": "b:1"}],
                    "volumes": [{"name": "v", "emptyDir": {}}]},
           "metadata": {"finalizers": ["x", "y"]}}
    before = json_copy(pod)
    patch = {
        "metadata": {"$deleteFromPrimitiveList/finalizers": ["x"], "finalizers": ["z"]},
        "spec": {
            "$setElementOrder/containers": [{"name": "b"}, {"name": "a"}],
            "containers": [{"name": "a", "ports": [{"containerPort": 443}]}],
            "volumes": [{"name": "v", "$retainKeys": ["name", "configMap"], "configMap": {"name": "cm"}}],
        },
    }
    result = strategic_merge(pod, patch, (), "Pod")
    assert [c["name"] for c in result["spec"]["containers"]] == ["b", "a"]
    assert result["spec"]["containers"][1]["ports"] == [{"containerPort": 80, "name": "http"},
                                                        {"containerPort": 443}]
    assert result["spec"]["volumes"] == [{"name": "v", "configMap": {"name": "cm"}}]
    assert result["metadata"]["finalizers"] == ["y", "z"]
    assert pod == before, "the original is not modified"
    replaced = strategic_merge(pod, {"spec": {"containers": [{"name": "c"}, {"$patch": "replace"}]}}, (), "Pod")
    assert replaced["spec"]["containers"] == [{"name": "c"}]
    dropped = strategic_merge(pod, {"spec": {"volumes": None, "containers": [{"name": "b", "$patch": "delete"}]}},
                              (), "Pod")
    assert "volumes" not in dropped["spec"] and [c["name"] for c in dropped["spec"]["containers"]] == ["a"]


def test_service_ports_merge_by_port_and_atomic_lists_replace() -> None:
    svc = {"spec": {"ports": [{"port": 80, "name": "a"}, {"port": 443, "name": "b"}], "externalIPs": ["1.1.1.1"]}}
    result = strategic_merge(svc, {"spec": {"ports": [{"port": 80, "name": "web"}], "externalIPs": ["2.2.2.2"]}},
                             (), "Service")
    assert result["spec"]["ports"] == [{"port": 80, "name": "web"}, {"port": 443, "name": "b"}]
    assert result["spec"]["externalIPs"] == ["2.2.2.2"]
    with pytest.raises(ApiError):
        strategic_merge(svc, {"spec": {"ports": [{"name": "no-key"}]}}, (), "Service")
