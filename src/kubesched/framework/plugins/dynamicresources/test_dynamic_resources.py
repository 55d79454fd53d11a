"""DynamicResources against upstream's TestPlugin table (dynamicresources_test.go, v1.36), with v1.36's default gates.

Each case runs the extension points as upstream's test does: PreEnqueue, PreFilter,
Filter on every node, then PostFilter when no node fits, or Score, Reserve and PreBind
(or Unreserve) on the chosen node. Cases that need a gate off that v1.36 has on
(DeviceTaints, PrioritizedList, AdminAccess) or an alpha gate on (PodGroup claims,
node-allocatable resources) are not ported; extended resources backed by DRA are not
built yet. Upstream's names are kept.
"""

from __future__ import annotations

import copy
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pytest

from kubesched.clock import VirtualClock
from kubesched.config.defaults import default_args
from kubesched.config.types import DynamicResourcesArgs
from kubesched.framework.cycle_state import CycleState
from kubesched.framework.interface import BindingWait, Handle, NodeScoreList, QueueingHint
from kubesched.framework.plugins.dynamicresources import dynamic_resources as dr
from kubesched.framework.plugins.dynamicresources.dra_manager import DRAManager
from kubesched.framework.status import Code, Status
from kubesched.framework.types import NodeToStatus, PodInfo, new_pod_info
from kubesched.release import release
from kubesched_testing.cluster import stored
from kubesched_testing.framework import build_snapshot, lister_with
from kubesched_testing.wrappers import make_node, make_pod

NODE, NODE2, NODE3 = "worker", "worker-2", "worker-3"
DRIVER = "some-driver"
POD, POD_UID = "my-pod", "1234"
RESOURCE = "my-resource"
CLAIM = f"{POD}-{RESOURCE}"
CLAIM2 = f"{POD}-{RESOURCE}-2"
CLASS = "my-resource-class"
NS = "default"
ATTR = "healthy"
UU, UNSCHED, ERROR = Code.UNSCHEDULABLE_AND_UNRESOLVABLE, Code.UNSCHEDULABLE, Code.ERROR
FINALIZER = "resource.kubernetes.io/delete-protection"
Obj = dict[str, Any]


# Objects, as upstream's fixtures.


def node(name: str) -> Obj:
    return make_node(name).label("kubernetes.io/hostname", name).obj()


def device(name: str, attributes: Obj | None = None, taints: list[Obj] | None = None) -> Obj:
    d: Obj = {"name": name}
    if attributes:
        d["attributes"] = attributes
    if taints:
        d["taints"] = taints
    return d


def resource_slice(node_name: str, *devices: Obj, driver: str = DRIVER) -> Obj:
    return {
        "apiVersion": "resource.k8s.io/v1",
        "kind": "ResourceSlice",
        "metadata": {"name": f"{node_name}-{driver}"},
        "spec": {
            "driver": driver,
            "nodeName": node_name,
            "pool": {"name": node_name, "resourceSliceCount": 1},
            "devices": list(devices),
        },
    }


WORKER_SLICE = resource_slice(NODE, device("instance-1"))
WORKER2_SLICE = resource_slice(NODE2, device("instance-1", {ATTR: {"bool": True}}))
WORKER3_SLICE = resource_slice(NODE3, device("instance-1", {ATTR: {"bool": True}}))
LARGE_WORKER_SLICE = resource_slice(NODE, *(device(f"instance-{i}") for i in range(1, 5)))
BROKEN_CEL = f'device.attributes["{DRIVER}"].{ATTR}'


def device_class(name: str = CLASS, selectors: list[Obj] | None = None) -> Obj:
    spec: Obj = {"selectors": selectors} if selectors else {}
    return {"apiVersion": "resource.k8s.io/v1", "kind": "DeviceClass", "metadata": {"name": name}, "spec": spec}


def pod_with_claim_name(*claims: tuple[str, str]) -> Obj:
    w = make_pod(POD, NS).uid(POD_UID).obj()
    w["spec"]["resourceClaims"] = [{"name": entry, "resourceClaimName": claim} for entry, claim in claims]
    return w


POD_WITH_CLAIM_NAME = pod_with_claim_name((RESOURCE, CLAIM))
POD_WITH_TWO_CLAIM_NAMES = pod_with_claim_name((RESOURCE, CLAIM), (f"{RESOURCE}-2", CLAIM2))


def pod_with_claim_template(in_status: bool = False) -> Obj:
    w = make_pod(POD, NS).uid(POD_UID).obj()
    w["spec"]["resourceClaims"] = [{"name": RESOURCE, "resourceClaimTemplateName": CLAIM}]
    if in_status:
        w["status"] = {"resourceClaimStatuses": [{"name": RESOURCE, "resourceClaimName": CLAIM}]}
    return w


def exact(name: str, cls: str = CLASS, count: int = 1, selectors: list[Obj] | None = None) -> Obj:
    out: Obj = {"deviceClassName": cls, "allocationMode": "ExactCount", "count": count}
    if selectors:
        out["selectors"] = selectors
    return {"name": name, "exactly": out}


def sub_request(name: str, count: int = 1, selector: str | None = None, cls: str = CLASS) -> Obj:
    out: Obj = {"name": name, "deviceClassName": cls, "allocationMode": "ExactCount", "count": count}
    if selector is not None:
        out["selectors"] = [{"cel": {"expression": selector}}]
    return out


def first_available(name: str, *subs: Obj) -> Obj:
    return {"name": name, "firstAvailable": list(subs)}


def claim(name: str = CLAIM, *requests: Obj, owner: bool = True) -> Obj:
    meta: Obj = {"name": name, "namespace": NS, "uid": f"uid-{name}"}
    if owner:
        meta["ownerReferences"] = [{"apiVersion": "v1", "kind": "Pod", "name": POD, "uid": POD_UID, "controller": True}]
    return {
        "apiVersion": "resource.k8s.io/v1",
        "kind": "ResourceClaim",
        "metadata": meta,
        "spec": {"devices": {"requests": list(requests) or [exact("req-1")]}},
    }


def selector_on_node(name: str) -> Obj:
    return {"nodeSelectorTerms": [{"matchFields": [{"key": "metadata.name", "operator": "In", "values": [name]}]}]}


def allocation(*results: tuple[str, str], driver: str = DRIVER, pool: str = NODE) -> Obj:
    """An allocation of (request, device) pairs on the worker, as the allocator writes it."""
    return {
        "devices": {"results": [{"request": r, "driver": driver, "pool": pool, "device": d} for r, d in results]},
        "nodeSelector": selector_on_node(pool),
    }


def allocated(c: Obj, alloc: Obj | None = None) -> Obj:
    """st.FromResourceClaim(c).Allocation(alloc): the finalizer and the allocation."""
    out = copy.deepcopy(c)
    out["metadata"]["finalizers"] = [FINALIZER]
    out.setdefault("status", {})["allocation"] = copy.deepcopy(alloc if alloc is not None else ALLOCATION)
    return out


def reserved(c: Obj, pod_name: str = POD, uid: str = POD_UID) -> Obj:
    out = copy.deepcopy(c)
    out.setdefault("status", {})["reservedFor"] = [{"resource": "pods", "name": pod_name, "uid": uid}]
    return out


ALLOCATION = allocation(("req-1", "instance-1"))
PENDING_CLAIM = claim()
PENDING_CLAIM2 = claim(CLAIM2)
ALLOCATED_CLAIM = allocated(PENDING_CLAIM)
IN_USE_CLAIM = reserved(ALLOCATED_CLAIM)
OTHER_CLAIM = claim("not-my-claim", owner=False)
OTHER_ALLOCATED_CLAIM = allocated(OTHER_CLAIM)


def wrong_topology(c: Obj) -> Obj:
    sel = {"nodeSelectorTerms": [{"matchExpressions": [{"key": "no-such-label", "operator": "In", "values": ["x"]}]}]}
    return allocated(c, {"nodeSelector": sel, "devices": {}})


def good_topology(c: Obj) -> Obj:
    sel = {
        "nodeSelectorTerms": [
            {"matchExpressions": [{"key": "kubernetes.io/hostname", "operator": "In", "values": [NODE]}]}
        ]
    }
    return allocated(c, {"nodeSelector": sel, "devices": {}})


