"""Compare a decision of upstream's with kubesched's replay of it, and report per family."""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

from kubesched_testing.parity.ours import OurAttempt, replay
from kubesched_testing.parity.upstream import Attempt, Decision

# Kinds of difference, in the order a report lists them.
KINDS = ("result", "message", "feasible", "scores", "node", "allocation", "nominated", "victims", "replay")


@dataclass
class Mismatch:
    decision: Decision
    ours: OurAttempt | None
    kinds: list[str]
    details: list[str]
    state_file: str = ""


@dataclass
class FamilyReport:
    family: str
    decisions: int = 0
    exact: int = 0
    ambiguous: int = 0
    by_kind: dict[str, int] = field(default_factory=dict)
    mismatches: list[Mismatch] = field(default_factory=list)
    notes: dict[str, int] = field(default_factory=dict)  # things counted, not compared (e.g. batch hints)


def compare(up: Attempt, ours: OurAttempt) -> tuple[list[str], list[str]]:
    """The kinds of difference and a line of detail for each."""
    kinds: list[str] = []
    details: list[str] = []

    def add(kind: str, detail: str) -> None:
        if kind not in kinds:
            kinds.append(kind)
        details.append(f"{kind}: {detail}")

    up_bound, our_bound = up.node is not None, ours.node is not None
    if up_bound != our_bound or up.error != ours.error:
        add("result", f"upstream {_result(up.node, up.error)}, kubesched {_result(ours.node, ours.error)}")
    raced = up.error and ours.error and up.message in ours.raced_errors
    if not up_bound and not our_bound and (up.message or "") != (ours.message or "") and not raced:
        add("message", f"\n    upstream:  {up.message}\n    kubesched: {ours.message}")
    if up.scores or ours.scores:
        up_nodes, our_nodes = set(up.scores), set(ours.scores)
        if up_nodes != our_nodes:
            only_up, only_ours = sorted(up_nodes - our_nodes), sorted(our_nodes - up_nodes)
            add("feasible", f"scored by upstream only: {only_up}; by kubesched only: {only_ours}")
        for node in sorted(up_nodes & our_nodes):
            a, b = up.scores[node], ours.scores[node]
            for plugin in sorted(set(a) | set(b)):
                if a.get(plugin) != b.get(plugin):
                    add("scores", f"{node} {plugin}: upstream {a.get(plugin)}, kubesched {b.get(plugin)}")
    if up_bound and our_bound and up.node not in ours.top and up.node != ours.node:
        add("node", f"upstream chose {up.node}, kubesched's top set is {ours.top}")
    elif up_bound and our_bound and up.allocations != ours.allocations:
        for claim in sorted(set(up.allocations) | set(ours.allocations)):
            ua, oa = up.allocations.get(claim), ours.allocations.get(claim)
            if ua != oa:
                both = f"\n    upstream:  {_devices(ua)}\n    kubesched: {_devices(oa)}"
                add("allocation", f"{claim} on {up.node}:{both}")
    if not up_bound and (up.nominated or None) != (ours.nominated or None):
        add("nominated", f"upstream {up.nominated}, kubesched {ours.nominated}")
    if not up_bound and sorted(up.victims) != sorted(ours.victims):
        add("victims", f"upstream {sorted(up.victims)}, kubesched {sorted(ours.victims)}")
    return kinds, details


def _devices(allocation: dict[str, Any] | None) -> str:
    """An allocation in one line: request=driver/pool/device per result, then what else it holds."""
    if allocation is None:
        return "none"
    parts = [f"{r.get('request')}={r.get('driver')}/{r.get('pool')}/{r.get('device')}" for r in allocation["results"]]
    rest = {k: v for k, v in allocation.items() if k != "results"}
    named = ("request", "driver", "pool", "device")
    extras = [{k: v for k, v in r.items() if k not in named} for r in allocation["results"]]
    if any(extras):
        rest["result fields"] = extras
    return " ".join(parts) + (f" {json.dumps(rest, sort_keys=True)}" if rest else "")


def _result(node: str | None, error: bool) -> str:
    return f"bound to {node}" if node is not None else ("error" if error else "unschedulable")


RACED = "filter errors raced between nodes"


