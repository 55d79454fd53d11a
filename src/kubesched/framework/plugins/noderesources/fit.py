"""NodeResourcesFit: mirrors framework/plugins/noderesources/fit.go (v1.36).

Filter checks the pod count and every requested resource (pod-level requests
included) against free allocatable; Score applies the configured strategy
(LeastAllocated, MostAllocated or RequestedToCapacityRatio) over the configured
resources, counting the pod as resource_allocation.pod_request_list says.

With DRAExtendedResource (beta, on in v1.36) an extended resource that a DeviceClass
serves (its extendedResourceName, or deviceclass.resource.kubernetes.io/<class>) is left
to DynamicResources on nodes whose allocatable of it is zero, and DeviceClass events may
requeue pods. Not built: scoring such resources when the scoring strategy names them
(upstream counts the DRA devices then). ScorePlacement serves pod groups under
TopologyAwareWorkloadScheduling (alpha, off), and SignPod serves opportunistic batching,
which this scheduler does not do.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, Final

import numpy as np

from kubesched.api.resources import (
    CPU,
    EPHEMERAL_STORAGE,
    MEMORY,
    PODS,
    is_extended_resource_name,
    pod_requests,
    reads_status_resources,
)
from kubesched.config import names
from kubesched.config.types import NodeResourcesFitArgs, ResourceSpec, UtilizationShapePoint
from kubesched.framework import events, signers
from kubesched.framework.cycle_state import ERROR_READING, READING, CycleState, read_state
from kubesched.framework.interface import (
    MAX_NODE_SCORE,
    BoolArray,
    ClusterEventWithHint,
    EnqueueExtensions,
    FilterPlugin,
    Handle,
    IntArray,
    PlacementScorePlugin,
    PodGroupAssignments,
    PreFilterPlugin,
    PreFilterResult,
    PreScorePlugin,
    QueueingHint,
    ScorePlugin,
    SignFragment,
)
from kubesched.framework.node_info import NodeInfo, ParsedNode
from kubesched.framework.node_table import POD_COUNT, NodeTable
from kubesched.framework.plugins.dynamicresources.extended import DEVICE_CLASS_PREFIX
from kubesched.framework.plugins.helper.normalize_score import trunc_div_array
from kubesched.framework.plugins.noderesources import resource_allocation as ra
from kubesched.framework.plugins.noderesources.resource_allocation import (
    LEAST_ALLOCATED,
    MOST_ALLOCATED,
    REQUESTED_TO_CAPACITY_RATIO,
)
from kubesched.framework.status import Code, Status
from kubesched.framework.types import PodInfo

NAME: Final = names.NODE_RESOURCES_FIT
PRE_FILTER_STATE_KEY: Final = "PreFilter" + NAME
PRE_SCORE_STATE_KEY: Final = "PreScore" + NAME
REASON_TOO_MANY_PODS: Final = "Too many pods"


@dataclass(frozen=True, slots=True)
class InsufficientResource:
    resource_name: str
    reason: str
    requested: int
    used: int
    capacity: int
    unresolvable: bool


@dataclass(frozen=True, slots=True)
class _PreFilterState:
    requests: dict[str, int]

    def clone(self) -> _PreFilterState:
        return self


@dataclass(frozen=True, slots=True)
class _PreScoreState:
    pod_requests: list[int]

    def clone(self) -> _PreScoreState:
        return self


def _is_ignored(name: str, ignored: frozenset[str], ignored_groups: frozenset[str]) -> bool:
    """ignoredResources / ignoredResourceGroups apply to extended resources only."""
    return is_extended_resource_name(name) and (name in ignored or name.split("/")[0] in ignored_groups)


Resolver = Callable[[str], object | None]
"""The DeviceClass that serves an extended resource name through DRA, or None (DeviceClassResolver)."""


def delegated_to_dra(name: str, allocatable: int, resolver: Resolver | None) -> bool:
    """shouldDelegateResourceToDRA: no device plugin offers it on the node, and a DeviceClass serves it."""
    return resolver is not None and allocatable <= 0 and resolver(name) is not None


def sign_requests(pod: PodInfo, resolver: Resolver | None) -> tuple[list[SignFragment], Status | None]:
    """The pod's requests as a signature fragment; none when DRA may serve one of its extended resources,
    since where that fits depends on devices, not on the node's counts."""
    for name, amount in pod.requests.items():
        if amount and name not in (CPU, MEMORY, EPHEMERAL_STORAGE, PODS) and delegated_to_dra(name, 0, resolver):
            return [], Status(
                Code.UNSCHEDULABLE, "signature disabled when dra extended resources are used in the cluster"
            )
    return [(signers.RESOURCES, dict(sorted(pod.requests.items())))], None


