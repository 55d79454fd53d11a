"""ResourceSlices and their devices, read once from their JSON into what the allocator looks at.

Mirrors the draapi conversion upstream's allocator does per slice (structured/internal,
addSlice): the API objects stay as they are; each device keeps its own JSON beside the
parsed capacities, counters and taints, and a DeviceView for selectors.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from fractions import Fraction
from typing import Any, NamedTuple

from kubesched.api.quantity import QuantityError
from kubesched.api.selectors import NodeSelector, SelectorError, parse_node_selector, validate_node_selector_terms
from kubesched.dra import quantity
from kubesched.dra.quantity import Quantity
from kubesched.dra.selector import DeviceView


class InvalidObjectError(ValueError):
    """An object the API server would not have admitted (e.g. a capacity that is not a quantity)."""


class DeviceID(NamedTuple):
    """driver/pool/device: how a device is named in allocations (schedulerapi.DeviceID)."""

    driver: str
    pool: str
    device: str

    def __str__(self) -> str:
        return f"{self.driver}/{self.pool}/{self.device}"


class SharedDeviceID(NamedTuple):
    """One share of a device that allows multiple allocations (schedulerapi.SharedDeviceID)."""

    driver: str
    pool: str
    device: str
    share_id: str

    def device_id(self) -> DeviceID:
        return DeviceID(self.driver, self.pool, self.device)


@dataclass(frozen=True, slots=True)
class RequestPolicy:
    """CapacityRequestPolicy: what one allocation of a shared device's capacity may be."""

    default: Quantity | None
    valid_values: tuple[Quantity, ...]
    valid_range_min: Quantity | None
    valid_range_max: Quantity | None
    valid_range_step: Quantity | None
    has_valid_range: bool


@dataclass(frozen=True, slots=True)
class Capacity:
    value: Quantity
    policy: RequestPolicy | None


@dataclass(frozen=True, slots=True)
class CounterConsumption:
    counter_set: str
    counters: tuple[tuple[str, Fraction], ...]


@dataclass(frozen=True, slots=True)
class Taint:
    key: str
    value: str
    effect: str


@dataclass(eq=False, slots=True)
class Device:
    """One device of a slice."""

    name: str
    raw: Mapping[str, Any]
    view: DeviceView
    attributes: Mapping[str, Mapping[str, Any]]
    capacity: dict[str, Capacity]
    consumes_counters: tuple[CounterConsumption, ...]
    node_name: str
    all_nodes: bool
    node_selector: Mapping[str, Any] | None
    taints: tuple[Taint, ...]
    binds_to_node: bool
    binding_conditions: list[str]
    binding_failure_conditions: list[str]
    allow_multiple_allocations: bool
    _selector: NodeSelector | None = None


@dataclass(eq=False, slots=True)
class Slice:
    """One ResourceSlice."""

    name: str
    raw: Mapping[str, Any]
    driver: str
    pool: str
    generation: int
    resource_slice_count: int
    node_name: str
    all_nodes: bool
    node_selector: Mapping[str, Any] | None
    per_device_node_selection: bool | None  # None when the field is unset, as upstream tells the two apart
    shared_counters: tuple[tuple[str, dict[str, Fraction]], ...]
    devices: tuple[Device, ...]
    _selector: NodeSelector | None = field(default=None)


def _q(raw: object, what: str) -> Quantity:
    try:
        return quantity.parse(raw)
    except QuantityError as err:
        raise InvalidObjectError(f"{what}: {err}") from err


def _policy(raw: Mapping[str, Any] | None, what: str) -> RequestPolicy | None:
    if raw is None:
        return None
    rng = raw.get("validRange")

    def opt(v: object, name: str) -> Quantity | None:
        return None if v is None else _q(v, f"{what}.{name}")

    return RequestPolicy(
        default=opt(raw.get("default"), "default"),
        valid_values=tuple(_q(v, f"{what}.validValues") for v in raw.get("validValues") or ()),
        valid_range_min=opt((rng or {}).get("min"), "validRange.min"),
        valid_range_max=opt((rng or {}).get("max"), "validRange.max"),
        valid_range_step=opt((rng or {}).get("step"), "validRange.step"),
        has_valid_range=rng is not None,
    )


def _counters(raw: Mapping[str, Any] | None, what: str) -> dict[str, Fraction]:
    return {name: _q((c or {}).get("value"), f"{what}[{name}]").value for name, c in (raw or {}).items()}


