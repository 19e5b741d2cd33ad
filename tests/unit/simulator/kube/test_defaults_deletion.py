"""Defaults and status on create, metadata.generation only where the API server keeps it, garbage-collected
deletion (foreground, background, orphan) and the default ServiceAccount of every namespace."""

from __future__ import annotations

from typing import Any

import pytest

from haptic.k8s.api import Invalid
from simulator.kube import FakeKubeAPI


@pytest.fixture
def api() -> FakeKubeAPI:
    return FakeKubeAPI()


def owned_by(owner: dict[str, Any]) -> list[dict[str, Any]]:
    meta = owner["metadata"]
    return [{"apiVersion": owner["apiVersion"], "kind": owner["kind"], "name": meta["name"], "uid": meta["uid"],
             "blockOwnerDeletion": True}]


def test_services_and_pods_get_the_servers_defaults(api: FakeKubeAPI) -> None:
    service = api.create(api.resolve("v1", "services"), "default", {"metadata": {"name": "s"},
                                                                   "spec": {"ports": [{"port": 80}]}})
    assert service["status"] == {"loadBalancer": {}}
    assert (service["spec"]["type"], service["spec"]["sessionAffinity"]) == ("ClusterIP", "None")
    assert service["spec"]["clusterIP"] == "10.96.0.2" and "generation" not in service["metadata"]
    pod = api.create(api.resolve("v1", "pods"), "default", {"metadata": {"name": "p"}, "spec": {
        "containers": [{"name": "c", "image": "nginx"}, {"name": "d", "image": "nginx:1.27"}]}})
    assert pod["status"] == {"phase": "Pending", "qosClass": "BestEffort"}
    spec = pod["spec"]
    assert (spec["restartPolicy"], spec["dnsPolicy"], spec["terminationGracePeriodSeconds"],
            spec["serviceAccountName"], spec["schedulerName"]) == ("Always", "ClusterFirst", 30, "default",
                                                                     "default-scheduler")
    assert [c["imagePullPolicy"] for c in spec["containers"]] == ["Always", "IfNotPresent"]
    assert "generation" not in pod["metadata"]
    config_map = api.create(api.resolve("v1", "configmaps"), "default", {"metadata": {"name": "c"}})
    assert "generation" not in config_map["metadata"]
    updated = api.patch(api.resolve("v1", "configmaps"), "default", "c", "merge", {"data": {"a": "1"}})
    assert "generation" not in updated["metadata"]


def test_deployments_have_generation_and_defaults(api: FakeKubeAPI) -> None:
    rt = api.resolve("apps/v1", "deployments")
    created = api.create(rt, "default", {"metadata": {"name": "d"}, "spec": {
        "selector": {"matchLabels": {"a": "b"}},
        "template": {"metadata": {"labels": {"a": "b"}}, "spec": {"containers": [{"name": "c", "image": "x:1"}]}}}})
    assert created["metadata"]["generation"] == 1 and created["status"] == {}
    assert (created["spec"]["replicas"], created["spec"]["strategy"]["type"]) == (1, "RollingUpdate")
    same = api.update(rt, "default", "d", {**created, "spec": {**created["spec"], "replicas": 1}})
    assert same["metadata"]["resourceVersion"] == created["metadata"]["resourceVersion"]


def test_every_namespace_has_a_default_service_account(api: FakeKubeAPI) -> None:
    accounts = api.resolve("v1", "serviceaccounts")
    assert api.get(accounts, "default", "default")["metadata"]["name"] == "default"
    api.create(api.resolve("v1", "namespaces"), None, {"metadata": {"name": "shop"}})
    assert api.get(accounts, "shop", "default")


def test_foreground_background_and_orphan_deletion(api: FakeKubeAPI) -> None:
    cms = api.resolve("v1", "configmaps")
    for policy, dependents_left in (("Foreground", False), ("Background", False), ("Orphan", True)):
        owner = api.create(cms, "default", {"metadata": {"name": f"owner-{policy.lower()}"}})
        dependent = api.create(cms, "default", {"metadata": {"name": f"dep-{policy.lower()}",
                                                             "ownerReferences": owned_by(owner)}})
        watch = api.watch(cms, "default", resource_version=str(api.resource_version))
        answer, gone = api.delete(cms, "default", owner["metadata"]["name"], propagation=policy)
        events = [(etype, obj["metadata"]["name"], obj["metadata"].get("finalizers")) for etype, obj in watch.drain()]
        watch.close()
        assert gone and not api.list(cms, "default", field_selector=f"metadata.name={owner['metadata']['name']}").items
        left = api.list(cms, "default", field_selector=f"metadata.name={dependent['metadata']['name']}").items
        assert bool(left) == dependents_left, policy
        if policy == "Foreground":
            assert answer["metadata"]["finalizers"] == ["foregroundDeletion"]
            assert answer["metadata"]["deletionTimestamp"]
            assert [e[:2] for e in events] == [("MODIFIED", "owner-foreground"), ("DELETED", "dep-foreground"),
                                              ("DELETED", "owner-foreground")]
        elif policy == "Orphan":
            assert answer["metadata"]["finalizers"] == ["orphan"]
            assert "ownerReferences" not in left[0]["metadata"]
            assert [e[:2] for e in events] == [("MODIFIED", "owner-orphan"), ("MODIFIED", "dep-orphan"),
                                              ("DELETED", "owner-orphan")]
        else:
            assert [e[:2] for e in events] == [("DELETED", "owner-background"), ("DELETED", "dep-background")]


