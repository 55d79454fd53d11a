"""One pod decided the way the scheduler would, without assuming, reserving or binding it.

The shadow calls this at the moment the watch shows the cluster's own decision, on
the cache as it stood before that decision is applied. It runs PreFilter, Filter,
PreScore and Score exactly as a scheduling cycle does, then stops: nothing it does
changes the cache, the queue or the cluster.

When no node fits, PostFilter runs as a dry run: DefaultPreemption picks its node and
victims on copies of the nodes, as it would, and stops before evicting or nominating.

Every node is examined, whatever percentageOfNodesToScore says. Upstream examines a
rotating sample on clusters of more than 100 nodes, starting where its previous
cycle stopped, a place the shadow cannot know; so the shadow scores them all and,
when the cluster's choice is feasible but scored lower, says the cluster sampled
(`sampled`) rather than calling it a difference of configuration.
"""

from __future__ import annotations

import operator
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Protocol, TypeVar, runtime_checkable

import numpy as np

from kubesched.framework.cycle_state import CycleState
from kubesched.framework.node_info import NodeInfo
from kubesched.framework.preemption.evaluator import Candidate
from kubesched.framework.runtime.framework import Framework
from kubesched.framework.status import Code, Status
from kubesched.framework.types import FitError, NodeToStatus, NoNodesAvailable, PodInfo
from kubesched.schedule_one import (
    best_index,
    find_nodes_that_fit_pod,
    has_scoring,
    num_feasible_nodes_to_find,
    prioritize_nodes,
)
from kubesched.scheduler import Scheduler

ALL_NODES = 100
T = TypeVar("T")


@dataclass(slots=True)
class Verdict:
    """What the shadow decided for one pod, and what it knows about the cluster's node."""

    node: str | None  # None: unschedulable
    message: str = ""  # why no node fits, when none does
    totals: dict[str, int] = field(default_factory=dict)  # total score of the nodes compared
    plugin_scores: dict[str, dict[str, int]] = field(default_factory=dict)  # node -> plugin -> weighted score
    tie: bool = False  # the cluster's node scored as high as the shadow's
    sampled: bool = False  # the cluster examined a sample of the nodes only (more than 100 of them)
    actual_rejected: str = ""  # why the cluster's node does not fit here, when it does not
    nominated: str | None = None  # unschedulable: the node preemption would free, if any
    victims: tuple[str, ...] = ()  # ... and the pods it would evict there (namespace/name)
    terminating: tuple[str, ...] = ()  # those of them already being deleted: upstream sends them nothing
    seconds: float = 0.0


@runtime_checkable
class DryRunPostFilter(Protocol):
    """A PostFilter plugin that can say what it would do without doing it (DefaultPreemption)."""

    def dry_run(self, state: CycleState, pod: PodInfo, m: NodeToStatus) -> tuple[Candidate | None, Status | None]: ...


def score_every_node(sched: Scheduler) -> dict[str, int | None]:
    """Make the shadow's profiles examine every node; returns each profile's own setting, for `sampled`."""
    own: dict[str, int | None] = {}
    for name, fwk in sched.profiles.items():
        own[name] = fwk.percentage_of_nodes_to_score
        fwk.percentage_of_nodes_to_score = ALL_NODES
    return own


def decide(sched: Scheduler, pod: PodInfo, actual: str | None, own_percentage: int | None, global_pct: int) -> Verdict:
    """The shadow's decision for `pod` on the cache as it is now, compared with the cluster's `actual` node."""
    start = time.perf_counter()
    verdict = _decide(sched, pod, actual, own_percentage, global_pct)
    verdict.seconds = time.perf_counter() - start
    return verdict


