"""Fluent builders for test objects, after pkg/scheduler/testing/wrappers.go: make_pod("p").req({...}).obj()."""

from __future__ import annotations

import copy
import itertools
from typing import Any

_uid = itertools.count()


class PodWrapper:
    def __init__(self, name: str = "", namespace: str = "default") -> None:
        self._pod: dict[str, Any] = {
            "apiVersion": "v1",
            "kind": "Pod",
            "metadata": {"name": name, "namespace": namespace, "uid": f"uid-{name}-{next(_uid)}"},
            "spec": {"containers": []},
        }

    @property
    def _spec(self) -> dict[str, Any]:
        return self._pod["spec"]

    def name(self, name: str) -> PodWrapper:
        self._pod["metadata"]["name"] = name
        return self

    def namespace(self, ns: str) -> PodWrapper:
        self._pod["metadata"]["namespace"] = ns
        return self

    def uid(self, uid: str) -> PodWrapper:
        self._pod["metadata"]["uid"] = uid
        return self

    def node(self, name: str) -> PodWrapper:
        self._spec["nodeName"] = name
        return self

    def priority(self, p: int) -> PodWrapper:
        self._spec["priority"] = p
        return self

    def scheduler_name(self, name: str) -> PodWrapper:
        self._spec["schedulerName"] = name
        return self

    def label(self, k: str, v: str) -> PodWrapper:
        self._pod["metadata"].setdefault("labels", {})[k] = v
        return self

    def labels(self, labels: dict[str, str]) -> PodWrapper:
        for k, v in labels.items():
            self.label(k, v)
        return self

    def terminating(self) -> PodWrapper:
        self._pod["metadata"]["deletionTimestamp"] = "2024-01-01T00:00:00Z"
        return self

    def container(self, image: str) -> PodWrapper:
        self._spec["containers"].append({"name": f"c{len(self._spec['containers'])}", "image": image})
        return self

    def req(self, requests: dict[str, str]) -> PodWrapper:
        """Add a container with these requests (one container per call, as upstream's Req)."""
        self._spec["containers"].append(
            {"name": f"c{len(self._spec['containers'])}", "image": "pause", "resources": {"requests": dict(requests)}}
        )
        return self

    def init_req(self, requests: dict[str, str], *, sidecar: bool = False) -> PodWrapper:
        c: dict[str, Any] = {"name": f"i{len(self._spec.get('initContainers', []))}", "image": "pause"}
        c["resources"] = {"requests": dict(requests)}
        if sidecar:
            c["restartPolicy"] = "Always"
        self._spec.setdefault("initContainers", []).append(c)
        return self

    def overhead(self, overhead: dict[str, str]) -> PodWrapper:
        self._spec["overhead"] = dict(overhead)
        return self

    def host_port(self, port: int, *, protocol: str = "TCP", ip: str = "") -> PodWrapper:
        p: dict[str, Any] = {"containerPort": port, "hostPort": port, "protocol": protocol}
        if ip:
            p["hostIP"] = ip
        self._spec["containers"].append({"name": f"c{len(self._spec['containers'])}", "image": "pause", "ports": [p]})
        return self

    def volume(self, volume: dict[str, Any]) -> PodWrapper:
        self._spec.setdefault("volumes", []).append(volume)
        return self

    def pvc(self, claim: str) -> PodWrapper:
        vols = self._spec.setdefault("volumes", [])
        vols.append({"name": f"v{len(vols)}", "persistentVolumeClaim": {"claimName": claim}})
        return self

    def toleration(self, key: str = "", value: str = "", effect: str = "", operator: str = "Equal") -> PodWrapper:
        t = {"key": key, "operator": operator, "value": value, "effect": effect}
        self._spec.setdefault("tolerations", []).append(t)
        return self

    def node_selector(self, sel: dict[str, str]) -> PodWrapper:
        self._spec["nodeSelector"] = dict(sel)
        return self

    def _affinity(self, kind: str) -> dict[str, Any]:
        return self._spec.setdefault("affinity", {}).setdefault(kind, {})

    def node_affinity_in(self, key: str, values: list[str], op: str = "In") -> PodWrapper:
        """Add a required term with one expression (terms are ORed)."""
        req = self._affinity("nodeAffinity").setdefault(
            "requiredDuringSchedulingIgnoredDuringExecution", {"nodeSelectorTerms": []}
        )
        expr: dict[str, Any] = {"key": key, "operator": op}
        if values:
            expr["values"] = list(values)
        req["nodeSelectorTerms"].append({"matchExpressions": [expr]})
        return self

    def required_node_terms(self, terms: list[dict[str, Any]]) -> PodWrapper:
        self._affinity("nodeAffinity")["requiredDuringSchedulingIgnoredDuringExecution"] = {"nodeSelectorTerms": terms}
        return self

    def preferred_node_term(self, weight: int, preference: dict[str, Any]) -> PodWrapper:
        self._affinity("nodeAffinity").setdefault("preferredDuringSchedulingIgnoredDuringExecution", []).append(
            {"weight": weight, "preference": preference}
        )
        return self

    def _pod_term(
        self, kind: str, key: str, topology: str, values: list[str] | None, op: str, weight: int | None, **extra: Any
    ) -> PodWrapper:
        expr: dict[str, Any] = {"key": key, "operator": op}
        if values is not None:
            expr["values"] = list(values)
        term = {"labelSelector": {"matchExpressions": [expr]}, "topologyKey": topology, **extra}
        aff = self._affinity(kind)
        if weight is None:
            aff.setdefault("requiredDuringSchedulingIgnoredDuringExecution", []).append(term)
        else:
            aff.setdefault("preferredDuringSchedulingIgnoredDuringExecution", []).append(
                {"weight": weight, "podAffinityTerm": term}
            )
        return self

    def pod_affinity_in(self, key: str, topology: str, values: list[str], **extra: Any) -> PodWrapper:
        return self._pod_term("podAffinity", key, topology, values, "In", None, **extra)

    def pod_affinity_exists(self, key: str, topology: str, **extra: Any) -> PodWrapper:
        return self._pod_term("podAffinity", key, topology, None, "Exists", None, **extra)

    def pod_anti_affinity_in(self, key: str, topology: str, values: list[str], **extra: Any) -> PodWrapper:
        return self._pod_term("podAntiAffinity", key, topology, values, "In", None, **extra)

    def pod_anti_affinity_exists(self, key: str, topology: str, **extra: Any) -> PodWrapper:
        return self._pod_term("podAntiAffinity", key, topology, None, "Exists", None, **extra)

    def preferred_pod_affinity_in(self, weight: int, key: str, topology: str, values: list[str]) -> PodWrapper:
        return self._pod_term("podAffinity", key, topology, values, "In", weight)

    def preferred_pod_anti_affinity_in(self, weight: int, key: str, topology: str, values: list[str]) -> PodWrapper:
        return self._pod_term("podAntiAffinity", key, topology, values, "In", weight)

    def spread_constraint(
        self,
        max_skew: int,
        topology_key: str,
        when: str,
        selector: dict[str, Any] | None,
        *,
        min_domains: int | None = None,
        node_affinity_policy: str | None = None,
        node_taints_policy: str | None = None,
        match_label_keys: list[str] | None = None,
    ) -> PodWrapper:
        c: dict[str, Any] = {"maxSkew": max_skew, "topologyKey": topology_key, "whenUnsatisfiable": when}
        if selector is not None:
            c["labelSelector"] = selector
        if min_domains is not None:
            c["minDomains"] = min_domains
        if node_affinity_policy is not None:
            c["nodeAffinityPolicy"] = node_affinity_policy
        if node_taints_policy is not None:
            c["nodeTaintsPolicy"] = node_taints_policy
        if match_label_keys is not None:
            c["matchLabelKeys"] = match_label_keys
        self._spec.setdefault("topologySpreadConstraints", []).append(c)
        return self

    def scheduling_gates(self, gates: list[str]) -> PodWrapper:
        self._spec["schedulingGates"] = [{"name": g} for g in gates]
        return self

    def pod_group(self, name: str) -> PodWrapper:
        """spec.schedulingGroup.podGroupName (st.MakePod().PodGroupName)."""
        self._spec["schedulingGroup"] = {"podGroupName": name}
        return self

    def owner(self, kind: str, name: str, api_version: str = "apps/v1") -> PodWrapper:
        self._pod["metadata"].setdefault("ownerReferences", []).append(
            {"apiVersion": api_version, "kind": kind, "name": name, "controller": True}
        )
        return self

    def obj(self) -> dict[str, Any]:
        return copy.deepcopy(self._pod)


