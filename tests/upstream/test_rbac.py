"""deploy/rbac.yaml against a real v1.36 API server: the same rules as kube-scheduler's bootstrap roles, and enough.

The API server creates its bootstrap ClusterRoles and kube-system Roles at start; the
default ClusterRole must grant exactly what system:kube-scheduler and
system:volume-scheduler grant (rules compared one verb, resource and name at a time).
Then kubesched runs as the deploy/ ServiceAccount, with a token from the TokenRequest
API and nothing bound but deploy/rbac.yaml, and does all it does (leader election,
binding, conditions, events, preemption, volume binding, DRA allocation) without one
403; --record-annotations refuses to start until the optional role is applied. With the
workload alpha API and GenericWorkload on, the API server's system:kube-scheduler grants more
(PodGroups); deploy/optional/workload-aware.yaml grants exactly that difference, and with it
kubesched schedules a gang as the ServiceAccount without one 403.
"""

from __future__ import annotations

import contextlib
import logging
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml
from tests.upstream.test_live import wait_for
from tests.upstream.test_live_dra import DRASide

from kubesched.app import RunOptions, SchedulerApp
from kubesched.backend.kube import annotations as ann
from kubesched.backend.kube.api import APIError, KubeAPI, load_configuration
from kubesched.config.load import load_config
from kubesched.release import release
from kubesched_testing.app_thread import AppThread
from kubesched_testing.controlplane import ControlPlane, reset_cluster
from kubesched_testing.controlplane import control_plane as start_control_plane
from kubesched_testing.parity.gang import APISERVER_ARGS

pytestmark = pytest.mark.filterwarnings("ignore::urllib3.exceptions.InsecureRequestWarning")
ROOT = Path(__file__).resolve().parents[2]
RBAC = ROOT / "deploy" / "rbac.yaml"
CONFIG = ROOT / "deploy" / "config.yaml"
OPTIONAL = ROOT / ann.OPTIONAL_MANIFEST
WORKLOAD_AWARE = ROOT / "deploy" / "optional" / "workload-aware.yaml"
GANG_GATES = "GenericWorkload=true,GangScheduling=true"
RBAC_API = "/apis/rbac.authorization.k8s.io/v1"
USER = "system:serviceaccount:kube-system:kubesched"
UPSTREAM_ROLES = ("system:kube-scheduler", "system:volume-scheduler")
# Rules the default ClusterRole grants beyond upstream's, each with its reason. None: kubesched needs nothing
# kube-scheduler does not get (its own lease is a namespaced Role, checked below).
EXTRA: dict[tuple[str, str, str, str], str] = {}
PATHS = {
    "ServiceAccount": "/api/v1/namespaces/{ns}/serviceaccounts",
    "ClusterRole": f"{RBAC_API}/clusterroles",
    "ClusterRoleBinding": f"{RBAC_API}/clusterrolebindings",
    "Role": f"{RBAC_API}/namespaces/{{ns}}/roles",
    "RoleBinding": f"{RBAC_API}/namespaces/{{ns}}/rolebindings",
}

Atom = tuple[str, str, str, str]  # apiGroup, resource, resourceName ("" for any), verb


def atoms(rules: list[dict[str, Any]]) -> set[Atom]:
    """Rules as the set of single grants they make, so that splitting or merging rules does not count."""
    return {
        (group, resource, name, verb)
        for r in rules
        for group in r.get("apiGroups") or ()
        for resource in r["resources"]
        for name in r.get("resourceNames") or ("",)
        for verb in r["verbs"]
    }


def manifests(path: Path) -> list[dict[str, Any]]:
    return [d for d in yaml.safe_load_all(path.read_text()) if d]


def by_kind(docs: list[dict[str, Any]], kind: str, name: str = "") -> dict[str, Any]:
    return next(d for d in docs if d["kind"] == kind and (not name or d["metadata"]["name"] == name))


def apply(api: KubeAPI, docs: list[dict[str, Any]]) -> None:
    """Create each object, replacing one left by an earlier run."""
    for doc in docs:
        base = PATHS[doc["kind"]].format(ns=doc["metadata"].get("namespace", ""))
        try:
            api.request("POST", base, body=doc)
        except APIError as err:
            if err.status != 409:
                raise
            current = api.request("GET", f"{base}/{doc['metadata']['name']}")
            meta = {**doc["metadata"], "resourceVersion": current["metadata"]["resourceVersion"]}
            api.request("PUT", f"{base}/{doc['metadata']['name']}", body={**doc, "metadata": meta})