def _decide(sched: Scheduler, pod: PodInfo, actual: str | None, own_pct: int | None, global_pct: int) -> Verdict:
    fwk = sched.profiles.get(pod.scheduler_name) or next(iter(sched.profiles.values()))
    cycles = sched.cycles
    cycles.cache.update_snapshot(cycles.snapshot)
    snapshot = cycles.snapshot
    if len(snapshot) == 0:
        return Verdict(None, str(NoNodesAvailable("no nodes available to schedule pods")))
    state = CycleState()
    positions, diagnosis, _ = find_nodes_that_fit_pod(cycles, fwk, state, pod, None)  # no signature: no hint
    all_nodes = snapshot.node_info_list
    sampled = num_feasible_nodes_to_find(own_pct, global_pct, len(snapshot)) < len(snapshot)
    if not len(positions):
        rejected = _rejected(fwk, state, pod, all_nodes, actual)
        fit = FitError(pod, len(snapshot), diagnosis)
        verdict = Verdict(None, sampled=sampled, actual_rejected=rejected)
        candidate, status = _dry_run_post_filter(fwk, state, pod, fit)
        if candidate is not None:
            verdict.nominated = candidate.name
            verdict.victims = tuple(sorted(f"{v.namespace}/{v.name}" for v in candidate.victims))
            verdict.terminating = tuple(sorted(f"{v.namespace}/{v.name}" for v in candidate.victims if v.deleting))
        elif status is not None:
            fit.diagnosis.post_filter_msg = status.message()
        verdict.message = str(fit)
        return verdict
    feasible = gather(all_nodes, positions)
    if len(feasible) == 1:
        totals = np.zeros(1, dtype=np.int64)
        rows: list[tuple[str, np.ndarray, np.ndarray]] = []
    else:
        totals, rows = _scores(sched, fwk, state, pod, feasible, positions)
    pick = best_index(cycles.rng, totals)
    chosen = feasible[pick].name
    verdict = Verdict(chosen, sampled=sampled)
    where = {chosen: pick}
    if actual is not None and actual != chosen and actual in snapshot.position:
        found = np.flatnonzero(positions == snapshot.position[actual])
        if len(found):
            where[actual] = int(found[0])
    for name, i in where.items():
        verdict.totals[name] = int(totals[i])
        verdict.plugin_scores[name] = {p: int(norm[i]) * fwk.score_weights[p] for p, _, norm in rows}
    if actual is not None and actual != chosen:
        if actual in where:
            verdict.tie = int(totals[where[actual]]) == int(totals[pick])
        else:
            verdict.actual_rejected = _rejected(fwk, state, pod, all_nodes, actual)
    return verdict


def gather(nodes: Sequence[T], positions: np.ndarray) -> Sequence[T]:
    """The nodes at `positions`, in that order. When every node fits, `positions` is all of them from where the
    search started: two slices, not a gather of thousands (about a tenth of a decision's CPU on 5,000 nodes)."""
    n = len(positions)
    if n > 1 and n == len(nodes) and isinstance(nodes, list):
        k = int(positions[0])
        if np.array_equal(positions, np.roll(np.arange(n), -k)):
            return nodes[k:] + nodes[:k]
    return gather_each(nodes, positions)


def gather_each(nodes: Sequence[T], positions: np.ndarray) -> Sequence[T]:
    """gather's plain twin: a C gather, node by node."""
    if len(positions) <= 1:
        return [nodes[int(i)] for i in positions]
    gathered: Sequence[T] = operator.itemgetter(*positions.tolist())(nodes)
    return gathered


def _scores(
    sched: Scheduler,
    fwk: Framework,
    state: CycleState,
    pod: PodInfo,
    feasible: Sequence[NodeInfo],
    positions: np.ndarray,
) -> tuple[np.ndarray, list[tuple[str, np.ndarray, np.ndarray]]]:
    """Total scores, and each plugin's normalised row (for the scores that made a difference)."""
    cycles = sched.cycles
    table = cycles.snapshot.table
    if not has_scoring(cycles, fwk):
        return np.ones(len(feasible), dtype=np.int64), []
    if cycles.extenders or not fwk.has_score_plugins():  # extenders' priorities: totals only
        return prioritize_nodes(cycles, fwk, state, pod, feasible, positions, table, None), []
    s = fwk.run_pre_score_plugins(state, pod, feasible, table, positions)
    if s is not None and not s.is_success():
        raise RuntimeError(s.message())
    rows, totals, s = fwk.run_score_plugins(state, pod, feasible, table, positions)
    if s is not None and not s.is_success():
        raise RuntimeError(s.message())
    return totals, rows


def _dry_run_post_filter(
    fwk: Framework, state: CycleState, pod: PodInfo, fit: FitError
) -> tuple[Candidate | None, Status | None]:
    """The first PostFilter plugin's answer that is not Unschedulable, as run_post_filter_plugins takes it."""
    status: Status | None = None
    m = fit.diagnosis.node_to_status_map()
    for pl in fwk.post_filter_plugins:
        if not isinstance(pl, DryRunPostFilter):
            continue  # a plugin that cannot say without doing: not shadowed
        candidate, status = pl.dry_run(state, pod, m)
        if candidate is not None or (status is not None and status.code != Code.UNSCHEDULABLE):
            return candidate, status
    return None, status


def _rejected(fwk: Framework, state: CycleState, pod: PodInfo, nodes: Sequence[NodeInfo], actual: str | None) -> str:
    """Why the cluster's node does not pass the shadow's filters ('' when there is no such node to ask)."""
    if actual is None:
        return ""
    node = next((ni for ni in nodes if ni.name == actual), None)  # rare: only for a node that did not fit
    if node is None:
        return "node not in the shadow's cache"
    s = fwk.run_filter_plugins_with_nominated_pods(state, pod, node)
    if s is None or s.is_success():
        return "passes the filters, but was not examined"
    return f"{s.plugin}: {s.message()}" if s.plugin else s.message()