def fits_request(
    requests: dict[str, int],
    node_info: NodeInfo,
    ignored: frozenset[str],
    ignored_groups: frozenset[str],
    resolver: Resolver | None = None,
) -> list[InsufficientResource]:
    out: list[InsufficientResource] = []
    alloc, used = node_info.allocatable, node_info.requested
    allowed = alloc.get(PODS, 0)
    if len(node_info.pods) + 1 > allowed:
        out.append(InsufficientResource(PODS, REASON_TOO_MANY_PODS, 1, len(node_info.pods), allowed, False))
    if not any(requests.values()):
        return out
    for name in (CPU, MEMORY, EPHEMERAL_STORAGE):
        want = requests.get(name, 0)
        cap = alloc.get(name, 0)
        if want > 0 and want > cap - used.get(name, 0):
            out.append(InsufficientResource(name, f"Insufficient {name}", want, used.get(name, 0), cap, want > cap))
    for name in sorted(requests):
        want = requests[name]
        if name in (CPU, MEMORY, EPHEMERAL_STORAGE, PODS) or want == 0:
            continue
        if _is_ignored(name, ignored, ignored_groups):
            continue
        cap = alloc.get(name, 0)
        if delegated_to_dra(name, cap, resolver):
            continue
        if want > cap - used.get(name, 0):
            out.append(InsufficientResource(name, f"Insufficient {name}", want, used.get(name, 0), cap, want > cap))
    return out


def have_any_requested_resources_increased(
    requests: dict[str, int], original: ParsedNode, modified: ParsedNode, resolver: Resolver | None = None
) -> bool:
    """Whether the node now allows more pods, or more of a resource the pod asks for (or DRA may serve it)."""
    if modified.allocatable.get(PODS, 0) > original.allocatable.get(PODS, 0):
        return True
    return any(
        modified.allocatable.get(k, 0) > original.allocatable.get(k, 0)
        or (k not in (CPU, MEMORY, EPHEMERAL_STORAGE) and delegated_to_dra(k, modified.allocatable.get(k, 0), resolver))
        for k, v in requests.items()
        if v > 0 and k != PODS
    )


