"""The shared scorer of NodeResourcesFit and BalancedAllocation (noderesources/resource_allocation.go).

Per configured resource a node gives (requested with the pod, allocated without it,
allocatable); resources with zero allocatable, and scalar resources the pod does not
ask for, are left out. The strategies read only requested and allocatable; since v1.36
BalancedAllocation also compares against the node without the pod. The per-node and
vectorised paths share the formulas below.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from typing import Final

import numpy as np

from kubesched.api.resources import (
    CPU,
    EPHEMERAL_STORAGE,
    MEMORY,
    NON_ZERO_DEFAULTS,
    is_pod_level_requests_set,
    is_scalar_resource_name,
    pod_requests,
    reads_status_resources,
)
from kubesched.config.types import ResourceSpec, UtilizationShapePoint
from kubesched.framework.interface import MAX_NODE_SCORE, BoolArray, IntArray
from kubesched.framework.node_info import NodeInfo
from kubesched.framework.node_table import NodeTable
from kubesched.framework.plugins.helper.normalize_score import div_trunc, go_round
from kubesched.framework.types import PodInfo

MAX_UTILIZATION = 100
MAX_CUSTOM_PRIORITY_SCORE = 10

Scorer = Callable[[Sequence[int], Sequence[int]], int]
FloatArray = np.ndarray


def pod_request_list(pod: PodInfo, resources: Sequence[ResourceSpec], *, use_requested: bool) -> list[int]:
    """calculatePodResourceRequestList: the pod's request for each configured resource.

    BalancedAllocation (`use_requested`) counts the pod as its node will: pod.requests.
    NodeResourcesFit's scorer is built upstream (v1.34 and v1.36 alike) without the
    PodLevelResources and InPlacePodVerticalScaling flags, so it sums the containers'
    spec requests with the scoring defaults for a missing cpu/memory, ignoring pod-level
    requests and resize status; only pods that have either need the recount.
    """
    if use_requested:
        return [pod.requests.get(r.name, 0) for r in resources]
    if is_pod_level_requests_set(pod.obj.get("spec") or {}) or reads_status_resources(pod.obj):
        reqs = pod_requests(
            pod.obj, use_status_resources=False, skip_pod_level_resources=True, non_missing=NON_ZERO_DEFAULTS
        )
        return [reqs.get(r.name, 0) for r in resources]
    non_zero = {CPU: pod.non_zero_cpu, MEMORY: pod.non_zero_mem}
    return [non_zero[r.name] if r.name in non_zero else pod.requests.get(r.name, 0) for r in resources]


def allocatable_and_allocated(
    node_info: NodeInfo, resource: str, pod_request: int, *, use_requested: bool
) -> tuple[int, int]:
    """calculateResourceAllocatableRequest: (allocatable, requested by the node's pods); (0, 0) skips the resource."""
    if pod_request == 0 and is_scalar_resource_name(resource):
        return 0, 0
    alloc = node_info.allocatable
    if resource == CPU:
        return alloc.get(CPU, 0), node_info.requested.get(CPU, 0) if use_requested else node_info.non_zero_cpu
    if resource == MEMORY:
        return alloc.get(MEMORY, 0), node_info.requested.get(MEMORY, 0) if use_requested else node_info.non_zero_mem
    if resource == EPHEMERAL_STORAGE:
        return alloc.get(EPHEMERAL_STORAGE, 0), node_info.requested.get(EPHEMERAL_STORAGE, 0)
    if resource in alloc and is_scalar_resource_name(resource):
        return alloc[resource], node_info.requested.get(resource, 0)
    return 0, 0


def node_allocatable_request(
    node_info: NodeInfo, resources: Sequence[ResourceSpec], pod_requests: Sequence[int], *, use_requested: bool
) -> tuple[list[int], list[int], list[int]]:
    """Per configured resource, (requested incl. the pod, allocated without it, allocatable); all 0 where skipped."""
    requested, allocated, allocatable = [], [], []
    for r, want in zip(resources, pod_requests, strict=True):
        a, used = allocatable_and_allocated(node_info, r.name, want, use_requested=use_requested)
        if a == 0:
            used = want = 0
        allocatable.append(a)
        allocated.append(used)
        requested.append(used + want)
    return requested, allocated, allocatable


def table_columns(
    table: NodeTable, positions: IntArray, resource: str, pod_request: int, *, use_requested: bool
) -> tuple[IntArray, IntArray]:
    """The vectorised allocatable_and_allocated for the nodes at `positions`: each a gather from one of the
    table's (column-major, so contiguous) columns, cheaper than a two-axis fancy index."""
    if resource in (CPU, MEMORY):
        column = table.resource_index[resource]
        alloc = table.allocatable[:, column][positions]
        if use_requested:
            used = table.requested[:, column][positions]
        else:
            used = table.non_zero_requested[:, 0 if resource == CPU else 1][positions]
        return alloc, used
    if pod_request == 0 and is_scalar_resource_name(resource):
        zeros = np.zeros(len(positions), dtype=np.int64)
        return zeros, zeros
    j = table.resource_index.get(resource)
    if j is None or not (resource == EPHEMERAL_STORAGE or is_scalar_resource_name(resource)):
        zeros = np.zeros(len(positions), dtype=np.int64)
        return zeros, zeros
    return table.allocatable[:, j][positions], table.requested[:, j][positions]


def least_requested_score(requested: int, capacity: int) -> int:
    if capacity == 0 or requested > capacity:
        return 0
    return (capacity - requested) * MAX_NODE_SCORE // capacity


def most_requested_score(requested: int, capacity: int) -> int:
    if capacity == 0:
        return 0
    requested = min(requested, capacity)
    return requested * MAX_NODE_SCORE // capacity


def _weighted_mean(resources: Sequence[ResourceSpec], per_resource: Callable[[int, int], int]) -> Scorer:
    def scorer(requested: Sequence[int], allocatable: Sequence[int]) -> int:
        node_score = weight_sum = 0
        for i, a in enumerate(allocatable):
            if a == 0:
                continue
            w = resources[i].weight
            node_score += per_resource(requested[i], a) * w
            weight_sum += w
        return node_score // weight_sum if weight_sum else 0

    return scorer


def least_allocated_scorer(resources: Sequence[ResourceSpec]) -> Scorer:
    return _weighted_mean(resources, least_requested_score)


def most_allocated_scorer(resources: Sequence[ResourceSpec]) -> Scorer:
    return _weighted_mean(resources, most_requested_score)


def broken_linear_function(shape: Sequence[tuple[int, int]]) -> Callable[[int], int]:
    """helper.BuildBrokenLinearFunction with Go's truncating integer division."""

    def f(p: int) -> int:
        for i, (u, s) in enumerate(shape):
            if p <= u:
                if i == 0:
                    return shape[0][1]
                u0, s0 = shape[i - 1]
                return s0 + div_trunc((s - s0) * (p - u0), u - u0)
        return shape[-1][1]

    return f


def requested_to_capacity_ratio_scorer(
    resources: Sequence[ResourceSpec], shape: Sequence[UtilizationShapePoint]
) -> Scorer:
    scale = MAX_NODE_SCORE // MAX_CUSTOM_PRIORITY_SCORE
    raw = broken_linear_function([(p.utilization, p.score * scale) for p in shape])

    def resource_score(requested: int, capacity: int) -> int:
        if capacity == 0 or requested > capacity:
            return raw(MAX_UTILIZATION)
        return raw(requested * MAX_UTILIZATION // capacity)

    def scorer(requested: Sequence[int], allocatable: Sequence[int]) -> int:
        node_score = weight_sum = 0
        for i, a in enumerate(allocatable):
            if a == 0:
                continue
            s = resource_score(requested[i], a)
            if s > 0:
                w = resources[i].weight
                node_score += s * w
                weight_sum += w
        if weight_sum == 0:
            return 0
        return go_round(node_score / weight_sum)

    return scorer


LEAST_ALLOCATED: Final = "LeastAllocated"
MOST_ALLOCATED: Final = "MostAllocated"
REQUESTED_TO_CAPACITY_RATIO: Final = "RequestedToCapacityRatio"


def strategy_scorer(strategy: str, resources: Sequence[ResourceSpec], shape: Sequence[UtilizationShapePoint]) -> Scorer:
    """The per-node scorer of a NodeResourcesFit scoring strategy."""
    if strategy == LEAST_ALLOCATED:
        return least_allocated_scorer(resources)
    if strategy == MOST_ALLOCATED:
        return most_allocated_scorer(resources)
    return requested_to_capacity_ratio_scorer(resources, shape)


def balanced_resource_score(requested: Sequence[int], allocatable: Sequence[int]) -> int:
    """(1 - std of the usage fractions) * 100, each fraction capped at 1; in [50, 100]."""
    fractions = []
    total = 0.0
    for r, a in zip(requested, allocatable, strict=True):
        if a == 0:
            continue
        f = min(float(r) / float(a), 1.0)  # Go converts before dividing; Python's int division would not
        total += f
        fractions.append(f)
    std = 0.0
    if len(fractions) == 2:
        std = abs((fractions[0] - fractions[1]) / 2)
    elif len(fractions) > 2:
        mean = total / len(fractions)
        std = math.sqrt(sum((f - mean) * (f - mean) for f in fractions) / len(fractions))
    return int((1 - std) * MAX_NODE_SCORE)


def balance_change_score(with_pod: IntArray | int, without_pod: IntArray | int) -> IntArray | int:
    """v1.36 scores the change in balance the pod makes: 75 when it changes nothing, 100 and 50 at the extremes.

    Both balances lie in [50, 100], so the numerator is never negative and floor
    division equals Go's truncation.
    """
    return MAX_NODE_SCORE // 2 + (MAX_NODE_SCORE // 2 + with_pod - without_pod) // 2


def balanced_resource_scorer(requested: Sequence[int], allocated: Sequence[int], allocatable: Sequence[int]) -> int:
    """balancedResourceScorer: how the node's balance changes when the pod is added."""
    after = balanced_resource_score(requested, allocatable)
    return int(balance_change_score(after, balanced_resource_score(allocated, allocatable)))


def balanced_resource_scores(used: Sequence[IntArray], allocatable: Sequence[IntArray]) -> IntArray:
    """balanced_resource_score over columns, with Go's summation order so every float matches.

    A resource counts on the nodes where its allocatable is non-zero; nodes counting
    exactly two resources take the |a - b| / 2 shortcut as upstream does.
    """
    if allocatable and all(a.all() for a in allocatable):
        return _balanced_scores_all_counted(used, allocatable)
    n = len(allocatable[0]) if allocatable else 0
    fracs: list[FloatArray] = []
    valids: list[BoolArray] = []
    for q, a in zip(used, allocatable, strict=True):
        valid = a > 0
        fracs.append(np.where(valid, np.minimum(q / np.where(valid, a, 1), 1.0), 0.0))
        valids.append(valid)
    count = np.zeros(n, dtype=np.int64)
    total = np.zeros(n)
    first = np.zeros(n)
    second = np.zeros(n)
    for f, valid in zip(fracs, valids, strict=True):
        first = np.where(valid & (count == 0), f, first)
        second = np.where(valid & (count == 1), f, second)
        total = total + f
        count += valid
    safe = np.where(count > 0, count, 1)
    mean = total / safe
    var = np.zeros(n)
    for f, valid in zip(fracs, valids, strict=True):
        var = var + np.where(valid, (f - mean) * (f - mean), 0.0)
    std = np.where(count == 2, np.abs((first - second) / 2), np.where(count > 2, np.sqrt(var / safe), 0.0))
    return ((1 - std) * MAX_NODE_SCORE).astype(np.int64)


def _balanced_scores_all_counted(used: Sequence[IntArray], allocatable: Sequence[IntArray]) -> IntArray:
    """balanced_resource_scores where every node counts every resource (the usual case: cpu and memory on
    every node): no per-node masks, the same float operations in the same order."""
    fracs = [np.minimum(q / a, 1.0) for q, a in zip(used, allocatable, strict=True)]
    if len(fracs) == 1:
        return np.full(len(fracs[0]), MAX_NODE_SCORE, dtype=np.int64)
    if len(fracs) == 2:
        std = np.abs((fracs[0] - fracs[1]) / 2)
    else:
        total = fracs[0]
        for f in fracs[1:]:
            total = total + f
        mean = total / len(fracs)
        var = (fracs[0] - mean) * (fracs[0] - mean)
        for f in fracs[1:]:
            var = var + (f - mean) * (f - mean)
        std = np.sqrt(var / len(fracs))
    return ((1 - std) * MAX_NODE_SCORE).astype(np.int64)
