"""Property tests: every vectorised fast path equals its plain per-node twin, node by node, both ways.

A `filter_batch` must reject exactly the nodes `filter` rejects (so one that rejects
everything fails too), and where it rejects, `filter`'s Status must carry the reason the
NodeTable gives; a `score_batch` must give `score`'s raw score on every node, and the
normalised scores must then agree as well. Clusters and pods are random; the NodeTable is
the one the cache builds for its snapshot, both from scratch and after the row rewrites
that node and pod updates cause. `twin_disagreements` is the one comparison used for
every plugin; the broken-twin tests at the end show it notices a wrong fast path.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pytest
from hypothesis import HealthCheck, Phase, currently_in_test_context, event, find, given, settings
from hypothesis import strategies as st

from kubesched.api.resources import PODS, is_extended_resource_name
from kubesched.cache.cache import Cache
from kubesched.cache.snapshot import Snapshot
from kubesched.config import names
from kubesched.config.load import load_config
from kubesched.config.types import (
    InterPodAffinityArgs,
    NodeAffinityArgs,
    NodeResourcesBalancedAllocationArgs,
    NodeResourcesFitArgs,
    NodeResourcesLeastAllocatedArgs,
    NodeResourcesMostAllocatedArgs,
    RequestedToCapacityRatioArgs,
)
from kubesched.framework.cycle_state import CycleState
from kubesched.framework.interface import NodeScoreList
from kubesched.framework.node_info import NodeInfo, parse_node
from kubesched.framework.node_table import ABSENT, POD_COUNT, NodeTable
from kubesched.framework.plugins.helper.node_selector import selector_mask
from kubesched.framework.plugins.interpodaffinity import plugin as interpodaffinity
from kubesched.framework.plugins.nodeaffinity import node_affinity
from kubesched.framework.plugins.nodedeclaredfeatures import node_declared_features
from kubesched.framework.plugins.nodename import node_name
from kubesched.framework.plugins.noderesources import fit
from kubesched.framework.plugins.nodeunschedulable import node_unschedulable
from kubesched.framework.plugins.podtopologyspread import plugin as podtopologyspread
from kubesched.framework.plugins.registry import new_in_tree_registry
from kubesched.framework.plugins.tainttoleration import taint_toleration
from kubesched.framework.status import Code, Status, is_success
from kubesched.framework.types import PodInfo, new_pod_info
from kubesched_testing.framework import lister_with, new_plugin
from kubesched_testing.wrappers import make_node, make_pod

ARGS = load_config(None).profile_args[0]
REGISTRY = new_in_tree_registry()
LISTER = lister_with()
PROPERTY = settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])

# Random clusters. Every pool is small, so nodes and pods meet often enough for both outcomes.

GPU = "example.com/gpu"
FPGA = "example.com/fpga"  # no node offers it
HUGE = "hugepages-2Mi"
STORAGE = "ephemeral-storage"
CPUS = ["0", "100m", "500m", "1", "2", "4"]
MEMS = ["0", "128Mi", "1Gi", "4Gi"]
TAINTS = [
    ("dedicated", "a", "NoSchedule"),
    ("dedicated", "b", "PreferNoSchedule"),
    ("gpu", "", "NoExecute"),
    ("spot", "yes", "PreferNoSchedule"),
    ("maintenance", "soon", "NoSchedule"),
]
LABELS = [("zone", "z1"), ("zone", "z2"), ("disk", "ssd"), ("tier", "3"), ("tier", "7"), ("tier", "x")]
APPS = ["web", "web", "web", "db"]  # pod labels that spread constraints select (mostly the same, so domains fill)
IMAGES = ["img/a", "img/b:v1", "img/c", "registry.io:5000/img/d"]
DECLARED = ["RestartAllContainersOnContainerExits", "SomethingElse", "UserNamespacesHostNetworkSupport"]


@st.composite
def node_objs(draw: st.DrawFn, name: str, labels: dict[str, str] | None = None) -> dict[str, Any]:
    """One node; `labels` keeps a node's labels across an update (the cache then rewrites its row in place)."""
    w = make_node(name).label("kubernetes.io/hostname", name)
    res = {
        "cpu": draw(st.sampled_from(CPUS[1:])),
        "memory": draw(st.sampled_from(MEMS[1:])),
        "pods": str(draw(st.integers(0, 4))),
    }
    for extra, amounts in ((GPU, ["0", "1", "2"]), (HUGE, ["2Mi", "8Mi"]), (STORAGE, ["1Gi", "10Gi"])):
        if draw(st.booleans()):
            res[extra] = draw(st.sampled_from(amounts))
    w.capacity(res)
    for t in draw(st.lists(st.sampled_from(TAINTS), max_size=2, unique=True)):
        w.taint(*t)
    if labels is None:
        labels = dict(draw(st.lists(st.sampled_from(LABELS), max_size=3, unique_by=lambda kv: kv[0])))
    for k, v in labels.items():
        w.label(k, v)
    if draw(st.booleans()):
        w.unschedulable()
    images = draw(st.lists(st.sampled_from(IMAGES), max_size=3, unique=True))
    if images:
        w.images(
            {i if ":" in i.rsplit("/", 1)[-1] else i + ":latest": draw(st.integers(1, 2000)) << 20 for i in images}
        )
    obj = w.obj()
    declared = draw(st.lists(st.sampled_from(DECLARED), max_size=3, unique=True))
    if declared:
        obj["status"]["declaredFeatures"] = sorted(declared)
    return obj


