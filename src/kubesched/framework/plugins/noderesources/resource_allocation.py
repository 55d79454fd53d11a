"""The shared scorer of NodeResourcesFit and BalancedAllocation (noderesources/resource_allocation.go).

Each scorer takes per-resource (requested, allocatable) pairs; resources with zero
allocatable are left out. The per-node and vectorised paths share the formulas in
least_allocated/most_allocated/requested_to_capacity_ratio/balanced below.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from typing import Final

import numpy as np

from kubesched.api.resources import CPU, EPHEMERAL_STORAGE, MEMORY, is_scalar_resource_name
from kubesched.config.types import ResourceSpec, UtilizationShapePoint
from kubesched.framework.interface import MAX_NODE_SCORE, IntArray
from kubesched.framework.node_info import NodeInfo
from kubesched.framework.node_table import NodeTable
from kubesched.framework.plugins.helper.normalize_score import div_trunc, go_round
from kubesched.framework.types import PodInfo

MAX_UTILIZATION = 100
MAX_CUSTOM_PRIORITY_SCORE = 10

Scorer = Callable[[Sequence[int], Sequence[int]], int]


def pod_request_list(pod: PodInfo, resources: Sequence[ResourceSpec], *, use_requested: bool) -> list[int]:
    """calculatePodResourceRequestList: non-zero cpu/memory unless `use_requested`."""
    out = []
    for r in resources:
        if not use_requested and r.name == CPU:
            out.append(pod.non_zero_cpu)
        elif not use_requested and r.name == MEMORY:
            out.append(pod.non_zero_mem)
        else:
            out.append(pod.requests.get(r.name, 0))
    return out


def allocatable_and_requested(
    node_info: NodeInfo, resource: str, pod_request: int, *, use_requested: bool
) -> tuple[int, int]:
    if pod_request == 0 and is_scalar_resource_name(resource):
        return 0, 0
    alloc = node_info.allocatable
    if resource == CPU:
        base = node_info.requested.get(CPU, 0) if use_requested else node_info.non_zero_cpu
        return alloc.get(CPU, 0), base + pod_request
    if resource == MEMORY:
        base = node_info.requested.get(MEMORY, 0) if use_requested else node_info.non_zero_mem
        return alloc.get(MEMORY, 0), base + pod_request
    if resource == EPHEMERAL_STORAGE:
        return alloc.get(EPHEMERAL_STORAGE, 0), node_info.requested.get(EPHEMERAL_STORAGE, 0) + pod_request
    if resource in alloc and is_scalar_resource_name(resource):
        return alloc[resource], node_info.requested.get(resource, 0) + pod_request
    return 0, 0


def requested_and_allocatable(
    node_info: NodeInfo, resources: Sequence[ResourceSpec], pod_requests: Sequence[int], *, use_requested: bool
) -> tuple[list[int], list[int]]:
    """Per configured resource, (requested incl. the pod, allocatable); both 0 where the resource is skipped."""
    requested, allocatable = [], []
    for r, want in zip(resources, pod_requests, strict=True):
        a, q = allocatable_and_requested(node_info, r.name, want, use_requested=use_requested)
        allocatable.append(a)
        requested.append(q if a else 0)
    return requested, allocatable


def table_columns(
    table: NodeTable, positions: IntArray, resource: str, pod_request: int, *, use_requested: bool
) -> tuple[IntArray, IntArray]:
    """The vectorised allocatable_and_requested for the nodes at `positions`."""
    zeros = np.zeros(len(positions), dtype=np.int64)
    if pod_request == 0 and is_scalar_resource_name(resource):
        return zeros, zeros
    j = table.resource_index.get(resource)
    if resource in (CPU, MEMORY):
        alloc = table.allocatable[positions, table.resource_index[resource]]
        if use_requested:
            base = table.requested[positions, table.resource_index[resource]]
        else:
            base = table.non_zero_requested[positions, 0 if resource == CPU else 1]
        return alloc, base + pod_request
    if j is None or not (resource == EPHEMERAL_STORAGE or is_scalar_resource_name(resource)):
        return zeros, zeros
    return table.allocatable[positions, j], table.requested[positions, j] + pod_request


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


def balanced_resource_scorer(requested: Sequence[int], allocatable: Sequence[int]) -> int:
    fractions = []
    total = 0.0
    for r, a in zip(requested, allocatable, strict=True):
        if a == 0:
            continue
        f = min(r / a, 1.0)
        total += f
        fractions.append(f)
    std = 0.0
    if len(fractions) == 2:
        std = abs((fractions[0] - fractions[1]) / 2)
    elif len(fractions) > 2:
        mean = total / len(fractions)
        std = math.sqrt(sum((f - mean) * (f - mean) for f in fractions) / len(fractions))
    return int((1 - std) * MAX_NODE_SCORE)