def break_cel_in_claim(c: Obj) -> Obj:
    out = copy.deepcopy(c)
    for r in out["spec"]["devices"]["requests"]:
        r["exactly"]["selectors"] = [{"cel": {"expression": BROKEN_CEL}}]
    return out


def admin_access(c: Obj) -> Obj:
    out = copy.deepcopy(c)
    for r in out["spec"]["devices"]["requests"]:
        r["exactly"]["adminAccess"] = True
    for r in ((out.get("status") or {}).get("allocation") or {}).get("devices", {}).get("results") or ():
        r["adminAccess"] = True
    return out


def taint_devices(s: Obj) -> Obj:
    out = copy.deepcopy(s)
    for d in out["spec"]["devices"]:
        d["taints"] = [{"key": "taint-key", "value": "taint-value", "effect": "NoSchedule"}]
    return out


def with_class(c: Obj, cls: str) -> Obj:
    out = copy.deepcopy(c)
    for r in out["spec"]["devices"]["requests"]:
        if r.get("firstAvailable"):
            for s in r["firstAvailable"]:
                s["deviceClassName"] = cls
        else:
            r["exactly"]["deviceClassName"] = cls
    return out


@dataclass
class GroupMembers:
    """The cache's view of PodGroups' members, as much of it as PostFilter reads: who is scheduled (a node)."""

    pods: list[PodInfo]
    assumed: dict[str, PodInfo] = field(default_factory=dict)  # none: PostFilter counts nodes only

    def get(self, namespace: str, name: str) -> GroupMembers | None:
        members = [p for p in self.pods if p.namespace == namespace and _group_of(p) == name]
        return GroupMembers(members) if members else None

    def all_count(self) -> int:
        return len(self.pods)

    def scheduled_count(self) -> int:
        return len(self.scheduled_pods())

    def scheduled_pods(self) -> list[PodInfo]:
        return [p for p in self.pods if p.node_name]

    def unscheduled_pods(self) -> list[PodInfo]:
        return [p for p in self.pods if not p.node_name]


def _group_of(p: PodInfo) -> str:
    return str(((p.obj.get("spec") or {}).get("schedulingGroup") or {}).get("podGroupName") or "")


# The run.


@dataclass
class Run:
    """What each point answered, and the claims as the cluster holds them at the end."""

    preenqueue: Status | None = None
    prefilter: Status | None = None
    filter: dict[str, Status | None] = field(default_factory=dict)
    scores: dict[str, int] = field(default_factory=dict)
    normalized: dict[str, int] = field(default_factory=dict)
    postfilter: Status | None = None
    reserve: Status | None = None
    in_flight_after_reserve: list[Obj] = field(default_factory=list)
    prebind: Status | None = None
    selected: str = ""
    claims: dict[str, Obj] = field(default_factory=dict)
    plugin: Any = None
    cluster: Any = None


def _stamped(c: Obj) -> Obj:
    """A claim allocated before the test, with the allocationTimestamp v1.36 writes (binding conditions are on).

    Upstream's table leaves it out, which its fake clientset allows; the API server, as the embedded
    cluster, refuses PreBind's later stamping of a set (immutable) allocation."""
    out = copy.deepcopy(c)
    alloc = (out.get("status") or {}).get("allocation")
    if alloc is not None:
        alloc.setdefault("allocationTimestamp", "2026-01-01T00:00:00Z")
    return out


def run(
    pod: Obj,
    claims: list[Obj] = (),  # type: ignore[assignment]
    classes: list[Obj] = (),  # type: ignore[assignment]
    objs: list[Obj] = (),  # type: ignore[assignment]
    nodes: list[Obj] | None = None,
    in_flight: list[Obj] = (),  # type: ignore[assignment]
    unreserve_before_prebind: bool = False,
    unreserve_after_prebind: bool = False,
    client: Any = None,  # wraps the cluster as the plugin's API client
    gates: str = "",  # v1.36's feature gates (DRAWorkloadResourceClaims needs GenericWorkload)
) -> Run:
    clock = VirtualClock()
    cluster = lister_with(clock=clock)
    nodes = nodes if nodes is not None else [node(NODE)]
    for o in (*classes, *objs, *nodes, *(_stamped(c) for c in claims)):
        cluster.create(copy.deepcopy(o))
    cluster.create(copy.deepcopy(pod))
    snapshot = build_snapshot(nodes)
    manager = DRAManager(cluster)
    groups = GroupMembers([new_pod_info(copy.deepcopy(o)) for o in (*objs, pod) if o.get("kind") == "Pod"])
    handle = Handle(
        lister=cluster,
        client=client(cluster) if client else cluster,
        snapshot=snapshot,
        clock=clock,
        dra_manager=manager,
        release=release("1.36", gates),
        pod_groups=groups,
    )
    args = default_args(dr.NAME, DynamicResourcesArgs())
    plugin = dr.new(args, handle)
    for c in in_flight:
        manager.claims.signal_pending_allocation(c["metadata"]["uid"], copy.deepcopy(c))
    info = new_pod_info(cluster.get("Pod", NS, pod["metadata"]["name"]) or pod)
    out = Run(plugin=plugin, cluster=cluster)
    out.preenqueue = plugin.pre_enqueue(info)
    if out.preenqueue is not None:
        return _finish(out, cluster)
    state = CycleState()
    _, out.prefilter = plugin.pre_filter(state, info, snapshot.node_info_list)
    feasible: list[str] = []
    if out.prefilter is None:
        for ni in snapshot.node_info_list:
            st = plugin.filter(state, info, ni)
            out.filter[ni.name] = st
            if st is not None and st.code == ERROR:
                return _finish(out, cluster)
            if st is None:
                feasible.append(ni.name)
    if out.prefilter is not None and out.prefilter.code == Code.SKIP:
        feasible = [ni.name for ni in snapshot.node_info_list]
    if not feasible:
        _, out.postfilter = plugin.post_filter(state, info, NodeToStatus())
        return _finish(out, cluster)
    if len(feasible) > 1:
        raw = [plugin.score(state, info, snapshot.node_info_map[n])[0] for n in feasible]
        out.scores = dict(zip(feasible, raw, strict=True))
        scores = NodeScoreList(feasible, np.array(raw, dtype=np.int64))
        plugin.normalize_score(state, info, scores)
        out.normalized = dict(zip(feasible, (int(x) for x in scores.scores), strict=True))
        best = max(range(len(feasible)), key=lambda i: (int(scores.scores[i]), -i))
        out.selected = feasible[best]
    else:
        out.selected = feasible[0]
    out.reserve = plugin.reserve(state, info, out.selected)
    out.in_flight_after_reserve = manager.claims.in_flight_claims()
    if out.reserve is not None or unreserve_before_prebind:
        plugin.unreserve(state, info, out.selected)
        return _finish(out, cluster)
    pre_flight = plugin.pre_bind_pre_flight(state, info, out.selected)
    if pre_flight is not None and pre_flight.code == Code.SKIP:
        return _finish(out, cluster)
    out.prebind = plugin.pre_bind(state, info, out.selected)
    if unreserve_after_prebind:
        plugin.unreserve(state, info, out.selected)
    return _finish(out, cluster)


def _finish(out: Run, cluster: Any) -> Run:
    out.claims = {c["metadata"]["name"]: c for c in cluster.list("ResourceClaim")}
    return out


def msg(st: Status | None) -> tuple[Code, str] | None:
    return None if st is None else (st.code, st.message())


def without_rv(c: Obj) -> Obj:
    """A claim as written, to compare with upstream's expectations: no resourceVersion, and the allocationTimestamp
    PreBind adds to every allocation it writes or reserves (binding conditions are on) checked and taken out."""
    out = in_flight(c)
    alloc = (out.get("status") or {}).get("allocation")
    if alloc is not None:
        assert alloc.pop("allocationTimestamp", None), "PreBind writes allocationTimestamp (binding conditions are on)"
    return out