class Fit(PreFilterPlugin, FilterPlugin, PreScorePlugin, ScorePlugin, PlacementScorePlugin, EnqueueExtensions):
    NAME = NAME

    def sign_pod(self, pod: PodInfo) -> tuple[list[SignFragment], Status | None]:
        return sign_requests(pod, self.resolver)

    def events_to_register(self) -> list[ClusterEventWithHint]:
        return [
            events.event(events.POD, events.DELETE | events.UPDATE_POD_SCALE_DOWN, self._after_pod_event),
            # With queueing hints on there is no preCheck, so taint and label updates are not needed.
            events.event(events.NODE, events.ADD | events.UPDATE_NODE_ALLOCATABLE, self._after_node_change),
            events.event(events.DEVICE_CLASS, events.ADD | events.UPDATE, self._after_device_class_event),
        ]

    def _after_device_class_event(self, pod: PodInfo, old: Any, new: Any) -> QueueingHint:
        """A class may now serve, through DRA, an extended resource the pod asks for (by either of its names)."""
        if not isinstance(new, dict) or (old is not None and not isinstance(old, dict)):
            raise TypeError(f"unexpected object in isSchedulableAfterDeviceClassEvent: {type(new).__name__}")
        explicit = (new.get("spec") or {}).get("extendedResourceName")
        if old is not None:
            if (old.get("spec") or {}).get("extendedResourceName") == explicit:
                return QueueingHint.QUEUE_SKIP
        elif DEVICE_CLASS_PREFIX + str((new.get("metadata") or {}).get("name") or "") in pod.requests:
            return QueueingHint.QUEUE
        if explicit is not None and explicit in pod.requests:
            return QueueingHint.QUEUE
        return QueueingHint.QUEUE_SKIP

    def _after_pod_event(self, pod: PodInfo, old: PodInfo | None, new: PodInfo | None) -> QueueingHint:
        """A scheduled pod's deletion may free room; an update only if it shrank something the pod requests."""
        if new is None:
            assert old is not None
            return QueueingHint.QUEUE if old.node_name or old.nominated_node_name else QueueingHint.QUEUE_SKIP
        if old is None:
            return QueueingHint.QUEUE_SKIP
        if new.uid == pod.uid:
            return QueueingHint.QUEUE
        if not new.node_name:
            return QueueingHint.QUEUE_SKIP
        shrunk = any(new.requests.get(k, 0) < old.requests.get(k, 0) for k, v in pod.requests.items() if v)
        return QueueingHint.QUEUE if shrunk else QueueingHint.QUEUE_SKIP

    def _after_node_change(self, pod: PodInfo, old: ParsedNode | None, new: ParsedNode) -> QueueingHint:
        """Queue if the pod fits the (empty) node and the change added capacity it asks for."""
        # isFit checks the empty node without the ignored resources, as upstream's hint does.
        if fits_request(pod.requests, NodeInfo(new), frozenset(), frozenset(), self.resolver):
            return QueueingHint.QUEUE_SKIP
        if old is None:
            return QueueingHint.QUEUE
        grew = have_any_requested_resources_increased(pod.requests, old, new, self.resolver)
        return QueueingHint.QUEUE if grew else QueueingHint.QUEUE_SKIP

    def __init__(self, args: NodeResourcesFitArgs, resolver: Resolver | None = None) -> None:
        self.resolver = resolver
        self.ignored_resources = frozenset(args.ignoredResources)
        self.ignored_resource_groups = frozenset(args.ignoredResourceGroups)
        strategy = args.scoringStrategy
        assert strategy is not None
        self.strategy = strategy.type
        self.resources: list[ResourceSpec] = list(strategy.resources)
        self._shape = strategy.requestedToCapacityRatio.shape if strategy.requestedToCapacityRatio else []
        self.scorer = ra.strategy_scorer(self.strategy, self.resources, self._shape)
        # A placement of a pod group (TopologyAwareWorkloadScheduling) is scored MostAllocated over its nodes.
        self.placement_scorer = ra.most_allocated_scorer(self.resources)

    def pre_filter(self, state: CycleState, pod: PodInfo, nodes: Any) -> tuple[PreFilterResult | None, Status | None]:
        """computePodResourceRequest: pod-level requests count; resize status does not, the pod is not running yet."""
        requests = pod.requests
        if reads_status_resources(pod.obj):
            requests = pod_requests(pod.obj, use_status_resources=False)
        state.write(PRE_FILTER_STATE_KEY, _PreFilterState(requests))
        return None, None

    def filter(self, state: CycleState, pod: PodInfo, node_info: NodeInfo) -> Status | None:
        s = read_state(state, PRE_FILTER_STATE_KEY, _PreFilterState, ERROR_READING)
        insufficient = fits_request(
            s.requests, node_info, self.ignored_resources, self.ignored_resource_groups, self.resolver
        )
        if not insufficient:
            return None
        code = Code.UNSCHEDULABLE
        if any(r.unresolvable for r in insufficient):
            code = Code.UNSCHEDULABLE_AND_UNRESOLVABLE  # request above allocatable: since v1.34
        return Status(code, *(r.reason for r in insufficient))

    def filter_batch(self, state: CycleState, pod: PodInfo, table: NodeTable, rows: slice) -> BoolArray:
        requests = read_state(state, PRE_FILTER_STATE_KEY, _PreFilterState, ERROR_READING).requests
        idx = table.resource_index
        alloc, used = table.allocatable[rows], table.requested[rows]
        ok = used[:, POD_COUNT] < alloc[:, idx[PODS]]
        for name, want in requests.items():
            if want <= 0 or name == PODS:
                continue
            if _is_ignored(name, self.ignored_resources, self.ignored_resource_groups):
                continue
            j = idx.get(name)
            dra = (
                self.resolver is not None
                and name not in (CPU, MEMORY, EPHEMERAL_STORAGE)
                and self.resolver(name) is not None
            )
            if j is None:
                if dra:
                    continue  # no node offers it: DynamicResources serves it everywhere
                return np.zeros(len(ok), dtype=bool)
            if dra:
                ok &= (alloc[:, j] <= 0) | (alloc[:, j] - used[:, j] >= want)
            else:
                ok &= alloc[:, j] - used[:, j] >= want
        return ok

    def pre_score(self, state: CycleState, pod: PodInfo, nodes: Any) -> Status | None:
        state.write(PRE_SCORE_STATE_KEY, _PreScoreState(ra.pod_request_list(pod, self.resources, use_requested=False)))
        return None

    def _pod_requests(self, state: CycleState, pod: PodInfo) -> list[int]:
        """The PreScore state, or the same list computed here when PreScore did not run (as upstream's Score)."""
        try:
            return read_state(state, PRE_SCORE_STATE_KEY, _PreScoreState, READING).pod_requests
        except RuntimeError:
            return ra.pod_request_list(pod, self.resources, use_requested=False)

    def score(self, state: CycleState, pod: PodInfo, node_info: NodeInfo) -> tuple[int, Status | None]:
        reqs = self._pod_requests(state, pod)
        requested, _, allocatable = ra.node_allocatable_request(node_info, self.resources, reqs, use_requested=False)
        return self.scorer(requested, allocatable), None

    def score_batch(self, state: CycleState, pod: PodInfo, table: NodeTable, positions: IntArray) -> IntArray:
        reqs = self._pod_requests(state, pod)
        return strategy_scores(self.strategy, self.resources, self._shape, reqs, table, positions)

    def score_placement(
        self, state: CycleState, namespace: str, group: str, assignments: PodGroupAssignments
    ) -> tuple[int, Status | None]:
        """scorePlacement: the placement's nodes as one, with the pods proposed for it, scored MostAllocated."""
        n = len(self.resources)
        requested = [0] * n
        for pod, _ in assignments.proposed:
            for i, want in enumerate(ra.pod_request_list(pod, self.resources, use_requested=False)):
                requested[i] += want
        allocated, allocatable = [0] * n, [0] * n
        for ni in assignments.placement.nodes:
            _, used, alloc = ra.node_allocatable_request(ni, self.resources, requested, use_requested=False)
            for i in range(n):
                allocatable[i] += alloc[i]
                allocated[i] += used[i]
                requested[i] += used[i]
        return self.placement_scorer(requested, allocatable), None


