"""`kubesched simulate --explain NAMESPACE/POD`: one pod's last attempt, node by node, in plain words.

Read from the per-plugin record of the pod's last attempt (simulate keeps it for explained pods
whatever the output): every node the attempt examined, its Filter verdict, each Score plugin's
final (weighted) score and the total, the chosen node, and why each other node lost.

`--explain NAMESPACE/KIND/NAME` names a workload instead, as kubectl does: its pods' names are
made by its controllers during the run, so users cannot know them beforehand. Its pods are
grouped by outcome (the nodes they went to, the reasons the others wait), with one pod's full
explanation for each outcome.
"""

from __future__ import annotations

import difflib
import re
from collections.abc import Collection, Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

from rich.console import Console
from rich.markup import escape

from kubesched.backend.store import ObjectStore
from kubesched.cache.pod_groups import pod_group_name
from kubesched.framework.outcome import Outcome
from kubesched.simulator import table
from kubesched.simulator.run import SimulationResult
from kubesched.simulator.states import SCHEDULED, PodState, pod_states

PASSED = "passed"
DEFAULT_NAMESPACE = "default"
POD = "Pod"
POD_GROUP = "PodGroup"

# kubectl's names for the kinds --explain takes: kind -> (API group, plural, short names). Any name may
# carry the group (deployment.apps, jobs.batch) and letter case does not matter.
_KIND_NAMES: dict[str, tuple[str, str, tuple[str, ...]]] = {
    POD: ("", "pods", ("po",)),
    "Deployment": ("apps", "deployments", ("deploy",)),
    "ReplicaSet": ("apps", "replicasets", ("rs",)),
    "StatefulSet": ("apps", "statefulsets", ("sts",)),
    "DaemonSet": ("apps", "daemonsets", ("ds",)),
    "Job": ("batch", "jobs", ()),
    "CronJob": ("batch", "cronjobs", ("cj",)),
    "ReplicationController": ("", "replicationcontrollers", ("rc",)),
    POD_GROUP: ("scheduling.k8s.io", "podgroups", ("pg",)),  # its members (GenericWorkload)
}
KINDS: dict[str, str] = {
    alias + suffix: kind
    for kind, (group, plural, short) in _KIND_NAMES.items()
    for alias in (kind.lower(), plural, *short)
    for suffix in ("", f".{group}" if group else "")
}
ACCEPTED_KINDS = ", ".join(
    kind.lower() + (f" ({', '.join(short)})" if short else "") for kind, (_, _, short) in _KIND_NAMES.items()
)


class ExplainError(Exception):
    """A name given to --explain that is not usable or matches no simulated pod."""


@dataclass(frozen=True, slots=True)
class NodeExplanation:
    node: str
    filters: dict[str, str]  # plugin -> "passed" or its reason, for the plugins that ran
    rejected_by: str | None  # the plugin whose verdict was not "passed"
    reason: str | None  # its reason
    scores: dict[str, int]  # plugin -> final (weighted) score; empty when the node was not scored
    total: int | None
    chosen: bool
    why: str  # a plain sentence: why it was chosen, or why it lost
    rival: str | None = None  # the node `why` compares this one with (tables shorten its name as this one's)


@dataclass(frozen=True, slots=True)
class Explanation:
    pod: str
    result: str
    message: str
    node: str | None
    nominated_node: str | None
    victims: list[str]
    preempted_by: str | None  # the pod this one was later preempted for (it was bound, then evicted)
    attempts: int
    cluster_nodes: int  # nodes in the cluster at the end
    nodes: list[NodeExplanation]  # chosen first, then the scored nodes by total, then the others by name
    zero_score_plugins: list[str]  # Score plugins that gave 0 to every scored node (left out of `scores` tables)


@dataclass(slots=True)
class NodeGroup:
    """The workload's pods that went to one node, and what won it for them."""

    node: str
    pods: int = 0
    totals: list[int] = field(default_factory=list)  # the chosen node's total score, for the pods that were scored
    won_by: dict[str, int] = field(default_factory=dict)  # deciding plugin (or how the node was chosen) -> pods
    leads: dict[str, int] = field(default_factory=dict)  # deciding plugin -> its leads on the runner-up, summed


@dataclass(slots=True)
class WaitGroup:
    """The workload's pods that wait for one reason (a FitError's plugin reasons, else the pod's message)."""

    result: str
    reason: str
    pods: int = 0


