"""Workload-aware preemption (framework/preemption/podgrouppreemption.go, v1.36 alpha: WorkloadAwarePreemption).

When a PodGroup does not fit, its pods are not each given a node's victims: the whole
cluster is one domain, every lower-priority pod in it a possible victim, and a PodGroup
whose disruptionMode is PodGroup is one victim made of all its pods (at the group's
priority). All possible victims are taken out, the group must then fit as a whole; then
victims are given back, most important first (the ones whose eviction would break a
PodDisruptionBudget before the others), each kept if the group still fits without it.
What is left is evicted. The caller supplies how to take victims out and put them back
and whether the group fits, so that this module needs neither the cache nor the cycle.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from functools import cmp_to_key
from typing import Any, Final

from kubesched.framework.node_info import NodeInfo
from kubesched.framework.preemption.evaluator import PDB, filter_pods_with_pdb_violation
from kubesched.framework.status import Code, Status
from kubesched.framework.types import PodInfo

NO_VICTIMS: Final = "No preemption victims found for incoming preemptor"
NOT_ELIGIBLE: Final = "not eligible due to preemptionPolicy=Never."


def pod_group_priority(pod_group: Mapping[str, Any]) -> int:
    """PodGroupPriority: spec.priority (admission computes it from the class), else 0."""
    value = (pod_group.get("spec") or {}).get("priority")
    return value if isinstance(value, int) and not isinstance(value, bool) else 0


@dataclass
class Victim:
    """One pod, or every pod of a PodGroup that is disrupted as a whole."""

    pods: list[PodInfo]
    priority: int
    group: bool  # IsPodGroup: its (first) pod names a PodGroup, whether or not the group is disrupted whole
    earliest_start: str = ""  # RFC 3339; "" when no pod has started
    nodes: set[str] = field(default_factory=set)

    def add(self, pod: PodInfo) -> None:
        self.pods.append(pod)
        self.nodes.add(pod.node_name)
        start = _start(pod)
        if start and (not self.earliest_start or start < self.earliest_start):
            self.earliest_start = start


def _names_group(pod: PodInfo) -> bool:
    group = (pod.obj.get("spec") or {}).get("schedulingGroup")
    return isinstance(group, Mapping) and bool(group.get("podGroupName"))


def _start(pod: PodInfo) -> str:
    return str((pod.obj.get("status") or {}).get("startTime") or "")


def domain_victims(nodes: Iterable[NodeInfo], group_of: Callable[[PodInfo], Mapping[str, Any] | None]) -> list[Victim]:
    """newDomainForWorkloadPreemption: each pod its own victim, but those of a PodGroup in PodGroup mode."""
    victims: dict[str, Victim] = {}
    for ni in nodes:
        for pod in ni.pods:
            group = group_of(pod)
            if group is None or (group.get("spec") or {}).get("disruptionMode") != "PodGroup":
                victim = victims[pod.uid] = Victim([], pod.priority, _names_group(pod))
                victim.add(pod)
                continue
            meta = group.get("metadata") or {}
            key = f"group:{meta.get('namespace') or 'default'}/{meta.get('name')}"
            if key not in victims:
                victims[key] = Victim([], pod_group_priority(group), True)
            victims[key].add(pod)
    return list(victims.values())


def _compare(a: Victim, b: Victim) -> int:
    """moreImportantVictim as an ordering: higher priority, groups before pods, older, bigger groups first."""
    if a.priority != b.priority:
        return -1 if a.priority > b.priority else 1
    if a.group != b.group:
        return -1 if a.group else 1
    if a.group and len(a.pods) != len(b.pods):
        return -1 if len(a.pods) > len(b.pods) else 1
    sa, sb = a.earliest_start or "~", b.earliest_start or "~"  # a pod not started counts as the newest
    return -1 if sa < sb else (1 if sa > sb else 0)


def by_importance(victims: list[Victim]) -> list[Victim]:
    return sorted(victims, key=cmp_to_key(_compare))


def select_victims(
    preemptor_priority: int,
    never: bool,
    victims: list[Victim],
    pdbs: list[PDB],
    remove: Callable[[Victim], None],
    restore: Callable[[Victim], None],
    fits: Callable[[], Status | None],
) -> tuple[list[PodInfo], Status | None]:
    """selectVictimsOnDomain: the pods to evict so that the group fits, or why there are none.

    Everything `remove` took out is put back with `restore` before returning, whatever the answer.
    """
    if never:
        return [], Status(Code.UNSCHEDULABLE, NOT_ELIGIBLE)
    potential = [v for v in victims if v.priority < preemptor_priority]
    if not potential:
        return [], Status(Code.UNSCHEDULABLE_AND_UNRESOLVABLE, NO_VICTIMS)
    out: list[Victim] = []
    for v in potential:
        remove(v)
    removed = list(potential)
    try:
        s = fits()
        if s is not None and not s.is_success():
            return [], s
        ordered = by_importance(potential)
        violating_pods, _ = filter_pods_with_pdb_violation([p for v in ordered for p in v.pods], pdbs)
        breaking = {p.uid for p in violating_pods}
        violating = [v for v in ordered if any(p.uid in breaking for p in v.pods)]
        others = [v for v in ordered if not any(p.uid in breaking for p in v.pods)]
        for v in (*violating, *others):
            restore(v)
            removed.remove(v)
            s = fits()
            if s is not None and not s.is_success():
                remove(v)
                removed.append(v)
                out.append(v)
    finally:
        for v in removed:
            restore(v)
    return [p for v in by_importance(out) for p in v.pods], None
