"""Each PodGroup's members as the scheduler knows them (backend/cache/podgroupstate.go, v1.36).

Workload-aware scheduling counts a group's pods by where they are: not yet placed,
assumed by this scheduler (placed, binding pending) or assigned (bound). The gang's
quorum reads the count of placed ones, PreEnqueue the count of all, and a group's
scheduling cycle pulls its unplaced members out of the queue together. The cache keeps
one `PodGroupState` per (namespace, group name) that some pod names; the group object
itself may come later, or never.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from kubesched.framework.types import PodInfo

Key = tuple[str, str]  # (namespace, pod group name)


def pod_group_name(obj: Mapping[str, Any]) -> str | None:
    """The PodGroup a pod names in spec.schedulingGroup, None when it names none."""
    group = (obj.get("spec") or {}).get("schedulingGroup")
    if not isinstance(group, Mapping):
        return None
    name = group.get("podGroupName")
    return name if isinstance(name, str) and name else None


def pod_group_key(pod: PodInfo) -> Key | None:
    name = pod_group_name(pod.obj)
    return (pod.namespace, name) if name is not None else None


@dataclass(slots=True)
class PodGroupState:
    """One group's members by uid: every one, and which are unscheduled, assumed or assigned."""

    pods: dict[str, PodInfo] = field(default_factory=dict)  # in arrival order
    unscheduled: dict[str, None] = field(default_factory=dict)
    assumed: dict[str, PodInfo] = field(default_factory=dict)
    assigned: dict[str, None] = field(default_factory=dict)

    def add(self, pod: PodInfo) -> None:
        self.pods[pod.uid] = pod
        if pod.node_name:  # bound: an assumed pod's confirmation too
            self.assigned[pod.uid] = None
            self.unscheduled.pop(pod.uid, None)
            self.assumed.pop(pod.uid, None)
        else:
            self.unscheduled[pod.uid] = None

    def update(self, old: PodInfo, new: PodInfo) -> None:
        self.pods[new.uid] = new
        if not old.node_name and new.node_name:
            self.assigned[new.uid] = None
            self.unscheduled.pop(new.uid, None)
            self.assumed.pop(new.uid, None)

    def remove(self, uid: str) -> None:
        self.pods.pop(uid, None)
        self.unscheduled.pop(uid, None)
        self.assumed.pop(uid, None)
        self.assigned.pop(uid, None)

    def assume(self, pod: PodInfo) -> None:
        stored = self.pods.get(pod.uid)
        if stored is None:
            self.pods[pod.uid] = pod
            stored = pod
        if stored.node_name:
            self.assigned[pod.uid] = None
        else:
            self.assumed[pod.uid] = pod
        self.unscheduled.pop(pod.uid, None)

    def forget(self, uid: str) -> None:
        pod = self.pods.get(uid)
        if pod is None:
            return
        self.assumed.pop(uid, None)
        if pod.node_name:
            self.assigned[uid] = None
        else:
            self.unscheduled[uid] = None

    @property
    def empty(self) -> bool:
        return not self.pods

    def all_count(self) -> int:
        return len(self.pods)

    def scheduled_count(self) -> int:
        return len(self.assumed) + len(self.assigned)

    def scheduled_pods(self) -> list[PodInfo]:
        """Assigned ones (as the informer has them), then assumed ones (on their assumed node)."""
        return [self.pods[uid] for uid in self.assigned] + list(self.assumed.values())

    def unscheduled_pods(self) -> list[PodInfo]:
        return [self.pods[uid] for uid in self.unscheduled]


class PodGroupStates:
    """Every group some pod names, fed by the cache (assigned, assumed) and the event handlers (unscheduled)."""

    def __init__(self) -> None:
        self.groups: dict[Key, PodGroupState] = {}

    def get(self, namespace: str, name: str) -> PodGroupState | None:
        return self.groups.get((namespace, name))

    def add(self, pod: PodInfo) -> None:
        key = pod_group_key(pod)
        if key is not None:
            self.groups.setdefault(key, PodGroupState()).add(pod)

    def update(self, old: PodInfo, new: PodInfo) -> None:
        key = pod_group_key(new)
        if key is not None:
            state = self.groups.get(key)
            if state is None:
                self.groups[key] = state = PodGroupState()
                state.add(new)
            else:
                state.update(old, new)

    def remove(self, pod: PodInfo) -> None:
        key = pod_group_key(pod)
        state = self.groups.get(key) if key is not None else None
        if key is not None and state is not None:
            state.remove(pod.uid)
            if state.empty:
                del self.groups[key]

    def assume(self, pod: PodInfo) -> None:
        key = pod_group_key(pod)
        if key is not None:
            self.groups.setdefault(key, PodGroupState()).assume(pod)

    def forget(self, pod: PodInfo) -> None:
        key = pod_group_key(pod)
        state = self.groups.get(key) if key is not None else None
        if state is not None:
            state.forget(pod.uid)