@dataclass(frozen=True, slots=True)
class WorkloadExplanation:
    workload: str  # Kind namespace/name
    pods: int
    by_result: dict[str, int]
    placed: list[NodeGroup]  # most pods first, then natural node order
    waiting: list[WaitGroup]  # most pods first
    examples: list[Explanation]  # one pod's full explanation for each outcome: scheduled, then each wait group


def natural_key(name: str) -> tuple[tuple[tuple[int, int | str], ...], str]:
    """Sort key that puts node-2 before node-10: digit runs compare as numbers (and before letters, as in ASCII)."""
    parts = tuple((0, int(part)) if part.isdigit() else (1, part) for part in re.split(r"(\d+)", name) if part)
    return parts, name


@dataclass(frozen=True, slots=True)
class Target:
    """What one --explain names: a pod, or a workload whose pods are explained together."""

    namespace: str
    kind: str  # POD or a workload kind, as the API spells it
    name: str

    @property
    def key(self) -> str:
        """`namespace/name` for a pod, `namespace/Kind/name` for a workload (what `run.selects` takes)."""
        if self.kind == POD:
            return f"{self.namespace}/{self.name}"
        return f"{self.namespace}/{self.kind}/{self.name}"

    def __str__(self) -> str:
        return self.key if self.kind == POD else f"{self.namespace}/{self.kind.lower()}/{self.name}"


def target(name: str) -> Target:
    """POD, NAMESPACE/POD, KIND/NAME or NAMESPACE/KIND/NAME, as kubectl reads them; anything else is refused.

    Two parts are KIND/NAME (namespace default) when the first is a kind kubectl knows, else
    NAMESPACE/POD: a pod in a namespace named like a kind is NAMESPACE/pod/POD.
    """
    parts = name.split("/")
    if all(parts) and len(parts) in (1, 2, 3):
        if len(parts) == 1:
            return Target(DEFAULT_NAMESPACE, POD, parts[0])
        if len(parts) == 2:
            kind = KINDS.get(parts[0].lower())
            if kind is None:
                return Target(parts[0], POD, parts[1])
            return Target(DEFAULT_NAMESPACE, kind, parts[1])
        kind = KINDS.get(parts[1].lower())
        if kind is None:
            raise ExplainError(f"--explain {name!r}: unknown kind {parts[1]!r}; accepted kinds: {ACCEPTED_KINDS}")
        return Target(parts[0], kind, parts[2])
    raise ExplainError(
        f"--explain {name!r}: expected NAMESPACE/POD or POD (namespace default), "
        "or NAMESPACE/KIND/NAME or KIND/NAME for a workload's pods"
    )


def resolve(result: SimulationResult, names: Sequence[str]) -> list[PodState]:
    """The pods named, in the order given; every name that matches none is reported, with close names."""
    found: list[PodState] = []
    for item in _resolve(result, [target(name) for name in names]):
        if isinstance(item, PodState):
            found.append(item)
        else:
            found.extend(item[1])
    return found


def explain_all(
    result: SimulationResult, names: Sequence[str], digest: WorkloadDigest | None = None
) -> list[Explanation | WorkloadExplanation]:
    """An explanation for every pod and workload named, in the order given (see `resolve` for errors)."""
    out: list[Explanation | WorkloadExplanation] = []
    for item in _resolve(result, [target(name) for name in names]):
        if isinstance(item, PodState):
            out.append(explain(result, item))
        else:
            out.append(explain_workload(result, *item, digest=digest))
    return out


def _resolve(result: SimulationResult, targets: Sequence[Target]) -> list[PodState | tuple[Target, list[PodState]]]:
    states = {st.key: st for st in pod_states(result)}
    found: list[PodState | tuple[Target, list[PodState]]] = []
    problems: list[str] = []
    for t in dict.fromkeys(targets):
        if t.kind != POD:
            link = f"{t.kind}/{t.name}"
            pods = [
                st
                for st in states.values()
                if st.pod.namespace == t.namespace
                and (pod_group_name(st.pod.obj) == t.name if t.kind == POD_GROUP else _in(result, st.key, link))
            ]
            if pods:
                found.append((t, pods))
            else:
                problems.append(_no_pods(result, t, states))
            continue
        st = states.get(t.key)
        if st is not None:
            found.append(st)
            continue
        problems.append(_unknown(result, t.key, states))
    if problems:
        raise ExplainError("\n".join(problems))
    return found


