"""deploy/: the default RBAC grants every call kubesched makes and nothing kube-scheduler lacks (pod patches are
optional), the config loads, the Deployment is locked down and its probes hit our endpoints."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import yaml

from kubesched.backend.kube import annotations as ann
from kubesched.backend.kube.resources import EVENT, LEASE, WATCHED, Resource
from kubesched.config.load import load_config

ROOT = Path(__file__).resolve().parent.parent
DEPLOY = ROOT / "deploy"
OPTIONAL = ROOT / ann.OPTIONAL_MANIFEST
SA = ("kube-system", "kubesched")
# Roles every cluster has (the API server's bootstrap roles), referenced by deploy/ without being defined there.
BUILT_IN_ROLES = {("kube-system", "extension-apiserver-authentication-reader")}


def _docs(*files: Path) -> list[dict]:
    """What `kubectl apply -f deploy/` applies: the folder's own files, not its subfolders."""
    paths = files or tuple(sorted(DEPLOY.glob("*.yaml")))
    return [d for f in paths for d in yaml.safe_load_all(f.read_text()) if d]


@dataclass(frozen=True)
class Grant:
    rule: dict
    namespace: str  # "" for every namespace (a ClusterRoleBinding)


def _grants(docs: list[dict], sa: tuple[str, str] = SA) -> list[Grant]:
    """The rules bound to the service account, each with the namespace it holds in."""
    roles = {
        (d["kind"], d["metadata"].get("namespace", ""), d["metadata"]["name"]): d for d in docs if "Role" in d["kind"]
    }
    out: list[Grant] = []
    for b in docs:
        if b["kind"] not in ("ClusterRoleBinding", "RoleBinding"):
            continue
        if not any((s["kind"], s.get("namespace"), s["name"]) == ("ServiceAccount", *sa) for s in b["subjects"]):
            continue
        ns = b["metadata"].get("namespace", "")
        ref = b["roleRef"]
        role = roles.get((ref["kind"], ns if ref["kind"] == "Role" else "", ref["name"]))
        if role is None:
            assert (ns, ref["name"]) in BUILT_IN_ROLES, f"{b['metadata']['name']} binds an undefined role"
            continue
        out += [Grant(r, ns) for r in role["rules"]]
    return out


def _allowed(
    grants: list[Grant], res: Resource, verb: str, sub: str = "", name: str = "", namespace: str = "default"
) -> bool:
    group = "" if res.group_version == "v1" else res.group_version.split("/")[0]
    resource = f"{res.plural}/{sub}" if sub else res.plural
    return any(
        g.namespace in ("", namespace)
        and group in g.rule["apiGroups"]
        and resource in g.rule["resources"]
        and verb in g.rule["verbs"]
        and (not g.rule.get("resourceNames") or name in g.rule["resourceNames"])
        for g in grants
    )


def _config_map() -> dict:
    return next(d for d in _docs() if d["kind"] == "ConfigMap")


def test_rbac_covers_every_call() -> None:
    grants = _grants(_docs())
    for res in WATCHED.values():
        for verb in ("list", "watch"):
            assert _allowed(grants, res, verb), (res.plural, verb)
    pods = WATCHED["Pod"]
    assert _allowed(grants, pods, "get")  # --record-annotations reads the pod before patching it
    assert _allowed(grants, pods, "create", "binding")
    assert _allowed(grants, pods, "patch", "status")
    assert _allowed(grants, pods, "delete")
    assert _allowed(grants, EVENT, "create")
    assert _allowed(grants, EVENT, "patch")  # event series
    for pv in ("PersistentVolume", "PersistentVolumeClaim"):
        assert _allowed(grants, WATCHED[pv], "update")
    claims = WATCHED["ResourceClaim"]
    for verb, sub in (("create", ""), ("delete", ""), ("update", ""), ("get", ""), ("update", "status")):
        assert _allowed(grants, claims, verb, sub), (verb, sub)
    config = load_config(yaml.safe_load(_config_map()["data"]["config.yaml"]))
    le = config.raw.leaderElection
    # Ours, and upstream's (docs/running-in-a-cluster.md: in place of the default scheduler).
    for lease_name in (le.resourceName, "kube-scheduler"):
        assert _allowed(grants, LEASE, "create", namespace=le.resourceNamespace)
        for verb in ("get", "update"):
            assert _allowed(grants, LEASE, verb, name=lease_name, namespace=le.resourceNamespace), (lease_name, verb)


