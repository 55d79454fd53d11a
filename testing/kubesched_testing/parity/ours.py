"""Replay one decision with kubesched on the state upstream saw.

The state is loaded into an embedded cluster exactly as `kubesched simulate` loads
manifests; other pending pods are parked as upstream had them (waiting, with their
nominations), and only the pod under test goes through one scheduling cycle.
"""

from __future__ import annotations

import copy
from collections.abc import Sequence
from dataclasses import dataclass, field

from kubesched.api.object import Obj
from kubesched.backend.embedded.cluster import EmbeddedCluster
from kubesched.clock import VirtualClock
from kubesched.config.load import load_config
from kubesched.config.trust import TRUSTED
from kubesched.event_handlers import informed_scheduler
from kubesched.framework.cycle_state import CycleState
from kubesched.framework.interface import FilterPlugin, PreFilterPlugin, PreFilterResult
from kubesched.framework.node_info import NodeInfo
from kubesched.framework.outcome import Outcome, SchedulerEvent
from kubesched.framework.runtime.registry import Registry
from kubesched.framework.status import Code, Status
from kubesched.framework.types import PodInfo
from kubesched.release import release
from kubesched.simulator.load import LoadedInput, SourcedObject, prepare_objects
from kubesched.simulator.run import _FIRST
from kubesched_testing.parity.allocations import allocation_record, claim_names


@dataclass
class OurAttempt:
    scores: dict[str, dict[str, int]] = field(default_factory=dict)  # node -> plugin -> weighted score
    totals: dict[str, int] = field(default_factory=dict)
    filters: dict[str, dict[str, str]] = field(default_factory=dict)
    node: str | None = None
    message: str | None = None
    error: bool = False
    nominated: str | None = None
    victims: list[str] = field(default_factory=list)
    top: list[str] = field(default_factory=list)  # nodes with the highest total
    allocations: dict[str, Obj | None] = field(default_factory=dict)  # claim -> its allocation, once bound
    raced_errors: list[str] = field(default_factory=list)  # the errors single nodes give, when filtering erred
    earlier: list[str | None] = field(default_factory=list)  # with `then`: where each pod before the last went


RESTRICT = "ParityRestrict"


class _Restrict(FilterPlugin):
    """Keeps the nodes upstream found feasible, and no others.

    In a large cluster upstream filters on 16 goroutines and stops at enough feasible
    nodes, so which ones it saw is a matter of timing. Scores depend on that set
    (normalisation, spreading weights), so the replay scores exactly upstream's set, after
    the real filters had their say on each of those nodes.
    """

    NAME = RESTRICT

    def __init__(self, nodes: set[str]) -> None:
        self.nodes = nodes

    def filter(self, state: CycleState, pod: PodInfo, node_info: NodeInfo) -> Status | None:
        if node_info.name in self.nodes:
            return None
        return Status(Code.UNSCHEDULABLE_AND_UNRESOLVABLE, "not among the nodes upstream found feasible")


EXAMINE = "ParityExamine"


class _Examine(PreFilterPlugin):
    """Narrows the cycle to some nodes, as a PreFilterResult does: no other node is filtered at all.

    Where a Filter plugin fails with an error on several nodes, upstream reports the error of
    whichever of its 16 goroutines met one first; filtering one node at a time gives the
    errors it could have reported.
    """

    NAME = EXAMINE

    def __init__(self, nodes: set[str]) -> None:
        self.nodes = nodes

    def pre_filter(
        self, state: CycleState, pod: PodInfo, nodes: Sequence[NodeInfo]
    ) -> tuple[PreFilterResult | None, Status | None]:
        return PreFilterResult(set(self.nodes)), None


def _restricted(config: Obj, nodes: set[str] | None, examine: set[str] | None) -> tuple[Obj, Registry]:
    """The configuration with the parity plugins added to each of its profiles (or to a default one)."""
    registry = Registry()
    extra: dict[str, list[Obj]] = {}
    if nodes is not None:
        registry.register(RESTRICT, lambda args, handle: _Restrict(nodes))
        extra["filter"] = [{"name": RESTRICT}]
    if examine is not None:
        registry.register(EXAMINE, lambda args, handle: _Examine(examine))
        extra["preFilter"] = [{"name": EXAMINE}]
    profiles = []
    for prof in copy.deepcopy(config.get("profiles")) or [{"schedulerName": "default-scheduler"}]:
        plugins = prof.setdefault("plugins", {})
        for point, entries in extra.items():
            at = plugins.setdefault(point, {})
            at["enabled"] = [*(at.get("enabled") or ()), *entries]
        profiles.append(prof)
    return {**config, "profiles": profiles}, registry


def _pod_key(obj: Obj) -> str:
    meta = obj["metadata"]
    return f"{meta.get('namespace', 'default')}/{meta['name']}"


class _Observer:
    def __init__(self) -> None:
        self.outcome: Outcome | None = None
        self.events: list[SchedulerEvent] = []

    def on_outcome(self, outcome: Outcome) -> None:
        self.outcome = outcome

    def on_event(self, event: SchedulerEvent) -> None:
        self.events.append(event)