def in_flight(c: Obj) -> Obj:
    """A claim as the scheduler holds or left it, without the store's resourceVersion."""
    out = copy.deepcopy(c)
    out["metadata"].pop("resourceVersion", None)
    return out


# Cases.


def test_empty() -> None:
    r = run(make_pod("foo", NS).obj())
    assert msg(r.prefilter) == (Code.SKIP, "")
    assert r.filter == {} and r.reserve is None and r.prebind is None


def test_empty_postfilter_and_preflight() -> None:
    plugin = dr.new(DynamicResourcesArgs(), Handle())
    state, pod = CycleState(), new_pod_info(make_pod("foo", NS).obj())
    assert msg(plugin.pre_filter(state, pod, [])[1]) == (Code.SKIP, "")
    assert msg(plugin.post_filter(state, pod, NodeToStatus())[1]) == (UNSCHED, "no new claims to deallocate")
    assert msg(plugin.pre_bind_pre_flight(state, pod, NODE)) == (Code.SKIP, "")
    assert msg(plugin.post_filter(CycleState(), pod, NodeToStatus())[1]) == (ERROR, "not found")


@pytest.mark.parametrize(
    "pod",
    [POD_WITH_CLAIM_NAME, pod_with_claim_template(in_status=True)],
    ids=["claim-reference", "claim-template"],
)
def test_allocated_claim_gets_reserved(pod: Obj) -> None:
    r = run(pod, claims=[ALLOCATED_CLAIM, OTHER_CLAIM])
    assert r.prefilter is None and r.filter == {NODE: None}
    assert r.prebind is None
    assert without_rv(r.claims[CLAIM]) == IN_USE_CLAIM
    assert without_rv(r.claims["not-my-claim"]) == OTHER_CLAIM
    # The written claim is what the assume cache holds.
    assert r.plugin.manager.claims.get(NS, CLAIM) is r.claims[CLAIM]


def test_missing_claim() -> None:
    r = run(pod_with_claim_template(), claims=[ALLOCATED_CLAIM, OTHER_CLAIM])
    assert msg(r.preenqueue) == (UU, 'pod "default/my-pod": ResourceClaim not created yet')


def test_claim_not_found() -> None:
    r = run(POD_WITH_CLAIM_NAME)
    assert msg(r.preenqueue) == (UU, 'could not find ResourceClaim "default/my-pod-my-resource"')


def test_deleted_claim() -> None:
    deleting = copy.deepcopy(ALLOCATED_CLAIM)
    deleting["metadata"]["deletionTimestamp"] = "2026-01-01T00:00:00Z"
    r = run(pod_with_claim_template(in_status=True), claims=[deleting])
    assert msg(r.preenqueue) == (UU, 'resourceclaim "my-pod-my-resource" is being deleted')


def test_wrong_claim() -> None:
    wrong = copy.deepcopy(ALLOCATED_CLAIM)
    wrong["metadata"]["ownerReferences"][0]["uid"] += "123"
    r = run(pod_with_claim_template(in_status=True), claims=[wrong])
    assert msg(r.preenqueue) == (
        UU,
        "ResourceClaim default/my-pod-my-resource was not created for Pod default/my-pod (Pod is not owner)",
    )


def test_no_resources() -> None:
    r = run(POD_WITH_CLAIM_NAME, claims=[PENDING_CLAIM], classes=[device_class()])
    assert {n: msg(s) for n, s in r.filter.items()} == {NODE: (UU, "cannot allocate all claims")}
    assert msg(r.postfilter) == (UNSCHED, "still not schedulable")


@pytest.mark.parametrize("has_finalizer", [False, True], ids=["with-resources", "with-resources-has-finalizer"])
def test_with_resources(has_finalizer: bool) -> None:
    pending = copy.deepcopy(PENDING_CLAIM)
    if has_finalizer:
        pending["metadata"]["finalizers"] = [FINALIZER]
    r = run(POD_WITH_CLAIM_NAME, claims=[pending], classes=[device_class()], objs=[WORKER_SLICE])
    assert r.filter == {NODE: None}
    assert r.reserve is None
    assert [in_flight(c) for c in r.in_flight_after_reserve] == [ALLOCATED_CLAIM]
    assert r.prebind is None
    assert without_rv(r.claims[CLAIM]) == IN_USE_CLAIM
    assert r.plugin.manager.claims.in_flight_claims() == []  # written: no longer in flight
    assert r.plugin.manager.claims.get(NS, CLAIM) is r.claims[CLAIM]


def test_skip_bind() -> None:
    """Another PreBind plugin failed first: Unreserve takes the allocation out of flight, nothing is written."""
    r = run(
        POD_WITH_CLAIM_NAME,
        claims=[PENDING_CLAIM],
        classes=[device_class()],
        objs=[WORKER_SLICE],
        unreserve_before_prebind=True,
    )
    assert [in_flight(c) for c in r.in_flight_after_reserve] == [ALLOCATED_CLAIM]
    assert r.plugin.manager.claims.in_flight_claims() == []
    assert without_rv(r.claims[CLAIM]) == PENDING_CLAIM


def test_exhausted_resources_in_informer_cache() -> None:
    r = run(
        POD_WITH_CLAIM_NAME,
        claims=[PENDING_CLAIM, OTHER_ALLOCATED_CLAIM],
        classes=[device_class()],
        objs=[WORKER_SLICE],
    )
    assert {n: msg(s) for n, s in r.filter.items()} == {NODE: (UU, "cannot allocate all claims")}
    assert msg(r.postfilter) == (UNSCHED, "still not schedulable")


def test_exhausted_resources_in_flight_claim() -> None:
    r = run(
        POD_WITH_CLAIM_NAME,
        claims=[PENDING_CLAIM, OTHER_CLAIM],
        in_flight=[OTHER_ALLOCATED_CLAIM],
        classes=[device_class()],
        objs=[WORKER_SLICE],
    )
    assert {n: msg(s) for n, s in r.filter.items()} == {NODE: (UU, "cannot allocate all claims")}
    assert msg(r.postfilter) == (UNSCHED, "still not schedulable")
    assert r.plugin.manager.claims.in_flight_claims() == [OTHER_ALLOCATED_CLAIM]


def test_other_resources_in_flight_claim() -> None:
    other_device = copy.deepcopy(OTHER_ALLOCATED_CLAIM)
    other_device["status"]["allocation"]["devices"]["results"][0]["device"] += "-other"
    r = run(
        POD_WITH_CLAIM_NAME,
        claims=[PENDING_CLAIM, OTHER_CLAIM],
        in_flight=[other_device],
        classes=[device_class()],
        objs=[WORKER_SLICE],
    )
    assert r.filter == {NODE: None}
    assert [in_flight(c) for c in r.in_flight_after_reserve] == [other_device, ALLOCATED_CLAIM]
    assert without_rv(r.claims[CLAIM]) == IN_USE_CLAIM
    assert r.plugin.manager.claims.in_flight_claims() == [other_device]


def test_tainted_device_enabled() -> None:
    r = run(POD_WITH_CLAIM_NAME, claims=[PENDING_CLAIM], classes=[device_class()], objs=[taint_devices(WORKER_SLICE)])
    assert {n: msg(s) for n, s in r.filter.items()} == {NODE: (UU, "cannot allocate all claims")}
    assert msg(r.postfilter) == (UNSCHED, "still not schedulable")


def test_request_admin_access() -> None:
    """Admin access may use a device another claim holds (DRAAdminAccess is GA)."""
    r = run(
        POD_WITH_CLAIM_NAME,
        claims=[admin_access(PENDING_CLAIM), OTHER_ALLOCATED_CLAIM],
        classes=[device_class()],
        objs=[WORKER_SLICE],
    )
    assert r.filter == {NODE: None} and r.prebind is None
    assert without_rv(r.claims[CLAIM]) == admin_access(IN_USE_CLAIM)


def test_structured_ignore_allocated_admin_access() -> None:
    r = run(
        POD_WITH_CLAIM_NAME,
        claims=[PENDING_CLAIM, admin_access(OTHER_ALLOCATED_CLAIM)],
        classes=[device_class()],
        objs=[WORKER_SLICE],
    )
    assert r.filter == {NODE: None} and r.prebind is None
    assert without_rv(r.claims[CLAIM]) == IN_USE_CLAIM


