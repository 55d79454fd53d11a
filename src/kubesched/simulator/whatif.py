"""`kubesched whatif`: capacity and configuration questions, answered by repeated simulation.

Every answer comes from whole simulations through the Python API (`kubesched.simulate`),
with one seed for all of them, so each number can be reproduced with `kubesched simulate`.

- capacity: the smallest number of nodes of a template's shape that lets every pending pod
  schedule. Exponential search, then binary search. More nodes usually help, but not always
  (topology spread, affinity and scoring can place pods worse with more room), so the answer
  is checked against one node fewer, and where more nodes left more pods pending among the
  counts tried, every untried count below the answer is simulated too (up to SCAN_LIMIT).
  A pod that cannot run on the template's shape at all is found first, by simulating it alone
  (with the cluster's namespaces, classes, volumes and DaemonSets) against one empty template
  node: such a pod makes the question unanswerable, and the plugins that refuse it say why.
  A PodGroup (gang) not placed whole is tried whole instead, against one empty template node
  per member: a gang that cannot be placed whole there (a member too big for a node or held by scheduling gates, all
  members needed within one domain the template's nodes cannot make, minCount above its
  pods) never will be, and is named with why. A trial is enough only when every pod is
  placed, so a gang counts only once placed whole.
- compare: the same manifests and seed under two configurations; which pods land
  differently, and how utilisation, spread and pending change.
"""

from __future__ import annotations

import json
import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from kubesched.api.kinds import SCALED_KINDS
from kubesched.config import names
from kubesched.config.trust import TRUSTED
from kubesched.release import DEFAULT, Release, release_arguments
from kubesched.simulator.budget import Budget
from kubesched.simulator.inputs import (
    NodeTemplate,
    WhatIfError,
    check_room,
    key_of,
    load_template,
    name_of,
    read_objects,
    rereadable,
    simulate_checked,
    utilisation,
)
from kubesched.simulator.pod_groups import GroupEntry
from kubesched.simulator.summary import NO_ZONE

if TYPE_CHECKING:
    from kubesched.simulator.api import PodResult, Simulation

DEFAULT_MAX_NODES = 1000
DEFAULT_SEED = 0
SCAN_LIMIT = 64  # untried counts below a non-monotone answer that are simulated one by one
COUNT_DEPENDENT = frozenset({names.INTER_POD_AFFINITY})
"""Plugins that can refuse a pod alone on an empty node and accept it in the full cluster (required
affinity to pods that are elsewhere): their refusal alone does not make the template unusable."""
SCHEDULING_GATES_WAIT = "waiting for scheduling gates"  # how a pod held by spec.schedulingGates reads
NOT_CONTEXT = frozenset({"Node", "Pod", "CSINode", "Scenario", "Job", "CronJob", *SCALED_KINDS})
"""Kinds left out of a pod's alone check: the cluster's nodes and its other pods (DaemonSets stay:
every added node runs their pods)."""


def identity(pod: PodResult) -> str:
    """Pods that stand or fall together: those of one workload, else the pod itself."""
    return f"{pod.namespace}/{pod.owner}" if pod.owner else pod.key


@dataclass(frozen=True)
class Trial:
    """One simulation of the search: `nodes` template nodes added."""

    nodes: int
    pending: int  # pods without a node at the end
    waiting: tuple[tuple[str, str], ...]  # of them, those the answer must place: (pod, message)

    @property
    def ok(self) -> bool:
        return not self.waiting


@dataclass(frozen=True)
class Blocked:
    """Pods that no number of template nodes can place, and what refused them on an empty one."""

    pod: str
    owner: str | None
    pods: int  # pods like it (of its workload, or with the same spec) pending without added nodes
    reasons: dict[str, str]  # plugin -> verdict on an empty template node
    message: str
    idents: tuple[str, ...]  # what `identity` gives its pods and those like it
    pod_group: str | None = None  # `namespace/name` of the gang this is, tried whole (then `pods` are its members)