@st.composite
def tolerations(draw: st.DrawFn) -> list[dict[str, str]]:
    """Tolerations that hit a taint, miss it by value or effect, or tolerate everything."""
    out = []
    for key, value, effect in draw(st.lists(st.sampled_from(TAINTS), max_size=3)):
        op = draw(st.sampled_from(["Equal", "Exists"]))
        out.append(
            {
                "key": key,
                "operator": op,
                "value": "" if op == "Exists" else draw(st.sampled_from([value, "other"])),
                "effect": draw(st.sampled_from(["", effect, "NoExecute"])),
            }
        )
    if draw(st.integers(0, 9)) == 0:
        out.append({"key": "", "operator": "Exists", "value": "", "effect": ""})
    if draw(st.integers(0, 3)) == 0:
        effect = draw(st.sampled_from(["", "NoSchedule"]))
        out.append({"key": node_unschedulable.TAINT_NODE_UNSCHEDULABLE, "operator": "Exists", "effect": effect})
    return out


def _expression(key: str, value: str, op: str) -> dict[str, Any]:
    if op in ("Exists", "DoesNotExist"):
        return {"key": key, "operator": op}
    return {"key": key, "operator": op, "values": ["5"] if op in ("Gt", "Lt") else [value]}


@st.composite
def required_terms(draw: st.DrawFn, node_names: Sequence[str]) -> list[dict[str, Any]]:
    """Valid required terms (the API server rejects others): ORed terms of ANDed expressions and name fields."""
    terms = []
    for _ in range(draw(st.integers(0, 3))):
        term: dict[str, Any] = {}
        exprs = [
            _expression(k, v, draw(st.sampled_from(["In", "NotIn", "Exists", "DoesNotExist", "Gt", "Lt"])))
            for k, v in draw(st.lists(st.sampled_from(LABELS), max_size=2))
        ]
        if exprs:
            term["matchExpressions"] = exprs
        if draw(st.integers(0, 3)) == 0:
            op = draw(st.sampled_from(["In", "NotIn"]))
            term["matchFields"] = [
                {"key": "metadata.name", "operator": op, "values": [draw(st.sampled_from([*node_names, "gone"]))]}
            ]
        terms.append(term)
    return terms


@st.composite
def preferred_terms(draw: st.DrawFn, node_names: Sequence[str]) -> list[dict[str, Any]]:
    """Weighted terms, some with weight 0, some by node name, some empty or unparseable (both never match)."""
    out = []
    for _ in range(draw(st.integers(0, 3))):
        kind = draw(st.sampled_from(["expr", "expr", "expr", "name", "empty", "bad"]))
        pref: dict[str, Any] = {}
        if kind == "expr":
            pref["matchExpressions"] = [
                _expression(k, v, draw(st.sampled_from(["In", "NotIn", "Exists", "Gt"])))
                for k, v in draw(st.lists(st.sampled_from(LABELS), min_size=1, max_size=2))
            ]
        elif kind == "name":
            op = draw(st.sampled_from(["In", "NotIn"]))
            pref["matchFields"] = [
                {"key": "metadata.name", "operator": op, "values": [draw(st.sampled_from(node_names))]}
            ]
        elif kind == "bad":
            pref["matchExpressions"] = [{"key": "tier", "operator": "Gt", "values": ["x"]}]
        out.append({"weight": draw(st.sampled_from([0, 1, 7, 100])), "preference": pref})
    return out


POD_TOPOLOGY_KEYS = ["zone", "kubernetes.io/hostname", "tier"]


def with_pod_affinity(w: Any, draw: st.DrawFn) -> Any:
    """Required and preferred pod (anti-)affinity on app labels, by zone, host or tier (some nodes lack tier)."""
    for _ in range(draw(st.integers(0, 2))):
        kind = draw(st.sampled_from(["affinity", "anti", "preferred", "preferred-anti"]))
        key, app = draw(st.sampled_from(POD_TOPOLOGY_KEYS)), draw(st.sampled_from(APPS))
        if kind == "affinity":
            w = w.pod_affinity_in("app", key, [app])
        elif kind == "anti":
            w = w.pod_anti_affinity_in("app", key, [app])
        elif kind == "preferred":
            w = w.preferred_pod_affinity_in(draw(st.sampled_from([1, 50])), "app", key, [app])
        else:
            w = w.preferred_pod_anti_affinity_in(draw(st.sampled_from([1, 50])), "app", key, [app])
    return w


@st.composite
def pending_pods(draw: st.DrawFn, node_names: Sequence[str]) -> dict[str, Any]:
    w = make_pod(draw(st.sampled_from(["p", "q"])))
    for _ in range(draw(st.integers(0, 2))):
        w.req({"cpu": draw(st.sampled_from(CPUS)), "memory": draw(st.sampled_from(MEMS))})
    extra = draw(st.sampled_from([None, None, GPU, GPU, HUGE, STORAGE, FPGA]))
    if extra is not None:
        w.req({extra: {GPU: "1", HUGE: "4Mi", STORAGE: "2Gi", FPGA: "1"}[extra]})
    for t in draw(tolerations()):
        w.toleration(**t)
    if draw(st.booleans()):
        w.node_selector(
            dict(draw(st.lists(st.sampled_from(LABELS), min_size=1, max_size=2, unique_by=lambda kv: kv[0])))
        )
    if draw(st.booleans()):
        w.required_node_terms(draw(required_terms(node_names)))
    for p in draw(preferred_terms(node_names)):
        w.preferred_node_term(p["weight"], p["preference"])
    for image in draw(st.lists(st.sampled_from(IMAGES), max_size=3)):
        w.container(image)
    for i, image in enumerate(draw(st.lists(st.sampled_from(IMAGES), max_size=2))):
        w.volume({"name": f"iv{i}", "image": {"reference": image}})
    if draw(st.booleans()):
        w.node(draw(st.sampled_from([*node_names, "elsewhere"])))
    if draw(st.integers(0, 3)):
        w.label("app", draw(st.sampled_from(APPS)))
    w = with_pod_affinity(w, draw)
    for key in draw(st.lists(st.sampled_from(POD_TOPOLOGY_KEYS), max_size=2, unique=True)):
        w.spread_constraint(
            draw(st.sampled_from([1, 1, 2])),
            key,
            draw(st.sampled_from(["DoNotSchedule", "ScheduleAnyway"])),
            {"matchLabels": {"app": draw(st.sampled_from(APPS))}},
            min_domains=draw(st.sampled_from([None, 2, 3])),
            node_taints_policy=draw(st.sampled_from([None, "Honor"])),
        )
    obj = w.obj()
    if draw(st.booleans()):
        obj["spec"]["resources"] = {"requests": {"cpu": draw(st.sampled_from(CPUS[1:]))}}  # pod-level requests
    if draw(st.booleans()):
        obj["spec"]["containers"].append(
            {"name": "r", "image": "pause", "restartPolicyRules": [{"action": "RestartAllContainers"}]}
        )
    if draw(st.booleans()):
        obj["spec"].update(hostNetwork=True, hostUsers=False)
    return obj