def test_claim_parameters_cel_runtime_error() -> None:
    r = run(
        POD_WITH_CLAIM_NAME, claims=[break_cel_in_claim(PENDING_CLAIM)], classes=[device_class()], objs=[WORKER_SLICE]
    )
    assert {n: msg(s) for n, s in r.filter.items()} == {
        NODE: (ERROR, "claim default/my-pod-my-resource: selector #0: CEL runtime error: no such key: healthy")
    }


def test_class_parameters_cel_runtime_error() -> None:
    broken = device_class(selectors=[{"cel": {"expression": BROKEN_CEL}}])
    r = run(POD_WITH_CLAIM_NAME, claims=[PENDING_CLAIM], classes=[broken], objs=[WORKER_SLICE])
    assert {n: msg(s) for n, s in r.filter.items()} == {
        NODE: (ERROR, "class my-resource-class: selector #0: CEL runtime error: no such key: healthy")
    }


def test_class_selector_too_deep_to_compile() -> None:
    """A stored selector nested deeper than cel-go parses (the API server refuses it on create, but an older server
    may have stored it): the pod gets the compile error, the scheduler keeps running."""
    deep = device_class(selectors=[{"cel": {"expression": "(" * 1000 + "true" + ")" * 1000}}])
    r = run(POD_WITH_CLAIM_NAME, claims=[PENDING_CLAIM], classes=[deep], objs=[WORKER_SLICE])
    assert {n: msg(s) for n, s in r.filter.items()} == {
        NODE: (
            ERROR,
            "class my-resource-class: selector #0: CEL compile error: compilation failed: ERROR: <input>:-1:0: "
            "expression recursion limit exceeded: 250",
        )
    }


def test_cel_runtime_error_for_one_of_two_nodes() -> None:
    """The error on the first node aborts the cycle, though the second node would do."""
    r = run(
        POD_WITH_CLAIM_NAME,
        claims=[break_cel_in_claim(PENDING_CLAIM)],
        classes=[device_class()],
        objs=[WORKER_SLICE, WORKER2_SLICE],
        nodes=[node(NODE), node(NODE2)],
    )
    assert {n: msg(s) for n, s in r.filter.items()} == {
        NODE: (ERROR, "claim default/my-pod-my-resource: selector #0: CEL runtime error: no such key: healthy")
    }
    assert r.reserve is None and r.selected == ""


def test_missing_class() -> None:
    r = run(POD_WITH_CLAIM_NAME, claims=[PENDING_CLAIM])
    assert msg(r.prefilter) == (UU, "request req-1: device class my-resource-class does not exist")
    assert msg(r.postfilter) == (UNSCHED, "no new claims to deallocate")


def test_claim_with_request_with_unknown_device_class() -> None:
    r = run(POD_WITH_CLAIM_NAME, claims=[with_class(claim(owner=False), "does-not-exist")])
    assert msg(r.prefilter) == (UU, "request req-1: device class does-not-exist does not exist")


def test_claim_with_prioritized_list_unknown_device_class() -> None:
    c = with_class(claim(CLAIM, first_available("req-1", sub_request("subreq-1"))), "does-not-exist")
    r = run(POD_WITH_CLAIM_NAME, claims=[c])
    assert msg(r.prefilter) == (UU, "request req-1/subreq-1: device class does-not-exist does not exist")


def test_claim_with_prioritized_list() -> None:
    pending = claim(CLAIM, first_available("req-1", sub_request("subreq-1")))
    r = run(POD_WITH_CLAIM_NAME, claims=[pending], classes=[device_class()], objs=[WORKER_SLICE])
    want = reserved(allocated(pending, allocation(("req-1/subreq-1", "instance-1"))))
    assert r.prebind is None and without_rv(r.claims[CLAIM]) == want


def test_wrong_topology_deallocates_in_postfilter() -> None:
    r = run(POD_WITH_CLAIM_NAME, claims=[wrong_topology(PENDING_CLAIM)])
    assert {n: msg(s) for n, s in r.filter.items()} == {NODE: (UU, "resourceclaim not available on the node")}
    assert msg(r.postfilter) == (UNSCHED, "deallocation of ResourceClaim completed")
    after = without_rv(r.claims[CLAIM])
    assert "allocation" not in after["status"] and "reservedFor" not in after["status"]
    assert after["metadata"]["finalizers"] == [FINALIZER]  # the resourceclaim controller removes it


def test_postfilter_keeps_a_claim_other_pods_use() -> None:
    in_use = reserved(wrong_topology(PENDING_CLAIM), "other-pod", "other-uid")
    r = run(POD_WITH_CLAIM_NAME, claims=[in_use])
    assert msg(r.postfilter) == (UNSCHED, "still not schedulable")
    assert in_flight(r.claims[CLAIM]) == _stamped(in_use)


def test_good_topology() -> None:
    r = run(POD_WITH_CLAIM_NAME, claims=[good_topology(PENDING_CLAIM)])
    assert r.filter == {NODE: None} and r.prebind is None
    want = reserved(good_topology(PENDING_CLAIM))
    got = without_rv(r.claims[CLAIM])
    assert got == want


def test_bind_failure_unreserves() -> None:
    """Bind failed after PreBind: Unreserve takes the pod out of reservedFor again."""
    r = run(POD_WITH_CLAIM_NAME, claims=[good_topology(PENDING_CLAIM)], unreserve_after_prebind=True)
    assert r.prebind is None
    got = without_rv(r.claims[CLAIM])
    assert "reservedFor" not in got["status"] and got["status"]["allocation"]["nodeSelector"]


def test_reserved_okay() -> None:
    r = run(POD_WITH_CLAIM_NAME, claims=[IN_USE_CLAIM])
    assert r.filter == {NODE: None} and r.prebind is None
    assert in_flight(r.claims[CLAIM]) == _stamped(IN_USE_CLAIM)  # nothing written: the pod is already there


def test_two_claims_one_allocated() -> None:
    """Upstream's claim order holds: the allocated claim keeps its allocation, the other gets a device."""
    r = run(
        POD_WITH_TWO_CLAIM_NAMES,
        claims=[allocated(PENDING_CLAIM, allocation(("req-1", "instance-1"))), PENDING_CLAIM2],
        classes=[device_class()],
        objs=[LARGE_WORKER_SLICE],
    )
    assert r.prebind is None
    assert r.claims[CLAIM2]["status"]["allocation"]["devices"]["results"] == [
        {"request": "req-1", "driver": DRIVER, "pool": NODE, "device": "instance-2"}
    ]
    assert [x["uid"] for x in r.claims[CLAIM]["status"]["reservedFor"]] == [POD_UID]


# Binding conditions.

BINDING = ["condition"]
FAILURE = ["failed"]


def fabric_slice() -> Obj:
    s = resource_slice(NODE, device("instance-1"))
    d = s["spec"]["devices"][0]
    d.update(bindsToNode=True, bindingConditions=BINDING, bindingFailureConditions=FAILURE)
    del s["spec"]["nodeName"]
    s["spec"]["nodeSelector"] = selector_on_node(NODE)
    return s


def with_device_status(c: Obj, condition: str, failed: str) -> Obj:
    out = copy.deepcopy(c)
    out["status"]["devices"] = [
        {
            "driver": DRIVER,
            "pool": NODE,
            "device": "instance-1",
            "conditions": [
                {"type": "condition", "status": condition, "reason": "R", "message": "m"},
                {"type": "failed", "status": failed, "reason": "Broken", "message": "device failed"},
            ],
        }
    ]
    return out


BINDING_ALLOCATION: Obj = {
    "devices": {
        "results": [
            {
                "request": "req-1",
                "driver": DRIVER,
                "pool": NODE,
                "device": "instance-1",
                "bindingConditions": BINDING,
                "bindingFailureConditions": FAILURE,
            }
        ]
    },
    "nodeSelector": selector_on_node(NODE),
    "allocationTimestamp": "2026-01-01T00:00:00Z",
}