@dataclass
class CapacityAnswer:
    template: NodeTemplate
    seed: int
    max_nodes: int
    status: str = "found"  # none-needed | found | blocked | max-nodes
    nodes: int | None = None  # the smallest count that places every pod that can be placed
    pending_before: int = 0
    added: list[str] = field(default_factory=list)
    blocked: list[Blocked] = field(default_factory=list)
    still_pending: list[tuple[str, str]] = field(default_factory=list)
    trials: list[Trial] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    non_monotone: bool = False

    def to_json(self) -> dict[str, Any]:
        return {
            "status": self.status,
            "nodes": self.nodes,
            "addedNodes": self.added,
            "template": {
                "file": self.template.path,
                "name": self.template.name,
                "allocatable": self.template.allocatable,
            },
            "seed": self.seed,
            "maxNodes": self.max_nodes,
            "pendingBefore": self.pending_before,
            "blocked": [
                {
                    "pod": b.pod,
                    "owner": b.owner,
                    "pods": b.pods,
                    "podGroup": b.pod_group,
                    "reasons": b.reasons,
                    "message": b.message,
                }
                for b in self.blocked
            ],
            "stillPending": [{"pod": p, "message": m} for p, m in self.still_pending],
            "trials": [{"nodes": t.nodes, "pending": t.pending, "ok": t.ok} for t in self.trials],
            "nonMonotone": self.non_monotone,
            "notes": self.notes,
        }


def capacity(
    paths: Sequence[str],
    template_path: str,
    *,
    config: str | None = None,
    max_nodes: int = DEFAULT_MAX_NODES,
    seed: int = DEFAULT_SEED,
    budget: Budget | None = None,
    overlays: Sequence[str] = (),
    release: Release = DEFAULT,
) -> CapacityAnswer:
    """How many nodes like the template the cluster needs for all its pending pods; every simulation within
    `budget` (the nodes a trial adds are counted before they are made). `overlays` replace objects of `paths`
    as `kubesched simulate --overlay` does, in every simulation; each follows `release`'s kube-scheduler."""
    if max_nodes < 1:
        raise WhatIfError(f"--max-nodes: must be at least 1, got {max_nodes}")
    budget = budget or Budget()
    paths, overlays = rereadable(paths), rereadable(overlays)
    template = load_template(template_path, budget)
    rk = release_arguments(release)
    base = simulate_checked(
        *paths, overlays=overlays, config=config, seed=seed, record=False, config_trust=TRUSTED, budget=budget, **rk
    )
    answer = CapacityAnswer(template=template, seed=seed, max_nodes=max_nodes, pending_before=len(base.pending))
    taken = {n.name for n in base.nodes}
    objects = read_objects(paths, budget, overlays)
    groups = [g for g in base.pod_groups if g["state"] != "Scheduled"]
    answer.blocked = (
        _blocked(base.pending, groups, objects, template, taken, config, seed, budget, rk) if base.pending else []
    )
    blocked_ids = {i for b in answer.blocked for i in b.idents}

    def trial(n: int) -> Trial:
        check_room(objects, 1, n, budget)
        sim = base if n == 0 else _with_nodes(paths, overlays, template, n, taken, config, seed, budget, rk)
        return Trial(
            n, len(sim.pending), tuple((p.key, p.message) for p in sim.pending if identity(p) not in blocked_ids)
        )

    search = find_minimum(trial, max_nodes)
    answer.trials, answer.notes, answer.non_monotone = search.trials, search.notes, search.non_monotone
    answer.nodes = search.found
    if search.found is None:
        answer.status = "blocked" if answer.blocked else "max-nodes"
        answer.still_pending = list(search.trials[-1].waiting)
        return answer
    answer.added = [n["metadata"]["name"] for n in template.nodes(search.found, taken)]
    if answer.blocked:
        answer.status = "blocked"
    else:
        answer.status = "none-needed" if search.found == 0 else "found"
    return answer