def strategy_scores(
    strategy: str,
    resources: Sequence[ResourceSpec],
    shape: Sequence[UtilizationShapePoint],
    reqs: Sequence[int],
    table: NodeTable,
    positions: IntArray,
) -> IntArray:
    """A scoring strategy over the table's rows at `positions`, equal to the per-node scorer."""
    columns = [
        ra.table_columns(table, positions, r.name, want, use_requested=False)
        for r, want in zip(resources, reqs, strict=True)
    ]
    if strategy != REQUESTED_TO_CAPACITY_RATIO and columns and all(bool((a > 0).all()) for a, _ in columns):
        # The usual case (every resource on every node): each weighs on every node, so no masks.
        total = np.zeros(len(positions), dtype=np.int64)
        for r, want, (a, used) in zip(resources, reqs, columns, strict=True):
            q = used + want
            if strategy == LEAST_ALLOCATED:
                s = np.where(q > a, 0, (a - q) * MAX_NODE_SCORE // a)
            else:
                s = np.minimum(q, a) * MAX_NODE_SCORE // a
            total += s * r.weight
        weights = sum(r.weight for r in resources)
        return total // weights if weights > 0 else np.zeros(len(positions), dtype=np.int64)
    k = len(positions)
    node_score = np.zeros(k, dtype=np.int64)
    weight_sum = np.zeros(k, dtype=np.int64)
    for r, want, (a, used) in zip(resources, reqs, columns, strict=True):
        q = used + want
        valid = a > 0
        safe_a = np.where(valid, a, 1)
        if strategy == LEAST_ALLOCATED:
            s = np.where(q > a, 0, (a - q) * MAX_NODE_SCORE // safe_a)
        elif strategy == MOST_ALLOCATED:
            s = np.minimum(q, a) * MAX_NODE_SCORE // safe_a
        else:
            s = _rtcr_batch(shape, q, a, safe_a)
            valid &= s > 0
        node_score += np.where(valid, s * r.weight, 0)
        weight_sum += np.where(valid, r.weight, 0)
    safe_w = np.where(weight_sum > 0, weight_sum, 1)
    if strategy == REQUESTED_TO_CAPACITY_RATIO:
        ratio = node_score / safe_w
        whole = np.trunc(ratio)
        rounded = (whole + (ratio - whole >= 0.5)).astype(np.int64)
        return np.where(weight_sum > 0, rounded, 0)
    return np.where(weight_sum > 0, node_score // safe_w, 0)


def _rtcr_batch(shape_points: Sequence[UtilizationShapePoint], q: IntArray, a: IntArray, safe_a: IntArray) -> IntArray:
    scale = MAX_NODE_SCORE // ra.MAX_CUSTOM_PRIORITY_SCORE
    shape = [(p.utilization, p.score * scale) for p in shape_points]
    p = np.where(q > a, ra.MAX_UTILIZATION, q * ra.MAX_UTILIZATION // safe_a)
    out = np.full(len(p), shape[-1][1], dtype=np.int64)
    done = np.zeros(len(p), dtype=bool)
    for i, (u, s) in enumerate(shape):
        hit = ~done & (p <= u)
        if i == 0:
            out[hit] = s
        else:
            u0, s0 = shape[i - 1]
            out[hit] = s0 + trunc_div_array((s - s0) * (p[hit] - u0), u - u0)
        done |= hit
    return out


def new(args: NodeResourcesFitArgs, handle: Handle) -> Fit:
    manager = handle.dra_manager
    if manager is None or not handle.release.enabled("DRAExtendedResource"):
        return Fit(args)  # extended resources are the node's alone, as with the gate off
    return Fit(args, manager.device_class_for)
