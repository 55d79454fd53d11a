"""OpportunisticBatching through whole scheduling cycles: signatures, hints, the gate, metrics, and the twin.

The signature tables are upstream's (TestImageSignature, TestPodAffinitySignature, TestPodTopoSignatures,
TestFitSignPod, TestBalancedAllocationSignPod). The property: with batching on, every pod lands on a node
that a full cycle on the same state ranks at the top, where scores do not depend on which other nodes are
feasible (no normalisation across nodes), which is the premise upstream's KEP-5598 rests on.
"""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from prometheus_client import generate_latest

from kubesched.framework import signers
from kubesched.framework.cycle_state import CycleState
from kubesched.framework.interface import ScorePlugin
from kubesched.framework.node_info import NodeInfo
from kubesched.framework.runtime.framework import Framework
from kubesched.framework.runtime.registry import Registry
from kubesched.framework.status import Code, Status
from kubesched.framework.types import PodInfo, new_pod_info
from kubesched.metrics import SchedulerMetrics
from kubesched_testing.cluster import Harness, new_test_cluster
from kubesched_testing.wrappers import make_node, make_pod

LIST_SPREAD = {"name": "PodTopologySpread", "args": {"defaultingType": "List"}}


def _config(*plugin_config: dict[str, Any], **profile: Any) -> dict[str, Any]:
    return {
        "apiVersion": "kubescheduler.config.k8s.io/v1",
        "kind": "KubeSchedulerConfiguration",
        "profiles": [{"schedulerName": "default-scheduler", "pluginConfig": list(plugin_config), **profile}],
    }


def _fwk(config: dict[str, Any] | None = None, **kw: Any) -> Framework:
    return new_test_cluster(config=config if config is not None else _config(LIST_SPREAD), **kw).sched.profiles[
        "default-scheduler"
    ]


def _sign(plugin: str, pod: dict[str, Any], config: dict[str, Any] | None = None) -> tuple[list[Any], Code | None]:
    fragments, status = _fwk(config).plugins_map[plugin].sign_pod(new_pod_info(pod))  # type: ignore[attr-defined]
    return fragments, None if status is None else status.code


@pytest.mark.parametrize(
    ("images", "want"),
    [
        pytest.param([], [], id="no images"),
        pytest.param(["myimage"], ["myimage:latest"], id="one image"),
        pytest.param(["zmyimage", "myimage"], ["myimage:latest", "zmyimage:latest"], id="two images unsorted"),
    ],
)
def test_image_signature(images: list[str], want: list[str]) -> None:
    pod = make_pod("p").obj()
    pod["spec"]["containers"] = [{"name": f"c{i}", "image": im} for i, im in enumerate(images)]
    assert _sign("ImageLocality", pod) == ([(signers.IMAGE_NAMES, want)], None)


@pytest.mark.parametrize(
    ("ignore", "affinity", "want"),
    [
        pytest.param(False, False, ([(signers.LABELS, {"foo": "bar"})], None), id="no affinity, default settings"),
        pytest.param(True, False, ([], None), id="no affinity, ignore setting set"),
        pytest.param(False, True, ([], Code.UNSCHEDULABLE), id="affinity set"),
    ],
)
def test_pod_affinity_signature(ignore: bool, affinity: bool, want: tuple[list[Any], Code | None]) -> None:
    pod = make_pod("p").label("foo", "bar")
    if affinity:
        pod = pod.pod_affinity_exists("foo", "kubernetes.io/hostname")
    args = {"name": "InterPodAffinity", "args": {"ignorePreferredTermsOfExistingPods": ignore}}
    assert _sign("InterPodAffinity", pod.obj(), _config(LIST_SPREAD, args)) == want


