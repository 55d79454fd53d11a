"""What the simulation's outputs say about PodGroups: each group's members, how many are placed, and why not all.

A gang that does not fit whole places none of its pods, and each member then reads
"pod group is unschedulable, waiting for minCount pods ..." except the one that found no
node: the digest names that one's reason as what blocks the group, counts the placed
members against minCount, and says when members gave up waiting at Permit (the gang's
five-minute timeout) or never got past PreEnqueue (too few members, no PodGroup). It is
the one account of groups: the JSON's `podGroups`, the table, `--explain`, the HTML report,
the UI and `whatif capacity` all read it.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any, Final, Literal, Protocol, TypedDict

from kubesched.cache.pod_groups import pod_group_name
from kubesched.framework.plugins.helper.pod_group import gang_min_count, topology_key
from kubesched.simulator.explain import natural_key

PERMIT_TIMEOUT: Final = "rejected due to timeout"
GROUP_VERDICTS: Final = ("GroupScheduled", "GroupUnschedulable", "GroupWaitingOnPreemption")
NO_DOMAIN: Final = "(no label)"

GroupState = Literal["Scheduled", "Waiting", "TimedOut"]
STATE_WORDS: Final[Mapping[str, str]] = {"Scheduled": "scheduled whole", "Waiting": "waiting", "TimedOut": "timed out"}
"""How people read a group's state (the report, the UI)."""


class GroupEntry(TypedDict):
    """One entry of the JSON document's `podGroups` (docs/simulate-contract.md)."""

    namespace: str
    name: str
    minCount: int | None
    exists: bool  # False: no PodGroup of that name, so its pods wait for one
    members: int
    podNames: list[str]
    placed: int
    gated: int
    timedOut: int
    timedOutAt: float | None
    state: GroupState
    blocking: str | None
    verdict: str | None
    holdingBack: str | None
    topologyKey: str | None
    nodes: dict[str, int]  # in natural order (node-2 before node-10), as `domains`
    domains: dict[str, int]
    explain: str


@dataclass
class GroupDigest:
    namespace: str
    name: str
    min_count: int | None  # None: the basic policy (or no PodGroup object)
    topology_key: str | None = None  # the constraint's node label: the group is placed within one of its domains
    members: list[str] = field(default_factory=list)
    placed: int = 0
    gated: int = 0  # held back at PreEnqueue
    timed_out: int = 0  # rejected after waiting at Permit
    timed_out_at: float | None = None  # virtual time of the first such rejection
    blocking: str = ""  # the reason of the member no node fitted, if one did not
    verdict: str = ""  # the group cycle's last word
    exists: bool = True
    nodes: dict[str, int] = field(default_factory=dict)  # where the placed members went: node -> members
    domains: dict[str, int] = field(default_factory=dict)  # the same by the topology key's value

    @property
    def waiting(self) -> bool:
        return self.placed < len(self.members)

    @property
    def state(self) -> GroupState:
        if not self.waiting:
            return "Scheduled"
        return "TimedOut" if self.timed_out else "Waiting"

    def holding_back(self) -> str:
        """What keeps the members not placed from their nodes, in the table's words ("" once all are placed)."""
        if not self.waiting:
            return ""
        if not self.exists:
            return "its PodGroup does not exist, so its pods wait for it"
        if self.gated and self.min_count is not None and len(self.members) < self.min_count:
            return f"only {len(self.members)} pods exist, fewer than minCount: they wait in PreEnqueue"
        parts = []
        if self.blocking:
            parts.append(f"blocked by: {self.blocking}")
        elif self.verdict:
            parts.append(self.verdict)
        if self.timed_out:
            at = f" at {self.timed_out_at:g}s" if self.timed_out_at is not None else ""
            parts.append(f"{self.timed_out} gave up waiting at Permit (timeout{at})")
        return "; ".join(parts)

    def policy(self) -> str:
        return f"minCount {self.min_count}" if self.min_count is not None else "basic policy"

    def explain(self) -> str:
        """One line for the summary and --explain."""
        head = f"pod group {self.namespace}/{self.name}: {self.placed} of {len(self.members)} placed ({self.policy()})"
        rest = self.holding_back()
        return f"{head}; {rest}" if rest else head

    def to_json(self) -> GroupEntry:
        return {
            "namespace": self.namespace,
            "name": self.name,
            "minCount": self.min_count,
            "exists": self.exists,
            "members": len(self.members),
            "podNames": list(self.members),
            "placed": self.placed,
            "gated": self.gated,
            "timedOut": self.timed_out,
            "timedOutAt": self.timed_out_at,
            "state": self.state,
            "blocking": self.blocking or None,
            "verdict": self.verdict or None,
            "holdingBack": self.holding_back() or None,
            "topologyKey": self.topology_key,
            "nodes": {n: self.nodes[n] for n in sorted(self.nodes, key=natural_key)},
            "domains": {d: self.domains[d] for d in sorted(self.domains, key=natural_key)},
            "explain": self.explain(),
        }