def _with_nodes(
    paths: Sequence[str],
    overlays: Sequence[str],
    template: NodeTemplate,
    n: int,
    taken: set[str],
    config: str | None,
    seed: int,
    budget: Budget,
    rk: dict[str, Any],
) -> Simulation:
    return simulate_checked(
        *paths,
        template.nodes(n, taken),
        overlays=overlays,
        config=config,
        seed=seed,
        record=False,
        config_trust=TRUSTED,
        budget=budget,
        **rk,
    )


@dataclass
class Search:
    found: int | None  # the smallest count found enough; None when max_nodes was not
    trials: list[Trial]  # in the order run
    notes: list[str]
    non_monotone: bool


def find_minimum(trial: Callable[[int], Trial], max_nodes: int) -> Search:
    """The fewest nodes that are enough: exponential search, binary search, then a check of the answer.

    The answer is always checked against one node fewer (the binary search ends there). Where
    more nodes left more pods pending somewhere among the counts tried, the untried counts below
    the answer are simulated one by one, lowest first (up to SCAN_LIMIT).
    """
    tried: dict[int, Trial] = {}

    def run(n: int) -> Trial:
        if n not in tried:
            tried[n] = trial(n)
        return tried[n]

    found = _search(run, max_nodes)
    notes: list[str] = []
    if found is not None and _rises(tried):
        found = _scan_below(run, found, tried, notes)
    rises = _rises(tried)
    for a, b in rises:
        notes.append(
            f"non-monotone: {b.nodes} node(s) left {len(b.waiting)} pod(s) pending, {a.nodes} left {len(a.waiting)}"
        )
    if found:
        notes.append(f"checked: {found - 1} node(s) leave {len(tried[found - 1].waiting)} pod(s) pending")
    return Search(found, list(tried.values()), notes, bool(rises))


def _search(trial: Callable[[int], Trial], max_nodes: int) -> int | None:
    """Exponential search for a count that places every pod, then binary search below it."""
    if trial(0).ok:
        return 0
    lo, n = 0, 1
    while not trial(n).ok:
        lo = n
        if n >= max_nodes:
            return None
        n = min(2 * n, max_nodes)
    hi = n
    while hi - lo > 1:
        mid = (lo + hi) // 2
        if trial(mid).ok:
            hi = mid
        else:
            lo = mid
    return hi


def _rises(tried: dict[int, Trial]) -> list[tuple[Trial, Trial]]:
    """Consecutive counts tried where more nodes left more pods pending."""
    ordered = [tried[n] for n in sorted(tried)]
    return [(a, b) for a, b in zip(ordered, ordered[1:], strict=False) if len(b.waiting) > len(a.waiting)]


def _scan_below(trial: Callable[[int], Trial], found: int, tried: dict[int, Trial], notes: list[str]) -> int:
    """The untried counts below the answer, one by one, lowest first."""
    untried = [n for n in range(1, found) if n not in tried]
    for n in untried[:SCAN_LIMIT]:
        if trial(n).ok:
            notes.append(
                f"non-monotone: {found} node(s) were found by bisection, and simulating below it {n} were enough"
            )
            return n
    if len(untried) > SCAN_LIMIT:
        notes.append(
            f"non-monotone: {len(untried) - SCAN_LIMIT} count(s) below {found} were not simulated "
            f"(scan limit {SCAN_LIMIT}); a smaller answer may exist"
        )
    else:
        notes.append(f"non-monotone: every count below {found} was simulated; none was enough")
    return found