def test_default_rbac_cannot_patch_pods_nor_touch_other_leases() -> None:
    grants = _grants(_docs())
    pods = WATCHED["Pod"]
    for verb in ("patch", "update", "create"):
        assert not _allowed(grants, pods, verb), verb
    assert not _allowed(grants, LEASE, "update", name="kube-controller-manager", namespace="kube-system")
    for g in grants:
        assert "*" not in g.rule["verbs"] + g.rule["resources"] + g.rule["apiGroups"], g.rule
        assert "secrets" not in g.rule["resources"]


def test_pod_patches_are_an_optional_role_that_is_not_applied_by_default() -> None:
    docs = _docs(OPTIONAL)
    role = next(d for d in docs if d["kind"] == "ClusterRole")
    assert role["metadata"]["name"] == ann.OPTIONAL_ROLE
    assert role["rules"] == [{"apiGroups": [""], "resources": ["pods"], "verbs": ["patch"]}]
    assert _allowed(_grants(_docs() + docs), WATCHED["Pod"], "patch")
    assert OPTIONAL.parent != DEPLOY  # `kubectl apply -f deploy/` does not descend into it
    assert all(d["metadata"]["name"] != ann.OPTIONAL_ROLE for d in _docs())


def test_config_and_deployment_fit_together() -> None:
    config = load_config(yaml.safe_load(_config_map()["data"]["config.yaml"]))
    assert config.raw.leaderElection.leaderElect
    assert [p.schedulerName for p in config.raw.profiles] == ["kubesched"]
    deploy = next(d for d in _docs() if d["kind"] == "Deployment")
    spec = deploy["spec"]["template"]["spec"]
    assert deploy["spec"]["replicas"] == 2
    sa = next(d for d in _docs() if d["kind"] == "ServiceAccount")
    assert (sa["metadata"]["namespace"], sa["metadata"]["name"]) == SA
    assert spec["serviceAccountName"] == sa["metadata"]["name"]
    container = spec["containers"][0]
    assert container["args"][0] == "run"
    assert "--record-annotations" not in container["args"]  # it needs the optional role
    mount = next(v for v in container["volumeMounts"] if v["name"] == "config")["mountPath"]
    assert any(a == f"--config={mount}/config.yaml" for a in container["args"])


def test_deployment_is_locked_down() -> None:
    deploy = next(d for d in _docs() if d["kind"] == "Deployment")
    spec = deploy["spec"]["template"]["spec"]
    assert spec["securityContext"]["runAsNonRoot"] is True
    assert spec["securityContext"]["runAsUser"] != 0
    assert spec["securityContext"]["seccompProfile"] == {"type": "RuntimeDefault"}
    assert not any(spec.get(k) for k in ("hostNetwork", "hostPID", "hostIPC"))
    for container in spec["containers"]:
        sc = container["securityContext"]
        assert sc["allowPrivilegeEscalation"] is False
        assert sc["readOnlyRootFilesystem"] is True
        assert sc.get("privileged") is not True
        assert sc["capabilities"]["drop"] == ["ALL"] and not sc["capabilities"].get("add")
        assert container["resources"]["limits"]["memory"]
        assert container["resources"]["requests"]["memory"]
        port = next(int(a.split("=", 1)[1]) for a in container["args"] if a.startswith("--secure-port="))
        live, ready = container["livenessProbe"]["httpGet"], container["readinessProbe"]["httpGet"]
        assert live == {"path": "/healthz", "port": port, "scheme": "HTTPS"}
        assert ready == {"path": "/readyz", "port": port, "scheme": "HTTPS"}
