"""What a simulation came to, in numbers: pods by result and reason, utilisation, fragmentation.

Computed from the SimulationResult (the scheduler's cache holds what is on each node at the end),
so the command's table and JSON and a Python caller all read the same figures. Amounts are
integers in Kubernetes' base units (millicores for cpu, bytes for memory, counts otherwise);
`pods` counts as a resource (pods on the node against its allocatable pods).

Fragmentation is free capacity that none of the still-pending pods can use: for each resource,
the free amount (allocatable less requested) summed over the nodes where no pending pod fits by
its resource requests alone (every requested resource, and a pod slot, free). Other reasons a pod
cannot go to a node (taints, affinity, spreading) are left out: they are not about capacity. With
no pending pod nothing is stranded. The largest free block is the most of a resource free on one node.

People's outputs (tables, the HTML report, `whatif compare`'s table) show fewer resources than the
JSON: `Summary.shown()` (docs/output.md). Nodes offer resources nobody asks for (ephemeral-storage,
attachable-volumes-*, hugepages-*), and a row at 0% on every node is noise there.
"""

from __future__ import annotations

from collections.abc import Collection, Iterable
from dataclasses import dataclass
from typing import Any

from kubesched.api.quantity import format_quantity
from kubesched.api.resources import CPU, MEMORY, PODS
from kubesched.api.topology import zone_of
from kubesched.framework.node_info import NodeInfo
from kubesched.simulator.run import SimulationResult
from kubesched.simulator.states import SCHEDULED, PodState, pod_states

NO_ZONE = "(no zone)"
_ALWAYS = (CPU, MEMORY, PODS)


@dataclass(frozen=True, slots=True)
class Usage:
    """One resource: how much is requested of how much is allocatable."""

    requested: int
    allocatable: int

    @property
    def free(self) -> int:
        return max(0, self.allocatable - self.requested)

    @property
    def utilisation(self) -> float | None:
        """requested / allocatable, or None when nothing is allocatable."""
        return self.requested / self.allocatable if self.allocatable > 0 else None


@dataclass(frozen=True, slots=True)
class NodeUsage:
    name: str
    zone: str
    pods: int
    resources: dict[str, Usage]


@dataclass(frozen=True, slots=True)
class ZoneUsage:
    zone: str
    nodes: int
    resources: dict[str, Usage]


@dataclass(frozen=True, slots=True)
class Fragmentation:
    """Free capacity of one resource, how much of it no pending pod can use, and the largest free block."""

    free: int
    stranded: int
    largest_free: int
    largest_free_node: str | None


@dataclass(frozen=True, slots=True)
class Summary:
    pods: int  # pods in the contract's `pods`: pending at the start or created later
    scheduled: int
    pending: int  # not scheduled and still there at the end
    deleted: int  # not scheduled, and deleted (a Scenario step, preemption) before the end
    by_result: dict[str, int]  # over all `pods`: Scheduled, Unschedulable, Gated, Error
    pending_by_reason: dict[str, int]  # pending pods per reason, most first; a pod counts once per reason it had
    resources: dict[str, Usage]  # the whole cluster
    zones: list[ZoneUsage]
    nodes: list[NodeUsage]  # in the cache's order (the JSON's `nodes` order)
    fragmentation: dict[str, Fragmentation]
    wanted: frozenset[str] = frozenset()  # resources some pod requests, on a node or pending (not in the JSON)

    def shown(self) -> list[str]:
        """The resources people's outputs show, in the JSON's order: see `shown_resources`."""
        return shown_resources(self.resources, self.wanted)

    def to_json(self) -> dict[str, Any]:
        """The JSON output's `summary` (docs/output.md)."""
        return {
            "pods": {
                "total": self.pods,
                "scheduled": self.scheduled,
                "pending": self.pending,
                "deleted": self.deleted,
                "byResult": self.by_result,
            },
            "pendingByReason": self.pending_by_reason,
            "resources": {r: _usage_json(r, u) for r, u in self.resources.items()},
            "zones": [
                {"zone": z.zone, "nodes": z.nodes, "resources": {r: _usage_json(r, u) for r, u in z.resources.items()}}
                for z in self.zones
            ],
            "nodes": [
                {"name": n.name, "zone": n.zone, "utilisation": {r: _ratio(u) for r, u in n.resources.items()}}
                for n in self.nodes
            ],
            "fragmentation": {
                r: {
                    "free": format_quantity(r, f.free),
                    "stranded": format_quantity(r, f.stranded),
                    "largestFree": format_quantity(r, f.largest_free),
                    "largestFreeNode": f.largest_free_node,
                }
                for r, f in self.fragmentation.items()
            },
        }


def _ratio(u: Usage) -> float | None:
    ratio = u.utilisation
    return None if ratio is None else round(ratio, 4)


def _usage_json(resource: str, u: Usage) -> dict[str, Any]:
    return {
        "requested": format_quantity(resource, u.requested),
        "allocatable": format_quantity(resource, u.allocatable),
        "utilisation": _ratio(u),
    }


def shown_resources(resources: Iterable[str], wanted: Collection[str]) -> list[str]:
    """cpu, memory and pods always; any other resource only when some pod requests it.

    Whether a node offers it does not matter: a resource requested and offered by no node
    is why pods wait, so its row stays."""
    return [r for r in resources if r in _ALWAYS or r in wanted]


