"""Helpers to run one plugin the way the framework would, for table-driven tests."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from kubesched.backend.embedded.cluster import EmbeddedCluster
from kubesched.cache.cache import Cache
from kubesched.cache.snapshot import Snapshot
from kubesched.framework.cycle_state import CycleState
from kubesched.framework.interface import Handle, NodeScoreList, Plugin
from kubesched.framework.node_info import parse_node
from kubesched.framework.plugins.dynamicresources.dra_manager import DRAManager
from kubesched.framework.status import Code, Status
from kubesched.framework.types import PodInfo, new_pod_info


def build_snapshot(nodes: Sequence[dict[str, Any]], pods: Sequence[dict[str, Any]] = ()) -> Snapshot:
    """A snapshot of `nodes` (in order) with assigned `pods`, built through the cache."""
    cache = Cache()
    for n in nodes:
        cache.add_node(parse_node(n))
    for p in pods:
        cache.add_pod(new_pod_info(p))
    snap = Snapshot()
    cache.update_snapshot(snap)
    return snap


def lister_with(objects: Sequence[dict[str, Any]] = (), clock: Callable[[], float] | None = None) -> EmbeddedCluster:
    """A store holding `objects` as given: no PV controller binds or provisions behind the test's back.

    It is also the API client of plugins that write (its `clock` stamps their timestamps)."""
    cluster = EmbeddedCluster(clock, pv_controller=False) if clock is not None else EmbeddedCluster(pv_controller=False)
    for o in objects:
        cluster.create(o)
    return cluster


def new_plugin(factory: Callable[[Any, Handle], Plugin], args: Any, snapshot: Snapshot, lister: Any = None) -> Any:
    manager = DRAManager(lister) if lister is not None else None
    return factory(args, Handle(lister=lister, snapshot=snapshot, dra_manager=manager))


def run_pre_filter(plugin: Any, state: CycleState, pod: PodInfo, snapshot: Snapshot) -> Status | None:
    _, s = plugin.pre_filter(state, pod, snapshot.node_info_list)
    return s


def filter_statuses(plugin: Any, pod_obj: dict[str, Any], snapshot: Snapshot, *, batch: bool) -> list[Status | None]:
    """PreFilter (Skip honoured) then Filter on every node; the batch path turns its mask into Success/'rejected'."""
    pod = new_pod_info(pod_obj)
    state = CycleState()
    if hasattr(plugin, "pre_filter"):
        s = run_pre_filter(plugin, state, pod, snapshot)
        if s is not None and s.code == Code.SKIP:
            return [None] * len(snapshot)
        if s is not None and not s.is_success():
            return [s] * len(snapshot)
    if batch and hasattr(plugin, "filter_batch"):
        mask = plugin.filter_batch(state, pod, snapshot.table, slice(0, snapshot.table.n))
        return [
            None if ok else _batch_rejection(plugin.filter(state, pod, ni))
            for ok, ni in zip(mask, snapshot.node_info_list, strict=True)
        ]
    return [plugin.filter(state, pod, ni) for ni in snapshot.node_info_list]


def _batch_rejection(plain: Status | None) -> Status:
    """The plain path's reason for a node the batch path rejected; a pass there is a disagreement, never None."""
    return plain if plain is not None else Status(Code.ERROR, "batch path rejected a node the plain path accepts")


def score_nodes(
    plugin: Any, pod_obj: dict[str, Any], snapshot: Snapshot, *, batch: bool = False, nodes: Sequence[str] | None = None
) -> tuple[list[int], Status | None]:
    """PreScore, Score and NormalizeScore over the (named or all) nodes, as the runtime does."""
    pod = new_pod_info(pod_obj)
    state = CycleState()
    infos = snapshot.node_info_list if nodes is None else [snapshot.node_info_map[n] for n in nodes]
    if hasattr(plugin, "pre_score"):
        s = plugin.pre_score(state, pod, infos)
        if s is not None and s.code == Code.SKIP:
            return [0] * len(infos), s
        if s is not None and not s.is_success():
            return [], s
    if batch and hasattr(plugin, "score_batch"):
        positions = np.array([snapshot.position[ni.name] for ni in infos], dtype=np.int64)
        scores = np.asarray(plugin.score_batch(state, pod, snapshot.table, positions), dtype=np.int64).copy()
    else:
        scores = np.array([plugin.score(state, pod, ni)[0] for ni in infos], dtype=np.int64)
    if plugin.has_normalize():
        s = plugin.normalize_score(state, pod, NodeScoreList([ni.name for ni in infos], scores))
        if s is not None and not s.is_success():
            return [], s
    return [int(x) for x in scores], None