def replay(
    state: list[Obj],
    pod_key: str,
    config: Obj,
    seed: int = 0,
    only_nodes: set[str] | None = None,
    examine: set[str] | None = None,
    kubernetes_version: str = "1.36",
    then: Sequence[Obj] = (),
) -> OurAttempt:
    """One scheduling cycle for `pod_key` on `state` (the pod pending in it).

    Clusters here either have fewer than 100 nodes (every node is examined, wherever the
    rotating start index points) or are replayed with `only_nodes`.

    `examine`: filter only these nodes (a PreFilterResult), the others not at all.

    `only_nodes`: score exactly these (upstream's feasible nodes) where upstream's choice of
    nodes to examine cannot be reproduced.

    `then`: pods created one by one once `pod_key` is bound, each scheduled in the very next
    cycle; the attempt returned is the last one's. That is how upstream came to hand them
    OpportunisticBatching hints, which only the cycle right after a like pod's can have.
    """
    registry = None
    if only_nodes is not None or examine is not None:
        config, registry = _restricted(config, only_nodes, examine)
    # The later pods are admitted with the state (their PriorityClasses are there), and created later.
    docs = [*state, *then]
    loaded = LoadedInput(objects=[SourcedObject(copy.deepcopy(o), "state", i + 1) for i, o in enumerate(docs)])
    later_keys = [_pod_key(p) for p in then]
    objects: list[SourcedObject] = []
    by_key: dict[str, SourcedObject] = {}
    for so in prepare_objects(loaded):
        if so.obj["kind"] == "Pod" and _pod_key(so.obj) in later_keys:
            by_key[_pod_key(so.obj)] = so
        else:
            objects.append(so)
    later = [by_key[k] for k in later_keys]
    cfg = load_config(
        {"apiVersion": "kubescheduler.config.k8s.io/v1", "kind": "KubeSchedulerConfiguration", **config},
        trust=TRUSTED,
        release=release(kubernetes_version),
    )
    clock = VirtualClock()
    cluster = EmbeddedCluster(clock, pv_controller=False)
    observer = _Observer()
    sched = informed_scheduler(
        cfg, cluster, client=cluster, clock=clock, seed=seed, record=True, observer=observer, registry=registry
    )
    rank = {k: i for i, k in enumerate(_FIRST)}
    first = sorted((so for so in objects if so.obj["kind"] in rank), key=lambda so: rank[so.obj["kind"]])
    nodes = [so for so in objects if so.obj["kind"] == "Node"]
    pods = [so for so in objects if so.obj["kind"] == "Pod"]
    bound = [so for so in pods if (so.obj.get("spec") or {}).get("nodeName")]
    pending = [so for so in pods if not (so.obj.get("spec") or {}).get("nodeName")]
    for so in (*first, *nodes, *bound, *pending):
        cluster.create(so.obj)
    target = None
    while (qpi := sched.queue.pop()) is not None:
        if qpi.pod_info.key == pod_key:
            target = qpi
            break
        # Another pod waiting in upstream's queue (a nominated preemptor): it stays there, unscheduled.
        sched.queue.add_unschedulable_if_not_present(qpi)
        sched.queue.done(qpi.pod_info.uid)
    if target is None:
        raise LookupError(f"{pod_key} is not pending in the state")
    sched.schedule_one(target)
    clock.run_due()  # the binding cycle, which reports the outcome and its record
    earlier: list[str | None] = []
    for next_pod in later:
        earlier.append(next((ev.node for ev in observer.events if ev.pod == pod_key and ev.type == "Scheduled"), None))
        pod_key = _pod_key(next_pod.obj)
        observer.events.clear()
        cluster.create(next_pod.obj)
        nxt = sched.queue.pop()
        if nxt is None or nxt.pod_info.key != pod_key:
            raise LookupError(f"{pod_key} is not the next pod to schedule")
        sched.schedule_one(nxt)
        clock.run_due()
    out = OurAttempt(earlier=earlier)
    for ev in observer.events:
        if ev.pod == pod_key and ev.type == "Scheduled":
            out.node = ev.node
        elif ev.pod == pod_key and ev.type == "Nominated":
            out.nominated = ev.node
        elif ev.type == "Preempted" and ev.preemptor == pod_key:
            out.victims.append(ev.pod)
    oc = observer.outcome
    if out.node is None and oc is not None and oc.pod.key == pod_key and oc.result != "Scheduled":
        # The decision is the scheduling cycle's: a binding cycle that cannot finish here (the
        # state has no PV controller) does not change which node was chosen.
        out.message = oc.message
        out.error = oc.result == "Error"
    rec = observer.outcome.record if observer.outcome is not None else None
    if rec is not None:
        out.scores = {node: dict(p) for node, p in rec.final_score.items()}
        out.filters = {
            node: {name: verdict for name, verdict in p.items() if name != RESTRICT} for node, p in rec.filter.items()
        }
        out.totals = {node: sum(p.values()) for node, p in rec.final_score.items()}
    if out.node is not None:
        ns, name = pod_key.split("/", 1)
        pod = cluster.get("Pod", ns, name) or {}
        out.allocations = {
            f"{ns}/{claim}": allocation_record(cluster.get("ResourceClaim", ns, claim)) for claim in claim_names(pod)
        }
    if out.totals:
        best = max(out.totals.values())
        out.top = sorted(node for node, t in out.totals.items() if t == best)
    elif out.node is not None:
        out.top = [out.node]
    return out