@pytest.mark.parametrize(
    ("constraints", "spread_args", "signable"),
    [
        pytest.param(True, {"defaultingType": "System"}, False, id="pod w constraints"),
        pytest.param(False, {"defaultingType": "System"}, False, id="pod no constraints but default"),
        pytest.param(
            False, {"defaultingType": "List", "defaultConstraints": []}, True, id="pod no constraints no default"
        ),
        pytest.param(
            False,
            {
                "defaultingType": "List",
                "defaultConstraints": [
                    {"maxSkew": 1, "topologyKey": "zone", "whenUnsatisfiable": "ScheduleAnyway"},
                ],
            },
            False,
            id="kubesched: listed default constraints",
        ),
    ],
)
def test_pod_topology_spread_signature(constraints: bool, spread_args: dict[str, Any], signable: bool) -> None:
    pod = make_pod("p").label("app", "a")
    if constraints:
        pod = pod.spread_constraint(1, "test", "DoNotSchedule", {"app": "a"})
    got = _sign("PodTopologySpread", pod.obj(), _config({"name": "PodTopologySpread", "args": spread_args}))
    assert got == (([], None) if signable else ([], Code.UNSCHEDULABLE))


DRA_CLASS = {
    "apiVersion": "resource.k8s.io/v1",
    "kind": "DeviceClass",
    "metadata": {"name": "gpu"},
    "spec": {"extendedResourceName": "example.com/gpu"},
}


@pytest.mark.parametrize("plugin", ["NodeResourcesFit", "NodeResourcesBalancedAllocation"])
@pytest.mark.parametrize(
    ("requests", "dra_class", "want"),
    [
        pytest.param({"cpu": "1", "memory": "2000"}, False, {"cpu": 1000, "memory": 2000}, id="cpu and memory"),
        pytest.param({}, False, {}, id="best-effort pod with no requests"),
        pytest.param({"cpu": "1", "example.com/gpu": "1"}, True, None, id="DRA extended resource enabled"),
        pytest.param(
            {"cpu": "1", "example.com/gpu": "1"},
            False,
            {"cpu": 1000, "example.com/gpu": 1},
            id="no class serves the extended resource",
        ),
    ],
)
def test_resources_signature(plugin: str, requests: dict[str, str], dra_class: bool, want: Any) -> None:
    tc = new_test_cluster(config=_config(LIST_SPREAD))
    if dra_class:
        tc.create(DRA_CLASS)
    pl = tc.sched.profiles["default-scheduler"].plugins_map[plugin]
    fragments, status = pl.sign_pod(new_pod_info(make_pod("p").req(requests).obj()))  # type: ignore[attr-defined]
    if want is None:
        assert fragments == [] and status is not None and status.code == Code.UNSCHEDULABLE
    else:
        assert status is None and fragments == [(signers.RESOURCES, {k: v for k, v in want.items()})]


def test_multiple_containers_sign_their_sum() -> None:
    pod = make_pod("p").req({"cpu": "500m", "memory": "1000"}).obj()
    pod["spec"]["containers"].append({"name": "c2", "image": "x", "resources": {"requests": {"cpu": "1500m"}}})
    assert _sign("NodeResourcesFit", pod) == ([(signers.RESOURCES, {"cpu": 2000, "memory": 1000})], None)


def _info(pod: dict[str, Any]) -> PodInfo:
    return new_pod_info(pod)


def test_pods_alike_sign_alike_and_differences_that_matter_do_not() -> None:
    fwk = _fwk()
    base = make_pod("a").label("app", "web").req({"cpu": "1"}).toleration("k", "v", "NoSchedule")
    twin = make_pod("b").label("app", "web").req({"cpu": "1"}).toleration("k", "v", "NoSchedule")
    a, b = fwk.sign_pod(_info(base.obj())), fwk.sign_pod(_info(twin.obj()))
    assert a is not None and a == b
    volumes = make_pod("c").label("app", "web").req({"cpu": "1"}).toleration("k", "v", "NoSchedule").obj()
    volumes["spec"]["volumes"] = [
        {"name": "cfg", "configMap": {"name": "x"}},
        {"name": "s", "secret": {"secretName": "y"}},
    ]
    assert fwk.sign_pod(_info(volumes)) == a  # ConfigMaps and Secrets never change where a pod fits
    for other in (
        make_pod("d").label("app", "db").req({"cpu": "1"}).toleration("k", "v", "NoSchedule"),
        make_pod("e").label("app", "web").req({"cpu": "2"}).toleration("k", "v", "NoSchedule"),
        make_pod("f").label("app", "web").req({"cpu": "1"}),
        make_pod("g").label("app", "web").req({"cpu": "1"}).toleration("k", "v", "NoSchedule").host_port(80),
        make_pod("h")
        .label("app", "web")
        .req({"cpu": "1"})
        .toleration("k", "v", "NoSchedule")
        .node_selector({"d": "s"}),
        make_pod("i").label("app", "web").req({"cpu": "1"}).toleration("k", "v", "NoSchedule").container("img:2"),
        make_pod("j").label("app", "web").req({"cpu": "1"}).toleration("k", "v", "NoSchedule").pvc("claim"),
    ):
        sig = fwk.sign_pod(_info(other.obj()))
        assert sig is not None and sig != a, other.obj()["metadata"]["name"]
    alt = make_pod("k").label("app", "web").req({"cpu": "1"}).toleration("k", "v", "NoSchedule").obj()
    alt["spec"]["schedulerName"] = "other"
    assert fwk.sign_pod(_info(alt)) != a