class NodeWrapper:
    def __init__(self, name: str = "") -> None:
        self._node: dict[str, Any] = {
            "apiVersion": "v1",
            "kind": "Node",
            "metadata": {"name": name, "labels": {}},
            "spec": {},
            "status": {"capacity": {}, "allocatable": {}},
        }

    def name(self, name: str) -> NodeWrapper:
        self._node["metadata"]["name"] = name
        return self

    def label(self, k: str, v: str) -> NodeWrapper:
        self._node["metadata"]["labels"][k] = v
        return self

    def capacity(self, resources: dict[str, str]) -> NodeWrapper:
        """Capacity and allocatable both, 32 pods unless given, as upstream's wrapper does."""
        res = {"pods": "32", **resources}
        self._node["status"]["capacity"] = dict(res)
        self._node["status"]["allocatable"] = dict(res)
        return self

    def taint(self, key: str, value: str, effect: str) -> NodeWrapper:
        self._node["spec"].setdefault("taints", []).append({"key": key, "value": value, "effect": effect})
        return self

    def unschedulable(self, flag: bool = True) -> NodeWrapper:
        self._node["spec"]["unschedulable"] = flag
        return self

    def images(self, images: dict[str, int]) -> NodeWrapper:
        self._node["status"]["images"] = [{"names": [n], "sizeBytes": s} for n, s in images.items()]
        return self

    def obj(self) -> dict[str, Any]:
        return copy.deepcopy(self._node)


def make_pod(name: str = "", namespace: str = "default") -> PodWrapper:
    return PodWrapper(name, namespace)


def make_node(name: str = "") -> NodeWrapper:
    return NodeWrapper(name)
