"""One scheduling attempt: schedulePod, the filter pass, scoring and host selection (schedule_one.go).

The filter pass keeps upstream's contract: nodes are examined from the rotating
`next_start_node_index` until `num_feasible_nodes_to_find` feasible nodes are
found, and the index then advances by the number of nodes examined. Plugins with a
vectorised `filter_batch` are evaluated for all nodes at once; the others run per
node in that same rotated order. Per-node reasons for rejected nodes are worked out
only when someone needs them: a FitError, or the simulator's full record.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

import numpy as np

from kubesched.extender import EXTENDER_NAME, ExtenderError, extender_score
from kubesched.framework.cycle_state import CycleState
from kubesched.framework.interface import NodeToStatus
from kubesched.framework.node_info import NodeInfo
from kubesched.framework.runtime.framework import Framework
from kubesched.framework.status import Code, Status
from kubesched.framework.types import PodInfo

if TYPE_CHECKING:
    from kubesched.scheduler import Scheduler

log = logging.getLogger(__name__)

MIN_FEASIBLE_NODES_TO_FIND = 100
MIN_FEASIBLE_NODES_PERCENTAGE_TO_FIND = 5
NO_NODE_AVAILABLE_MSG = "0/{} nodes are available"
ERR_NO_NODES_AVAILABLE = "no nodes available to schedule pods"


@dataclass(slots=True)
class Diagnosis:
    node_to_status: dict[str, Status] = field(default_factory=dict)
    absent_nodes_status: Status | None = None
    unschedulable_plugins: set[str] = field(default_factory=set)
    pending_plugins: set[str] = field(default_factory=set)
    pre_filter_msg: str = ""
    post_filter_msg: str = ""
    evaluated_rejected: int = 0  # rejected nodes examined, whether or not their statuses were worked out

    def node_to_status_map(self) -> NodeToStatus:
        return NodeToStatus(self.node_to_status, self.absent_nodes_status)


class FitError(Exception):
    """No node fits; the message is upstream's `0/N nodes are available: ...` text."""

    def __init__(self, pod: PodInfo, num_all_nodes: int, diagnosis: Diagnosis) -> None:
        super().__init__()
        self.pod = pod
        self.num_all_nodes = num_all_nodes
        self.diagnosis = diagnosis

    def __str__(self) -> str:
        d = self.diagnosis
        msg = NO_NODE_AVAILABLE_MSG.format(self.num_all_nodes) + ":"
        if d.pre_filter_msg:
            msg += f" {d.pre_filter_msg}."
        else:
            reasons: dict[str, int] = {}
            for s in d.node_to_status.values():
                for r in s.reasons:
                    reasons[r] = reasons.get(r, 0) + 1
            absent = self.num_all_nodes - len(d.node_to_status)
            if absent > 0 and d.absent_nodes_status is not None:
                for r in d.absent_nodes_status.reasons:
                    reasons[r] = reasons.get(r, 0) + absent
            histogram = sorted(f"{n} {r}" for r, n in reasons.items())
            if histogram:
                msg += f" {', '.join(histogram)}."
        if d.post_filter_msg:
            msg += f" {d.post_filter_msg}"
        return msg


@dataclass(slots=True)
class ScheduleResult:
    suggested_host: str
    evaluated_nodes: int
    feasible_nodes: int


@dataclass(slots=True)
class AttemptRecord:
    """What the simulator reports about one attempt, per node and plugin."""

    filter: dict[str, dict[str, str]] = field(default_factory=dict)
    score: dict[str, dict[str, int]] = field(default_factory=dict)
    normalized_score: dict[str, dict[str, int]] = field(default_factory=dict)
    final_score: dict[str, dict[str, int]] = field(default_factory=dict)


