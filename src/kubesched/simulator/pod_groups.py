"""What the simulation's outputs say about PodGroups: each group's members, how many are placed, and why not all.

A gang that does not fit whole places none of its pods, and each member then reads
"pod group is unschedulable, waiting for minCount pods ..." except the one that found no
node: the digest names that one's reason as what blocks the group, counts the placed
members against minCount, and says when members gave up waiting at Permit (the gang's
five-minute timeout) or never got past PreEnqueue (too few members, no PodGroup).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any, Final

from kubesched.cache.pod_groups import pod_group_name

PERMIT_TIMEOUT: Final = "rejected due to timeout"
GROUP_VERDICTS: Final = ("GroupScheduled", "GroupUnschedulable", "GroupWaitingOnPreemption")


@dataclass
class GroupDigest:
    namespace: str
    name: str
    min_count: int | None  # None: the basic policy (or no PodGroup object)
    members: list[str] = field(default_factory=list)
    placed: int = 0
    gated: int = 0  # held back at PreEnqueue
    timed_out: int = 0  # rejected after waiting at Permit
    blocking: str = ""  # the reason of the member no node fitted, if one did not
    verdict: str = ""  # the group cycle's last word
    exists: bool = True

    @property
    def waiting(self) -> bool:
        return self.placed < len(self.members)

    def explain(self) -> str:
        """One line for the summary and --explain."""
        need = f"minCount {self.min_count}" if self.min_count is not None else "basic policy"
        head = f"pod group {self.namespace}/{self.name}: {self.placed} of {len(self.members)} placed ({need})"
        if not self.waiting:
            return head
        if not self.exists:
            return f"{head}; its PodGroup does not exist, so its pods wait for it"
        if self.gated and self.min_count is not None and len(self.members) < self.min_count:
            return f"{head}; only {len(self.members)} pods exist, fewer than minCount: they wait in PreEnqueue"
        parts = [head]
        if self.blocking:
            parts.append(f"blocked by: {self.blocking}")
        elif self.verdict:
            parts.append(self.verdict)
        if self.timed_out:
            parts.append(f"{self.timed_out} gave up waiting at Permit (timeout)")
        return "; ".join(parts)

    def to_json(self) -> dict[str, Any]:
        return {
            "namespace": self.namespace,
            "name": self.name,
            "minCount": self.min_count,
            "members": len(self.members),
            "placed": self.placed,
            "gated": self.gated,
            "timedOut": self.timed_out,
            "blocking": self.blocking or None,
            "verdict": self.verdict or None,
            "explain": self.explain(),
        }


def pod_group_of(obj: Mapping[str, Any]) -> str | None:
    """The PodGroup a pod names (None for a pod in no group)."""
    return pod_group_name(obj)


def digest(
    pods: Iterable[tuple[Mapping[str, Any], str, str]],
    pod_groups: Iterable[Mapping[str, Any]],
    events: Iterable[Any],
) -> list[GroupDigest]:
    """Per group some pod names: `pods` are (object, result, message), `pod_groups` the PodGroups, `events`
    the run's (the group cycles' verdicts among them)."""
    objects = {
        ((o.get("metadata") or {}).get("namespace") or "default", (o.get("metadata") or {}).get("name")): o
        for o in pod_groups
    }
    groups: dict[tuple[str, str], GroupDigest] = {}
    for obj, result, message in pods:
        name = pod_group_of(obj)
        if name is None:
            continue
        meta = obj.get("metadata") or {}
        key = (meta.get("namespace") or "default", name)
        d = groups.get(key)
        if d is None:
            pg = objects.get(key)
            gang = (((pg or {}).get("spec") or {}).get("schedulingPolicy") or {}).get("gang")
            d = groups[key] = GroupDigest(
                key[0], name, (gang or {}).get("minCount") if gang else None, exists=pg is not None
            )
        d.members.append(str(meta.get("name")))
        if result == "Scheduled":
            d.placed += 1
        elif result == "Gated":
            d.gated += 1
        elif PERMIT_TIMEOUT in message:
            d.timed_out += 1
        elif result == "Unschedulable" and message and not message.startswith("pod group is unschedulable"):
            d.blocking = d.blocking or message
    for e in events:
        if getattr(e, "type", None) in GROUP_VERDICTS:
            ns, _, name = str(e.pod).partition("/")
            d = groups.get((ns, name))
            if d is not None:
                d.verdict = getattr(e, "message", None) or ""
    return sorted(groups.values(), key=lambda d: (d.namespace, d.name))