def test_bind_claim_with_binding_conditions_not_met() -> None:
    """The device reports nothing yet: PreBind waits (a BindingWait the scheduler resumes), for bindingTimeout."""
    r = run(POD_WITH_CLAIM_NAME, claims=[PENDING_CLAIM], classes=[device_class()], objs=[fabric_slice()])
    wait = r.prebind
    assert isinstance(wait, BindingWait) and wait.is_wait()
    assert (wait.timeout, wait.poll) == (600.0, 5.0)
    assert msg(wait.check()) == (Code.WAIT, "")
    assert msg(wait.expired()) == (ERROR, "device binding timeout: context deadline exceeded")
    assert wait.wake("ResourceClaim", r.claims[CLAIM]) and not wait.wake("ResourceClaim", r.claims.get(CLAIM2, {}))
    assert not wait.wake("ResourceSlice", r.claims[CLAIM])
    results = r.claims[CLAIM]["status"]["allocation"]["devices"]["results"]
    assert results[0]["bindingConditions"] == BINDING and results[0]["bindingFailureConditions"] == FAILURE
    assert r.claims[CLAIM]["status"]["allocation"]["allocationTimestamp"] == "2026-01-01T00:00:00Z"


@pytest.mark.parametrize(
    ("condition", "failed", "expected"),
    [
        ("True", "False", None),
        ("False", "False", (Code.WAIT, "")),
        (
            "False",
            "True",
            (ERROR, 'device binding failed: claim=my-pod-my-resource, reason=Broken, message="device failed"'),
        ),
    ],
)
def test_binding_wait_checks_the_claim_as_the_informer_has_it(
    condition: str, failed: str, expected: tuple[Code, str] | None
) -> None:
    """A driver writes the device's conditions after PreBind began waiting: the next check reads them."""
    r = run(POD_WITH_CLAIM_NAME, claims=[PENDING_CLAIM], classes=[device_class()], objs=[fabric_slice()])
    wait = r.prebind
    assert isinstance(wait, BindingWait)
    r.cluster.update_status(with_device_status(r.cluster.get("ResourceClaim", NS, CLAIM), condition, failed))
    assert msg(wait.check()) == expected


def test_pre_bind_records_binding_conditions_pending() -> None:
    recorded: list[tuple[str, str, str, str]] = []

    def recording(cluster: Any) -> Any:
        class Recorder:
            def __getattr__(self, name: str) -> Any:
                return getattr(cluster, name)

            def record_event(self, pod: Any, kind: str, reason: str, action: str, note: str) -> None:
                recorded.append((kind, reason, action, note))

        return Recorder()

    run(POD_WITH_CLAIM_NAME, claims=[PENDING_CLAIM], classes=[device_class()], objs=[fabric_slice()], client=recording)
    assert recorded == [
        ("Normal", "BindingConditionsPending", "Scheduling", "waiting for binding conditions for device on node worker")
    ]


def test_bound_claim_with_succeeded_binding_conditions() -> None:
    bound = with_device_status(allocated(PENDING_CLAIM, BINDING_ALLOCATION), "True", "False")
    r = run(POD_WITH_CLAIM_NAME, claims=[bound], objs=[fabric_slice()])
    assert r.filter == {NODE: None} and r.prebind is None


def test_bound_claim_with_failed_binding() -> None:
    failed = with_device_status(allocated(PENDING_CLAIM, BINDING_ALLOCATION), "False", "True")
    r = run(POD_WITH_CLAIM_NAME, claims=[failed], objs=[fabric_slice()])
    assert {n: msg(s) for n, s in r.filter.items()} == {NODE: (UU, "resourceclaim not available on the node")}
    assert msg(r.postfilter) == (UNSCHED, "deallocation of ResourceClaim completed")
    assert "allocation" not in r.claims[CLAIM]["status"] and "devices" not in r.claims[CLAIM]["status"]


def test_bound_claim_with_timed_out_binding() -> None:
    """bindingTimeout (10m by default) after allocationTimestamp the claim is given up on."""
    waiting = allocated(PENDING_CLAIM, BINDING_ALLOCATION)
    clock = VirtualClock(601.0)
    cluster = lister_with(clock=clock)
    for o in (node(NODE), fabric_slice(), copy.deepcopy(waiting), POD_WITH_CLAIM_NAME):
        cluster.create(copy.deepcopy(o))
    plugin = dr.new(
        default_args(dr.NAME, DynamicResourcesArgs()),
        Handle(lister=cluster, client=cluster, dra_manager=DRAManager(cluster)),
    )
    assert plugin.is_claim_timed_out(stored(cluster, "ResourceClaim", NS, CLAIM))
    clock.now = 599.0
    assert not plugin.is_claim_timed_out(stored(cluster, "ResourceClaim", NS, CLAIM))


def test_binding_failure_message() -> None:
    failed = with_device_status(allocated(PENDING_CLAIM, BINDING_ALLOCATION), "False", "True")
    with pytest.raises(
        dr.BindingFailed,
        match=r'^device binding failed: claim=my-pod-my-resource, reason=Broken, message="device failed"$',
    ):
        dr.DynamicResources.is_claim_ready_for_binding(failed)


# Scores with firstAvailable.


def test_single_claim_prioritized_list_scoring() -> None:
    """subreq-1 wants a healthy device (the worker's), subreq-2 any: the first alternative scores 8, the next 7."""
    pending = claim(
        CLAIM, first_available("req-1", sub_request("subreq-1", selector=BROKEN_CEL), sub_request("subreq-2"))
    )
    r = run(
        POD_WITH_CLAIM_NAME,
        claims=[pending],
        classes=[device_class()],
        objs=[
            resource_slice(NODE, device("instance-1", {ATTR: {"bool": True}})),
            resource_slice(NODE2, device("instance-1", {ATTR: {"bool": False}})),
        ],
        nodes=[node(NODE), node(NODE2)],
    )
    assert r.scores == {NODE: 8, NODE2: 7}
    assert r.normalized == {NODE: 100, NODE2: 87}
    assert r.selected == NODE
    assert without_rv(r.claims[CLAIM]) == reserved(allocated(pending, allocation(("req-1/subreq-1", "instance-1"))))


def test_multiple_claims_prioritized_list_scoring() -> None:
    first = claim(CLAIM, first_available("req-1", sub_request("subreq-1")))
    second = claim(CLAIM2, first_available("req-1", *(sub_request(f"subreq-{i + 1}", count=4 - i) for i in range(4))))
    r = run(
        POD_WITH_TWO_CLAIM_NAMES,
        claims=[first, second],
        classes=[device_class()],
        objs=[
            LARGE_WORKER_SLICE,
            resource_slice(NODE2, device("instance-1"), device("instance-2")),
            resource_slice(NODE3, device("instance-1")),
        ],
        nodes=[node(NODE), node(NODE2), node(NODE3)],
    )
    assert msg(r.filter[NODE3]) == (UU, "cannot allocate all claims")
    assert r.scores == {NODE: 15, NODE2: 13}
    assert r.normalized == {NODE: 100, NODE2: 86}
    assert r.selected == NODE
    assert without_rv(r.claims[CLAIM]) == reserved(allocated(first, allocation(("req-1/subreq-1", "instance-1"))))
    want2 = allocation(*(("req-1/subreq-2", f"instance-{i}") for i in (2, 3, 4)))
    assert without_rv(r.claims[CLAIM2]) == reserved(allocated(second, want2))


def test_multiple_requests_prioritized_list_scoring() -> None:
    subs = (sub_request("subreq-1", count=2), sub_request("subreq-2"))
    pending = claim(CLAIM, first_available("req-1", *subs), first_available("req-2", *copy.deepcopy(subs)))
    r = run(
        POD_WITH_CLAIM_NAME,
        claims=[pending],
        classes=[device_class()],
        objs=[
            LARGE_WORKER_SLICE,
            resource_slice(NODE2, *(device(f"instance-{i}") for i in (1, 2, 3))),
            resource_slice(NODE3, device("instance-1"), device("instance-2")),
        ],
        nodes=[node(NODE), node(NODE2), node(NODE3)],
    )
    assert r.scores == {NODE: 16, NODE2: 15, NODE3: 14}
    assert r.normalized == {NODE: 100, NODE2: 93, NODE3: 87}
    want = allocation(
        ("req-1/subreq-1", "instance-1"),
        ("req-1/subreq-1", "instance-2"),
        ("req-2/subreq-1", "instance-3"),
        ("req-2/subreq-1", "instance-4"),
    )
    assert without_rv(r.claims[CLAIM]) == reserved(allocated(pending, want))