def _meta(obj: dict[str, Any]) -> dict[str, Any]:
    meta = obj.get("metadata")
    return meta if isinstance(meta, dict) else {}


def _in(result: SimulationResult, key: str, link: str) -> bool:
    return link in result.controllers.get(key, ())


def _no_pods(result: SimulationResult, t: Target, states: dict[str, PodState]) -> str:
    """Why a workload has nothing to explain: its pods were all bound already, it made none, or it is not there."""
    sched = result.scheduler
    assert sched is not None
    link = f"{t.kind}/{t.name}"
    bound = 0
    for key in result.controllers:
        namespace, name = key.split("/", 1)
        if namespace == t.namespace and key not in states and _in(result, key, link):
            pod = sched.informer_pod(namespace, name)
            if pod is not None and pod.node_name:
                bound += 1
    if bound:
        return f"--explain {t}: its {bound} pod(s) were already bound in the input; only pending pods are scheduled"
    store = sched.client if isinstance(sched.client, ObjectStore) else None
    if store is None or store.get(t.kind, t.namespace, t.name) is not None:
        return f"--explain {t}: {t.kind} {t.namespace}/{t.name} has no pods (its controller made none to schedule)"
    workloads = [
        Target(_meta(o).get("namespace") or DEFAULT_NAMESPACE, kind, str(_meta(o).get("name")))
        for kind in _KIND_NAMES
        if kind != POD
        for o in store.list(kind)
    ]
    same_name = [w for w in workloads if w.name == t.name]  # another kind, another namespace
    of_kind = {str(w): w for w in workloads if w.kind == t.kind}
    close = same_name + [of_kind[k] for k in difflib.get_close_matches(str(t), list(of_kind), n=3, cutoff=0.6)]
    hint = f"; did you mean {', '.join(str(w) for w in list(dict.fromkeys(close))[:3])}?" if close else ""
    return f"--explain {t}: no {t.kind} {t.name} in namespace {t.namespace}{hint}"


def _unknown(result: SimulationResult, key: str, states: dict[str, PodState]) -> str:
    sched = result.scheduler
    assert sched is not None
    namespace, name = key.split("/", 1)
    running = sched.informer_pod(namespace, name)
    if running is not None and running.node_name:
        node = running.node_name
        return f"--explain {key}: the pod was already bound to {node} in the input; only pending pods are scheduled"
    same_name = [k for k in states if k.split("/", 1)[1] == name]
    close = same_name + [k for k in difflib.get_close_matches(key, list(states), n=3, cutoff=0.6) if k not in same_name]
    hint = f"; did you mean {', '.join(close[:3])}?" if close else ""
    return f"--explain {key}: no pending pod of that name was simulated{hint}"


def explain(result: SimulationResult, st: PodState) -> Explanation:
    sched = result.scheduler
    assert sched is not None
    outcome = st.outcome
    record = outcome.record if outcome is not None else None
    chosen = st.node if st.result == SCHEDULED else None
    nodes: list[NodeExplanation] = []
    zero: list[str] = []
    if record is not None:
        totals = {n: sum(s.values()) for n, s in record.final_score.items()}
        plugins = list(dict.fromkeys(p for s in record.final_score.values() for p in s))
        zero = [p for p in plugins if all(s.get(p, 0) == 0 for s in record.final_score.values())]
        ref = chosen if chosen in totals else None
        # After a preemption the nominated node is tried on its own first (and kept if it fits).
        alone = len(record.filter) == 1 and outcome is not None and outcome.pod.nominated_node_name == chosen
        for node, filters in record.filter.items():
            rejected = next(((p, r) for p, r in filters.items() if r != PASSED), None)
            scores = record.final_score.get(node, {})
            total = totals.get(node)
            nodes.append(
                NodeExplanation(
                    node=node,
                    filters=filters,
                    rejected_by=rejected[0] if rejected else None,
                    reason=rejected[1] if rejected else None,
                    scores=scores,
                    total=total,
                    chosen=node == chosen,
                    why=_why(node, rejected, total, chosen, ref, totals, record.final_score, alone),
                    rival=ref if rejected is None and node != chosen else None,
                )
            )
    nodes.sort(
        key=lambda n: (
            not n.chosen,
            n.rejected_by is not None,
            -(n.total if n.total is not None else 0),
            natural_key(n.node),
        )
    )
    return Explanation(
        pod=st.key,
        result=st.result,
        message=st.message,
        node=st.node,
        nominated_node=result.nominated.get(st.key),
        victims=list(result.victims.get(st.key, [])),
        preempted_by=next((e.preemptor for e in result.events if e.type == "Preempted" and e.pod == st.key), None),
        attempts=st.attempts,
        cluster_nodes=sum(1 for ni in sched.cache.nodes.values() if ni.node is not None),
        nodes=nodes,
        zero_score_plugins=zero,
    )