def delete(api: KubeAPI, docs: list[dict[str, Any]]) -> None:
    for doc in docs:
        base = PATHS[doc["kind"]].format(ns=doc["metadata"].get("namespace", ""))
        with contextlib.suppress(APIError):
            api.request("DELETE", f"{base}/{doc['metadata']['name']}")


def test_default_role_is_kube_schedulers(admin_api: KubeAPI) -> None:
    upstream: set[Atom] = set()
    for name in UPSTREAM_ROLES:
        upstream |= atoms(admin_api.request("GET", f"{RBAC_API}/clusterroles/{name}")["rules"])
    ours = atoms(by_kind(manifests(RBAC), "ClusterRole", "kubesched")["rules"])
    assert sorted(ours - upstream) == sorted(EXTRA), "granted beyond kube-scheduler"
    assert sorted(upstream - ours) == [], "kube-scheduler's rights missing"


def test_kube_system_roles_are_within_kube_schedulers(admin_api: KubeAPI) -> None:
    """Our lease Role is narrower than upstream's leader-locking Role (one lease, no list/watch, no
    other component's leases), and the authentication reader we bind is the API server's own."""
    docs = manifests(RBAC)
    role = by_kind(docs, "Role", "kubesched-leader-election")
    upstream = admin_api.request(
        "GET", f"{RBAC_API}/namespaces/kube-system/roles/system::leader-locking-kube-scheduler"
    )
    assert atoms(role["rules"]) == {("coordination.k8s.io", "leases", "kubesched", v) for v in ("get", "update")}
    assert {(g, r, "", v) for g, r, _, v in atoms(role["rules"])} <= atoms(upstream["rules"])
    config = yaml.safe_load(by_kind(manifests(CONFIG), "ConfigMap")["data"]["config.yaml"])
    assert config["leaderElection"]["resourceName"] == "kubesched"
    assert config["leaderElection"]["resourceNamespace"] == role["metadata"]["namespace"] == "kube-system"
    binding = by_kind(docs, "RoleBinding", "kubesched-extension-apiserver-authentication-reader")
    reader = admin_api.request("GET", f"{RBAC_API}/namespaces/kube-system/roles/{binding['roleRef']['name']}")
    assert atoms(reader["rules"]) == {
        ("", "configmaps", "extension-apiserver-authentication", v) for v in ("get", "list", "watch")
    }
    upstream_binding = admin_api.request(
        "GET", f"{RBAC_API}/namespaces/kube-system/rolebindings/system::extension-apiserver-authentication-reader"
    )
    assert upstream_binding["roleRef"] == binding["roleRef"]
    assert {"kind": "User", "name": "system:kube-scheduler", "apiGroup": "rbac.authorization.k8s.io"} in (
        upstream_binding["subjects"]
    )