def test_signatures_off_by_default_spreading_by_gate_and_by_a_plugin_that_cannot_sign() -> None:
    pod = _info(make_pod("p").req({"cpu": "1"}).obj())
    assert _fwk(_config()).sign_pod(pod) is None  # System default spreading: never signable
    assert _fwk().sign_pod(pod) is not None
    off = _fwk(feature_gates={"OpportunisticBatching": False})
    assert off.batch is None and off.sign_pod(pod) is None
    registry = Registry()
    registry.register(_Unsigned.NAME, lambda args, handle: _Unsigned())
    custom = _config(LIST_SPREAD, plugins={"score": {"enabled": [{"name": _Unsigned.NAME, "weight": 1}]}})
    fwk = _fwk(custom, registry=registry)
    assert fwk.unsigned_plugins == {_Unsigned.NAME} and fwk.sign_pod(pod) is None
    assert _fwk().sign_pod(_info(make_pod("p").pod_affinity_exists("a", "kubernetes.io/hostname").obj())) is None


class _Unsigned(ScorePlugin):
    """An out-of-tree scorer that does not sign pods: batching is off for its profile."""

    NAME = "Unsigned"

    def score(self, state: CycleState, pod: PodInfo, node_info: NodeInfo) -> tuple[int, Status | None]:
        return 0, None


def _one_per_node(nodes: int, pods: int, **kw: Any) -> Harness:
    """Nodes that each hold one of the pods (a host port), so every pod after the first may take a hint."""
    node_objs = [
        make_node(f"n{i}").capacity({"cpu": str(2 + i % 3), "memory": "8Gi", "pods": "110"}).obj() for i in range(nodes)
    ]
    pod_objs = [make_pod(f"p{i}").req({"cpu": "500m"}).host_port(8080).obj() for i in range(pods)]
    return new_test_cluster(node_objs, pod_objs, config=kw.pop("config", _config(LIST_SPREAD)), **kw)


def _placements(tc: Harness) -> dict[str, str]:
    return {e.pod: e.node for e in tc.recorder.events if e.type == "Scheduled" and e.node}


def test_identical_pods_take_hints_and_land_where_they_would_without_them() -> None:
    on = _one_per_node(6, 6)
    on.sched.run()
    batch = on.sched.profiles["default-scheduler"].batch
    assert batch is not None and batch.batched_pods == 5  # all but the first: each node holds one
    off = _one_per_node(6, 6, feature_gates={"OpportunisticBatching": False})
    off.sched.run()
    assert off.sched.profiles["default-scheduler"].batch is None
    on_nodes, off_nodes = _placements(on), _placements(off)
    assert len(on_nodes) == 6 and set(on_nodes.values()) == set(off_nodes.values())
    # The hinted pods were not scored: the record shows the one node they were filtered on.
    hinted = [o for o in on.recorder.outcomes if o.pod.name != "p0"]
    assert all(not o.record.final_score and len(o.record.filter) == 1 for o in hinted if o.record is not None)


def test_the_default_configuration_never_batches() -> None:
    tc = _one_per_node(4, 4, config=_config())
    tc.sched.run()
    batch = tc.sched.profiles["default-scheduler"].batch
    assert batch is not None and batch.batched_pods == 0
    # Three pods had others scored beside their node; the last had one node left, an empty list.
    assert batch.stats == {"no_hint": 4, "flushed:pod_not_batchable": 3, "flushed:empty_list": 1}