def _why(
    node: str,
    rejected: tuple[str, str] | None,
    total: int | None,
    chosen: str | None,
    ref: str | None,
    totals: dict[str, int],
    scores: dict[str, dict[str, int]],
    alone: bool = False,
) -> str:
    if rejected is not None:
        return f"filtered out by {rejected[0]}: {rejected[1]}"
    if node == chosen:
        if alone:
            return "chosen: its nominated node, tried on its own first, passed every filter"
        if total is None:
            return "chosen: the only node that passed every filter (no scoring)"
        ties = sum(1 for t in totals.values() if t == total) - 1
        if ties:
            return f"chosen: tied with {ties} other node(s) at {total}; won the random tie-break"
        return "chosen: highest total score"
    if total is None:
        return "passed every filter; not scored"
    if ref is None:
        return f"passed every filter; scored {total}"
    diff = totals[ref] - total
    if diff == 0:
        return f"passed every filter; tied with {ref} at {total} and lost the random tie-break"
    if diff < 0:
        return f"passed every filter; scored {-diff} more than {ref}, which was chosen"
    mine, theirs = scores.get(node, {}), scores.get(ref, {})
    plugin, delta = max(((p, theirs.get(p, 0) - mine.get(p, 0)) for p in theirs.keys() | mine.keys()), key=_by_delta)
    return f"passed every filter; scored {diff} lower than {ref}, mostly on {plugin} ({delta} lower)"


def _by_delta(item: tuple[str, int]) -> tuple[int, str]:
    return item[1], item[0]


ONLY_FEASIBLE = "the only feasible node"
TIE_BREAK = "the random tie-break"
NOMINATED = "its nominated node"
NOT_RECORDED = "not recorded"


class WorkloadDigest:
    """A simulation watcher for the workloads --explain names: what decided each of their pods that is
    bound, as it is bound; then it lets go of the record of every such pod but its workload's first.

    A workload may have thousands of pods and a record holds every node an attempt examined, but its
    explanation shows one scheduled pod's record in full (a bound pod is never tried again).
    Without `drop` (the JSON output shows every record) it only reads. It must run after the
    watchers that read records as they come (the score collector, the JSON Lines writer).
    """

    def __init__(self, keys: Collection[str], *, drop: bool = True) -> None:
        self.keys = frozenset(keys)  # run.selects's keys: pods' and workloads'
        self.drop = drop
        self.workloads = frozenset(k for k in self.keys if k.count("/") == 2)
        self.decisions: dict[str, tuple[str, int | None, int | None]] = {}  # pod uid -> _decision
        self.shown: set[str] = set()  # the workloads whose first bound pod keeps its record

    def __call__(self, result: SimulationResult, outcome: Outcome) -> None:
        if outcome.result != SCHEDULED or not self.workloads:
            return
        chain = result.controllers.get(outcome.pod.key, ())
        named = [k for k in (f"{outcome.pod.namespace}/{link}" for link in chain) if k in self.workloads]
        if not named:
            return
        self.decisions[outcome.pod.uid] = _decision(outcome)
        first = [k for k in named if k not in self.shown]
        self.shown.update(first)
        if self.drop and not first and outcome.pod.key not in self.keys:
            outcome.record = None