def parse_device(raw: Mapping[str, Any], driver: str) -> Device:
    name = str(raw.get("name", ""))
    what = f"device {name}"
    attributes = raw.get("attributes") or {}
    capacity_raw = raw.get("capacity") or {}
    capacity = {
        cname: Capacity(
            _q((c or {}).get("value"), f"{what}: capacity[{cname}]"),
            _policy((c or {}).get("requestPolicy"), f"{what}: capacity[{cname}].requestPolicy"),
        )
        for cname, c in capacity_raw.items()
    }
    consumes = tuple(
        CounterConsumption(
            str(cc.get("counterSet", "")),
            tuple(_counters(cc.get("counters"), f"{what}: consumesCounters").items()),
        )
        for cc in raw.get("consumesCounters") or ()
    )
    multi = bool(raw.get("allowMultipleAllocations"))
    return Device(
        name=name,
        raw=raw,
        view=DeviceView(driver, attributes, capacity_raw, multi),
        attributes=attributes,
        capacity=capacity,
        consumes_counters=consumes,
        node_name=str(raw.get("nodeName") or ""),
        all_nodes=bool(raw.get("allNodes")),
        node_selector=raw.get("nodeSelector"),
        taints=tuple(
            Taint(str(t.get("key", "")), str(t.get("value", "") or ""), str(t.get("effect", "")))
            for t in raw.get("taints") or ()
        ),
        binds_to_node=bool(raw.get("bindsToNode")),
        binding_conditions=list(raw.get("bindingConditions") or ()),
        binding_failure_conditions=list(raw.get("bindingFailureConditions") or ()),
        allow_multiple_allocations=multi,
    )


def parse_slice(raw: Mapping[str, Any]) -> Slice:
    """Read one ResourceSlice; raises InvalidObjectError for quantities that do not parse."""
    spec = raw.get("spec") or {}
    pool = spec.get("pool") or {}
    driver = str(spec.get("driver", ""))
    name = str((raw.get("metadata") or {}).get("name", ""))
    try:
        devices = tuple(parse_device(d, driver) for d in spec.get("devices") or ())
        counters = tuple(
            (str(cs.get("name", "")), _counters(cs.get("counters"), f"counter set {cs.get('name', '')}"))
            for cs in spec.get("sharedCounters") or ()
        )
    except InvalidObjectError as err:
        raise InvalidObjectError(f"ResourceSlice {name}: {err}") from err
    pdns = spec.get("perDeviceNodeSelection")
    return Slice(
        name=name,
        raw=raw,
        driver=driver,
        pool=str(pool.get("name", "")),
        generation=int(pool.get("generation") or 0),
        resource_slice_count=int(pool.get("resourceSliceCount") or 0),
        node_name=str(spec.get("nodeName") or ""),
        all_nodes=bool(spec.get("allNodes")),
        node_selector=spec.get("nodeSelector"),
        per_device_node_selection=None if pdns is None else bool(pdns),
        shared_counters=counters,
        devices=devices,
    )


def as_slices(slices: Sequence[Slice | Mapping[str, Any]]) -> list[Slice]:
    """Slices as given, parsing the ones still in their JSON form."""
    return [s if isinstance(s, Slice) else parse_slice(s) for s in slices]


class NodeSelectorParseError(ValueError):
    """A node selector that nodeaffinity.NewNodeSelector rejects."""


def _parsed(raw: Mapping[str, Any]) -> NodeSelector:
    try:
        validate_node_selector_terms(raw.get("nodeSelectorTerms") or [])
    except SelectorError as err:
        raise NodeSelectorParseError(f"failed to parse node selector: {err}") from err
    return parse_node_selector(raw)


def node_matches(
    node: Mapping[str, Any], node_name: str, all_nodes: bool, selector: Mapping[str, Any] | None, owner: Slice | Device
) -> bool:
    """NodeMatches: a node name, all nodes, or a node selector (parsed once per owner)."""
    meta = node.get("metadata") or {}
    if node_name:
        return bool(meta.get("name", "") == node_name)
    if all_nodes:
        return True
    if selector is not None:
        parsed = owner._selector
        if parsed is None:
            parsed = owner._selector = _parsed(selector)
        return parsed.matches(meta.get("labels") or {}, str(meta.get("name", "")))
    return False