@st.composite
def bound_pods(draw: st.DrawFn, node_names: Sequence[str], prefix: str) -> list[dict[str, Any]]:
    out = []
    for i in range(draw(st.integers(0, 6))):
        w = make_pod(f"{prefix}{i}").node(draw(st.sampled_from(node_names)))
        if draw(st.integers(0, 3)):
            w.label("app", draw(st.sampled_from(APPS)))
        if draw(st.integers(0, 2)) == 0:
            w = with_pod_affinity(w, draw)
        w.req({"cpu": draw(st.sampled_from(CPUS)), "memory": draw(st.sampled_from(MEMS))})
        if draw(st.integers(0, 3)) == 0:
            w.req({draw(st.sampled_from([GPU, HUGE, STORAGE])): "1"})
        obj = w.obj()
        if draw(st.booleans()):
            obj["spec"]["resources"] = {"requests": {"memory": draw(st.sampled_from(MEMS[1:]))}}  # pod-level requests
        out.append(obj)
    return out


@dataclass
class Cluster:
    """Nodes, their pods and a pending pod; then updates the cache applies before the next cycle."""

    nodes: list[dict[str, Any]]
    pods: list[dict[str, Any]]
    pod: dict[str, Any]
    node_updates: list[dict[str, Any]] = field(default_factory=list)
    added_pods: list[dict[str, Any]] = field(default_factory=list)
    removed_pods: list[int] = field(default_factory=list)

    def snapshots(self) -> Iterator[Snapshot]:
        """The snapshot as the cache builds it; then the same snapshot after the updates."""
        cache = Cache()
        parsed = {n["metadata"]["name"]: parse_node(n) for n in self.nodes}
        for node in parsed.values():
            cache.add_node(node)
        infos = [new_pod_info(p) for p in self.pods]
        for info in infos:
            cache.add_pod(info)
        snap = Snapshot()
        cache.update_snapshot(snap)
        yield snap
        for obj in self.node_updates:
            new = parse_node(obj)
            cache.update_node(parsed[new.name], new)
            parsed[new.name] = new
        for p in self.added_pods:
            cache.add_pod(new_pod_info(p))
        for i in self.removed_pods:
            cache.remove_pod(infos[i])
        cache.update_snapshot(snap)
        yield snap


@st.composite
def clusters(draw: st.DrawFn) -> Cluster:
    node_names = [f"n{i}" for i in range(draw(st.integers(1, 8)))]
    nodes = [draw(node_objs(n)) for n in node_names]
    pods = draw(bound_pods(node_names, "e"))
    c = Cluster(nodes, pods, draw(pending_pods(node_names)))
    for i in draw(st.lists(st.integers(0, len(nodes) - 1), max_size=3, unique=True)):
        keep = draw(st.booleans())  # same labels: the row is rewritten in place; new labels: the table is rebuilt
        labels = {k: v for k, v in nodes[i]["metadata"]["labels"].items() if k != "kubernetes.io/hostname"}
        c.node_updates.append(draw(node_objs(node_names[i], labels if keep else None)))
    c.added_pods = draw(bound_pods(node_names, "a"))
    if pods:
        c.removed_pods = draw(st.lists(st.integers(0, len(pods) - 1), max_size=2, unique=True))
    return c


# Plugin configurations: each fast-path plugin with the args that change what its twins compute.

RTCR_SHAPES = [
    [{"utilization": 0, "score": 0}, {"utilization": 60, "score": 9}, {"utilization": 100, "score": 3}],
    [{"utilization": 0, "score": 10}, {"utilization": 100, "score": 0}],
]
WEIGHTED = [{"name": "cpu", "weight": 3}, {"name": "memory", "weight": 1}, {"name": GPU, "weight": 2}]
EVERY_RESOURCE = [*WEIGHTED, {"name": HUGE, "weight": 1}, {"name": STORAGE, "weight": 4}]


def _fit(strategy: str, resources: list[dict[str, Any]], shape: int = 0, **ignored: list[str]) -> NodeResourcesFitArgs:
    scoring: dict[str, Any] = {"type": strategy, "resources": resources}
    if strategy == "RequestedToCapacityRatio":
        scoring["requestedToCapacityRatio"] = {"shape": RTCR_SHAPES[shape]}
    return NodeResourcesFitArgs.model_validate({"scoringStrategy": scoring, **ignored})