def test_two_profiles_interleaved_never_reuse_each_others_cache() -> None:
    cfg = _config(LIST_SPREAD)
    cfg["profiles"].append({"schedulerName": "other", "pluginConfig": [LIST_SPREAD]})
    nodes = [make_node(f"n{i}").capacity({"cpu": "4", "pods": "110"}).obj() for i in range(6)]
    pods = []
    for i in range(6):
        p = make_pod(f"p{i}").req({"cpu": "500m"}).host_port(8080).obj()
        if i % 2:
            p["spec"]["schedulerName"] = "other"
        pods.append(p)
    tc = new_test_cluster(nodes, pods, config=cfg)
    tc.sched.run()
    for name in ("default-scheduler", "other"):
        batch = tc.sched.profiles[name].batch
        assert batch is not None and batch.batched_pods == 0
        assert batch.stats.get("flushed:pod_skipped", 0) >= 1


def test_metrics_have_upstreams_names_and_labels() -> None:
    metrics = SchedulerMetrics()
    tc = _one_per_node(3, 3, metrics=metrics)
    tc.sched.run()
    text = generate_latest(metrics.registry).decode()
    assert 'scheduler_batch_attempts_total{profile="default-scheduler",result="hint_used"} 2.0' in text
    assert 'scheduler_batch_attempts_total{profile="default-scheduler",result="no_hint"} 1.0' in text
    assert 'scheduler_get_node_hint_duration_seconds_count{hinted="hint",profile="default-scheduler"} 2.0' in text
    assert 'scheduler_store_schedule_results_duration_seconds_count{profile="default-scheduler"} 3.0' in text
    sign = 'extension_point="Sign",profile="default-scheduler",status="Success"'
    assert f"scheduler_framework_extension_point_duration_seconds_count{{{sign}}} 3.0" in text
    assert (
        'scheduler_plugin_execution_duration_seconds_count{extension_point="Sign",plugin="NodeResourcesFit",'
        'status="Success"} 3.0' in text
    )
    tc = _one_per_node(3, 2, metrics=(m2 := SchedulerMetrics()), config=_config())
    tc.sched.run()
    assert 'scheduler_batch_cache_flushed_total{profile="default-scheduler",reason="pod_not_batchable"} 2.0' in (
        generate_latest(m2.registry).decode()
    )


# The twin: batching on lands every pod where a full cycle ranks best.

_STRATEGIES = ("LeastAllocated", "MostAllocated", "RequestedToCapacityRatio")


@st.composite
def _clusters(draw: st.DrawFn) -> tuple[list[dict[str, Any]], list[dict[str, Any]], dict[str, Any]]:
    n = draw(st.integers(2, 7))
    nodes = []
    for i in range(n):
        w = make_node(f"n{i}").capacity(
            {
                "cpu": str(draw(st.sampled_from((1, 2, 4, 8)))),
                "memory": f"{draw(st.sampled_from((2, 4, 8)))}Gi",
                "pods": "110",
            }
        )
        if draw(st.booleans()):
            w = w.images({"registry.example/web:1": draw(st.sampled_from((50, 400, 900))) * 1024**2})
        nodes.append(w.obj())
    pods = []
    runs = draw(
        st.lists(
            st.tuples(st.sampled_from(("100m", "500m", "1", "3")), st.booleans(), st.integers(1, 5)),
            min_size=1,
            max_size=3,
        )
    )
    k = 0
    for cpu, port, copies in runs:
        for _ in range(copies):
            pw = make_pod(f"p{k:02d}").req({"cpu": cpu, "memory": "256Mi"}).container("registry.example/web:1")
            if port:
                pw = pw.host_port(8080)
            pods.append(pw.obj())
            k += 1
    strategy: dict[str, Any] = {"type": draw(st.sampled_from(_STRATEGIES))}
    if strategy["type"] == "RequestedToCapacityRatio":
        strategy["requestedToCapacityRatio"] = {
            "shape": [
                {"utilization": 0, "score": draw(st.integers(0, 10))},
                {"utilization": 100, "score": draw(st.integers(0, 10))},
            ]
        }
    config = _config(LIST_SPREAD, {"name": "NodeResourcesFit", "args": {"scoringStrategy": strategy}})
    return nodes, pods, config


