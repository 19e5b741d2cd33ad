"""Built-in API groups the fake serves beyond the core ones, through kubectl and the official client:
batch, policy, autoscaling, rbac, apiregistration, the access reviews of ``kubectl auth`` and the
``scale`` and ``token`` subresources (all answered 404 before)."""

from __future__ import annotations

import base64
import json
from collections.abc import Iterator
from pathlib import Path

import pytest
import yaml
from kubernetes import client
from kubernetes.client.rest import ApiException

from simulator.kube import BackgroundServer
from tests.support.kubectl import Kubectl

pytestmark = pytest.mark.kubectl

WORKLOADS = """\
apiVersion: apps/v1
kind: Deployment
metadata: {name: web, namespace: default}
spec:
  replicas: 2
  selector:
    matchLabels: {app: web}
    matchExpressions: [{key: tier, operator: In, values: [front, edge]}]
  template:
    metadata: {labels: {app: web, tier: front}}
    spec: {containers: [{name: web, image: nginx:1}]}
---
apiVersion: apps/v1
kind: StatefulSet
metadata: {name: db, namespace: default}
spec:
  serviceName: db
  selector: {matchLabels: {app: db}}
  template:
    metadata: {labels: {app: db}}
    spec: {containers: [{name: db, image: postgres:16}]}
---
apiVersion: apps/v1
kind: ReplicaSet
metadata: {name: cache, namespace: default}
spec:
  replicas: 1
  selector: {matchLabels: {app: cache}}
  template:
    metadata: {labels: {app: cache}}
    spec: {containers: [{name: cache, image: redis:7}]}
---
apiVersion: v1
kind: ReplicationController
metadata: {name: legacy, namespace: default}
spec:
  replicas: 1
  template:
    metadata: {labels: {app: legacy}}
    spec: {containers: [{name: legacy, image: busybox}]}
"""

OTHERS = """\
apiVersion: batch/v1
kind: Job
metadata: {name: migrate, namespace: default}
spec:
  template:
    spec:
      restartPolicy: Never
      containers: [{name: migrate, image: busybox, command: [sh, -c, "true"]}]
---
apiVersion: batch/v1
kind: CronJob
metadata: {name: nightly, namespace: default}
spec:
  schedule: "0 3 * * *"
  jobTemplate:
    spec:
      template:
        spec:
          restartPolicy: OnFailure
          containers: [{name: backup, image: busybox}]
---
apiVersion: policy/v1
kind: PodDisruptionBudget
metadata: {name: web, namespace: default}
spec:
  minAvailable: 1
  selector: {matchLabels: {app: web}}
---
apiVersion: autoscaling/v2
kind: HorizontalPodAutoscaler
metadata: {name: web, namespace: default}
spec:
  scaleTargetRef: {apiVersion: apps/v1, kind: Deployment, name: web}
  minReplicas: 1
  maxReplicas: 5
  metrics:
  - type: Resource
    resource: {name: cpu, target: {type: Utilization, averageUtilization: 70}}
---
apiVersion: apiregistration.k8s.io/v1
kind: APIService
metadata: {name: v1beta1.metrics.k8s.io}
spec:
  group: metrics.k8s.io
  version: v1beta1
  groupPriorityMinimum: 100
  versionPriority: 100
  service: {name: metrics-server, namespace: kube-system}
---
apiVersion: rbac.authorization.k8s.io/v1
kind: Role
metadata: {name: pod-reader, namespace: default}
rules:
- apiGroups: [""]
  resources: [pods]
  verbs: [get, list, watch]
---
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRole
metadata: {name: node-reader}
rules:
- apiGroups: [""]
  resources: [nodes]
  verbs: [get, list]
---
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRoleBinding
metadata: {name: node-reader}
roleRef: {apiGroup: rbac.authorization.k8s.io, kind: ClusterRole, name: node-reader}
subjects: [{kind: Group, name: ops, apiGroup: rbac.authorization.k8s.io}]
"""


@pytest.fixture
def server() -> Iterator[BackgroundServer]:
    with BackgroundServer() as srv:
        yield srv


@pytest.fixture
def kubectl(kubectl_bin: str, server: BackgroundServer, tmp_path: Path) -> Kubectl:
    return Kubectl(kubectl_bin, server, tmp_path)


def official(server: BackgroundServer, token: str | None = None) -> client.ApiClient:
    config = client.Configuration()
    config.host = server.url
    if token:
        config.api_key = {"authorization": f"Bearer {token}"}
    return client.ApiClient(config)