ADDED_AFFINITY = {
    "requiredDuringSchedulingIgnoredDuringExecution": {
        "nodeSelectorTerms": [
            {"matchExpressions": [{"key": "zone", "operator": "In", "values": ["z1"]}]},
            {"matchExpressions": [{"key": "disk", "operator": "Exists"}]},
        ]
    },
    "preferredDuringSchedulingIgnoredDuringExecution": [
        {"weight": 5, "preference": {"matchExpressions": [{"key": "tier", "operator": "Lt", "values": ["5"]}]}}
    ],
}

VARIANTS: dict[str, list[Any]] = {
    names.NODE_UNSCHEDULABLE: [None],
    names.NODE_NAME: [None],
    names.TAINT_TOLERATION: [None],
    names.NODE_DECLARED_FEATURES: [None],
    names.DYNAMIC_RESOURCES: [ARGS.get(names.DYNAMIC_RESOURCES)],
    names.IMAGE_LOCALITY: [None],
    names.NODE_AFFINITY: [NodeAffinityArgs(), NodeAffinityArgs(addedAffinity=ADDED_AFFINITY)],
    names.NODE_RESOURCES_FIT: [
        ARGS.get(names.NODE_RESOURCES_FIT),
        _fit("LeastAllocated", WEIGHTED),
        _fit("MostAllocated", WEIGHTED),
        _fit("RequestedToCapacityRatio", WEIGHTED),
        _fit("RequestedToCapacityRatio", EVERY_RESOURCE, 1, ignoredResources=[GPU]),
        _fit("MostAllocated", EVERY_RESOURCE, ignoredResourceGroups=["example.com"]),
    ],
    names.NODE_RESOURCES_BALANCED_ALLOCATION: [
        ARGS.get(names.NODE_RESOURCES_BALANCED_ALLOCATION),
        NodeResourcesBalancedAllocationArgs.model_validate({"resources": EVERY_RESOURCE}),
    ],
    names.NODE_RESOURCES_LEAST_ALLOCATED: [
        None,
        NodeResourcesLeastAllocatedArgs.model_validate({"resources": WEIGHTED}),
    ],
    names.NODE_RESOURCES_MOST_ALLOCATED: [
        None,
        NodeResourcesMostAllocatedArgs.model_validate({"resources": EVERY_RESOURCE}),
    ],
    names.POD_TOPOLOGY_SPREAD: [ARGS.get(names.POD_TOPOLOGY_SPREAD)],
    names.INTER_POD_AFFINITY: [
        ARGS.get(names.INTER_POD_AFFINITY),
        InterPodAffinityArgs(hardPodAffinityWeight=0, ignorePreferredTermsOfExistingPods=True),
    ],
    names.REQUESTED_TO_CAPACITY_RATIO: [
        RequestedToCapacityRatioArgs.model_validate({"shape": shape, "resources": WEIGHTED}) for shape in RTCR_SHAPES
    ],
}
FAST_PATH_PLUGINS = sorted(VARIANTS)


def build(name: str, args: Any, snap: Snapshot) -> Any:
    return new_plugin(REGISTRY[name], args, snap, LISTER)


# What the NodeTable says about a row the batch path rejected: the code and reasons `filter` must give.

Verdict = tuple[Code, frozenset[str]]
UNRESOLVABLE = Code.UNSCHEDULABLE_AND_UNRESOLVABLE


def _always(reason: str) -> Callable[[Any, CycleState, PodInfo, NodeTable], list[Verdict]]:
    return lambda plugin, state, pod, table: [(UNRESOLVABLE, frozenset([reason]))] * table.n


def _fit_verdicts(plugin: Any, state: CycleState, pod: PodInfo, table: NodeTable) -> list[Verdict]:
    """Too many pods, then every requested, not ignored resource the row lacks; unresolvable past allocatable."""
    requests = state.read(fit.PRE_FILTER_STATE_KEY).requests
    idx, alloc, used = table.resource_index, table.allocatable, table.requested
    out = []
    for i in range(table.n):
        reasons = {fit.REASON_TOO_MANY_PODS} if used[i, POD_COUNT] >= alloc[i, idx[PODS]] else set()
        unresolvable = False
        for name, want in requests.items():
            if want <= 0 or name == PODS:
                continue
            if is_extended_resource_name(name) and (
                name in plugin.ignored_resources or name.split("/")[0] in plugin.ignored_resource_groups
            ):
                continue
            j = idx.get(name)
            cap, in_use = (int(alloc[i, j]), int(used[i, j])) if j is not None else (0, 0)
            if want > cap - in_use:
                reasons.add(f"Insufficient {name}")
                unresolvable |= want > cap
        out.append((UNRESOLVABLE if unresolvable else Code.UNSCHEDULABLE, frozenset(reasons)))
    return out


def _node_affinity_verdicts(plugin: Any, state: CycleState, pod: PodInfo, table: NodeTable) -> list[Verdict]:
    """The scheduler-enforced affinity is checked first; the pod's own terms only where it matched."""
    enforced = (
        selector_mask(table, plugin.added_node_selector)
        if plugin.added_node_selector is not None
        else np.ones(table.n, dtype=bool)
    )
    return [
        (UNRESOLVABLE, frozenset([node_affinity.ERR_REASON_POD if ok else node_affinity.ERR_REASON_ENFORCED]))
        for ok in enforced
    ]


