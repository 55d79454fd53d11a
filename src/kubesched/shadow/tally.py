"""Observed decisions, one record each, and the summary of a shadowed period.

A record is a comparison: the cluster's node (`actual`, None for Unschedulable), the
shadow's (`shadow`), and how they relate (`outcome`):

- agree: the same node, or both unschedulable;
- tie: different nodes of the same, highest, total score (upstream breaks ties at random);
- sampled: the cluster's node fits and scored lower, on a cluster big enough that upstream
  examined a sample of the nodes only;
- differ: any other difference (the answer, under another configuration).

When either side preempts (the cluster nominated a node, or the shadow's dry run
would), the record also compares the nominated nodes and the victims.
"""

from __future__ import annotations

import statistics
from dataclasses import dataclass, field
from typing import Any

from kubesched.api.object import Obj
from kubesched.shadow.decide import Verdict

OUTCOMES = ("agree", "tie", "sampled", "differ")


def workload_of(pod: Obj) -> str:
    """The pod's controlling owner as Kind/name (a ReplicaSet, a Job...), or 'Pod/<name>' for a bare pod."""
    meta = pod.get("metadata") or {}
    for ref in meta.get("ownerReferences") or ():
        if ref.get("controller"):
            return f"{ref.get('kind')}/{ref.get('name')}"
    return f"Pod/{meta.get('name')}"


@dataclass(slots=True)
class Decision:
    pod: str  # namespace/name
    namespace: str
    workload: str
    actual: str | None
    verdict: Verdict
    lag: float  # seconds from the watch event's arrival to the shadow's answer
    # How full (requested over allocatable cpu, percent) the node each side chose was, before the pod.
    cpu_actual: float | None = None
    cpu_shadow: float | None = None
    actual_nominated: str | None = None  # the node the cluster's preemption nominated
    actual_victims: list[str] = field(default_factory=list)  # the pods it was seen evicting there

    @property
    def preempts(self) -> bool:
        return self.actual_nominated is not None or self.verdict.nominated is not None

    @property
    def preemption_agrees(self) -> bool:
        """The same nominated node and the same victims (or neither side preempts). A victim already being
        deleted is one upstream evicts no further, so the watch cannot show it evicted: it is left out."""
        v = self.verdict
        evicted = sorted(set(v.victims) - set(v.terminating))
        return v.nominated == self.actual_nominated and sorted(set(self.actual_victims)) == evicted

    @property
    def reason(self) -> str:
        """The cluster's outcome, as its PodScheduled condition names it."""
        return "Scheduled" if self.actual is not None else "Unschedulable"

    @property
    def outcome(self) -> str:
        v = self.verdict
        if v.node == self.actual:
            return "agree"
        if v.tie:
            return "tie"
        if v.sampled and self.actual is not None and v.node is not None and not v.actual_rejected:
            return "sampled"
        return "differ"

    def line(self) -> dict[str, Any]:
        """The jsonl record (docs/shadow.md lists the fields)."""
        v = self.verdict
        out: dict[str, Any] = {
            "pod": self.pod,
            "workload": self.workload,
            "actual": self.actual,
            "shadow": v.node,
            "agree": v.node == self.actual,
            "tie": v.tie,
            "outcome": self.outcome,
            "reason": self.reason,
        }
        if v.node != self.actual:
            differing = _differing_scores(v, self.actual)
            if differing:
                out["scores"] = differing
            if self.actual is not None and self.actual in v.totals and v.node in v.totals:
                out["totals"] = {"actual": v.totals[self.actual], "shadow": v.totals[v.node]}
            if v.actual_rejected:
                out["actualRejected"] = v.actual_rejected
            if v.node is None and v.message:
                out["message"] = v.message
        if self.preempts:
            out["preemption"] = {
                "actual": {"node": self.actual_nominated, "victims": sorted(self.actual_victims)},
                "shadow": {"node": v.nominated, "victims": list(v.victims)},
                **({"alreadyTerminating": list(v.terminating)} if v.terminating else {}),
                "agree": self.preemption_agrees,
            }
        out["decideMs"] = round(v.seconds * 1000, 3)
        out["lagMs"] = round(self.lag * 1000, 3)
        return out