def explain_workload(
    result: SimulationResult, t: Target, pods: Sequence[PodState], digest: WorkloadDigest | None = None
) -> WorkloadExplanation:
    """The workload's pods by outcome: where they went and what decided it, why the others wait.

    With the digest that watched the run, scheduled pods are read from it (their records are gone)."""
    by_result: dict[str, int] = {}
    placed: dict[str, NodeGroup] = {}
    waiting: dict[tuple[str, str], WaitGroup] = {}
    examples: dict[tuple[str, str], PodState] = {}
    for st in pods:
        by_result[st.result] = by_result.get(st.result, 0) + 1
        if st.result == SCHEDULED and st.node is not None:
            group = placed.setdefault(st.node, NodeGroup(st.node))
            group.pods += 1
            decided = digest.decisions.get(st.pod.uid) if digest is not None else None
            how, lead, total = decided or _decision(st.outcome)
            group.won_by[how] = group.won_by.get(how, 0) + 1
            if lead is not None:
                group.leads[how] = group.leads.get(how, 0) + lead
            if total is not None:
                group.totals.append(total)
            shown = examples.get((SCHEDULED, ""))
            if shown is None or (_record_of(shown) is None and _record_of(st) is not None):
                examples[(SCHEDULED, "")] = st  # the first with its record
            continue
        reasons = st.outcome.reasons if st.outcome is not None and st.result != "Gated" else None
        reason = "; ".join(sorted(reasons)) if reasons else (st.message or st.result)
        wait = waiting.setdefault((st.result, reason), WaitGroup(st.result, reason))
        wait.pods += 1
        examples.setdefault((st.result, reason), st)
    waits = sorted(waiting.values(), key=lambda w: (-w.pods, w.result, w.reason))
    outcomes = [(SCHEDULED, ""), *((w.result, w.reason) for w in waits)]
    return WorkloadExplanation(
        workload=f"{t.kind} {t.namespace}/{t.name}",
        pods=len(pods),
        by_result=by_result,
        placed=sorted(placed.values(), key=lambda g: (-g.pods, natural_key(g.node))),
        waiting=waits,
        examples=[explain(result, examples[o]) for o in outcomes if o in examples],
    )


def _record_of(st: PodState) -> object:
    return st.outcome.record if st.outcome is not None else None


def _decision(outcome: Outcome | None) -> tuple[str, int | None, int | None]:
    """What won the chosen node for a scheduled pod: the plugin with the largest lead over the runner-up
    (and that lead), or how else it was chosen; and the chosen node's total score."""
    record = outcome.record if outcome is not None else None
    if outcome is None or record is None or outcome.node is None:
        return NOT_RECORDED, None, None
    chosen = outcome.node
    if len(record.filter) == 1 and outcome.pod.nominated_node_name == chosen:
        return NOMINATED, None, None
    mine = record.final_score.get(chosen)
    others = [s for n, s in record.final_score.items() if n != chosen]
    if mine is None or not others:
        return ONLY_FEASIBLE, None, None
    total = sum(mine.values())
    runner_up = max(others, key=lambda s: sum(s.values()))
    if sum(runner_up.values()) == total:
        return TIE_BREAK, None, total
    plugin, lead = max(
        ((p, mine.get(p, 0) - runner_up.get(p, 0)) for p in mine.keys() | runner_up.keys()), key=_by_delta
    )
    return plugin, lead, total


def render(explanations: Iterable[Explanation | WorkloadExplanation], console: Console) -> None:
    """Each pod's explanation as a heading, the pod's result and a table of the nodes its last attempt
    examined; each workload's as its pods by outcome, then one pod's explanation for each outcome."""
    for ex in explanations:
        if isinstance(ex, WorkloadExplanation):
            _render_workload(ex, console)
        else:
            _render_one(ex, console)


def _render_workload(ex: WorkloadExplanation, console: Console) -> None:
    counts = ", ".join(f"{n} {r}" for r, n in sorted(ex.by_result.items(), key=lambda kv: (kv[0] != SCHEDULED, kv[0])))
    plural = "s" if ex.pods != 1 else ""
    console.print(f"[bold]{escape(ex.workload)}[/]: {ex.pods} pod{plural}: {escape(counts)}", highlight=False)
    if ex.placed:
        suffix = table.domain_suffix([g.node for g in ex.placed])
        columns: list[table.Column] = [
            ("Node", "fold"),
            ("Pods", None, "right"),
            ("Mean total", None, "right"),
            ("Won by (pods: mean lead)", "fold"),
        ]
        rows = [
            [
                table.escaped(table.without(g.node, suffix)),
                table.text(str(g.pods)),
                table.text(f"{sum(g.totals) / len(g.totals):.0f}" if g.totals else "-"),
                table.escaped(_won_by(g)),
            ]
            for g in ex.placed
        ]
        _titled(console, "Where its pods went", columns, rows, names=(0,))
        _said_once(console, suffix)
    if ex.waiting:
        title = "Why its other pods wait" if ex.placed else "Why its pods wait"
        wait_columns: list[table.Column] = [
            ("Pods", None, "right"),
            ("Result", "fold"),
            ("Reason (upstream's words)", "fold"),
        ]
        wait_rows = [[table.text(str(w.pods)), table.escaped(w.result), table.escaped(w.reason)] for w in ex.waiting]
        _titled(console, title, wait_columns, wait_rows)
    console.print()
    for example in ex.examples:
        _render_one(example, console)