def _spread_verdicts(plugin: Any, state: CycleState, pod: PodInfo, table: NodeTable) -> list[Verdict]:
    """The first constraint a row breaks: a missing topology key (unresolvable), else a skew above maxSkew."""
    s = state.read(podtopologyspread.PRE_FILTER_STATE_KEY)
    out: list[Verdict] = []
    for row in range(table.n):
        verdict: Verdict = (Code.SUCCESS, frozenset())
        for i, c in enumerate(s.constraints):
            code = int(table.label_column(c.topology_key)[row])
            if code == ABSENT:
                verdict = (UNRESOLVABLE, frozenset([podtopologyspread.ERR_REASON_NODE_LABEL_NOT_MATCH]))
                break
            value = table.label_values(c.topology_key)[code]
            skew = s.tp_value_to_match_num[i].get(value, 0) + int(c.selector.matches(pod.labels))
            if skew - s.min_match_num(i, c.min_domains) > c.max_skew:
                verdict = (Code.UNSCHEDULABLE, frozenset([podtopologyspread.ERR_REASON_CONSTRAINTS_NOT_MATCH]))
                break
        out.append(verdict)
    return out


def _interpod_verdicts(plugin: Any, state: CycleState, pod: PodInfo, table: NodeTable) -> list[Verdict]:
    """The pod's affinity (unresolvable), then its anti-affinity, then existing pods' anti-affinity."""
    s = state.read(interpodaffinity.PRE_FILTER_STATE_KEY)

    def value(row: int, key: str) -> str | None:
        code = int(table.label_column(key)[row])
        return None if code == ABSENT else table.label_values(key)[code]

    out: list[Verdict] = []
    for row in range(table.n):
        affinity = [(t.topology_key, value(row, t.topology_key)) for t in s.required_affinity_terms]
        if any(v is None for _, v in affinity) or not (
            all(s.affinity_counts.pairs.get(pair, 0) > 0 for pair in affinity)
            or (not s.affinity_counts and all(t.matches(pod, None) for t in s.required_affinity_terms))
        ):
            out.append((UNRESOLVABLE, frozenset([interpodaffinity.ERR_REASON_AFFINITY_RULES_NOT_MATCH])))
        elif any(
            s.anti_affinity_counts.pairs.get((t.topology_key, value(row, t.topology_key)), 0) > 0
            for t in s.required_anti_affinity_terms
        ):
            out.append((Code.UNSCHEDULABLE, frozenset([interpodaffinity.ERR_REASON_ANTI_AFFINITY_RULES_NOT_MATCH])))
        elif any(n > 0 and value(row, key) == v for (key, v), n in s.existing_anti_affinity_counts.pairs.items()):
            reason = interpodaffinity.ERR_REASON_EXISTING_ANTI_AFFINITY_RULES_NOT_MATCH
            out.append((Code.UNSCHEDULABLE, frozenset([reason])))
        else:
            out.append((Code.SUCCESS, frozenset()))
    return out


REJECTION_VERDICTS: dict[str, Callable[[Any, CycleState, PodInfo, NodeTable], list[Verdict]]] = {
    names.NODE_UNSCHEDULABLE: _always(node_unschedulable.ERR_REASON_UNSCHEDULABLE),
    names.NODE_NAME: _always(node_name.ERR_REASON),
    names.TAINT_TOLERATION: _always(taint_toleration.ERR_REASON_NOT_MATCH),
    names.NODE_DECLARED_FEATURES: _always(node_declared_features.ERR_REASON_UNSATISFIED_REQUIREMENTS),
    names.NODE_AFFINITY: _node_affinity_verdicts,
    names.NODE_RESOURCES_FIT: _fit_verdicts,
    names.POD_TOPOLOGY_SPREAD: _spread_verdicts,
    names.INTER_POD_AFFINITY: _interpod_verdicts,
}


# The comparison.


def _filter_state(plugin: Any, pod: PodInfo, snap: Snapshot) -> CycleState | None:
    """A fresh cycle after PreFilter; None where PreFilter skips or rejects, so neither Filter path runs."""
    state = CycleState()
    if hasattr(plugin, "pre_filter"):
        _, s = plugin.pre_filter(state, pod, snap.node_info_list)
        if s is not None and not s.is_success():
            return None
    return state


def _score_state(
    plugin: Any, pod: PodInfo, snap: Snapshot, positions: Sequence[int], batch: bool = False
) -> CycleState | None:
    """A fresh cycle after PreFilter and PreScore over the scored nodes (pre_score_batch's where `batch` and the
    plugin has one); None where PreScore skips."""
    state = CycleState()
    if hasattr(plugin, "pre_filter"):
        plugin.pre_filter(state, pod, snap.node_info_list)
    nodes = [snap.node_info_list[p] for p in positions]
    if batch and hasattr(plugin, "pre_score_batch"):
        s = plugin.pre_score_batch(state, pod, nodes, snap.table, np.array(positions, dtype=np.int64))
    elif hasattr(plugin, "pre_score"):
        s = plugin.pre_score(state, pod, nodes)
    else:
        s = None
    if s is not None and not s.is_success():
        return None
    return state