@pytest.fixture(scope="module")
def service_account(
    control_plane: ControlPlane, admin_api: KubeAPI, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[str]:
    """deploy/rbac.yaml applied, and a kubeconfig holding a token of its ServiceAccount (TokenRequest API)."""
    docs = manifests(RBAC)
    apply(admin_api, docs)
    sa = by_kind(docs, "ServiceAccount")["metadata"]
    request = {"apiVersion": "authentication.k8s.io/v1", "kind": "TokenRequest", "spec": {"expirationSeconds": 3600}}
    token = admin_api.request(
        "POST", f"/api/v1/namespaces/{sa['namespace']}/serviceaccounts/{sa['name']}/token", body=request
    )["status"]["token"]
    path = control_plane.write_kubeconfig(tmp_path_factory.mktemp("kubesched-sa") / "kubeconfig", token)
    yield str(path)
    delete(admin_api, docs + manifests(OPTIONAL))
    with contextlib.suppress(APIError):
        admin_api.request("DELETE", "/apis/coordination.k8s.io/v1/namespaces/kube-system/leases/kubesched")


def may(api: KubeAPI, verb: str, resource: str) -> bool:
    body = {
        "apiVersion": "authorization.k8s.io/v1",
        "kind": "SelfSubjectAccessReview",
        "spec": {"resourceAttributes": {"verb": verb, "resource": resource}},
    }
    review = api.request("POST", "/apis/authorization.k8s.io/v1/selfsubjectaccessreviews", body=body)
    return bool(review["status"].get("allowed"))


def running_as(kubeconfig: str, **opts: Any) -> AppThread:
    """deploy/config.yaml's scheduler (leader election on its own lease) in a thread, as the ServiceAccount."""
    config = load_config(yaml.safe_load(by_kind(manifests(CONFIG), "ConfigMap")["data"]["config.yaml"]))
    return AppThread(SchedulerApp(config, RunOptions(kubeconfig=kubeconfig, secure_port=-1, **opts)))


@contextlib.contextmanager
def running(kubeconfig: str, admin_api: KubeAPI, **opts: Any) -> Iterator[AppThread]:
    reset_cluster(admin_api)
    r = running_as(kubeconfig, **opts)
    try:
        yield r
    finally:
        assert r.stop() == 0
        reset_cluster(admin_api)


def denials(caplog: pytest.LogCaptureFixture) -> list[str]:
    """Log lines that speak of a refused request."""
    return [r.getMessage() for r in caplog.records if "403" in r.getMessage() or "forbidden" in r.getMessage().lower()]


def priority_class(api: KubeAPI, name: str, value: int) -> None:
    body = {"apiVersion": "scheduling.k8s.io/v1", "kind": "PriorityClass", "metadata": {"name": name}, "value": value}
    api.request("POST", "/apis/scheduling.k8s.io/v1/priorityclasses", body=body)


def volume(api: KubeAPI, node: str) -> None:
    """A local PV on `node` and an unbound claim of a WaitForFirstConsumer class: PreBind writes the PV."""
    api.request(
        "POST",
        "/apis/storage.k8s.io/v1/storageclasses",
        body={
            "apiVersion": "storage.k8s.io/v1",
            "kind": "StorageClass",
            "metadata": {"name": "local"},
            "provisioner": "kubernetes.io/no-provisioner",
            "volumeBindingMode": "WaitForFirstConsumer",
        },
    )
    term = {"matchExpressions": [{"key": "kubernetes.io/hostname", "operator": "In", "values": [node]}]}
    api.request(
        "POST",
        "/api/v1/persistentvolumes",
        body={
            "apiVersion": "v1",
            "kind": "PersistentVolume",
            "metadata": {"name": "local-pv"},
            "spec": {
                "capacity": {"storage": "1Gi"},
                "accessModes": ["ReadWriteOnce"],
                "storageClassName": "local",
                "local": {"path": "/data"},
                "nodeAffinity": {"required": {"nodeSelectorTerms": [term]}},
            },
        },
    )
    api.request(  # as the PV controller would (none runs here)
        "PATCH",
        "/api/v1/persistentvolumes/local-pv/status",
        body={"status": {"phase": "Available"}},
        content_type="application/merge-patch+json",
    )
    api.request(
        "POST",
        "/api/v1/namespaces/default/persistentvolumeclaims",
        body={
            "apiVersion": "v1",
            "kind": "PersistentVolumeClaim",
            "metadata": {"name": "data"},
            "spec": {
                "accessModes": ["ReadWriteOnce"],
                "storageClassName": "local",
                "resources": {"requests": {"storage": "1Gi"}},
            },
        },
    )


def volume_pod(side: DRASide) -> None:
    spec = {
        "schedulerName": side.name,
        "nodeSelector": {"side": side.name},
        "containers": [{"name": "c", "image": "busybox", "volumeMounts": [{"name": "d", "mountPath": "/d"}]}],
        "volumes": [{"name": "d", "persistentVolumeClaim": {"claimName": "data"}}],
        "terminationGracePeriodSeconds": 0,
    }
    meta = {"name": f"{side.name}-vol", "namespace": "default"}
    side.api.request("POST", "/api/v1/namespaces/default/pods", body={"kind": "Pod", "metadata": meta, "spec": spec})


def test_kubesched_does_its_work_with_the_default_role_only(
    service_account: str, admin_api: KubeAPI, caplog: pytest.LogCaptureFixture
) -> None:
    sa_api = KubeAPI(load_configuration(service_account), qps=0)
    assert not may(sa_api, "patch", "pods") and not may(sa_api, "list", "secrets")
    side = DRASide(admin_api, "kubesched")  # deploy/config.yaml's scheduler name
    with caplog.at_level(logging.DEBUG, logger="kubesched"), running(service_account, admin_api) as r:
        side.node("n1", cpu="1")
        node = "kubesched-n1"
        admin_api.request(
            "PATCH",
            f"/api/v1/nodes/{node}",
            body={"metadata": {"labels": {"kubernetes.io/hostname": node}}},
            content_type="application/merge-patch+json",
        )
        side.slice(devices=2)
        side.claim("c1", 1)
        volume(admin_api, node)
        priority_class(admin_api, "kubesched-low", 10)
        priority_class(admin_api, "kubesched-high", 1000)
        side.pod("web")
        side.pod("huge", cpu="3")
        side.pod("low", cpu="700m", priority_class="kubesched-low")
        side.claim_pod("gpu", "c1")
        side.extended_pod("ext", 1)
        volume_pod(side)
        wait_for(lambda: all(side.writes(p)["node"] for p in ("web", "low", "gpu", "ext")), "pods bound")
        wait_for(lambda: side.writes("huge")["events"], "huge's FailedScheduling")
        side.pod("high", cpu="700m", priority_class="kubesched-high")
        wait_for(lambda: side.get("low") is None, "low preempted")
        wait_for(lambda: side.writes("high")["node"], "high bound")
        wait_for(
            lambda: admin_api.request("GET", "/api/v1/persistentvolumes/local-pv")["spec"].get("claimRef") or {},
            "the PV bound to its claim by PreBind",
        )
        pv = admin_api.request("GET", "/api/v1/persistentvolumes/local-pv")
        claim = admin_api.request("GET", "/apis/resource.k8s.io/v1/namespaces/default/resourceclaims/kubesched-c1")
        ext = side.get("ext") or {}
        lease = admin_api.request("GET", "/apis/coordination.k8s.io/v1/namespaces/kube-system/leases/kubesched")
        assert r.app.elector is not None and r.app.elector.leading.is_set()
        web, huge, high = side.writes("web"), side.writes("huge"), side.writes("high")
    assert web["conditions"] == [{"type": "PodScheduled", "status": "True"}]
    assert [e[0] for e in web["events"]] == ["Scheduled"]
    assert huge["conditions"][0]["reason"] == "Unschedulable"
    assert "FailedScheduling" in [e[0] for e in huge["events"]]
    assert high["node"] == "<side>-n1"
    assert pv["spec"]["claimRef"]["name"] == "data"
    assert claim["status"]["allocation"] and claim["status"]["reservedFor"][0]["name"] == "kubesched-gpu"
    assert ext["status"]["extendedResourceClaimStatus"]["resourceClaimName"]
    assert lease["spec"]["holderIdentity"]
    assert denials(caplog) == []


def test_record_annotations_needs_the_optional_role(
    service_account: str, admin_api: KubeAPI, caplog: pytest.LogCaptureFixture
) -> None:
    reset_cluster(admin_api)
    with caplog.at_level(logging.INFO, logger="kubesched"):
        refused = running_as(service_account, record_annotations=True)
        refused.thread.join(30)
        assert (refused.stop() if refused.thread.is_alive() else refused.code) == 1
    assert [r.getMessage() for r in caplog.records if r.levelno >= logging.WARNING] == [
        f'"command failed" err="--record-annotations needs the right to patch pods in all namespaces, which {USER} '
        "lacks: bind ClusterRole kubesched:record-annotations (deploy/optional/record-annotations.yaml) or drop "
        '--record-annotations"'
    ]
    caplog.clear()
    apply(admin_api, manifests(OPTIONAL))
    sa_api = KubeAPI(load_configuration(service_account), qps=0)
    wait_for(lambda: may(sa_api, "patch", "pods"), "the optional role in force")
    side = DRASide(admin_api, "kubesched")
    try:
        with (
            caplog.at_level(logging.DEBUG, logger="kubesched"),
            running(service_account, admin_api, record_annotations=True),
        ):
            side.node("n1")
            side.pod("web")
            annotations = wait_for(
                lambda: ((side.get("web") or {}).get("metadata", {}).get("annotations") or {}).get(ann.SELECTED_NODE),
                "web annotated",
            )
        assert annotations == "kubesched-n1"
        assert denials(caplog) == []
    finally:
        delete(admin_api, manifests(OPTIONAL))


@pytest.fixture(scope="module")
def gated_plane(control_plane: ControlPlane) -> Iterator[ControlPlane]:
    """A second v1.36 API server serving scheduling.k8s.io/v1alpha2 with the workload gates on
    (as tests/upstream/test_live_gang.py starts it); `control_plane` only to skip without binaries."""
    with start_control_plane(extra_apiserver_args=list(APISERVER_ARGS)) as cp:
        yield cp


def upstream_atoms(api: KubeAPI) -> set[Atom]:
    got: set[Atom] = set()
    for name in UPSTREAM_ROLES:
        got |= atoms(api.request("GET", f"{RBAC_API}/clusterroles/{name}")["rules"])
    return got


def test_workload_aware_role_is_what_the_gate_adds(admin_api: KubeAPI, gated_plane: ControlPlane) -> None:
    gated_api = KubeAPI(load_configuration(str(gated_plane.kubeconfig_path)), qps=0)
    added = upstream_atoms(gated_api) - upstream_atoms(admin_api)
    assert upstream_atoms(admin_api) <= upstream_atoms(gated_api), "the gate takes rights away"
    assert added, "the gated bootstrap role grants nothing more"
    docs = manifests(WORKLOAD_AWARE)
    assert sorted(atoms(by_kind(docs, "ClusterRole", "kubesched:workload-aware")["rules"])) == sorted(added)
    binding = by_kind(docs, "ClusterRoleBinding", "kubesched:workload-aware")
    assert binding["roleRef"] == {
        "apiGroup": "rbac.authorization.k8s.io",
        "kind": "ClusterRole",
        "name": "kubesched:workload-aware",
    }
    sa = by_kind(manifests(RBAC), "ServiceAccount")["metadata"]
    assert binding["subjects"] == [{"kind": "ServiceAccount", "name": sa["name"], "namespace": sa["namespace"]}]


def may_in(api: KubeAPI, verb: str, group: str, resource: str) -> bool:
    body = {
        "apiVersion": "authorization.k8s.io/v1",
        "kind": "SelfSubjectAccessReview",
        "spec": {"resourceAttributes": {"verb": verb, "group": group, "resource": resource}},
    }
    review = api.request("POST", "/apis/authorization.k8s.io/v1/selfsubjectaccessreviews", body=body)
    return bool(review["status"].get("allowed"))


def test_gang_with_the_default_and_workload_aware_roles(
    gated_plane: ControlPlane, tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    admin = KubeAPI(load_configuration(str(gated_plane.kubeconfig_path)), qps=0)
    docs = manifests(RBAC)
    apply(admin, docs)
    sa = by_kind(docs, "ServiceAccount")["metadata"]
    request = {"apiVersion": "authentication.k8s.io/v1", "kind": "TokenRequest", "spec": {"expirationSeconds": 3600}}
    token = admin.request(
        "POST", f"/api/v1/namespaces/{sa['namespace']}/serviceaccounts/{sa['name']}/token", body=request
    )["status"]["token"]
    kubeconfig = str(gated_plane.write_kubeconfig(tmp_path / "kubeconfig", token))
    sa_api = KubeAPI(load_configuration(kubeconfig), qps=0)
    assert not may_in(sa_api, "list", "scheduling.k8s.io", "podgroups")  # the default role alone: no PodGroups
    apply(admin, manifests(WORKLOAD_AWARE))
    wait_for(lambda: may_in(sa_api, "list", "scheduling.k8s.io", "podgroups"), "the optional role in force")
    assert may_in(sa_api, "patch", "scheduling.k8s.io", "podgroups/status")
    doc = yaml.safe_load(by_kind(manifests(CONFIG), "ConfigMap")["data"]["config.yaml"])
    config = load_config(doc, release=release("1.36", GANG_GATES))
    groups = "/apis/scheduling.k8s.io/v1alpha2/namespaces/default/podgroups"
    with caplog.at_level(logging.DEBUG, logger="kubesched"):
        r = AppThread(SchedulerApp(config, RunOptions(kubeconfig=kubeconfig, secure_port=-1)))
        try:
            for i in range(2):
                cap = {"cpu": "4", "pods": "110"}
                node = {"kind": "Node", "metadata": {"name": f"n{i}"}, "status": {"capacity": cap, "allocatable": cap}}
                admin.request("POST", "/api/v1/nodes", body={"apiVersion": "v1", **node})
            for i in range(3):
                spec = {
                    "schedulerName": "kubesched",  # deploy/config.yaml's profile
                    "terminationGracePeriodSeconds": 0,
                    "schedulingGroup": {"podGroupName": "gang"},
                    "containers": [{"name": "c", "image": "i", "resources": {"requests": {"cpu": "2"}}}],
                }
                pod = {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": f"gang-{i}"}, "spec": spec}
                admin.request("POST", "/api/v1/namespaces/default/pods", body=pod)
            group = {
                "apiVersion": "scheduling.k8s.io/v1alpha2",
                "kind": "PodGroup",
                "metadata": {"name": "gang"},
                "spec": {"schedulingPolicy": {"gang": {"minCount": 3}}},
            }
            admin.request("POST", groups, body=group)

            def bound() -> bool:
                items = admin.request("GET", "/api/v1/namespaces/default/pods").get("items") or ()
                return len(items) == 3 and all(p["spec"].get("nodeName") for p in items)

            wait_for(bound, "the gang bound")
            conditions = wait_for(
                lambda: (admin.request("GET", f"{groups}/gang").get("status") or {}).get("conditions"),
                "the PodGroup's status written",
            )
        finally:
            assert r.stop() == 0
    assert [(c["type"], c["status"]) for c in conditions] == [("PodGroupScheduled", "True")]
    assert denials(caplog) == []
