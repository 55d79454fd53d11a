"""deploy/: the RBAC grants every call kubesched makes, the config loads, the probes hit our endpoints."""

from __future__ import annotations

from pathlib import Path

import yaml

from kubesched.backend.kube.resources import EVENT, LEASE, WATCHED, Resource
from kubesched.config.load import load_config

DEPLOY = Path(__file__).resolve().parent.parent / "deploy"


def _docs() -> list[dict]:
    return [d for f in sorted(DEPLOY.glob("*.yaml")) for d in yaml.safe_load_all(f.read_text()) if d]


def _allowed(rules: list[dict], res: Resource, verb: str, sub: str = "", name: str = "") -> bool:
    group = "" if res.group_version == "v1" else res.group_version.split("/")[0]
    resource = f"{res.plural}/{sub}" if sub else res.plural
    return any(
        group in r["apiGroups"]
        and resource in r["resources"]
        and verb in r["verbs"]
        and (not r.get("resourceNames") or name in r["resourceNames"])
        for r in rules
    )


def test_rbac_covers_every_call() -> None:
    role = next(d for d in _docs() if d["kind"] == "ClusterRole")
    rules = role["rules"]
    for res in WATCHED.values():
        for verb in ("list", "watch"):
            assert _allowed(rules, res, verb), (res.plural, verb)
    pods = WATCHED["Pod"]
    assert _allowed(rules, pods, "create", "binding")
    assert _allowed(rules, pods, "patch", "status")
    assert _allowed(rules, pods, "delete")
    assert _allowed(rules, EVENT, "create")
    for pv in ("PersistentVolume", "PersistentVolumeClaim"):
        assert _allowed(rules, WATCHED[pv], "update")
    config = load_config(yaml.safe_load(_config_map()["data"]["config.yaml"]))
    lease_name = config.raw.leaderElection.resourceName
    assert _allowed(rules, LEASE, "create")
    for verb in ("get", "update"):
        assert _allowed(rules, LEASE, verb, name=lease_name)


def _config_map() -> dict:
    return next(d for d in _docs() if d["kind"] == "ConfigMap")


def test_config_and_deployment_fit_together() -> None:
    config = load_config(yaml.safe_load(_config_map()["data"]["config.yaml"]))
    assert config.raw.leaderElection.leaderElect
    assert [p.schedulerName for p in config.raw.profiles] == ["kubesched"]
    deploy = next(d for d in _docs() if d["kind"] == "Deployment")
    spec = deploy["spec"]["template"]["spec"]
    assert deploy["spec"]["replicas"] == 2
    sa = next(d for d in _docs() if d["kind"] == "ServiceAccount")
    assert spec["serviceAccountName"] == sa["metadata"]["name"]
    container = spec["containers"][0]
    assert container["args"][0] == "run"
    assert {container["livenessProbe"]["httpGet"]["path"], container["readinessProbe"]["httpGet"]["path"]} == {
        "/livez",
        "/readyz",
    }
    assert all(p["httpGet"]["scheme"] == "HTTPS" for p in (container["livenessProbe"], container["readinessProbe"]))
    mount = next(v for v in container["volumeMounts"] if v["name"] == "config")["mountPath"]
    assert any(a == f"--config={mount}/config.yaml" for a in container["args"])