def _blocked(
    pending: Sequence[PodResult],
    groups: Sequence[GroupEntry],
    objects: list[dict[str, Any]],
    template: NodeTemplate,
    taken: set[str],
    config: str | None,
    seed: int,
    budget: Budget,
    rk: dict[str, Any],
) -> list[Blocked]:
    """Pending pods that cannot run on an empty node of the template's shape, whatever the count; and the `groups`
    (PodGroups not placed whole) that cannot be placed whole on empty nodes of that shape, one a member."""
    out: list[Blocked] = []
    node = template.nodes(1, taken)[0]
    node_name = name_of(node)
    context = [o for o in objects if o.get("kind") not in NOT_CONTEXT]
    pods = {key_of(o): o for o in _all_objects(objects) if o.get("kind") == "Pod"}
    workloads = {f"{_ns(o)}/{o.get('kind')}/{name_of(o)}": o for o in _all_objects(objects)}
    gang_of = {f"{g['namespace']}/{member}": g for g in groups for member in g["podNames"]}
    gangs: dict[str, tuple[GroupEntry, list[PodResult]]] = {}
    singles: dict[str, list[PodResult]] = {}
    for p in pending:
        gang = gang_of.get(p.key)
        if gang is not None:
            gangs.setdefault(f"{gang['namespace']}/{gang['name']}", (gang, []))[1].append(p)
        elif p.result == "Gated":
            gates = {names.SCHEDULING_GATES: SCHEDULING_GATES_WAIT}
            out.append(Blocked(p.key, p.owner, 1, gates, p.message, (identity(p),)))
        elif p.result == "Error":
            out.append(Blocked(p.key, p.owner, 1, {}, p.message, (identity(p),)))
        else:
            singles.setdefault(identity(p), []).append(p)
    for gang, members in gangs.values():
        found = _gang_blocked(gang, members, context, pods, workloads, template, taken, config, seed, budget, rk)
        if found is not None:
            out.append(found)
    if any(o.get("kind") == "DaemonSet" for o in context):
        # every added node runs the DaemonSets' pods: one that does not fit pends on each of them
        sim = simulate_checked(context, node, config=config, seed=seed, config_trust=TRUSTED, budget=budget, **rk)
        for p in sim.pending:
            members = singles.pop(identity(p), [])
            out.append(_refused(members[0] if members else p, members, p, node_name))
    shapes: dict[str, tuple[dict[str, Any], list[PodResult]]] = {}  # pods that would give the same answer alone
    for members in singles.values():
        subject, shape = _subject(members[0], pods, workloads)
        if subject is not None:  # else neither the pod nor its workload is in the files (a Scenario step made it)
            shapes.setdefault(shape, (subject, []))[1].extend(members)
    for subject, members in shapes.values():
        first = members[0]
        sim = simulate_checked(
            context, node, subject, config=config, seed=seed, config_trust=TRUSTED, budget=budget, **rk
        )
        alone = next((p for p in sim.pods if identity(p) == identity(first) or p.key == first.key), None)
        if alone is None or alone.scheduled:
            continue
        blocked = _refused(first, members, alone, node_name)
        if not blocked.reasons or not set(blocked.reasons) <= COUNT_DEPENDENT:
            out.append(blocked)
    return out