def pod_group_of(obj: Mapping[str, Any]) -> str | None:
    """The PodGroup a pod names (None for a pod in no group)."""
    return pod_group_name(obj)


class EventLike(Protocol):
    """What the digest reads of an event: the simulator's SchedulerEvent or the API's Event."""

    @property
    def time(self) -> float: ...

    @property
    def pod(self) -> str: ...

    @property
    def type(self) -> str: ...

    @property
    def message(self) -> str | None: ...


def digest(
    pods: Iterable[tuple[Mapping[str, Any], str, str, str | None]],
    pod_groups: Iterable[Mapping[str, Any]],
    events: Iterable[EventLike],
    labels_of: Callable[[str], Mapping[str, str]],
) -> list[GroupDigest]:
    """Per group some pod names: `pods` are (object, result, message, node), `pod_groups` the PodGroups,
    `events` the run's (the group cycles' verdicts and Permit's timeouts among them), `labels_of` a node's labels."""
    objects = {
        ((o.get("metadata") or {}).get("namespace") or "default", (o.get("metadata") or {}).get("name")): o
        for o in pod_groups
    }
    groups: dict[tuple[str, str], GroupDigest] = {}
    member_of: dict[str, GroupDigest] = {}
    for obj, result, message, node in pods:
        name = pod_group_of(obj)
        if name is None:
            continue
        meta = obj.get("metadata") or {}
        key = (meta.get("namespace") or "default", name)
        d = groups.get(key)
        if d is None:
            pg = objects.get(key)
            d = groups[key] = GroupDigest(
                key[0],
                name,
                gang_min_count(pg) if pg is not None else None,
                topology_key(pg) if pg is not None else None,
                exists=pg is not None,
            )
        d.members.append(str(meta.get("name")))
        member_of[f"{key[0]}/{meta.get('name')}"] = d
        if result == "Scheduled":
            d.placed += 1
            if node is not None:
                d.nodes[node] = d.nodes.get(node, 0) + 1
                if d.topology_key is not None:
                    domain = labels_of(node).get(d.topology_key, NO_DOMAIN)
                    d.domains[domain] = d.domains.get(domain, 0) + 1
        elif result == "Gated":
            d.gated += 1
        elif PERMIT_TIMEOUT in message:
            d.timed_out += 1
        elif result == "Unschedulable" and message and not message.startswith("pod group is unschedulable"):
            d.blocking = d.blocking or message
    for e in events:
        if e.type in GROUP_VERDICTS:
            ns, _, name = str(e.pod).partition("/")
            d = groups.get((ns, name))
            if d is not None:
                d.verdict = e.message or ""
        elif e.type == "Unschedulable" and PERMIT_TIMEOUT in (e.message or ""):
            d = member_of.get(e.pod)
            if d is not None and d.timed_out_at is None:
                d.timed_out_at = e.time
    return sorted(groups.values(), key=lambda d: (d.namespace, d.name))
