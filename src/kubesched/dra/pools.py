"""Resource pools as the allocator sees them from one node (structured/internal/incubating/pools_incubating.go).

Slices are grouped by driver and pool; only the newest generation counts; a pool whose
slices are not all published yet is incomplete (allocation skips it, "All" requests fail
on it); a pool with duplicate device names or broken counter references is invalid.
Pools are ordered by driver then pool name, those with devices that have binding
conditions last; slices in a pool by name; devices as listed in their slice.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from fractions import Fraction
from typing import Any

from kubesched.dra.model import NodeSelectorParseError, Slice, node_matches


class GatherError(Exception):
    """Node selection failed for a slice or device (a selector that does not parse)."""


@dataclass(eq=False, slots=True)
class Pool:
    driver: str
    pool: str
    incomplete: bool = False
    invalid: bool = False
    invalid_reason: str = ""
    slices: list[Slice] = field(default_factory=list)  # device slices targeting the node, by name
    slices_not_targeting_node: list[Slice] = field(default_factory=list)
    counter_sets: dict[str, dict[str, Fraction]] = field(default_factory=dict)

    @property
    def id(self) -> str:
        return f"{self.driver}/{self.pool}"


def gather_pools(
    slices_for_node: Sequence[Slice],
    node: Mapping[str, Any],
    partitionable_devices: bool,
    all_slices: Sequence[Slice],
    incomplete_with_devices: bool = False,
) -> list[Pool]:
    """GatherPools: the pools whose devices the node can reach, in allocation order.

    `incomplete_with_devices`: an incomplete pool keeps the devices it has (v1.34 allocates from them).
    """
    by_pool: dict[tuple[str, str], list[Slice]] = {}
    for s in slices_for_node:
        if not partitionable_devices and (s.per_device_node_selection is not None or s.shared_counters):
            continue
        if s.shared_counters:
            relevant = True  # counter sets are needed whatever nodes they name
        elif s.node_name or s.all_nodes or s.node_selector is not None:
            try:
                relevant = node_matches(node, s.node_name, s.all_nodes, s.node_selector, s)
            except NodeSelectorParseError as err:
                raise GatherError(f"failed to perform node selection for slice {s.name}: {err}") from err
        elif s.per_device_node_selection:
            relevant = False
            for d in s.devices:
                try:
                    matched = node_matches(node, d.node_name, d.all_nodes, d.node_selector, d)
                except NodeSelectorParseError as err:
                    raise GatherError(
                        f"failed to perform node selection for device {d.name} in slice {s.name}: {err}"
                    ) from err
                if matched:
                    relevant = True
                    break
        else:
            continue  # some future way of selecting nodes: not ours to use
        if relevant:
            _add_slice(by_pool, s)

    result: list[Pool] = []
    with_binding_conditions: list[Pool] = []
    for (driver, pool_name), pool_slices in by_pool.items():
        first = pool_slices[0]
        if len(pool_slices) == first.resource_slice_count:
            pool = _build_pool(driver, pool_name, pool_slices, partitionable_devices, None)
        else:
            # Slices filtered out above for not naming this node may complete the pool.
            obsolete, all_for_pool = _slices_in_pool(all_slices, driver, pool_name, first.generation)
            if obsolete:
                continue  # the driver is replacing this generation
            if len(all_for_pool) != first.resource_slice_count:
                if not incomplete_with_devices:
                    result.append(Pool(driver, pool_name, incomplete=True))
                    continue
                pool = _build_pool(driver, pool_name, pool_slices, partitionable_devices, all_for_pool)
                pool.incomplete = True
            else:
                pool = _build_pool(driver, pool_name, pool_slices, partitionable_devices, all_for_pool)
        if _has_binding_conditions(pool):
            with_binding_conditions.append(pool)
        else:
            result.append(pool)
    result.sort(key=lambda p: (p.driver, p.pool))
    with_binding_conditions.sort(key=lambda p: (p.driver, p.pool))
    return result + with_binding_conditions


def _add_slice(by_pool: dict[tuple[str, str], list[Slice]], s: Slice) -> None:
    key = (s.driver, s.pool)
    current = by_pool.get(key)
    if current is None or s.generation > current[0].generation:
        by_pool[key] = [s]
    elif s.generation == current[0].generation:
        current.append(s)


def _slices_in_pool(all_slices: Sequence[Slice], driver: str, pool: str, generation: int) -> tuple[bool, list[Slice]]:
    """checkSlicesInPool: (a newer generation exists, the slices of this generation)."""
    found: list[Slice] = []
    for s in all_slices:
        if s.driver != driver or s.pool != pool:
            continue
        if s.generation == generation:
            found.append(s)
        elif s.generation > generation:
            return True, []
    return False, found


def _build_pool(
    driver: str, pool_name: str, slices: list[Slice], partitionable_devices: bool, all_for_pool: list[Slice] | None
) -> Pool:
    slices = sorted(slices, key=lambda s: s.name)
    if partitionable_devices:
        device_slices = [s for s in slices if not s.shared_counters]
        counter_slices = [s for s in slices if s.shared_counters]
    else:
        device_slices, counter_slices = slices, []
    reason = _duplicate_device_name(device_slices)
    if reason:
        return Pool(driver, pool_name, invalid=True, invalid_reason=reason)
    if not partitionable_devices:
        return Pool(driver, pool_name, slices=device_slices)
    counter_sets: dict[str, dict[str, Fraction]] = {}
    for s in counter_slices:
        for name, counters in s.shared_counters:
            if name in counter_sets:
                return Pool(driver, pool_name, invalid=True, invalid_reason=f"duplicate counter set name {name}")
            counter_sets[name] = counters
    reason = _bad_counter_reference(counter_sets, slices)
    if reason:
        return Pool(driver, pool_name, invalid=True, invalid_reason=reason)
    if all_for_pool is None or len(slices) == len(all_for_pool):
        return Pool(driver, pool_name, slices=device_slices, counter_sets=counter_sets)
    # Devices on other nodes may consume the same counters: the allocator must see them too.
    names = {s.name for s in slices}
    others = [s for s in all_for_pool if s.name not in names]
    reason = _bad_counter_reference(counter_sets, others)
    if reason:
        return Pool(driver, pool_name, invalid=True, invalid_reason=reason)
    return Pool(driver, pool_name, slices=device_slices, slices_not_targeting_node=others, counter_sets=counter_sets)


def _duplicate_device_name(slices: list[Slice]) -> str:
    seen: set[str] = set()
    for s in slices:
        for d in s.devices:
            if d.name in seen:
                return f"duplicate device name {d.name}"
            seen.add(d.name)
    return ""


def _bad_counter_reference(counter_sets: dict[str, dict[str, Fraction]], slices: list[Slice]) -> str:
    for s in slices:
        for d in s.devices:
            for cc in d.consumes_counters:
                counters = counter_sets.get(cc.counter_set)
                if counters is None:
                    return f"counter set {cc.counter_set} not found"
                for name, _ in cc.counters:
                    if name not in counters:
                        return f"counter {name} not found in counter set {cc.counter_set}"
    return ""


def _has_binding_conditions(pool: Pool) -> bool:
    return any(d.binding_conditions for s in pool.slices for d in s.devices)