def _gang_blocked(
    gang: GroupEntry,
    members: list[PodResult],
    context: list[dict[str, Any]],
    pods: dict[str, dict[str, Any]],
    workloads: dict[str, dict[str, Any]],
    template: NodeTemplate,
    taken: set[str],
    config: str | None,
    seed: int,
    budget: Budget,
    rk: dict[str, Any],
) -> Blocked | None:
    """A gang not placed whole that no number of template nodes can place whole: tried alone (with its PodGroup
    and the cluster's context) on one empty template node per member. None when it fits there, or when its
    pods are neither in the files nor made by a workload there (Scenario steps): the trials judge it then."""
    key = f"{gang['namespace']}/{gang['name']}"
    idents = tuple(dict.fromkeys(identity(m) for m in members))
    first = members[0]

    def blocked(reasons: dict[str, str], message: str) -> Blocked:
        return Blocked(first.key, first.owner, len(members), reasons, message, idents, pod_group=key)

    count, need = len(gang["podNames"]), gang["minCount"]
    if not gang["exists"]:
        return blocked({names.GANG_SCHEDULING: f"no PodGroup {key}"}, gang["holdingBack"] or "")
    if need is not None and count < need:
        why = f"minCount {need}, but the group has {count} pod(s)"
        return blocked({names.GANG_SCHEDULING: why}, gang["holdingBack"] or why)
    gated = next((m for m in members if m.result == "Gated" and m.message.startswith(SCHEDULING_GATES_WAIT)), None)
    if gated is not None:  # the gang waits for a member nothing here will ungate
        return blocked({names.SCHEDULING_GATES: SCHEDULING_GATES_WAIT}, gated.message)
    subjects: dict[str, dict[str, Any]] = {}
    for name in gang["podNames"]:
        member = f"{gang['namespace']}/{name}"
        manifest = pods.get(member)
        owner = next((m.owner for m in members if m.key == member), None)
        workload = workloads.get(f"{gang['namespace']}/{owner}") if owner else None
        if manifest is not None:
            subjects[member] = manifest
        elif workload is not None:
            subjects[f"{gang['namespace']}/{owner}"] = workload
        else:
            return None
    check_room([*context, *subjects.values()], 1, count, budget)
    nodes = template.nodes(count, taken)
    sim = simulate_checked(
        context, *nodes, *subjects.values(), config=config, seed=seed, config_trust=TRUSTED, budget=budget, **rk
    )
    tried = next((g for g in sim.pod_groups if (g["namespace"], g["name"]) == (gang["namespace"], gang["name"])), None)
    if tried is None or tried["state"] == "Scheduled":
        return None
    reasons: dict[str, str] = {}
    refused = next((p for p in sim.pods if p.message == tried["blocking"] and p.plugins is not None), None)
    if refused is not None and refused.plugins is not None:
        for verdicts in refused.plugins.filter.values():
            for plugin, verdict in verdicts.items():
                if verdict != "passed":
                    reasons.setdefault(plugin, verdict)
    topology = gang["topologyKey"]
    if topology is not None:
        domains = [(n.get("metadata") or {}).get("labels", {}).get(topology) for n in nodes]
        if None in domains:
            why = f"nodes like the template have no {topology} label, so none is in a domain the group may use"
            reasons.setdefault(names.TOPOLOGY_PLACEMENT_GENERATOR, why)
        elif len(set(domains)) == len(domains) and need is not None and need > 1:
            why = f"each node like the template is its own {topology} domain, and one cannot hold {need} members"
            reasons.setdefault(names.TOPOLOGY_PLACEMENT_GENERATOR, why)
    return blocked(reasons, tried["holdingBack"] or tried["explain"])


def _refused(pod: PodResult, members: list[PodResult], alone: PodResult, node: str) -> Blocked:
    """`pod` and the pending `members` like it, refused as `alone` was on the empty node."""
    verdicts = alone.plugins.filter.get(node, {}) if alone.plugins is not None else {}
    reasons = {plugin: verdict for plugin, verdict in verdicts.items() if verdict != "passed"}
    idents = tuple(dict.fromkeys([identity(pod), *(identity(m) for m in members)]))
    return Blocked(pod.key, pod.owner, len(members), reasons, alone.message, idents)


def _ns(obj: dict[str, Any]) -> str:
    return str((obj.get("metadata") or {}).get("namespace") or "default")