def check(
    decision: Decision,
    config: dict[str, Any],
    *,
    restrict: bool = False,
    notes: dict[str, int] | None = None,
    kubernetes_version: str = "1.36",
    before: Sequence[Decision] = (),
) -> Mismatch | None:
    """`restrict`: replay on upstream's feasible nodes (large clusters, where which nodes it examined is timing).

    `notes` counts the decisions matched only as one of several possible outcomes (RACED).

    `before`: when upstream gave this decision an OpportunisticBatching hint, the decisions of
    the cycles before it back to the one that filled the cache: all are replayed in one
    scheduler, so that kubesched's batch cache holds what upstream's did.
    """
    up = decision.upstream
    only = set(up.scores) if restrict and up.node is not None and up.scores else None
    try:
        v = kubernetes_version
        if before:
            ours = _replay_chain(before, decision, config, v)
        else:
            ours = replay(decision.state, decision.pod, config, only_nodes=only, kubernetes_version=v)
        if up.node is not None and ours.node not in (None, up.node) and up.node in ours.top and up.allocations:
            # A tie broken the other way: the devices to compare are those kubesched allocates on upstream's node.
            ours.allocations = replay(
                decision.state, decision.pod, config, only_nodes={up.node}, kubernetes_version=v
            ).allocations
        if up.error and ours.error and up.message != ours.message:
            ours.raced_errors = _errors_per_node(decision, config, v)
    except Exception as err:  # the replay itself failing is a finding, not a crash of the harness
        return Mismatch(decision, None, ["replay"], [f"replay: {type(err).__name__}: {err}"])
    kinds, details = compare(decision.upstream, ours)
    if not kinds and notes is not None and up.error and up.message != ours.message:
        notes[RACED] = notes.get(RACED, 0) + 1
    if kinds == ["victims"] and kubernetes_version in UNLOGGED_TERMINATING_RELEASES:
        if _extra_victims_were_terminating(decision, ours.victims):
            if notes is not None:
                notes[UNLOGGED] = notes.get(UNLOGGED, 0) + 1
            return None
    return Mismatch(decision, ours, kinds, details) if kinds else None


UNLOGGED = "victims already terminating, which the release's log does not name"
UNLOGGED_TERMINATING_RELEASES = frozenset({"1.34"})
"""Releases whose log has no line for a victim whose deletion had already begun (v1.35 added "Victim Pod is
already being deleted"): the harness cannot read whether upstream counted such a victim."""


def _extra_victims_were_terminating(decision: Decision, ours: Sequence[str]) -> bool:
    """Upstream's victims are ours but for pods already being deleted in the state both saw."""
    up = set(decision.upstream.victims)
    extra = set(ours) - up
    if not extra or not up <= set(ours):
        return False
    terminating = {
        f"{(o.get('metadata') or {}).get('namespace', 'default')}/{(o.get('metadata') or {}).get('name')}"
        for o in decision.state
        if o.get("kind") == "Pod" and (o.get("metadata") or {}).get("deletionTimestamp")
    }
    return extra <= terminating


def _errors_per_node(decision: Decision, config: dict[str, Any], kubernetes_version: str) -> list[str]:
    """The error each node alone gives: any of them is what upstream's parallel Filter may report."""
    out = []
    for o in decision.state:
        if o.get("kind") == "Node":
            name = o["metadata"]["name"]
            alone = replay(decision.state, decision.pod, config, examine={name}, kubernetes_version=kubernetes_version)
            if alone.error and alone.message:
                out.append(alone.message)
    return out


def tally(
    family: str,
    decisions: Iterable[Decision],
    config_of: Callable[[Decision], dict[str, Any]],
    *,
    restrict: bool = False,
    kubernetes_version: str = "1.36",
) -> FamilyReport:
    report = FamilyReport(family)
    chain: dict[int, list[Decision]] = {}  # per seed: the last bound pod's decision, after those it took hints from
    for d in decisions:
        before = list(chain.get(d.seed, ())) if d.upstream.batch_hint else []
        if d.upstream.node is not None:
            chain[d.seed] = [*before, d]
        for note, counted in (
            ("batch hints", d.upstream.batch_hint),
            ("preemptions (a node nominated)", d.upstream.nominated is not None and d.upstream.node is None),
            ("attempts after a preemption", d.label == "after preemption"),
            ("attempts after a deallocation", d.label == "after deallocation"),
            ("decided beside a standing nomination", d.nominations > 0),
            ("unschedulable", d.upstream.node is None),
            ("bound with devices allocated", any(d.upstream.allocations.values())),
            ("claims upstream allocated or shared", sum(1 for a in d.upstream.allocations.values() if a)),
            ("device results in those claims", sum(len(a["results"]) for a in d.upstream.allocations.values() if a)),
        ):
            if counted:
                report.notes[note] = report.notes.get(note, 0) + int(counted)
        if d.ambiguous:
            report.ambiguous += 1
            continue
        report.decisions += 1
        m = check(
            d, config_of(d), restrict=restrict, notes=report.notes, kubernetes_version=kubernetes_version, before=before
        )
        if m is None:
            report.exact += 1
            continue
        report.mismatches.append(m)
        for k in m.kinds:
            report.by_kind[k] = report.by_kind.get(k, 0) + 1
    return report