def test_apply_and_get_every_new_kind(kubectl: Kubectl) -> None:
    out = kubectl("apply", "-f", "-", stdin=WORKLOADS + "---\n" + OTHERS).stdout
    for created in ("job.batch/migrate", "cronjob.batch/nightly", "poddisruptionbudget.policy/web",
                    "horizontalpodautoscaler.autoscaling/web",
                    "apiservice.apiregistration.k8s.io/v1beta1.metrics.k8s.io",
                    "role.rbac.authorization.k8s.io/pod-reader", "clusterrole.rbac.authorization.k8s.io/node-reader",
                    "replicationcontroller/legacy"):
        assert f"{created} created" in out
    names = kubectl("get", "jobs,cronjobs,pdb,hpa,rc,roles", "-o", "name").stdout.split()
    assert sorted(names) == sorted([
        "job.batch/migrate", "cronjob.batch/nightly", "poddisruptionbudget.policy/web",
        "horizontalpodautoscaler.autoscaling/web", "replicationcontroller/legacy",
        "role.rbac.authorization.k8s.io/pod-reader"])
    # Re-applying the Role is a no-op, as on a real server.
    assert "role.rbac.authorization.k8s.io/pod-reader unchanged" in kubectl("apply", "-f", "-", stdin=OTHERS).stdout
    groups = kubectl("api-versions").stdout.split()
    for group_version in ("batch/v1", "policy/v1", "autoscaling/v2", "autoscaling/v1", "rbac.authorization.k8s.io/v1",
                          "apiregistration.k8s.io/v1", "authorization.k8s.io/v1", "authentication.k8s.io/v1"):
        assert group_version in groups


def test_discovery_lists_review_types_as_create_only_and_scale_as_autoscaling_v1(server: BackgroundServer) -> None:
    api = official(server)
    authz = client.AuthorizationV1Api(api).get_api_resources()
    verbs = {r.name: r.verbs for r in authz.resources}
    assert verbs["selfsubjectaccessreviews"] == ["create"]
    assert verbs["subjectaccessreviews"] == ["create"]
    apps = {r.name: r for r in client.AppsV1Api(api).get_api_resources().resources}
    scale = apps["deployments/scale"]
    assert (scale.group, scale.version, scale.kind) == ("autoscaling", "v1", "Scale")
    assert "daemonsets/scale" not in apps
    core = {r.name: r for r in client.CoreV1Api(api).get_api_resources().resources}
    assert core["serviceaccounts/token"].kind == "TokenRequest"
    assert core["replicationcontrollers/scale"].verbs == ["get", "patch", "update"]


def test_kubectl_scale_every_scalable_kind(kubectl: Kubectl) -> None:
    kubectl("apply", "-f", "-", stdin=WORKLOADS)
    for target, api_version, plural, name in (("deployment/web", "apps/v1", "deployments", "web"),
                                              ("statefulset/db", "apps/v1", "statefulsets", "db"),
                                              ("replicaset/cache", "apps/v1", "replicasets", "cache"),
                                              ("rc/legacy", "v1", "replicationcontrollers", "legacy")):
        assert "scaled" in kubectl("scale", target, "--replicas=4").stdout
        assert kubectl.stored(api_version, plural, "default", name)["spec"]["replicas"] == 4
    refused = kubectl("scale", "deployment/web", "--current-replicas=2", "--replicas=7", check=False)
    assert refused.returncode != 0 and "Expected replicas to be 2, was 4" in refused.stderr
    assert kubectl.stored("apps/v1", "deployments", "default", "web")["spec"]["replicas"] == 4
    missing = kubectl("scale", "daemonset/none", "--replicas=1", check=False)
    assert missing.returncode != 0 and "not found" in missing.stderr


def test_scale_subresource_with_the_official_client(server: BackgroundServer, kubectl: Kubectl) -> None:
    kubectl("apply", "-f", "-", stdin=WORKLOADS)
    apps = client.AppsV1Api(official(server))
    scale = apps.read_namespaced_deployment_scale("web", "default")
    assert scale.spec.replicas == 2
    assert scale.status.selector == "app=web,tier in (edge,front)"
    rc = client.CoreV1Api(official(server)).read_namespaced_replication_controller_scale("legacy", "default")
    assert rc.status.selector == "app=legacy"  # a ReplicationController selects its template's labels
    patched = apps.patch_namespaced_stateful_set_scale("db", "default", {"spec": {"replicas": 3}})
    assert patched.spec.replicas == 3
    stale = apps.read_namespaced_replica_set_scale("cache", "default")
    apps.patch_namespaced_replica_set("cache", "default", {"metadata": {"labels": {"touched": "yes"}}})
    stale.spec.replicas = 9
    with pytest.raises(ApiException) as conflict:
        apps.replace_namespaced_replica_set_scale("cache", "default", stale)
    assert conflict.value.status == 409
    assert 'replicasets.apps "cache": the object has been modified' in json.loads(conflict.value.body)["message"]
    with pytest.raises(ApiException) as invalid:
        apps.patch_namespaced_deployment_scale("web", "default", {"spec": {"replicas": -1}})
    assert invalid.value.status == 422
    body = json.loads(invalid.value.body)
    assert body["details"]["causes"][0]["field"] == "spec.replicas"
    assert kubectl.stored("apps/v1", "replicasets", "default", "cache")["spec"]["replicas"] == 1