def node_resources(ni: NodeInfo) -> dict[str, Usage]:
    """cpu, memory and pods, then every other resource the node offers or its pods request, by name."""
    alloc = ni.allocatable
    requested = {r: v for r, v in ni.requested.items() if v}
    requested[PODS] = len(ni.pods)
    names = [*_ALWAYS, *sorted((set(alloc) | set(requested)) - set(_ALWAYS))]
    return {r: Usage(requested.get(r, 0), alloc.get(r, 0)) for r in names}


def summarize(result: SimulationResult, states: list[PodState] | None = None) -> Summary:
    """`states`: the result's `pod_states`, when the caller has them already (they cost a PreEnqueue
    run for each pod never tried)."""
    sched = result.scheduler
    assert sched is not None
    states = list(pod_states(result)) if states is None else states
    by_result: dict[str, int] = {}
    pending: list[PodState] = []
    deleted = 0
    for st in states:
        by_result[st.result] = by_result.get(st.result, 0) + 1
        if st.result == SCHEDULED:
            continue
        current = sched.informer_pod(st.pod.namespace, st.pod.name)
        if current is None or current.uid != st.pod.uid:
            deleted += 1
        else:
            pending.append(st)
    nodes = [
        NodeUsage(ni.name, zone_of(ni.labels) or NO_ZONE, len(ni.pods), node_resources(ni))
        for ni in sched.cache.nodes.values()
        if ni.node is not None
    ]
    return Summary(
        pods=len(states),
        scheduled=by_result.get(SCHEDULED, 0),
        pending=len(pending),
        deleted=deleted,
        by_result=by_result,
        pending_by_reason=_reasons(pending),
        resources=_total(nodes),
        zones=_zones(nodes),
        nodes=nodes,
        fragmentation=_fragmentation(nodes, pending),
        wanted=_wanted(nodes, pending),
    )


def _wanted(nodes: list[NodeUsage], pending: list[PodState]) -> frozenset[str]:
    """Resources the pods on the nodes or the pending pods request (pods, the slot count, aside)."""
    on_nodes = {r for n in nodes for r, u in n.resources.items() if u.requested > 0 and r != PODS}
    return frozenset(on_nodes | {r for st in pending for r, v in st.pod.requests.items() if v > 0})


def _reasons(pending: list[PodState]) -> dict[str, int]:
    """Pods per reason: a FitError's plugin reasons (upstream's wording), else the pod's message."""
    counts: dict[str, int] = {}
    for st in pending:
        reasons = st.outcome.reasons if st.outcome is not None and st.result != "Gated" else None
        for reason in reasons or (st.message or st.result,):
            counts[reason] = counts.get(reason, 0) + 1
    return dict(sorted(counts.items(), key=lambda kv: (-kv[1], kv[0])))


def _add(into: dict[str, Usage], resources: dict[str, Usage]) -> None:
    for r, u in resources.items():
        old = into.get(r)
        into[r] = u if old is None else Usage(old.requested + u.requested, old.allocatable + u.allocatable)


def _ordered(resources: dict[str, Usage]) -> dict[str, Usage]:
    names = [*_ALWAYS, *sorted(set(resources) - set(_ALWAYS))]
    return {r: resources.get(r, Usage(0, 0)) for r in names}


def _total(nodes: list[NodeUsage]) -> dict[str, Usage]:
    total: dict[str, Usage] = {}
    for n in nodes:
        _add(total, n.resources)
    return _ordered(total)


def _zones(nodes: list[NodeUsage]) -> list[ZoneUsage]:
    by_zone: dict[str, tuple[int, dict[str, Usage]]] = {}
    for n in nodes:
        count, resources = by_zone.get(n.zone, (0, {}))
        _add(resources, n.resources)
        by_zone[n.zone] = (count + 1, resources)
    order = sorted(by_zone, key=lambda z: (z == NO_ZONE, z))
    return [ZoneUsage(z, by_zone[z][0], _ordered(by_zone[z][1])) for z in order]


def _fragmentation(nodes: list[NodeUsage], pending: list[PodState]) -> dict[str, Fragmentation]:
    shapes = {tuple(sorted((r, v) for r, v in st.pod.requests.items() if v > 0)) for st in pending}

    def fits(free: dict[str, int]) -> bool:
        return free.get(PODS, 0) >= 1 and any(all(free.get(r, 0) >= v for r, v in shape) for shape in shapes)

    out: dict[str, Fragmentation] = {}
    stranded: dict[str, int] = {}
    for n in nodes:
        free = {r: u.free for r, u in n.resources.items()}
        if shapes and not fits(free):
            for r, v in free.items():
                stranded[r] = stranded.get(r, 0) + v
    for r in _total(nodes):
        free_on = [(n.resources[r].free, n.name) for n in nodes if r in n.resources]
        largest, where = max(free_on, key=lambda fn: fn[0], default=(0, None))
        out[r] = Fragmentation(
            free=sum(f for f, _ in free_on),
            stranded=stranded.get(r, 0),
            largest_free=largest,
            largest_free_node=where if largest > 0 else None,
        )
    return out