def _titled(
    console: Console,
    title: str,
    columns: Sequence[table.Column],
    rows: Sequence[Sequence[table.Cell]],
    names: Collection[int] = (),
    unbroken: Collection[int] = (),
) -> None:
    """A table laid out by table.print_table (names whole or elided), its title on a line of its own on the left."""
    console.print(escape(title), highlight=False)
    table.print_table(console, None, columns, rows, names=names, unbroken=unbroken)


def _said_once(console: Console, suffix: str) -> None:
    """The line under a table that says which domain its node names were shown without."""
    if suffix:
        console.print(f"Node names without {escape(suffix)}", highlight=False)


def _won_by(g: NodeGroup) -> str:
    """`NodeResourcesFit (2 pods: +19), the only feasible node (1 pod)`: most pods first."""
    parts = []
    for how, pods in sorted(g.won_by.items(), key=lambda kv: (-kv[1], kv[0])):
        lead = f": +{g.leads[how] / pods:.0f}" if how in g.leads else ""
        parts.append(f"{how} ({pods} pod{'s' if pods != 1 else ''}{lead})")
    return ", ".join(parts)


def _render_one(ex: Explanation, console: Console) -> None:
    where = f" on {ex.node}" if ex.node else ""
    attempts = f"{ex.attempts} attempt{'s' if ex.attempts != 1 else ''}"
    console.print(f"[bold]{escape(ex.pod)}[/]: {escape(ex.result)}{escape(where)} after {attempts}", highlight=False)
    if ex.message:
        console.print(f"  message: {escape(ex.message)}", highlight=False)
    if ex.nominated_node:
        console.print(f"  nominated node: {escape(ex.nominated_node)}", highlight=False)
    if ex.victims:
        console.print(f"  preempted: {escape(', '.join(ex.victims))}", highlight=False)
    if ex.preempted_by:
        console.print(f"  later preempted by {escape(ex.preempted_by)}", highlight=False)
    if not ex.nodes:
        console.print("  no attempt examined any node.", highlight=False)
        console.print()
        return
    examined = len(ex.nodes)
    if examined < ex.cluster_nodes:
        console.print(
            f"  the last attempt examined {examined} of the {ex.cluster_nodes} nodes; the others were not looked at "
            "(enough feasible nodes were found, see percentageOfNodesToScore, or a PreFilter narrowed the candidates)",
            highlight=False,
        )
    hidden = set(ex.zero_score_plugins)
    suffix = table.domain_suffix([n.node for n in ex.nodes])
    rows: list[list[table.Cell]] = []
    for n in ex.nodes:
        shown = [(str(s), p) for p, s in n.scores.items() if p not in hidden]
        if n.total is not None:
            shown.insert(0, (str(n.total), "total"))
        width = max((len(v) for v, _ in shown), default=0)
        score = "\n".join(f"{v.rjust(width)} {p}" for v, p in shown) or "-"
        why = n.why.replace(n.rival, table.without(n.rival, suffix)) if n.rival else n.why
        cells = [table.without(n.node, suffix), why, score]
        rows.append([table.styled(escape(c), "bold green") if n.chosen else table.escaped(c) for c in cells])
    columns: list[table.Column] = [("Node", "fold"), ("Verdict", "fold"), ("Score (final, weighted)", "fold")]
    _titled(console, f"Nodes examined for {ex.pod}", columns, rows, names=(0,), unbroken=(2,))
    _said_once(console, suffix)
    if ex.zero_score_plugins:
        console.print(f"  scored 0 on every node: {escape(', '.join(ex.zero_score_plugins))}", highlight=False)
    console.print()
