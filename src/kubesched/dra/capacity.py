"""Consumable capacity: how much of a shared device one allocation takes (incubating/consumable_capacity.go).

A device with allowMultipleAllocations can be allocated to several requests, each taking
part of its capacity: what the request asks for, rounded up to what the capacity's
request policy allows (its default when the request names no amount, the range's minimum
and step, or the next valid value), never beyond what is left.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass
from fractions import Fraction

from kubesched.dra import quantity
from kubesched.dra.model import Capacity, RequestPolicy
from kubesched.dra.quantity import Quantity

ConsumedCapacity = dict[str, Fraction]
"""Consumed amounts by capacity name (schedulerapi.ConsumedCapacity)."""


def _value(q: Quantity) -> int:
    """Quantity.Value(): rounded up to a whole number."""
    return math.ceil(q.value)


def consumed_capacity(requested: Quantity | None, cap: Capacity) -> Quantity:
    """calculateConsumedCapacity: what one allocation takes of one capacity."""
    policy = cap.policy
    if requested is None:
        if policy is not None and policy.default is not None:
            return policy.default
        return cap.value
    if policy is None:
        return requested
    if policy.has_valid_range and policy.valid_range_min is not None:
        return _round_up_range(requested, policy.valid_range_min, policy.valid_range_step)
    if policy.valid_values:
        for valid in policy.valid_values:
            if requested.value <= valid.value:
                return valid
    return requested


def _round_up_range(requested: Quantity, lo: Quantity, step: Quantity | None) -> Quantity:
    if requested.value < lo.value:
        return lo
    step_value = _value(step) if step is not None else 0
    if step_value <= 0:
        return requested
    n, mod = divmod(_value(requested) - _value(lo), step_value)
    if mod:
        n += 1
    return quantity.binary(_value(lo) + step_value * n)


def _violates(requested: Quantity, policy: RequestPolicy | None) -> bool:
    """violatesPolicy: the amount is outside what the policy allows."""
    if policy is None:
        return False
    if policy.default is not None and requested.value == policy.default.value:
        return False
    if policy.has_valid_range:
        hi = policy.valid_range_max
        if hi is not None and requested.value > hi.value:
            return True
        step = _value(policy.valid_range_step) if policy.valid_range_step is not None else 0
        if step > 0:
            lo = _value(policy.valid_range_min) if policy.valid_range_min is not None else 0
            return (_value(requested) - lo) % step != 0
        return False
    if policy.valid_values:
        return all(requested.value != v.value for v in policy.valid_values)
    return False


@dataclass(frozen=True, slots=True)
class Demand:
    """What one request takes of each capacity of one device, worked out once: `fits` is False when the
    request names a capacity the device lacks or an amount its policy forbids; else `amounts` holds
    (name, taken, capacity) per capacity of the device, and `alone` whether it fits an unshared device."""

    fits: bool
    amounts: tuple[tuple[str, Fraction, Fraction], ...] = ()
    alone: bool = False


def demand(requests: Mapping[str, Quantity] | None, capacity: Mapping[str, Capacity]) -> Demand:
    if requests and any(name not in capacity for name in requests):
        return Demand(False)  # upstream: "some requested capacity has not been defined"
    amounts = []
    for name, cap in capacity.items():
        consumed = consumed_capacity(requests.get(name) if requests else None, cap)
        if _violates(consumed, cap.policy):
            return Demand(False)
        amounts.append((name, consumed.value, cap.value.value))
    return Demand(True, tuple(amounts), all(taken <= limit for _, taken, limit in amounts))


def request_fits(
    current: Mapping[str, Fraction] | None, need: Demand, allocating: Mapping[str, Fraction] | None
) -> bool:
    """CmpRequestOverCapacity: whether the request fits next to what is allocated and being allocated (False
    also when it names a capacity the device lacks)."""
    if not need.fits:
        return False
    if not current and not allocating:
        return need.alone
    for name, taken, limit in need.amounts:
        total = taken
        if current:
            total += current.get(name, 0)
        if allocating:
            total += allocating.get(name, 0)
        if total > limit:
            return False
    return True


def consumed_by_request(
    requests: Mapping[str, Quantity] | None, capacity: Mapping[str, Capacity]
) -> dict[str, Quantity]:
    """GetConsumedCapacityFromRequest: the amount of every capacity of the device one allocation takes."""
    return {name: consumed_capacity(requests.get(name) if requests else None, cap) for name, cap in capacity.items()}


def add(into: ConsumedCapacity, amounts: Mapping[str, Fraction]) -> None:
    for name, v in amounts.items():
        into[name] = into.get(name, 0) + v


def subtract(from_: ConsumedCapacity, amounts: Mapping[str, Fraction]) -> bool:
    """Take back amounts `add` counted in (capacities `from_` lacks are left alone); True once nothing is left."""
    for name, v in amounts.items():
        if name in from_:
            from_[name] -= v
    return all(v == 0 for v in from_.values())