def _differing_scores(v: Verdict, actual: str | None) -> dict[str, dict[str, int]]:
    """plugin -> {actual, shadow} weighted scores, for the plugins that scored the two nodes differently."""
    if actual is None or v.node is None:
        return {}
    a, s = v.plugin_scores.get(actual), v.plugin_scores.get(v.node)
    if a is None or s is None:
        return {}
    return {p: {"actual": a[p], "shadow": s[p]} for p in a if p in s and a[p] != s[p]}


@dataclass(slots=True)
class Counts:
    observed: int = 0
    agree: int = 0
    ties: int = 0

    def add(self, d: Decision) -> None:
        self.observed += 1
        self.agree += d.outcome == "agree"
        self.ties += d.outcome == "tie"

    def doc(self) -> dict[str, int]:
        return {"observed": self.observed, "agree": self.agree, "ties": self.ties}


@dataclass
class Tally:
    """Agreement over the shadowed period, overall and by namespace, workload and reason."""

    total: Counts = field(default_factory=Counts)
    outcomes: dict[str, int] = field(default_factory=lambda: dict.fromkeys(OUTCOMES, 0))
    by_namespace: dict[str, Counts] = field(default_factory=dict)
    by_workload: dict[str, Counts] = field(default_factory=dict)
    by_reason: dict[str, Counts] = field(default_factory=dict)
    pending_actual: int = 0  # decisions the cluster left unschedulable
    pending_shadow: int = 0  # ... and the shadow would have
    per_node_actual: dict[str, int] = field(default_factory=dict)
    per_node_shadow: dict[str, int] = field(default_factory=dict)
    cpu_actual: list[float] = field(default_factory=list)
    cpu_shadow: list[float] = field(default_factory=list)
    lag_max: float = 0.0
    lag_sum: float = 0.0
    preemptions: int = 0  # decisions where either side preempts
    preemptions_agreeing: int = 0

    def add(self, d: Decision) -> None:
        self.total.add(d)
        self.outcomes[d.outcome] += 1
        self.by_namespace.setdefault(d.namespace, Counts()).add(d)
        self.by_workload.setdefault(f"{d.namespace}/{d.workload}", Counts()).add(d)
        self.by_reason.setdefault(d.reason, Counts()).add(d)
        if d.actual is None:
            self.pending_actual += 1
        else:
            self.per_node_actual[d.actual] = self.per_node_actual.get(d.actual, 0) + 1
        if d.cpu_actual is not None and d.cpu_shadow is not None:
            self.cpu_actual.append(d.cpu_actual)
            self.cpu_shadow.append(d.cpu_shadow)
        if d.verdict.node is None:
            self.pending_shadow += 1
        else:
            self.per_node_shadow[d.verdict.node] = self.per_node_shadow.get(d.verdict.node, 0) + 1
        self.lag_max = max(self.lag_max, d.lag)
        self.lag_sum += d.lag
        if d.preempts:
            self.preemptions += 1
            self.preemptions_agreeing += d.preemption_agrees

    def summary(self) -> dict[str, Any]:
        """The last jsonl line: agreement, and what the shadow's configuration would have changed."""
        n = self.total.observed
        return {
            "kind": "Summary",
            **self.total.doc(),
            "outcomes": dict(self.outcomes),
            "agreement": round(self.total.agree / n, 4) if n else None,
            "agreementTiesAside": round((self.total.agree + self.total.ties) / n, 4) if n else None,
            "byNamespace": {k: c.doc() for k, c in sorted(self.by_namespace.items())},
            "byWorkload": {k: c.doc() for k, c in sorted(self.by_workload.items())},
            "byReason": {k: c.doc() for k, c in sorted(self.by_reason.items())},
            "preemption": {"observed": self.preemptions, "agree": self.preemptions_agreeing},
            "wouldChange": {
                "unschedulable": {"actual": self.pending_actual, "shadow": self.pending_shadow},
                "nodesUsed": {"actual": len(self.per_node_actual), "shadow": len(self.per_node_shadow)},
                "mostPodsOnANode": {
                    "actual": max(self.per_node_actual.values(), default=0),
                    "shadow": max(self.per_node_shadow.values(), default=0),
                },
                "cpuOfChosenNode": {
                    "actual": round(statistics.fmean(self.cpu_actual), 1) if self.cpu_actual else None,
                    "shadow": round(statistics.fmean(self.cpu_shadow), 1) if self.cpu_shadow else None,
                },
            },
            "lagMs": {"max": round(self.lag_max * 1000, 3), "mean": round(self.lag_sum / n * 1000, 3) if n else 0.0},
        }