def num_feasible_nodes_to_find(percentage: int | None, global_percentage: int, num_all_nodes: int) -> int:
    if num_all_nodes < MIN_FEASIBLE_NODES_TO_FIND:
        return num_all_nodes
    pct = percentage if percentage is not None else global_percentage
    if pct == 0:
        pct = max(50 - num_all_nodes // 125, MIN_FEASIBLE_NODES_PERCENTAGE_TO_FIND)
    n = num_all_nodes * pct // 100
    return max(n, MIN_FEASIBLE_NODES_TO_FIND)


def schedule_pod(
    sched: Scheduler, fwk: Framework, state: CycleState, pod: PodInfo, record: AttemptRecord | None
) -> ScheduleResult:
    sched.cache.update_snapshot(sched.snapshot)
    snapshot = sched.snapshot
    fwk.handle.snapshot = snapshot
    if len(snapshot) == 0:
        raise NoNodesAvailable(ERR_NO_NODES_AVAILABLE)
    positions, diagnosis = find_nodes_that_fit_pod(sched, fwk, state, pod, record)
    if not len(positions):
        raise FitError(pod, len(snapshot), diagnosis)
    examined = len(positions) + diagnosis.evaluated_rejected
    all_nodes = snapshot.node_info_list
    if len(positions) == 1:
        return ScheduleResult(all_nodes[int(positions[0])].name, examined, 1)
    feasible = [all_nodes[p] for p in positions.tolist()]
    totals = prioritize_nodes(sched, fwk, state, pod, feasible, positions, snapshot.table, record)
    host = select_host(sched, feasible, totals)
    return ScheduleResult(host, examined, len(positions))


_NONE = np.empty(0, dtype=np.int64)


class NoNodesAvailable(Exception):
    pass


def find_nodes_that_fit_pod(
    sched: Scheduler, fwk: Framework, state: CycleState, pod: PodInfo, record: AttemptRecord | None
) -> tuple[np.ndarray, Diagnosis]:
    """Snapshot positions of the feasible nodes, and why the others were rejected."""
    snapshot = sched.snapshot
    all_nodes = snapshot.node_info_list
    diagnosis = Diagnosis()
    pre_res, s, unsched_plugins = fwk.run_pre_filter_plugins(state, pod, all_nodes)
    if s is not None and not s.is_success():
        if not s.is_rejected():
            raise RuntimeError(s.message())
        diagnosis.absent_nodes_status = s
        diagnosis.pre_filter_msg = s.message()
        if s.plugin:
            diagnosis.unschedulable_plugins.add(s.plugin)
        diagnosis.unschedulable_plugins.update(unsched_plugins)
        if record is not None:
            for ni in all_nodes:
                record.filter[ni.name] = {s.plugin or "PreFilter": s.message()}
        return _NONE, diagnosis
    if pre_res is not None and not pre_res.all_nodes():
        wanted = pre_res.node_names or set()
        candidates = np.fromiter(sorted(snapshot.position[n] for n in wanted if n in snapshot.position), dtype=np.int64)
        diagnosis.absent_nodes_status = Status(
            Code.UNSCHEDULABLE_AND_UNRESOLVABLE,
            f"node(s) didn't satisfy plugin(s) [{' '.join(sorted(unsched_plugins))}]",
        )
        diagnosis.unschedulable_plugins.update(unsched_plugins)
    else:
        candidates = None
    nominated = pod.nominated_node_name
    if nominated and nominated in snapshot.position:
        # Likely the only node that fits after a preemption: try it alone first.
        ni = all_nodes[snapshot.position[nominated]]
        if (candidates is None or snapshot.position[nominated] in candidates) and (
            fwk.run_filter_plugins_with_nominated_pods(state, pod, ni) is None
        ):
            if record is not None:
                record.filter[ni.name] = dict.fromkeys((p.name for p in fwk.filter_plugins), "passed")
            passed = find_nodes_that_pass_extenders(sched, pod, [ni], diagnosis, record)
            if passed:
                return np.array([snapshot.position[nominated]], dtype=np.int64), diagnosis
    feasible = find_nodes_that_pass_filters(sched, fwk, state, pod, diagnosis, candidates, record)
    if sched.extenders and len(feasible):
        infos = [all_nodes[p] for p in feasible.tolist()]
        kept = find_nodes_that_pass_extenders(sched, pod, infos, diagnosis, record)
        if len(kept) != len(infos):
            feasible = np.array([snapshot.position[ni.name] for ni in kept], dtype=np.int64)
    return feasible, diagnosis


def has_extender_filters(sched: Scheduler) -> bool:
    return any(e.is_filter() for e in sched.extenders)


def has_scoring(sched: Scheduler, fwk: Framework) -> bool:
    return fwk.has_score_plugins() or any(e.is_prioritizer() for e in sched.extenders)


def find_nodes_that_pass_extenders(
    sched: Scheduler, pod: PodInfo, nodes: list[NodeInfo], diagnosis: Diagnosis, record: AttemptRecord | None
) -> list[NodeInfo]:
    """Extenders filter in turn; an ignorable one that fails is skipped, any other failure is the cycle's error."""
    for ext in sched.extenders:
        if not nodes:
            break
        if not ext.is_interested(pod):
            continue
        try:
            kept, failed, unresolvable = ext.filter(pod, nodes)
        except ExtenderError:
            if ext.ignorable:
                log.info("Skipping extender %s as it returned error and has ignorable flag set", ext.name)
                continue
            raise
        for name, msg in unresolvable.items():
            diagnosis.node_to_status[name] = Status(Code.UNSCHEDULABLE_AND_UNRESOLVABLE, msg)
        for name, msg in failed.items():
            if name not in unresolvable:
                diagnosis.node_to_status[name] = Status(Code.UNSCHEDULABLE, msg)
        if record is not None and ext.is_filter():
            key = ext.record_key
            kept_names = {ni.name for ni in kept}
            for ni in nodes:
                record.filter.setdefault(ni.name, {})[key] = (
                    "passed" if ni.name in kept_names else unresolvable.get(ni.name) or failed.get(ni.name, "rejected")
                )
        if len(kept) != len(nodes):
            diagnosis.unschedulable_plugins.add(EXTENDER_NAME)
            diagnosis.evaluated_rejected += len(nodes) - len(kept)
        nodes = kept
    return nodes


def find_nodes_that_pass_filters(
    sched: Scheduler,
    fwk: Framework,
    state: CycleState,
    pod: PodInfo,
    diagnosis: Diagnosis,
    candidates: np.ndarray | None,
    record: AttemptRecord | None,
) -> np.ndarray:
    snapshot = sched.snapshot
    all_nodes = snapshot.node_info_list
    num_nodes = len(all_nodes) if candidates is None else len(candidates)
    if num_nodes == 0:
        return _NONE
    k = num_feasible_nodes_to_find(fwk.percentage_of_nodes_to_score, sched.percentage_of_nodes_to_score, num_nodes)
    if not has_extender_filters(sched) and not has_scoring(sched, fwk):
        k = 1
    start = sched.next_start_node_index % num_nodes
    rotated = (np.arange(num_nodes, dtype=np.int64) + start) % num_nodes
    order = rotated if candidates is None else candidates[rotated]  # snapshot positions, in examination order
    skip = state.skip_filter_plugins
    plugins = [p for p in fwk.filter_plugins if p.name not in skip]
    if not plugins:
        chosen = order[:k]
        sched.next_start_node_index = (sched.next_start_node_index + len(chosen)) % len(all_nodes)
        if record is not None:
            for p in chosen:
                record.filter[all_nodes[p].name] = {}
        return chosen
    batch = [p for p in fwk.batch_filter_plugins if p.name not in skip]
    per_node = [p for p in fwk.per_node_filter_plugins if p.name not in skip]
    mask = np.ones(snapshot.table.n, dtype=bool)
    for pl in batch:
        mask &= pl.filter_batch(state, pod, snapshot.table)  # type: ignore[attr-defined]
    # Nodes with nominated pods of equal or higher priority take the two-pass per-node path instead.
    resolved: dict[int, Status | None] = {}
    for name in fwk.nodes_with_ge_nominated_pods(pod):
        p = snapshot.position.get(name)
        if p is not None:
            resolved[p] = fwk.run_filter_plugins_with_nominated_pods(state, pod, all_nodes[p])
            mask[p] = resolved[p] is None
    passed = mask[order]
    feasible_pos: list[int] = []
    rejected_pos: list[int] = []  # examined and rejected by a per-node plugin; statuses known
    statuses: dict[int, Status] = {p: s for p, s in resolved.items() if s is not None}
    if not per_node:
        hits = np.flatnonzero(passed)
        if len(hits) >= k:
            examined = int(hits[k - 1]) + 1
            feasible_pos = order[hits[:k]].tolist()
        else:
            examined = num_nodes
            feasible_pos = order[hits].tolist()
    else:
        examined = num_nodes
        for i in range(num_nodes):
            if not passed[i]:
                continue
            p = int(order[i])
            ni = all_nodes[p]
            st: Status | None = None
            for pl in per_node if p not in resolved else ():
                st = pl.filter(state, pod, ni)  # type: ignore[attr-defined]
                if st is not None and not st.is_success():
                    if not st.is_rejected():
                        raise RuntimeError(f'running "{pl.name}" filter plugin: {st.message()}')
                    st.with_plugin(pl.name)
                    break
                st = None
            if st is None:
                feasible_pos.append(p)
                if len(feasible_pos) == k:
                    examined = i + 1
                    break
            else:
                statuses[p] = st
                rejected_pos.append(p)
    window = order[:examined]
    batch_rejected = window[~passed[:examined]]
    if resolved:
        batch_rejected = batch_rejected[~np.isin(batch_rejected, list(resolved))]
        in_window = set(window.tolist())
        rejected_pos.extend(p for p, s in resolved.items() if s is not None and p in in_window)
    diagnosis.evaluated_rejected = len(batch_rejected) + len(rejected_pos)
    sched.next_start_node_index = (sched.next_start_node_index + examined) % len(all_nodes)
    if record is not None or not feasible_pos:
        # Reasons are wanted: run the per-node path once per rejected node, recording as it goes.
        per_node_records: dict[int, dict[str, str]] = {}
        for p in (*batch_rejected.tolist(), *rejected_pos):
            ni = all_nodes[p]
            if record is not None and p in resolved:
                per_node_records[p] = {}
                fwk.run_filter_plugins_with_nominated_pods(state, pod, ni, per_node_records[p])
            elif record is not None:
                per_node_records[p] = {}
                statuses[p] = _rejection(fwk.run_filter_plugins(state, pod, ni, per_node_records[p]), ni)
            elif p not in statuses:
                statuses[p] = _rejection(fwk.run_filter_plugins(state, pod, ni), ni)
            st = statuses[p]
            diagnosis.node_to_status[ni.name] = st
            (diagnosis.pending_plugins if st.code == Code.PENDING else diagnosis.unschedulable_plugins).add(st.plugin)
        if record is not None:
            passed_all = dict.fromkeys((pl.name for pl in plugins), "passed")
            for p in window.tolist():
                record.filter[all_nodes[p].name] = per_node_records.get(p) or dict(passed_all)
    return np.array(feasible_pos, dtype=np.int64)


def _rejection(status: Status | None, node_info: NodeInfo) -> Status:
    """The per-node path must reject a node the batch path rejected; anything else is a plugin bug."""
    if status is None:
        raise RuntimeError(f"filter plugins disagree on node {node_info.name}: batch rejected, per-node passed")
    return status


def prioritize_nodes(
    sched: Scheduler,
    fwk: Framework,
    state: CycleState,
    pod: PodInfo,
    nodes: Sequence[NodeInfo],
    positions: np.ndarray,
    table: object,
    record: AttemptRecord | None,
) -> np.ndarray:
    if not has_scoring(sched, fwk):
        return np.ones(len(nodes), dtype=np.int64)
    totals = _plugin_scores(fwk, state, pod, nodes, positions, table, record)
    if sched.extenders:
        totals = totals + _extender_scores(sched, pod, nodes, record)
    return totals


def _extender_scores(
    sched: Scheduler, pod: PodInfo, nodes: Sequence[NodeInfo], record: AttemptRecord | None
) -> np.ndarray:
    """Each interested extender's 0-10 priorities, scaled to 0-100 and weighted; an erroring one adds nothing."""
    index = {ni.name: i for i, ni in enumerate(nodes)}
    out = np.zeros(len(nodes), dtype=np.int64)
    for ext in sched.extenders:
        if not ext.is_interested(pod):
            continue
        try:
            priorities, weight = ext.prioritize(pod, nodes)
        except ExtenderError as err:
            log.info("Extender %s prioritize failed, ignored: %s", ext.name, err)
            continue
        key = ext.record_key
        for host, score in priorities:
            i = index.get(host)
            if i is None:
                continue
            final = extender_score(score, weight)
            out[i] += final
            if record is not None:
                record.score.setdefault(host, {})[key] = score
                record.normalized_score.setdefault(host, {})[key] = score
                record.final_score.setdefault(host, {})[key] = final
    return out


def _plugin_scores(
    fwk: Framework,
    state: CycleState,
    pod: PodInfo,
    nodes: Sequence[NodeInfo],
    positions: np.ndarray,
    table: object,
    record: AttemptRecord | None,
) -> np.ndarray:
    if not fwk.has_score_plugins():
        return np.zeros(len(nodes), dtype=np.int64)
    s = fwk.run_pre_score_plugins(state, pod, nodes)
    if s is not None and not s.is_success():
        raise RuntimeError(s.message())
    rows, totals, s = fwk.run_score_plugins(state, pod, nodes, table, positions)
    if s is not None and not s.is_success():
        raise RuntimeError(s.message())
    if record is not None:
        for name, raw, norm in rows:
            w = fwk.score_weights[name]
            for i, ni in enumerate(nodes):
                record.score.setdefault(ni.name, {})[name] = int(raw[i])
                record.normalized_score.setdefault(ni.name, {})[name] = int(norm[i])
                record.final_score.setdefault(ni.name, {})[name] = int(norm[i]) * w
    return totals


def select_host(sched: Scheduler, nodes: Sequence[NodeInfo], totals: np.ndarray) -> str:
    """Highest total score; ties broken uniformly at random (seedable), as upstream's reservoir sampling."""
    best = np.flatnonzero(totals == totals.max())
    pick = int(best[0]) if len(best) == 1 else int(best[sched.rng.randrange(len(best))])
    return nodes[pick].name