def _filter_disagreements(plugin: Any, pod: PodInfo, snap: Snapshot) -> list[str]:
    name = plugin.name
    batch_state, plain_state = _filter_state(plugin, pod, snap), _filter_state(plugin, pod, snap)
    if batch_state is None or plain_state is None:
        return []
    table = snap.table
    if table.names != [ni.name for ni in snap.node_info_list]:
        return [f"{name}: NodeTable rows {table.names} are not the snapshot's nodes"]
    mask = np.asarray(plugin.filter_batch(batch_state, pod, table, slice(0, table.n)))
    if mask.shape != (table.n,) or mask.dtype != bool:
        return [f"{name}: filter_batch gave {mask!r}, not one bool per node"]
    for cut in range(1, table.n):
        # The runtime asks for windows of rows: any two halves must give the whole table's verdicts.
        halves = [
            np.asarray(plugin.filter_batch(batch_state, pod, table, rows))
            for rows in (slice(0, cut), slice(cut, table.n))
        ]
        if not np.array_equal(np.concatenate(halves), mask):
            return [f"{name}: filter_batch over rows split at {cut} gave {halves!r}, the whole table {mask!r}"]
    verdicts = REJECTION_VERDICTS[name](plugin, batch_state, pod, table) if name in REJECTION_VERDICTS else None
    out = []
    accepted = rejected = 0
    for i, ni in enumerate(snap.node_info_list):
        status = plugin.filter(plain_state, pod, ni)
        passes = status is None or status.is_success()
        accepted += passes
        rejected += not passes
        if bool(mask[i]) != passes:
            verdict = "accepts" if mask[i] else "rejects"
            out.append(f"{name} on {ni.name}: filter_batch {verdict}, filter gives {status!r}")
        elif not passes:
            assert status is not None
            if verdicts is None:
                out.append(f"{name}: no reasons known for its batch rejections")
            elif (
                not status.is_rejected()
                or (status.code, frozenset(status.reasons)) != verdicts[i]
                or not _unique(status)
            ):
                out.append(f"{name} on {ni.name}: filter gives {status!r}, the NodeTable says {verdicts[i]}")
    if accepted:
        _event(f"{name}: filter accepts some node")
    if rejected:
        _event(f"{name}: filter rejects some node")
    return out


def _event(what: str) -> None:
    """For --hypothesis-show-statistics: how often each outcome came up."""
    if currently_in_test_context():
        event(what)


def _unique(status: Status) -> bool:
    return len(set(status.reasons)) == len(status.reasons)


def _score_disagreements(plugin: Any, pod: PodInfo, snap: Snapshot, positions: Sequence[int]) -> list[str]:
    name = plugin.name
    batch_state = _score_state(plugin, pod, snap, positions, batch=True)
    plain_state = _score_state(plugin, pod, snap, positions)
    if batch_state is None or plain_state is None:
        return []
    infos = [snap.node_info_list[p] for p in positions]
    node_names = [ni.name for ni in infos]
    batch = np.asarray(plugin.score_batch(batch_state, pod, snap.table, np.array(positions, dtype=np.int64)))
    if batch.shape != (len(positions),) or batch.dtype.kind not in "iu":
        return [f"{name}: score_batch gave {batch!r}, not one integer per scored node"]
    plain = np.empty(len(infos), dtype=np.int64)
    for i, ni in enumerate(infos):
        plain[i], s = plugin.score(plain_state, pod, ni)
        if s is not None and not s.is_success():
            return [f"{name} on {ni.name}: score failed with {s!r}"]
    out = [
        f"{name} on {n}: score_batch gives {int(b)}, score gives {int(p)}"
        for n, b, p in zip(node_names, batch, plain, strict=True)
        if b != p
    ]
    if len(set(plain.tolist())) > 1:
        _event(f"{name}: raw scores differ between nodes")
    if out or not plugin.has_normalize():
        return out
    normalised = []
    for state, raw in ((batch_state, batch), (plain_state, plain)):
        scores = raw.astype(np.int64)  # a copy, as the runtime normalises one
        s = plugin.normalize_score(state, pod, NodeScoreList(node_names, scores))
        if s is not None and not s.is_success():
            return [f"{name}: normalize_score failed with {s!r}"]
        normalised.append(scores)
    return [
        f"{name} on {n}: normalised score_batch gives {int(b)}, normalised score gives {int(p)}"
        for n, b, p in zip(node_names, *normalised, strict=True)
        if b != p
    ]


def twin_disagreements(
    plugin: Any, pod_obj: dict[str, Any], snap: Snapshot, positions: Sequence[int] | None = None
) -> list[str]:
    """Every way the plugin's fast paths differ from `filter`/`score` on this cluster; empty when they agree.

    `positions` are the snapshot rows to score, in the order the runtime would pass them (all rows by default).
    """
    pod = new_pod_info(pod_obj)
    out = []
    if callable(getattr(plugin, "filter_batch", None)):
        out += _filter_disagreements(plugin, pod, snap)
    if callable(getattr(plugin, "score_batch", None)):
        out += _score_disagreements(plugin, pod, snap, range(len(snap)) if positions is None else positions)
    return out


# The properties.


def test_every_fast_path_is_compared():
    """A plugin that gains a filter_batch, pre_score_batch or score_batch must join VARIANTS (and, for Filter, the
    verdicts)."""
    snap = Snapshot()
    fast = set()
    for name in REGISTRY:
        plugin = build(name, VARIANTS[name][0] if name in VARIANTS else ARGS.get(name), snap)
        if any(callable(getattr(plugin, m, None)) for m in ("filter_batch", "pre_score_batch", "score_batch")):
            fast.add(name)
        if callable(getattr(plugin, "filter_batch", None)):
            assert name in REJECTION_VERDICTS, name
    assert fast == set(VARIANTS)


@pytest.mark.parametrize("name", FAST_PATH_PLUGINS)
@PROPERTY
@given(c=clusters(), data=st.data())
def test_fast_paths_equal_their_plain_twins(name, c, data):
    """filter_batch equals filter node by node, both ways, with filter's reasons; score_batch and normalised scores
    equal score's; on the snapshot as built and after the cache has rewritten rows."""
    args = data.draw(st.sampled_from(VARIANTS[name]), label="args")
    plugin = None
    for snap in c.snapshots():
        if plugin is None:
            plugin = build(name, args, snap)  # kept across cycles, as the scheduler keeps it; the snapshot is reused
        order = data.draw(st.permutations(range(len(snap))), label="score order")
        positions = order[: data.draw(st.integers(1, len(snap)), label="scored nodes")]
        assert twin_disagreements(plugin, c.pod, snap, positions) == []


# The generators reach both outcomes: each witness is a cluster that `find` must come up with.