def test_compute_score_errors_when_allocations_are_missing() -> None:
    c = claim(CLAIM, first_available("req-1", sub_request("subreq-1")))
    with pytest.raises(ValueError, match="number of allocations 0 is smaller than number of claims needing allocation"):
        dr.compute_score([c], [])


@pytest.mark.parametrize(
    ("allocated_subs", "want"),
    [
        ([], 0),
        (["req-1/subreq-1"], 8),
        (["req-1/subreq-3"], 6),
        (["req-1/subreq-2", "req-2/subreq-1"], 7 + 8),
    ],
)
def test_compute_score(allocated_subs: list[str], want: int) -> None:
    c = claim(
        CLAIM,
        first_available("req-1", *(sub_request(f"subreq-{i}") for i in (1, 2, 3))),
        first_available("req-2", sub_request("subreq-1"), sub_request("subreq-2")),
    )
    alloc = {
        "devices": {"results": [{"request": r, "driver": DRIVER, "pool": NODE, "device": "d"} for r in allocated_subs]}
    }
    assert dr.compute_score([c], [alloc]) == want


# Queueing hints (TestIsSchedulableAfterClaimChange, TestIsSchedulableAfterPodChange).


def _plugin_with(*objs: Obj) -> Any:
    cluster = lister_with()
    for o in objs:
        cluster.create(copy.deepcopy(o))
    return dr.new(
        DynamicResourcesArgs(), Handle(lister=cluster, client=cluster, dra_manager=DRAManager(cluster))
    ), cluster


Q, SKIP = QueueingHint.QUEUE, QueueingHint.QUEUE_SKIP


def test_hint_after_claim_change() -> None:
    plugin, cluster = _plugin_with(PENDING_CLAIM, OTHER_ALLOCATED_CLAIM)
    hint = plugin.is_schedulable_after_claim_change
    template_pod = new_pod_info(pod_with_claim_template())
    named_pod = new_pod_info(POD_WITH_CLAIM_NAME)
    assert hint(template_pod, ALLOCATED_CLAIM, None) == SKIP  # skip-deletes
    with pytest.raises(TypeError):
        hint(template_pod, None, "not-a-claim")  # backoff-wrong-new-object
    wrong = copy.deepcopy(ALLOCATED_CLAIM)
    wrong["metadata"]["ownerReferences"][0]["uid"] += "123"
    assert hint(template_pod, None, wrong) == SKIP  # skip-wrong-claim
    unrelated = copy.deepcopy(ALLOCATED_CLAIM)
    unrelated["metadata"].update(name=CLAIM + "-foo", uid="uid-other")
    assert hint(named_pod, None, unrelated) == SKIP  # skip-unrelated-claim
    stored = cluster.get("ResourceClaim", NS, CLAIM)
    assert hint(named_pod, None, stored) == Q  # queue-on-add
    with pytest.raises(TypeError):
        hint(named_pod, "not-a-claim", stored)  # backoff-wrong-old-object
    finalized = copy.deepcopy(stored)
    finalized["metadata"]["finalizers"] = ["foo"]
    assert hint(named_pod, stored, finalized) == SKIP  # skip-adding-finalizer
    status_changed = copy.deepcopy(stored)
    status_changed["status"] = {"allocation": {}}
    assert hint(named_pod, stored, status_changed) == Q  # queue-on-status-change
    freed = copy.deepcopy(OTHER_ALLOCATED_CLAIM)
    del freed["status"]["allocation"]
    assert hint(named_pod, OTHER_ALLOCATED_CLAIM, freed) == Q  # claim-deallocate


def test_hint_after_pod_change() -> None:
    plugin, _ = _plugin_with(PENDING_CLAIM)
    hint = plugin.is_schedulable_after_pod_change
    in_status = new_pod_info(pod_with_claim_template(in_status=True))
    assert hint(new_pod_info(pod_with_claim_template()), None, in_status) == Q  # complete
    other = pod_with_claim_template()
    other["metadata"].update(name=POD + "2", uid=POD_UID + "2")
    assert hint(new_pod_info(other), None, in_status) == SKIP  # wrong-pod
    with pytest.raises(TypeError):
        hint(in_status, None, "not-a-pod")
    two = pod_with_claim_template()
    two["spec"]["resourceClaims"].append({"name": RESOURCE + "-2", "resourceClaimTemplateName": CLAIM})
    two["status"] = {"resourceClaimStatuses": [{"name": RESOURCE, "resourceClaimName": CLAIM}]}
    assert hint(new_pod_info(two), None, new_pod_info(two)) == SKIP  # incomplete
    empty_plugin, _ = _plugin_with()
    assert empty_plugin.is_schedulable_after_pod_change(in_status, None, in_status) == SKIP  # missing-claim


def test_events_registered() -> None:
    from kubesched.framework import events

    plugin = dr.new(DynamicResourcesArgs(), Handle())
    got = {(e.event.resource, e.event.action_type): e.queueing_hint_fn is not None for e in plugin.events_to_register()}
    assert got == {
        (events.NODE, events.ADD | events.UPDATE_NODE_LABEL | events.UPDATE_NODE_ALLOCATABLE): False,
        (events.RESOURCE_CLAIM, events.ADD | events.UPDATE): True,
        (events.POD, events.UPDATE_POD_GENERATED_RESOURCE_CLAIM): True,
        (events.DEVICE_CLASS, events.ADD | events.UPDATE): False,
        (events.RESOURCE_SLICE, events.ADD | events.UPDATE): False,
    }


# Extended resources backed by DRA (DRAExtendedResource, beta and on in v1.36).

GPU = "example.com/gpu"
GPU2 = "example.com/gpu2"
IMPLICIT = f"deviceclass.resource.kubernetes.io/{CLASS}"
EXT_CLASS = {**device_class(), "spec": {"extendedResourceName": GPU}}
EXT_CLASS2 = {**device_class(CLASS + "2"), "spec": {"extendedResourceName": GPU2}}


def ext_pod(*containers: dict[str, str]) -> Obj:
    w = make_pod(POD, NS).uid(POD_UID)
    for requests in containers:
        w.req(requests)
    return w.obj()


def node_with(name: str, **allocatable: str) -> Obj:
    return make_node(name).label("kubernetes.io/hostname", name).capacity(dict(allocatable)).obj()


def extended_claim(r: Run) -> Obj:
    [c] = [c for c in r.claims.values() if (c["metadata"].get("annotations") or {}).get(EXT_ANNOTATION) == "true"]
    return c


EXT_ANNOTATION = "resource.kubernetes.io/extended-resource-claim"


def ext_request(name: str, count: int = 1, cls: str = CLASS) -> Obj:
    return {"name": name, "exactly": {"deviceClassName": cls, "allocationMode": "ExactCount", "count": count}}


def test_extended_resource_name_with_node_resource() -> None:
    """A device plugin serves it here: every point passes and nothing is created."""
    r = run(ext_pod({GPU: "1"}), classes=[EXT_CLASS], nodes=[node_with(NODE, **{GPU: "1"})])
    assert r.prefilter is None and r.filter == {NODE: None} and r.reserve is None and r.prebind is None
    assert r.claims == {}
    assert r.in_flight_after_reserve == []


def test_non_dra_extended_resource_name_with_zero_allocatable() -> None:
    r = run(ext_pod({GPU: "1"}), classes=[device_class()], nodes=[node_with(NODE, **{GPU: "0"})], objs=[WORKER_SLICE])
    assert msg(r.prefilter) == (Code.SKIP, "")
    assert r.claims == {}