def _all_objects(objects: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The objects and what Scenario steps create."""
    out = list(objects)
    for o in objects:
        if o.get("kind") == "Scenario":
            for step in o.get("steps") or []:
                if isinstance(step, dict):
                    out.extend(c for c in step.get("create") or [] if isinstance(c, dict))
    return out


def _subject(
    pod: PodResult, pods: dict[str, dict[str, Any]], workloads: dict[str, dict[str, Any]]
) -> tuple[dict[str, Any] | None, str]:
    """What to simulate alone for the pod, and a key shared by pods that would give the same answer."""
    manifest = pods.get(pod.key)
    if manifest is not None:
        meta = manifest.get("metadata") or {}
        shape = {"ns": pod.namespace, "labels": meta.get("labels"), "spec": manifest.get("spec")}
        return manifest, json.dumps(shape, sort_keys=True, default=str)
    workload = workloads.get(f"{pod.namespace}/{pod.owner}") if pod.owner else None
    if workload is None or workload.get("kind") not in (*SCALED_KINDS, "Job"):
        return None, ""
    spec = dict(workload.get("spec") or {})
    if workload.get("kind") == "Job":
        spec["parallelism"] = 1
        spec["completions"] = 1
        spec.pop("suspend", None)
    else:
        spec["replicas"] = 1
    return {**workload, "spec": spec}, f"{pod.namespace}/{pod.owner}"


# --- compare ---------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Side:
    """One configuration's simulation, measured (utilisation and zones from the run's summary)."""

    config: str
    sim: Simulation
    release: str = ""  # "v1.35" (with any gates): the kube-scheduler release this side followed

    @property
    def zones(self) -> dict[str, str]:
        """node -> its zone label ("" when none)."""
        return {n.name: "" if n.zone == NO_ZONE else n.zone for n in self.sim.summary.nodes}

    def node_utilisations(self, resource: str) -> list[float]:
        found = (n.resources[resource].utilisation for n in self.sim.summary.nodes if resource in n.resources)
        return [u for u in found if u is not None]

    def placed_per_node(self) -> dict[str, int]:
        """Pods this simulation placed, per node (every node, zero included)."""
        counts = {n.name: 0 for n in self.sim.nodes}
        for p in self.sim.scheduled:
            if p.node is not None:
                counts[p.node] = counts.get(p.node, 0) + 1
        return counts

    def placed_per_zone(self) -> dict[str, int]:
        zones = self.zones
        counts = {zone: 0 for zone in zones.values() if zone}
        for node, n in self.placed_per_node().items():
            zone = zones.get(node, "")
            if zone:
                counts[zone] = counts.get(zone, 0) + n
        return counts

    def metrics(self) -> dict[str, Any]:
        per_node = list(self.placed_per_node().values())
        per_zone = self.placed_per_zone()
        util = utilisation(self.sim)
        node_util = {r: _stats(self.node_utilisations(r)) for r in util if r in ("cpu", "memory")}
        return {
            "config": self.config,
            "kubernetesVersion": self.release,
            "pods": len(self.sim.pods),
            "scheduled": len(self.sim.scheduled),
            "pending": len(self.sim.pending),
            "nodesUsed": sum(1 for n in self.sim.nodes if n.pods > 0),
            "utilisation": util,
            "nodeUtilisation": node_util,
            "placedPerNode": _stats([float(x) for x in per_node]),
            "placedPerZone": {"counts": per_zone, **_stats([float(x) for x in per_zone.values()])},
        }


def _stats(values: list[float]) -> dict[str, float | None]:
    """Standard deviation (population) and range: how evenly something is spread."""
    if not values:
        return {"stddev": None, "range": None}
    mean = sum(values) / len(values)
    return {
        "stddev": math.sqrt(sum((v - mean) ** 2 for v in values) / len(values)),
        "range": max(values) - min(values),
    }


@dataclass(frozen=True)
class Comparison:
    a: Side
    b: Side
    seed: int

    def moved(self) -> list[dict[str, Any]]:
        """Pods whose node or result differs, in A's order, then pods only B has; with the plugin scores
        that changed between the two nodes when both sides recorded them (a release compare)."""
        a, b = self.a.sim, self.b.sim
        in_b = {p.key: p for p in b.pods}
        out = []
        for p in a.pods:
            q = in_b.pop(p.key, None)
            if q is None or (p.node, p.result) != (q.node, q.result):
                out.append(_moved(p, q))
                if q is not None and p.plugins is not None and q.plugins is not None:
                    out[-1]["why"] = score_changes(p, q)
        out.extend(_moved(None, q) for q in in_b.values())
        return out

    def to_json(self) -> dict[str, Any]:
        return {"seed": self.seed, "a": self.a.metrics(), "b": self.b.metrics(), "moved": self.moved()}


def _moved(p: PodResult | None, q: PodResult | None) -> dict[str, Any]:
    either = p or q
    return {
        "pod": either.key if either is not None else "",
        "nodeA": p.node if p else None,
        "resultA": p.result if p else None,
        "nodeB": q.node if q else None,
        "resultB": q.result if q else None,
    }


def score_changes(p: PodResult, q: PodResult) -> list[dict[str, Any]]:
    """Why a pod moved from node X (under A) to node Y (under B): each plugin whose weighted scores of X and
    Y (those both sides scored) differ between the sides (None: the plugin did not score there), and each
    filter that rejected X or Y on one side."""
    assert p.plugins is not None and q.plugins is not None
    nodes = [n for n in dict.fromkeys((p.node, q.node)) if n is not None]
    a, b = p.plugins.final_score, q.plugins.final_score
    scored = [n for n in nodes if n in a and n in b]  # a node one side filtered out is told by its filter below
    plugins = sorted({name for rec in (a, b) for n in scored for name in rec.get(n, {})})
    out: list[dict[str, Any]] = []
    for name in plugins:
        under_a = {n: a[n].get(name) for n in scored}
        under_b = {n: b[n].get(name) for n in scored}
        if under_a != under_b:
            out.append({"plugin": name, "scoresA": under_a, "scoresB": under_b})
    for side, rec in (("A", p.plugins), ("B", q.plugins)):
        for node in nodes:
            for name, verdict in rec.filter.get(node, {}).items():
                if verdict != "passed":
                    out.append({"plugin": name, "node": node, f"filter{side}": verdict})
    return out


DEFAULT_CONFIG = "default"


def compare(
    paths: Sequence[str],
    configs: Sequence[str],
    *,
    seed: int = DEFAULT_SEED,
    budget: Budget | None = None,
    overlays: Sequence[str] = (),
    releases: Sequence[Release] = (),
) -> Comparison:
    """The manifests (with `overlays` replacing their objects, as `kubesched simulate --overlay`) under two
    configurations (a file, or `default` for upstream's), with one seed, each simulation within `budget`.

    `releases`: the kube-scheduler release of each side (none: v1.36 for both; one: both). When the sides'
    releases differ, every pod's scores are recorded so that a moved pod says which plugin scores changed.
    """
    if len(releases) > 2:
        raise WhatIfError(f"--kubernetes-version: give at most two releases to compare, got {len(releases)}")
    if len(configs) > 2 or (len(configs) < 2 and len(releases) < 2):
        raise WhatIfError(
            f"--config: give exactly two configurations to compare, got {len(configs)} "
            "(or two releases: --kubernetes-version A --kubernetes-version B)"
        )
    sides = list(configs) or [DEFAULT_CONFIG]
    configs = sides * 2 if len(sides) == 1 else sides
    chosen = list(releases) or [DEFAULT]
    pair = chosen * 2 if len(chosen) == 1 else chosen
    record = pair[0] != pair[1]
    paths, overlays = rereadable(paths), rereadable(overlays)
    a, b = (
        _side(label, c, r, paths, overlays, seed, budget, record)
        for label, c, r in zip("AB", configs, pair, strict=True)
    )
    return Comparison(a, b, seed)


def _side(
    label: str,
    config: str,
    release: Release,
    paths: Sequence[str],
    overlays: Sequence[str],
    seed: int,
    budget: Budget | None,
    record: bool,
) -> Side:
    """One configuration's simulation; a problem in its configuration file says which side it is (A or B)."""
    try:
        sim = simulate_checked(
            *paths,
            overlays=overlays,
            config=None if config == DEFAULT_CONFIG else config,
            seed=seed,
            record=record,
            config_trust=TRUSTED,
            budget=budget,
            **release_arguments(release),
        )
    except WhatIfError as err:
        text = str(err)
        if config != DEFAULT_CONFIG and text.startswith(f"{config}: "):
            raise WhatIfError(f"{config} (config {label}): {text[len(config) + 2 :]}") from err
        raise
    return Side(config, sim, release.describe())