def _first_snapshot(name: str, args: Any, c: Cluster) -> tuple[Any, PodInfo, Snapshot]:
    snap = next(c.snapshots())
    return build(name, args, snap), new_pod_info(c.pod), snap


def _plain_filter(name: str, args: Any, c: Cluster) -> list[tuple[NodeInfo, Status | None]]:
    """The plain Filter's verdict on every node; empty where PreFilter skips or rejects."""
    plugin, pod, snap = _first_snapshot(name, args, c)
    state = _filter_state(plugin, pod, snap)
    return [] if state is None else [(ni, plugin.filter(state, pod, ni)) for ni in snap.node_info_list]


def _plain_scores(name: str, args: Any, c: Cluster) -> list[int]:
    """The plain raw scores of every node; empty where PreScore skips."""
    plugin, pod, snap = _first_snapshot(name, args, c)
    state = _score_state(plugin, pod, snap, range(len(snap)))
    return [] if state is None else [plugin.score(state, pod, ni)[0] for ni in snap.node_info_list]


def _both(outcomes: list[tuple[NodeInfo, Status | None]], of: Callable[[NodeInfo], bool] = lambda ni: True) -> bool:
    """Among the nodes `of` picks, one passes and one is rejected."""
    picked = [is_success(s) for ni, s in outcomes if of(ni)]
    return any(picked) and not all(picked)


def _has_reason(outcomes: list[tuple[NodeInfo, Status | None]], reason: str) -> bool:
    return any(s is not None and reason in s.reasons for _, s in outcomes)


def _repels(ni: NodeInfo) -> bool:
    return ni.node is not None and any(t.effect in ("NoSchedule", "NoExecute") for t in ni.node.taints)


def _cordoned(ni: NodeInfo) -> bool:
    return ni.node is not None and ni.node.unschedulable


def _filter_witness(name: str, test: Callable[[list[tuple[NodeInfo, Status | None]]], bool], args: Any = None) -> Any:
    return lambda c: test(_plain_filter(name, args if args is not None else VARIANTS[name][0], c))


def _score_witness(name: str) -> Any:
    return lambda c: len(set(_plain_scores(name, VARIANTS[name][0], c))) > 1


WITNESSES: dict[str, Callable[[Cluster], bool]] = {
    **{f"{name} passes one node and rejects another": _filter_witness(name, _both) for name in REJECTION_VERDICTS},
    "TaintToleration tolerates one repelling taint and not another": _filter_witness(
        names.TAINT_TOLERATION, lambda o: _both(o, _repels)
    ),
    "NodeUnschedulable lets a tolerating pod onto a cordoned node": _filter_witness(
        names.NODE_UNSCHEDULABLE, lambda o: any(is_success(s) for ni, s in o if _cordoned(ni))
    ),
    "NodeAffinity required terms match one node and not another": lambda c: (
        "requiredDuringSchedulingIgnoredDuringExecution" in c.pod["spec"].get("affinity", {}).get("nodeAffinity", {})
        and "nodeSelector" not in c.pod["spec"]
        and _both(_plain_filter(names.NODE_AFFINITY, VARIANTS[names.NODE_AFFINITY][0], c))
    ),
    "NodeAffinity enforces the added affinity beside the pod's own": _filter_witness(
        names.NODE_AFFINITY,
        lambda o: (
            _both(o)
            and _has_reason(o, node_affinity.ERR_REASON_ENFORCED)
            and _has_reason(o, node_affinity.ERR_REASON_POD)
        ),
        VARIANTS[names.NODE_AFFINITY][1],
    ),
    "InterPodAffinity rejects a node for existing pods' anti-affinity": _filter_witness(
        names.INTER_POD_AFFINITY,
        lambda o: _both(o) and _has_reason(o, interpodaffinity.ERR_REASON_EXISTING_ANTI_AFFINITY_RULES_NOT_MATCH),
    ),
    "InterPodAffinity rejects a node for the pod's anti-affinity": _filter_witness(
        names.INTER_POD_AFFINITY,
        lambda o: _both(o) and _has_reason(o, interpodaffinity.ERR_REASON_ANTI_AFFINITY_RULES_NOT_MATCH),
    ),
    "PodTopologySpread rejects a node whose domain is too full": _filter_witness(
        names.POD_TOPOLOGY_SPREAD, lambda o: _has_reason(o, podtopologyspread.ERR_REASON_CONSTRAINTS_NOT_MATCH)
    ),
    "NodeResourcesFit finds too many pods": _filter_witness(
        names.NODE_RESOURCES_FIT, lambda o: _both(o) and _has_reason(o, fit.REASON_TOO_MANY_PODS)
    ),
    "NodeResourcesFit finds too little cpu and fits elsewhere": _filter_witness(
        names.NODE_RESOURCES_FIT, lambda o: _both(o) and _has_reason(o, "Insufficient cpu")
    ),
    "NodeResourcesFit finds too little of an extended resource": _filter_witness(
        names.NODE_RESOURCES_FIT, lambda o: _has_reason(o, f"Insufficient {GPU}")
    ),
    # DynamicResources scores every node 0 while it allocates nothing.
    **{
        f"{name} scores nodes differently": _score_witness(name)
        for name in (
            names.INTER_POD_AFFINITY,
            names.POD_TOPOLOGY_SPREAD,
            names.TAINT_TOLERATION,
            names.NODE_AFFINITY,
            names.NODE_RESOURCES_FIT,
            names.NODE_RESOURCES_BALANCED_ALLOCATION,
            names.IMAGE_LOCALITY,
            names.NODE_RESOURCES_LEAST_ALLOCATED,
            names.NODE_RESOURCES_MOST_ALLOCATED,
            names.REQUESTED_TO_CAPACITY_RATIO,
        )
    },
}