@pytest.mark.parametrize("allocatable", [{}, {GPU: "0"}], ids=["with-resources", "with-zero-allocatable"])
def test_extended_resource_name_with_resources(allocatable: dict[str, str]) -> None:
    r = run(ext_pod({GPU: "1"}), classes=[EXT_CLASS], nodes=[node_with(NODE, **allocatable)], objs=[WORKER_SLICE])
    assert r.filter == {NODE: None} and r.reserve is None and r.prebind is None
    [pending] = r.in_flight_after_reserve
    assert pending["metadata"]["name"] == "<extended-resources>"
    assert pending["spec"]["devices"]["requests"] == [ext_request("container-0-request-0")]
    created = extended_claim(r)
    assert created["metadata"]["name"].startswith("my-pod-extended-resources-")
    assert created["metadata"]["ownerReferences"] == [
        {"apiVersion": "v1", "kind": "Pod", "name": POD, "uid": POD_UID, "controller": True}
    ]
    assert created["metadata"]["finalizers"] == [FINALIZER]
    assert created["spec"]["devices"]["requests"] == [ext_request("container-0-request-0")]
    alloc = copy.deepcopy(created["status"]["allocation"])
    assert alloc.pop("allocationTimestamp")
    assert alloc == allocation(("container-0-request-0", "instance-1"))
    assert created["status"]["reservedFor"] == [{"resource": "pods", "name": POD, "uid": POD_UID}]
    status = r.cluster.get("Pod", NS, POD)["status"]["extendedResourceClaimStatus"]
    assert status == {
        "requestMappings": [{"containerName": "c0", "resourceName": GPU, "requestName": "container-0-request-0"}],
        "resourceClaimName": created["metadata"]["name"],
    }
    assert r.plugin.manager.claims.in_flight_claims() == []


def test_extended_resource_one_device_plugin_one_dra() -> None:
    """The node's device plugin serves example.com/gpu; only example.com/gpu2 goes to DRA."""
    r = run(
        ext_pod({GPU: "1", GPU2: "1"}),
        classes=[EXT_CLASS, EXT_CLASS2],
        nodes=[node_with(NODE, **{GPU: "1"})],
        objs=[WORKER_SLICE],
    )
    assert r.prebind is None
    created = extended_claim(r)
    assert created["spec"]["devices"]["requests"] == [ext_request("container-0-request-1", cls=CLASS + "2")]
    assert created["status"]["allocation"]["devices"]["results"][0]["request"] == "container-0-request-1"


@pytest.mark.parametrize(
    ("containers", "want_requests", "want_results"),
    [
        (
            [{IMPLICIT: "1", GPU: "2"}],
            [ext_request("container-0-request-0"), ext_request("container-0-request-1", 2)],
            [
                ("container-0-request-0", "instance-1"),
                ("container-0-request-1", "instance-2"),
                ("container-0-request-1", "instance-3"),
            ],
        ),
        (
            [{IMPLICIT: "1"}, {GPU: "2"}],
            [ext_request("container-0-request-0"), ext_request("container-1-request-0", 2)],
            [
                ("container-0-request-0", "instance-1"),
                ("container-1-request-0", "instance-2"),
                ("container-1-request-0", "instance-3"),
            ],
        ),
    ],
    ids=[
        "implicit-extended-resource-name-with-resources",
        "implicit-extended-resource-name-two-containers-with-resources",
    ],
)
def test_implicit_extended_resource_name(
    containers: list[dict[str, str]], want_requests: list[Obj], want_results: list[tuple[str, str]]
) -> None:
    r = run(ext_pod(*containers), classes=[EXT_CLASS], objs=[LARGE_WORKER_SLICE])
    assert r.prebind is None
    created = extended_claim(r)
    assert created["spec"]["devices"]["requests"] == want_requests
    alloc = copy.deepcopy(created["status"]["allocation"])
    alloc.pop("allocationTimestamp")
    assert alloc == allocation(*want_results)


def test_extended_resource_name_no_resource() -> None:
    r = run(ext_pod({GPU: "1"}), classes=[EXT_CLASS])
    assert {n: msg(st) for n, st in r.filter.items()} == {NODE: (UU, "cannot allocate all claims")}
    assert msg(r.postfilter) == (UNSCHED, "still not schedulable")
    assert r.claims == {}


def test_extended_resource_name_not_served_at_all() -> None:
    """Neither a device plugin nor DRA on this node (the node does not list it): it does not fit."""
    r = run(ext_pod({GPU: "1", "example.com/other": "1"}), classes=[EXT_CLASS], objs=[WORKER_SLICE])
    assert {n: msg(st) for n, st in r.filter.items()} == {NODE: (UU, "cannot fit resource")}


def stale_extended_claim(node_name: str) -> Obj:
    c = claim("my-pod-extended-resources-0", ext_request("container-0-request-0"))
    c["metadata"]["annotations"] = {EXT_ANNOTATION: "true"}
    return allocated(c, allocation(("container-0-request-0", "instance-1"), pool=node_name))


@pytest.mark.parametrize("node_name", [NODE, NODE2], ids=["has-claim", "delete-claim"])
def test_extended_resource_claim_from_an_earlier_cycle_is_deleted(node_name: str) -> None:
    r = run(ext_pod({GPU: "1"}), claims=[stale_extended_claim(node_name)], classes=[EXT_CLASS], objs=[WORKER_SLICE])
    assert {n: msg(st) for n, st in r.filter.items()} == {NODE: (UU, "cannot schedule extended resource claim")}
    assert msg(r.postfilter) == (UNSCHED, "deletion of ResourceClaim completed")
    assert r.claims == {}


def test_extended_resource_name_bind_failure() -> None:
    """Bind failed after PreBind created the claim: Unreserve deletes it."""
    r = run(ext_pod({GPU: "1"}), classes=[EXT_CLASS], objs=[WORKER_SLICE], unreserve_after_prebind=True)
    assert r.prebind is None
    assert r.claims == {}


def test_extended_resource_name_skip_bind() -> None:
    r = run(ext_pod({GPU: "1"}), classes=[EXT_CLASS], objs=[WORKER_SLICE], unreserve_before_prebind=True)
    assert len(r.in_flight_after_reserve) == 1
    assert r.plugin.manager.claims.in_flight_claims() == []
    assert r.claims == {}


class FailingCreate:
    """The cluster as API client, refusing to create claims."""

    def __init__(self, cluster: Any) -> None:
        self.cluster = cluster

    def __getattr__(self, name: str) -> Any:
        return getattr(self.cluster, name)

    def create(self, obj: Obj) -> Obj:
        raise RuntimeError("claim creation errors")


def test_extended_resource_name_claim_creation_failure() -> None:
    r = run(
        ext_pod({GPU: "1"}),
        classes=[EXT_CLASS],
        objs=[WORKER_SLICE],
        client=FailingCreate,
        unreserve_after_prebind=True,
    )
    assert msg(r.prebind) == (
        ERROR,
        "create claim for extended resources default/: claim creation errors",  # its name is cleared first
    )
    assert r.claims == {}
    assert r.plugin.manager.claims.in_flight_claims() == []


# Claims shared by a PodGroup (DRAWorkloadResourceClaims): upstream's podgroup-* cases.

GROUP, GROUP_UID = "my-podgroup", "podgroup-uid"
WORKLOAD_GATES = "GenericWorkload=true,DRAWorkloadResourceClaims=true"
GROUP_RESERVATION = {"apiGroup": "scheduling.k8s.io", "resource": "podgroups", "name": GROUP, "uid": GROUP_UID}


def grouped(p: Obj) -> Obj:
    out = copy.deepcopy(p)
    out["spec"]["schedulingGroup"] = {"podGroupName": GROUP}
    return out


def pod_group(*entries: Obj) -> Obj:
    return {
        "apiVersion": "scheduling.k8s.io/v1alpha2",
        "kind": "PodGroup",
        "metadata": {"name": GROUP, "namespace": NS, "uid": GROUP_UID},
        "spec": {"schedulingPolicy": {"gang": {"minCount": 1}}, "resourceClaims": list(entries)},
    }


GROUP_CLAIM_NAME = {"name": RESOURCE, "resourceClaimName": CLAIM}
ALLOCATED_GROUP_CLAIM = allocated(claim(owner=False))