def _top_set(
    nodes: list[dict[str, Any]], bound: list[dict[str, Any]], pod: dict[str, Any], config: dict[str, Any]
) -> set[str]:
    """The nodes a full cycle (batching off) ranks best for `pod`, with `bound` already placed."""
    tc = new_test_cluster(nodes, [*bound, pod], config=config, feature_gates={"OpportunisticBatching": False})
    tc.sched.run()
    outcome = tc.recorder.outcomes[-1]
    assert outcome.record is not None
    totals = {node: sum(p.values()) for node, p in outcome.record.final_score.items()}
    if not totals:  # a single feasible node is taken without scoring
        return {e.node for e in tc.recorder.events if e.type == "Scheduled" and e.node}
    best = max(totals.values())
    return {node for node, t in totals.items() if t == best}


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(_clusters())
def test_batching_on_places_every_pod_where_a_full_cycle_ranks_best(case: Any) -> None:
    nodes, pods, config = case
    tc = new_test_cluster(nodes, pods, config=config)
    tc.sched.run()
    placed = _placements(tc)
    off = new_test_cluster(nodes, pods, config=config, feature_gates={"OpportunisticBatching": False})
    off.sched.run()
    assert set(placed) == set(_placements(off))  # the same pods fit
    bound: list[dict[str, Any]] = []
    for pod in pods:
        key = f"default/{pod['metadata']['name']}"
        if key not in placed:
            continue
        assert placed[key] in _top_set(nodes, bound, pod, config), key
        bound.append({**pod, "spec": {**pod["spec"], "nodeName": placed[key]}})


def test_the_python_api_takes_feature_gates() -> None:
    """`kubesched.simulate(..., feature_gates=...)`: hinted pods carry no scores; off, every pod is scored."""
    from kubesched import simulate
    from kubesched.simulator.api import InputError

    nodes = [make_node(f"n{i}").capacity({"cpu": "4", "memory": "8Gi", "pods": "110"}).obj() for i in range(3)]
    pods = [make_pod(f"p{i}").req({"cpu": "500m"}).host_port(8080).obj() for i in range(3)]
    on = simulate(nodes, pods, config=_config(LIST_SPREAD))
    off = simulate(nodes, pods, config=_config(LIST_SPREAD), feature_gates={"OpportunisticBatching": False})
    also_off = simulate(nodes, pods, config=_config(LIST_SPREAD), feature_gates="OpportunisticBatching=false")

    def scored(sim: Any) -> list[bool]:
        return [bool(p.plugins and p.plugins.final_score) for p in sim.pods]

    assert scored(on) == [True, False, False]
    assert scored(off) == scored(also_off) == [True, True, False]  # the last pod had one node left
    with pytest.raises(InputError, match="feature_gates: unrecognized feature gate: Nope"):
        simulate(nodes, pods, kubernetes_version="1.35", feature_gates={"Nope": True})  # v1.36 only warns


@pytest.mark.parametrize("command", ["simulate", "run"])
@pytest.mark.parametrize(
    ("gates", "message"),
    [
        ("OpportunisticBatching", "--feature-gates: missing bool value for OpportunisticBatching"),
        ("OpportunisticBatching=maybe", "--feature-gates: invalid value of OpportunisticBatching=maybe"),
    ],
)
def test_bad_feature_gates_are_one_line_errors_with_status_2(
    command: str, gates: str, message: str, tmp_path: Any, capsys: pytest.CaptureFixture[str]
) -> None:
    from kubesched.cli import main

    manifest = tmp_path / "m.yaml"
    manifest.write_text("")
    args = [str(manifest), "-q"] if command == "simulate" else ["--kubeconfig", str(tmp_path / "none")]
    assert main([command, *args, "--feature-gates", gates]) == 2
    err = capsys.readouterr().err
    assert message in err and len(err.strip().splitlines()) == 1, err