def test_foreground_owner_waits_for_a_dependent_with_a_finalizer(api: FakeKubeAPI) -> None:
    cms = api.resolve("v1", "configmaps")
    owner = api.create(cms, "default", {"metadata": {"name": "owner"}})
    api.create(cms, "default", {"metadata": {"name": "dep", "finalizers": ["example.com/hold"],
                                             "ownerReferences": owned_by(owner)}})
    _, gone = api.delete(cms, "default", "owner", propagation="Foreground")
    assert not gone and api.get(cms, "default", "owner")["metadata"]["finalizers"] == ["foregroundDeletion"]
    api.patch(cms, "default", "dep", "merge", {"metadata": {"finalizers": None}})
    assert not api.list(cms, "default").items or all(
        o["metadata"]["name"] not in ("owner", "dep") for o in api.list(cms, "default").items)
    with pytest.raises(Invalid, match="propagationPolicy"):
        api.delete(cms, "default", "kube-root", propagation="Sideways")


def test_node_ports_are_allocated_and_kept(api: FakeKubeAPI) -> None:
    rt = api.resolve("v1", "services")
    created = api.create(rt, "default", {"metadata": {"name": "lb"}, "spec": {"type": "LoadBalancer",
                                                                         "ports": [{"port": 80}]}})
    spec = created["spec"]
    assert (spec["ports"][0]["nodePort"], spec["externalTrafficPolicy"], spec["allocateLoadBalancerNodePorts"]) == (
        30000, "Cluster", True)
    updated = api.patch(rt, "default", "lb", "merge", {"spec": {"sessionAffinity": "ClientIP"}})
    assert updated["spec"]["ports"][0]["nodePort"] == 30000


POD_TEMPLATE = {"spec": {"containers": [{"name": "c", "image": "busybox"}], "restartPolicy": "Never"}}


def test_jobs_get_a_generated_selector_and_the_job_defaults(api: FakeKubeAPI) -> None:
    job = api.create(api.resolve("batch/v1", "jobs"), "default", {"metadata": {"name": "once"},
                                                                  "spec": {"template": POD_TEMPLATE}})
    uid = job["metadata"]["uid"]
    assert job["spec"]["selector"] == {"matchLabels": {"batch.kubernetes.io/controller-uid": uid}}
    labels = {"batch.kubernetes.io/controller-uid": uid, "batch.kubernetes.io/job-name": "once",
              "controller-uid": uid, "job-name": "once"}
    assert job["spec"]["template"]["metadata"]["labels"] == labels and job["metadata"]["labels"] == labels
    assert {k: job["spec"][k] for k in ("completions", "parallelism", "backoffLimit", "completionMode", "suspend",
                                        "podReplacementPolicy")} == {
        "completions": 1, "parallelism": 1, "backoffLimit": 6, "completionMode": "NonIndexed", "suspend": False,
        "podReplacementPolicy": "TerminatingOrFailed"}
    assert job["spec"]["template"]["spec"]["dnsPolicy"] == "ClusterFirst" and job["status"] == {}
    # A manual selector is the client's: nothing is generated, and it must match the template.
    manual = {"metadata": {"name": "manual"}, "spec": {
        "manualSelector": True, "selector": {"matchLabels": {"app": "x"}}, "parallelism": 2,
        "template": {**POD_TEMPLATE, "metadata": {"labels": {"app": "y"}}}}}
    with pytest.raises(Invalid) as info:
        api.create(api.resolve("batch/v1", "jobs"), "default", manual)
    assert "`selector` does not match template `labels`" in info.value.message
    manual["spec"]["template"]["metadata"]["labels"] = {"app": "x"}  # type: ignore[index]
    made = api.create(api.resolve("batch/v1", "jobs"), "default", manual)["spec"]
    assert made["selector"] == {"matchLabels": {"app": "x"}} and "completions" not in made


def test_cron_jobs_default_their_policy_and_their_pod_template_only(api: FakeKubeAPI) -> None:
    cron = api.create(api.resolve("batch/v1", "cronjobs"), "default", {"metadata": {"name": "tick"}, "spec": {
        "schedule": "* * * * *", "jobTemplate": {"spec": {"template": POD_TEMPLATE}}}})
    spec = cron["spec"]
    assert (spec["concurrencyPolicy"], spec["suspend"], spec["successfulJobsHistoryLimit"],
            spec["failedJobsHistoryLimit"]) == ("Allow", False, 3, 1)
    job_spec = spec["jobTemplate"]["spec"]
    assert job_spec["template"]["spec"]["terminationGracePeriodSeconds"] == 30 and "backoffLimit" not in job_spec
    assert cron["status"] == {}
