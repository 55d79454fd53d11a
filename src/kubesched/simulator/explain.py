"""`kubesched simulate --explain NAMESPACE/POD`: one pod's last attempt, node by node, in plain words.

Read from the per-plugin record of the pod's last attempt (simulate keeps it for explained pods
whatever the output): every node the attempt examined, its Filter verdict, each Score plugin's
final (weighted) score and the total, the chosen node, and why each other node lost.
"""

from __future__ import annotations

import difflib
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from rich.console import Console
from rich.markup import escape
from rich.table import Table

from kubesched.simulator.run import SimulationResult
from kubesched.simulator.states import SCHEDULED, PodState, pod_states

PASSED = "passed"
SCORE_WIDTH = 40  # the score column keeps "100 NodeResourcesBalancedAllocation" on one line
NODE_WIDTH = 24  # longer node names fold
MIN_VERDICT_WIDTH = 16
DEFAULT_NAMESPACE = "default"


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


def natural_key(name: str) -> tuple[tuple[tuple[int, int | str], ...], str]:
    """Sort key that puts node-2 before node-10: digit runs compare as numbers (and before letters, as in ASCII)."""
    parts = tuple((0, int(part)) if part.isdigit() else (1, part) for part in re.split(r"(\d+)", name) if part)
    return parts, name


def pod_key(name: str) -> str:
    """NAMESPACE/POD as given, or POD in the default namespace; anything else is refused."""
    parts = name.split("/")
    if len(parts) == 1:
        parts = [DEFAULT_NAMESPACE, parts[0]]
    if len(parts) != 2 or not all(parts):
        raise ExplainError(f"--explain {name!r}: expected NAMESPACE/POD or POD (namespace default)")
    return "/".join(parts)


def resolve(result: SimulationResult, names: Sequence[str]) -> list[PodState]:
    """The pods named, in the order given; every name that matches none is reported, with close names."""
    states = {st.key: st for st in pod_states(result)}
    found: list[PodState] = []
    problems: list[str] = []
    for name in dict.fromkeys(names):
        key = pod_key(name)
        st = states.get(key)
        if st is not None:
            found.append(st)
            continue
        problems.append(_unknown(result, key, states))
    if problems:
        raise ExplainError("\n".join(problems))
    return found


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


def render(explanations: Iterable[Explanation], console: Console) -> None:
    """Each explanation as a heading, the pod's result and a table of the nodes its last attempt examined."""
    for ex in explanations:
        _render_one(ex, console)


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
    rows: list[tuple[NodeExplanation, str]] = []
    for n in ex.nodes:
        shown = [(str(s), p) for p, s in n.scores.items() if p not in hidden]
        if n.total is not None:
            shown.insert(0, (str(n.total), "total"))
        width = max((len(v) for v, _ in shown), default=0)
        rows.append((n, "\n".join(f"{v.rjust(width)} {p}" for v, p in shown) or "-"))
    widest = max((len(line) for _, score in rows for line in score.splitlines()), default=1)
    table = Table(title=f"Nodes examined for {escape(ex.pod)}", title_justify="left")
    score_width = min(widest, SCORE_WIDTH)
    node_width = min(max(len("Node"), *(len(n.node) for n in ex.nodes)), NODE_WIDTH)
    verdict_width = console.width - node_width - score_width - 10  # 4 borders, 2 spaces of padding a cell
    roomy = verdict_width >= MIN_VERDICT_WIDTH  # else rich shares out what little room there is
    table.add_column("Node", overflow="fold", max_width=node_width if roomy else None)
    table.add_column("Verdict", overflow="fold", max_width=verdict_width if roomy else None)
    table.add_column("Score (final, weighted)", overflow="fold", min_width=score_width if roomy else None)
    for n, score in rows:
        table.add_row(escape(n.node), escape(n.why), escape(score), style="bold green" if n.chosen else "")
    console.print(table)
    if ex.zero_score_plugins:
        console.print(f"  scored 0 on every node: {escape(', '.join(ex.zero_score_plugins))}", highlight=False)
    console.print()