def test_auth_can_i_whoami_and_token(kubectl: Kubectl, server: BackgroundServer) -> None:
    kubectl("apply", "-f", "-", stdin=OTHERS)
    kubectl("create", "serviceaccount", "bot")
    assert kubectl("auth", "can-i", "delete", "nodes").stdout.strip() == "yes"  # the kubeconfig's admin
    as_bot = ("--as", "system:serviceaccount:default:bot")
    denied = kubectl("auth", "can-i", "list", "pods", *as_bot, check=False)
    assert denied.returncode == 1 and denied.stdout.strip() == "no"
    kubectl("create", "rolebinding", "bot-reads-pods", "--role=pod-reader", "--serviceaccount=default:bot")
    assert kubectl("auth", "can-i", "list", "pods", *as_bot).stdout.strip() == "yes"
    assert kubectl("auth", "can-i", "list", "pods", "-n", "kube-system", *as_bot, check=False).stdout.strip() == "no"
    assert kubectl("auth", "can-i", "list", "nodes", "--as", "alice", "--as-group", "ops").stdout.strip() == "yes"
    listed = kubectl("auth", "can-i", "--list", *as_bot).stdout
    assert any(line.split()[:1] == ["pods"] and "[get list watch]" in line for line in listed.splitlines())

    token = kubectl("create", "token", "bot", "--duration=20m").stdout.strip()
    claims = json.loads(base64.urlsafe_b64decode(token.split(".")[1] + "=="))
    assert claims["sub"] == "system:serviceaccount:default:bot"
    assert claims["exp"] - claims["iat"] == 1200
    whoami = yaml.safe_load(kubectl("auth", "whoami", "-o", "yaml").stdout)
    assert whoami["status"]["userInfo"] == {"username": "kubernetes-admin",
                                            "groups": ["system:masters", "system:authenticated"]}
    short = kubectl("create", "token", "bot", "--duration=1m", check=False)
    assert short.returncode != 0 and "may not specify a duration less than 10 minutes" in short.stderr


def test_access_reviews_with_the_official_client(server: BackgroundServer, kubectl: Kubectl) -> None:
    kubectl("apply", "-f", "-", stdin=OTHERS)
    authz = client.AuthorizationV1Api(official(server))
    review = authz.create_subject_access_review({
        "spec": {"user": "alice", "groups": ["ops"],
                 "resourceAttributes": {"verb": "list", "resource": "nodes"}}})
    assert review.status.allowed is True
    assert review.status.reason == ('RBAC: allowed by ClusterRoleBinding "node-reader" of ClusterRole "node-reader" '
                                    'to Group "ops"')
    no = authz.create_subject_access_review({
        "spec": {"user": "alice", "resourceAttributes": {"verb": "delete", "resource": "nodes"}}})
    assert no.status.allowed is False
    local = authz.create_namespaced_local_subject_access_review("default", {
        "spec": {"user": "bob", "resourceAttributes": {"namespace": "default", "verb": "get", "resource": "pods"}}})
    assert local.status.allowed is False
    with pytest.raises(ApiException) as missing_user:
        authz.create_subject_access_review({"spec": {"resourceAttributes": {"verb": "get", "resource": "pods"}}})
    assert missing_user.value.status == 422
    not_listable = kubectl("get", "selfsubjectaccessreviews", check=False)
    assert not_listable.returncode != 0
    assert "(MethodNotAllowed): the server does not allow this method on the requested resource" in not_listable.stderr
    sa = client.CoreV1Api(official(server)).create_namespaced_service_account("default", {"metadata": {"name": "ci"}})
    token = client.CoreV1Api(official(server)).create_namespaced_service_account_token(
        "ci", "default", {"spec": {"audiences": ["vault"], "expirationSeconds": 900}})
    reviewed = client.AuthenticationV1Api(official(server)).create_token_review(
        {"spec": {"token": token.status.token, "audiences": ["vault"]}})
    assert reviewed.status.authenticated is True
    assert reviewed.status.user.uid == sa.metadata.uid
    wrong_audience = client.AuthenticationV1Api(official(server)).create_token_review(
        {"spec": {"token": token.status.token, "audiences": ["other"]}})
    assert not wrong_audience.status.authenticated
