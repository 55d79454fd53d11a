"""Property test: every plugin's vectorised path agrees with its per-node path on random clusters."""

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from kubesched.config.load import load_config
from kubesched.framework.plugins.registry import new_in_tree_registry
from kubesched.testing.framework import build_snapshot, filter_statuses, lister_with, new_plugin, score_nodes
from kubesched.testing.wrappers import make_node, make_pod

ARGS = load_config(None).profile_args[0]
REGISTRY = new_in_tree_registry()
CPUS = ["0", "100m", "500m", "1", "2", "4"]
MEMS = ["0", "128Mi", "1Gi", "4Gi"]
TAINTS = [
    ("dedicated", "a", "NoSchedule"),
    ("dedicated", "b", "PreferNoSchedule"),
    ("gpu", "", "NoExecute"),
    ("spot", "yes", "PreferNoSchedule"),
]
LABELS = [("zone", "z1"), ("zone", "z2"), ("disk", "ssd"), ("tier", "3"), ("tier", "7")]
IMAGES = ["img/a", "img/b:v1", "img/c"]
DECLARED = ["RestartAllContainersOnContainerExits", "SomethingElse", "UserNamespacesHostNetworkSupport"]


@st.composite
def nodes(draw):
    out = []
    for i in range(draw(st.integers(1, 8))):
        w = make_node(f"n{i}").label("kubernetes.io/hostname", f"n{i}")
        res = {
            "cpu": draw(st.sampled_from(CPUS[1:])),
            "memory": draw(st.sampled_from(MEMS[1:])),
            "pods": str(draw(st.integers(0, 4))),
        }
        if draw(st.booleans()):
            res["example.com/gpu"] = str(draw(st.integers(0, 2)))
        w.capacity(res)
        for t in draw(st.lists(st.sampled_from(TAINTS), max_size=2, unique=True)):
            w.taint(*t)
        for k, v in draw(st.lists(st.sampled_from(LABELS), max_size=3, unique_by=lambda kv: kv[0])):
            w.label(k, v)
        if draw(st.booleans()):
            w.unschedulable()
        images = draw(st.lists(st.sampled_from(IMAGES), max_size=3, unique=True))
        if images:
            w.images({i if ":" in i else i + ":latest": draw(st.integers(1, 2000)) << 20 for i in images})
        obj = w.obj()
        declared = draw(st.lists(st.sampled_from(DECLARED), max_size=3, unique=True))
        if declared:
            obj["status"]["declaredFeatures"] = sorted(declared)
        out.append(obj)
    return out


@st.composite
def pods(draw, node_names):
    w = make_pod(draw(st.sampled_from(["p", "q"])))
    for _ in range(draw(st.integers(0, 2))):
        w.req({"cpu": draw(st.sampled_from(CPUS)), "memory": draw(st.sampled_from(MEMS))})
    if draw(st.booleans()):
        w.req({"example.com/gpu": "1"})
    for t in draw(st.lists(st.sampled_from(TAINTS), max_size=2)):
        w.toleration(
            key=t[0],
            value=t[1],
            effect=draw(st.sampled_from(["", t[2]])),
            operator=draw(st.sampled_from(["Equal", "Exists"])),
        )
    if draw(st.booleans()):
        k, v = draw(st.sampled_from(LABELS))
        w.node_selector({k: v})
    if draw(st.booleans()):
        k, v = draw(st.sampled_from(LABELS))
        op = draw(st.sampled_from(["In", "NotIn", "Exists", "DoesNotExist", "Gt", "Lt"]))
        values = [] if op in ("Exists", "DoesNotExist") else (["5"] if op in ("Gt", "Lt") else [v])
        w.node_affinity_in(k, values, op)
    if draw(st.booleans()):
        k, v = draw(st.sampled_from(LABELS))
        w.preferred_node_term(
            draw(st.integers(1, 100)), {"matchExpressions": [{"key": k, "operator": "In", "values": [v]}]}
        )
    if node_names and draw(st.booleans()):
        w.node(draw(st.sampled_from(node_names)))
    for image in draw(st.lists(st.sampled_from(IMAGES), max_size=2)):
        w.container(image)
    for i, image in enumerate(draw(st.lists(st.sampled_from(IMAGES), max_size=2))):
        w.volume({"name": f"iv{i}", "image": {"reference": image}})
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
def cluster(draw):
    ns = draw(nodes())
    names = [n["metadata"]["name"] for n in ns]
    existing = [
        make_pod(f"e{i}")
        .node(draw(st.sampled_from(names)))
        .req({"cpu": draw(st.sampled_from(CPUS)), "memory": draw(st.sampled_from(MEMS))})
        .obj()
        for i in range(draw(st.integers(0, 6)))
    ]
    for e in existing:
        if draw(st.booleans()):
            e["spec"]["resources"] = {"requests": {"memory": draw(st.sampled_from(MEMS[1:]))}}  # pod-level requests
    pod = draw(pods(names))
    if pod["spec"].get("nodeName"):
        pod["spec"].pop("nodeName")  # pending pods only; NodeName is exercised through filter below
        if draw(st.booleans()):
            pod["spec"]["nodeName"] = draw(st.sampled_from(names))
    return ns, existing, pod


FILTERS = [
    "NodeUnschedulable",
    "NodeName",
    "TaintToleration",
    "NodeAffinity",
    "NodeResourcesFit",
    "NodeDeclaredFeatures",
]
SCORES = ["TaintToleration", "NodeAffinity", "NodeResourcesFit", "NodeResourcesBalancedAllocation", "ImageLocality"]


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(cluster())
def test_filter_batch_agrees_with_filter(c):
    ns, existing, pod = c
    snap = build_snapshot(ns, existing)
    for name in FILTERS:
        plugin = new_plugin(REGISTRY[name], ARGS.get(name), snap, lister_with())
        per_node = filter_statuses(plugin, pod, snap, batch=False)
        batched = filter_statuses(plugin, pod, snap, batch=True)
        assert [s is None for s in per_node] == [s is None for s in batched], name


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(cluster(), st.sampled_from(["LeastAllocated", "MostAllocated", "RequestedToCapacityRatio"]))
def test_score_batch_agrees_with_score(c, strategy):
    ns, existing, pod = c
    pod["spec"].pop("nodeName", None)
    snap = build_snapshot(ns, existing)
    shape = [{"utilization": 0, "score": 0}, {"utilization": 60, "score": 9}, {"utilization": 100, "score": 3}]
    # v1.36 refuses a requestedToCapacityRatio beside another strategy type.
    ratio = {"requestedToCapacityRatio": {"shape": shape}} if strategy == "RequestedToCapacityRatio" else {}
    cfg = load_config(
        {
            "apiVersion": "kubescheduler.config.k8s.io/v1",
            "kind": "KubeSchedulerConfiguration",
            "profiles": [
                {
                    "pluginConfig": [
                        {
                            "name": "NodeResourcesFit",
                            "args": {
                                "scoringStrategy": {
                                    "type": strategy,
                                    "resources": [
                                        {"name": "cpu", "weight": 3},
                                        {"name": "memory", "weight": 1},
                                        {"name": "example.com/gpu", "weight": 2},
                                    ],
                                    **ratio,
                                }
                            },
                        }
                    ]
                }
            ],
        }
    )
    args = cfg.profile_args[0]
    for name in SCORES:
        plugin = new_plugin(REGISTRY[name], args.get(name), snap, lister_with())
        assert score_nodes(plugin, pod, snap, batch=False) == score_nodes(plugin, pod, snap, batch=True), name