def _key(obj: dict[str, Any]) -> str:
    meta = obj.get("metadata") or {}
    return f"{meta.get('namespace', 'default')}/{meta.get('name')}"


CHAIN_SEEDS = 32  # tie-break seeds tried until the earlier pods land where upstream's did


def _replay_chain(
    before: Sequence[Decision], decision: Decision, config: dict[str, Any], kubernetes_version: str
) -> OurAttempt:
    """The cycles that filled upstream's batch cache, then this one, in one scheduler.

    Where an earlier pod had nodes tied at the top, upstream's random pick decided the cache
    this pod drew from: tie-break seeds are tried until every earlier pod lands on upstream's node.
    """
    then = [_pending(d) for d in (*before[1:], decision)]
    wanted = [d.upstream.node for d in before]
    v = kubernetes_version
    ours = replay(before[0].state, before[0].pod, config, then=then, kubernetes_version=v)
    for seed in range(1, CHAIN_SEEDS):
        if ours.earlier == wanted:
            break
        ours = replay(before[0].state, before[0].pod, config, seed=seed, then=then, kubernetes_version=v)
    return ours


def _pending(d: Decision) -> dict[str, Any]:
    """The decision's pod as it was created, from the state upstream decided on."""
    return next(o for o in d.state if o.get("kind") == "Pod" and _key(o) == d.pod)


def write_mismatch(m: Mismatch, out_dir: Path, config: dict[str, Any]) -> Path:
    """The state as manifests `kubesched simulate` reads, the configuration, and what differed."""
    d = m.decision
    stem = f"{d.family}-seed{d.seed}-{d.pod.replace('/', '_')}-{d.label.replace(' ', '-')}"
    out_dir.mkdir(parents=True, exist_ok=True)
    state_path = out_dir / f"{stem}.yaml"
    cfg = {"apiVersion": "kubescheduler.config.k8s.io/v1", "kind": "KubeSchedulerConfiguration", **config}
    with state_path.open("w") as f:
        yaml.safe_dump_all([cfg, *d.state], f, sort_keys=False)
    detail = {
        "pod": d.pod,
        "decision": d.label,
        "differences": m.details,
        "upstream": {
            "node": d.upstream.node,
            "message": d.upstream.message,
            "nominated": d.upstream.nominated,
            "victims": d.upstream.victims,
            "scores": d.upstream.scores,
            "totals": d.upstream.totals,
            "evaluated": d.upstream.evaluated,
            "allocations": d.upstream.allocations,
        },
        "kubesched": None
        if m.ours is None
        else {
            "node": m.ours.node,
            "message": m.ours.message,
            "nominated": m.ours.nominated,
            "victims": m.ours.victims,
            "scores": m.ours.scores,
            "totals": m.ours.totals,
            "filters": m.ours.filters,
            "allocations": m.ours.allocations,
        },
    }
    (out_dir / f"{stem}.json").write_text(json.dumps(detail, indent=1, sort_keys=True))
    m.state_file = str(state_path)
    return state_path


def format_table(reports: list[FamilyReport]) -> str:
    head = ["family", "decisions", "exact", "exact %", *[k for k in KINDS], "not compared"]
    rows = [head]
    for r in reports:
        pct = f"{100.0 * r.exact / r.decisions:.1f}" if r.decisions else "-"
        rows.append(
            [
                r.family,
                str(r.decisions),
                str(r.exact),
                pct,
                *[str(r.by_kind.get(k, 0)) for k in KINDS],
                str(r.ambiguous),
            ]
        )
    widths = [max(len(row[i]) for row in rows) for i in range(len(head))]
    lines = [
        "  ".join(cell.rjust(w) if j else cell.ljust(w) for j, (cell, w) in enumerate(zip(row, widths, strict=True)))
        for row in rows
    ]
    lines.insert(1, "  ".join("-" * w for w in widths))
    return "\n".join(lines)