def reserved_for_group(c: Obj) -> Obj:
    out = copy.deepcopy(c)
    out.setdefault("status", {})["reservedFor"] = [dict(GROUP_RESERVATION)]
    return out


@pytest.mark.parametrize(
    ("gates", "want"),
    [
        ("", [{"resource": "pods", "name": POD, "uid": POD_UID}]),  # podgroup-claim-reference-feature-disabled-...
        (WORKLOAD_GATES, [GROUP_RESERVATION]),  # podgroup-claim-reference
    ],
)
def test_podgroup_claim_reference(gates: str, want: list[Obj]) -> None:
    r = run(
        grouped(POD_WITH_CLAIM_NAME),
        claims=[ALLOCATED_GROUP_CLAIM, OTHER_CLAIM],
        objs=[pod_group(GROUP_CLAIM_NAME)],
        gates=gates,
    )
    assert r.prebind is None
    assert r.claims[CLAIM]["status"]["reservedFor"] == want


def test_podgroup_claim_template() -> None:
    """A template entry the PodGroup shares: the claim the group owns is the pod's, reserved for the group."""
    owned = copy.deepcopy(ALLOCATED_GROUP_CLAIM)
    owned["metadata"]["ownerReferences"] = [
        {
            "apiVersion": "scheduling.k8s.io/v1alpha2",
            "kind": "PodGroup",
            "name": GROUP,
            "uid": GROUP_UID,
            "controller": True,
        }
    ]
    group = pod_group({"name": RESOURCE, "resourceClaimTemplateName": CLAIM})
    r = run(
        grouped(pod_with_claim_template(in_status=True)),
        claims=[owned, OTHER_CLAIM],
        objs=[group],
        gates=WORKLOAD_GATES,
    )
    assert r.preenqueue is None and r.prebind is None
    assert r.claims[CLAIM]["status"]["reservedFor"] == [GROUP_RESERVATION]
    off = run(grouped(pod_with_claim_template(in_status=True)), claims=[owned, OTHER_CLAIM], objs=[group])
    assert off.preenqueue is not None and "(Pod is not owner)" in off.preenqueue.message()


def test_bind_podgroup_failure_keeps_the_groups_reservation() -> None:
    r = run(
        grouped(POD_WITH_CLAIM_NAME),
        claims=[ALLOCATED_GROUP_CLAIM],
        objs=[pod_group(GROUP_CLAIM_NAME)],
        gates=WORKLOAD_GATES,
        unreserve_after_prebind=True,
    )
    assert r.claims[CLAIM]["status"]["reservedFor"] == [GROUP_RESERVATION]


def test_reserved_okay_podgroup() -> None:
    r = run(
        grouped(POD_WITH_CLAIM_NAME),
        claims=[reserved_for_group(ALLOCATED_GROUP_CLAIM)],
        objs=[pod_group(GROUP_CLAIM_NAME)],
        gates=WORKLOAD_GATES,
    )
    assert r.prefilter is None and r.prebind is None
    assert r.claims[CLAIM]["status"]["reservedFor"] == [GROUP_RESERVATION]


def _postfilter(gates: str, claims: list[Obj], pod: Obj | None = None, objs: list[Obj] = ()) -> Run:  # type: ignore[assignment]
    return run(
        pod or grouped(POD_WITH_CLAIM_NAME),
        claims=claims,
        classes=[device_class()],
        objs=[pod_group(GROUP_CLAIM_NAME), *objs],
        gates=gates,
    )


def test_postfilter_unreserve_podgroup() -> None:
    r = _postfilter(WORKLOAD_GATES, [reserved_for_group(wrong_topology(claim(owner=False)))])
    assert r.filter[NODE] == Status(UU, "resourceclaim not available on the node")
    assert r.postfilter is not None and r.postfilter.message() == "ResourceClaim unreserved for PodGroup"
    assert not r.claims[CLAIM]["status"].get("reservedFor") and r.claims[CLAIM]["status"].get("allocation")


def test_postfilter_skip_unreserve_podgroup_feature_disabled() -> None:
    r = _postfilter("", [reserved_for_group(wrong_topology(claim(owner=False)))])
    assert r.postfilter == Status(UNSCHED, "still not schedulable")
    assert r.claims[CLAIM]["status"]["reservedFor"] == [GROUP_RESERVATION]


def test_postfilter_deallocate_podgroup() -> None:
    r = _postfilter(WORKLOAD_GATES, [wrong_topology(claim(owner=False))])
    assert r.postfilter == Status(UNSCHED, "deallocation of ResourceClaim completed")
    assert "allocation" not in r.claims[CLAIM]["status"]


def test_postfilter_skip_unreserve_podgroup_when_pods_active() -> None:
    scheduled = make_pod(f"{POD}-2", NS).uid("5678").obj()
    scheduled["spec"]["schedulingGroup"] = {"podGroupName": GROUP}
    scheduled["spec"]["nodeName"] = NODE  # scheduled: it still needs the PodGroup's claim
    r = _postfilter(WORKLOAD_GATES, [reserved_for_group(wrong_topology(claim(owner=False)))], objs=[scheduled])
    assert r.postfilter == Status(UNSCHED, "still not schedulable")
    assert r.claims[CLAIM]["status"]["reservedFor"] == [GROUP_RESERVATION]


def test_postfilter_skip_unreserve_podgroup_other_claim_deallocated() -> None:
    pod = grouped(pod_with_claim_name((RESOURCE, CLAIM), (f"{RESOURCE}-2", CLAIM2)))
    other = wrong_topology(claim(CLAIM2))
    r = _postfilter(WORKLOAD_GATES, [reserved_for_group(wrong_topology(claim(owner=False))), other], pod=pod)
    assert r.postfilter == Status(UNSCHED, "deallocation of ResourceClaim completed")
    assert "allocation" not in r.claims[CLAIM2]["status"]
    assert r.claims[CLAIM]["status"]["reservedFor"] == [GROUP_RESERVATION]


def test_a_group_cycle_reuses_an_earlier_members_pending_allocation() -> None:
    """Two members of one group cycle sharing an unallocated claim: the second reuses what Reserve made for the
    first, and is not held to its node (v1.36); outside a group cycle it waits for the allocation instead."""
    clock = VirtualClock()
    cluster = lister_with(clock=clock)
    nodes = [node(NODE), node(NODE2)]
    for o in (device_class(), WORKER_SLICE, *nodes, claim(owner=False), pod_group(GROUP_CLAIM_NAME)):
        cluster.create(copy.deepcopy(o))
    members = []
    for i in range(2):
        p = grouped(pod_with_claim_name((RESOURCE, CLAIM)))
        p["metadata"]["name"], p["metadata"]["uid"] = f"member-{i}", f"uid-{i}"
        members.append(new_pod_info(cluster.create(p)))
    snapshot = build_snapshot(nodes)
    handle = Handle(
        lister=cluster,
        client=cluster,
        snapshot=snapshot,
        clock=clock,
        dra_manager=DRAManager(cluster),
        release=release("1.36", WORKLOAD_GATES),
    )
    plugin = dr.new(default_args(dr.NAME, DynamicResourcesArgs()), handle)
    group_cycle = CycleState()
    states = []
    for member in members:
        state = CycleState()
        state.pod_group_cycle = group_cycle
        _, status = plugin.pre_filter(state, member, snapshot.node_info_list)
        assert status is None
        feasible = [ni.name for ni in snapshot.node_info_list if plugin.filter(state, member, ni) is None]
        states.append((state, feasible))
        assert plugin.reserve(state, member, feasible[-1]) is None
    assert states[0][1] == [NODE]  # the device is on the worker only
    assert states[1][1] == [NODE, NODE2]  # the pending allocation is reused anywhere
    alone = CycleState()
    _, status = plugin.pre_filter(alone, members[1], snapshot.node_info_list)
    assert status == Status(UU, f"resource claim {NS}/{CLAIM} is in the process of being allocated")
    for member, (state, feasible) in zip(members, states, strict=True):
        plugin.unreserve(state, member, feasible[-1])
    assert plugin.manager.claims.in_flight_claims() == [] and group_cycle.read(dr.STATE_KEY) == set()