@pytest.mark.parametrize("witness", sorted(WITNESSES))
def test_generators_reach_both_outcomes(witness):
    """The rarest witness (a domain too full for PodTopologySpread) is in about 2% of clusters: 1500 tries leave
    no real chance of a miss, and `find` stops at the first hit."""
    search = settings(max_examples=1500, phases=[Phase.generate], database=None, deadline=None)
    find(clusters(), WITNESSES[witness], settings=search)


# Broken twins: the helper must report a fast path that is wrong in either direction.


def _small_cluster() -> Snapshot:
    """A roomy untainted node in zone z1 and a small tainted one; the pod needs 1 CPU and prefers z1."""
    nodes = [
        make_node("roomy").capacity({"cpu": "4", "memory": "4Gi"}).label("zone", "z1").obj(),
        make_node("small").capacity({"cpu": "100m", "memory": "1Gi"}).taint("dedicated", "a", "NoSchedule").obj(),
    ]
    return next(Cluster(nodes, [], SMALL_POD).snapshots())


SMALL_POD = (
    make_pod("p")
    .req({"cpu": "1"})
    .preferred_node_term(10, {"matchExpressions": [{"key": "zone", "operator": "In", "values": ["z1"]}]})
    .obj()
)


def test_the_small_cluster_agrees():
    snap = _small_cluster()
    for name in FAST_PATH_PLUGINS:
        assert twin_disagreements(build(name, VARIANTS[name][0], snap), SMALL_POD, snap) == [], name


def test_helper_reports_a_filter_batch_that_rejects_every_node(monkeypatch):
    monkeypatch.setattr(
        taint_toleration.TaintToleration,
        "filter_batch",
        lambda self, state, pod, table, rows: np.zeros(rows.stop - rows.start, dtype=bool),
    )
    snap = _small_cluster()
    got = twin_disagreements(build(names.TAINT_TOLERATION, None, snap), SMALL_POD, snap)
    assert got == ["TaintToleration on roomy: filter_batch rejects, filter gives None"]


def test_helper_reports_a_filter_batch_that_accepts_every_node(monkeypatch):
    monkeypatch.setattr(
        fit.Fit, "filter_batch", lambda self, state, pod, table, rows: np.ones(rows.stop - rows.start, dtype=bool)
    )
    snap = _small_cluster()
    got = twin_disagreements(
        build(names.NODE_RESOURCES_FIT, VARIANTS[names.NODE_RESOURCES_FIT][0], snap), SMALL_POD, snap
    )
    assert got == [
        "NodeResourcesFit on small: filter_batch accepts, filter gives "
        "Status(code=UnschedulableAndUnresolvable, reasons=['Insufficient cpu'])"
    ]


def test_helper_reports_a_rejection_with_the_wrong_reason(monkeypatch):
    def filter_(self: Any, state: CycleState, pod: PodInfo, node_info: NodeInfo) -> Status | None:
        if node_info.name == "roomy":
            return None
        return Status(Code.UNSCHEDULABLE_AND_UNRESOLVABLE, "node(s) had taints that the pod didn't tolerate")

    monkeypatch.setattr(taint_toleration.TaintToleration, "filter", filter_)
    snap = _small_cluster()
    got = twin_disagreements(build(names.TAINT_TOLERATION, None, snap), SMALL_POD, snap)
    assert len(got) == 1 and got[0].startswith("TaintToleration on small: filter gives"), got


def test_helper_reports_a_score_batch_that_mixes_up_positions(monkeypatch):
    honest = node_affinity.NodeAffinity.score_batch
    monkeypatch.setattr(
        node_affinity.NodeAffinity,
        "score_batch",
        lambda self, state, pod, table, positions: honest(self, state, pod, table, positions)[::-1],
    )
    snap = _small_cluster()
    got = twin_disagreements(build(names.NODE_AFFINITY, None, snap), SMALL_POD, snap)
    assert got == [
        "NodeAffinity on roomy: score_batch gives 0, score gives 10",
        "NodeAffinity on small: score_batch gives 10, score gives 0",
    ]


@settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(c=clusters())
def test_helper_reports_every_node_a_constant_twin_gets_wrong(c):
    """Reject-all and accept-all twins of every Filter, and off-by-one twins of every Score, are caught node by node."""
    snap = next(c.snapshots())
    pod = new_pod_info(c.pod)
    for name in FAST_PATH_PLUGINS:
        args = VARIANTS[name][0]
        plugin = build(name, args, snap)
        if callable(getattr(plugin, "filter_batch", None)):
            state = _filter_state(plugin, pod, snap)
            plain = (
                [] if state is None else [(ni, is_success(plugin.filter(state, pod, ni))) for ni in snap.node_info_list]
            )
            for constant in (False, True):
                broken = build(name, args, snap)
                broken.filter_batch = lambda state, pod, table, rows, v=constant: np.full(rows.stop - rows.start, v)
                wrong = [f"{name} on {ni.name}" for ni, ok in plain if ok != constant]
                got = [line.split(":")[0] for line in _filter_disagreements(broken, pod, snap)]
                assert got == wrong
        if callable(getattr(plugin, "score_batch", None)):
            skipped = _score_state(plugin, pod, snap, range(len(snap))) is None
            broken = build(name, args, snap)
            honest = type(broken).score_batch
            broken.score_batch = lambda state, pod, table, positions, f=honest, p=broken: (
                f(p, state, pod, table, positions) + 1
            )
            got = [line.split(":")[0] for line in _score_disagreements(broken, pod, snap, range(len(snap)))]
            assert got == ([] if skipped else [f"{name} on {ni.name}" for ni in snap.node_info_list])
