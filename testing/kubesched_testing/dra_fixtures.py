"""Test objects for the DRA allocator, after structured/internal/allocatortesting/allocator_testing.go.

Builders return the API's JSON (dicts), with fluent `with_*` methods that copy, as the Go
wrappers do; FakeEvaluator is the CEL test double: a fixed table of expression -> Python
predicate, failing loudly on any expression it was not given.
"""

from __future__ import annotations

import copy
from collections.abc import Callable, Iterator, Mapping
from fractions import Fraction
from typing import Any

from kubesched.dra import quantity
from kubesched.dra.selector import DeviceView, SelectorCompileError, SelectorRuntimeError

REGION1, REGION2 = "region-1", "region-2"
NODE1, NODE2 = "node-1", "node-2"
CLASS_A, CLASS_B = "class-a", "class-b"
DRIVER_A, DRIVER_B = "driver-a", "driver-b"
POOL1, POOL2, POOL3, POOL4 = "pool-1", "pool-2", "pool-3", "pool-4"
REQ0, REQ1, REQ2, REQ3 = "req-0", "req-1", "req-2", "req-3"
SUB_REQ0, SUB_REQ1 = "subReq-0", "subReq-1"
REQ0_SUB_REQ0, REQ0_SUB_REQ1 = "req-0/subReq-0", "req-0/subReq-1"
REQ1_SUB_REQ0, REQ1_SUB_REQ1 = "req-1/subReq-0", "req-1/subReq-1"
REQ2_SUB_REQ0, REQ2_SUB_REQ1 = "req-2/subReq-0", "req-2/subReq-1"
CLAIM0, CLAIM1 = "claim-0", "claim-1"
SLICE1, SLICE2, SLICE3, SLICE4 = "slice-1", "slice-2", "slice-3", "slice-4"
DEVICE0, DEVICE1, DEVICE2, DEVICE3, DEVICE4 = "device-0", "device-1", "device-2", "device-3", "device-4"
COUNTER_SET1, COUNTER_SET2 = "counter-set-1", "counter-set-2"
CAPACITY0, CAPACITY1 = "capacity-0", "capacity-1"
FIXED_SHARE_ID = "aaaaaaaa-aaaa-aaaa-aaaa-aaaaaaaaaaaa"
ZERO, ONE, TWO, THREE, FOUR = "0", "1", "2", "3", "4"
FIELD_NAME_KEY = "metadata.name"
REGION_KEY, PLANET_KEY, PLANET_VALUE_EARTH = "region", "planet", "earth"
NODE_SELECTION_ALL = "nodeSelectionAll"
NODE_SELECTION_PER_DEVICE = "nodeSelectionPerDevice"
FROM_COUNTERS = "fromCounters"
MAX_SIZE = 32


def node(name: str, region: str) -> dict[str, Any]:
    return {"metadata": {"name": name, "labels": {REGION_KEY: region, PLANET_KEY: PLANET_VALUE_EARTH}}}


def cel(expression: str) -> dict[str, Any]:
    return {"cel": {"expression": expression}}


def device_class(name: str, driver: str) -> dict[str, Any]:
    return {"metadata": {"name": name}, "spec": {"selectors": [cel(f'device.driver == "{driver}"')]}}


def class_with_allow_multiple_allocations(name: str, driver: str, multi: bool) -> dict[str, Any]:
    expression = f'device.driver == "{driver}" && device.allowMultipleAllocations == {str(multi).lower()}'
    return {"metadata": {"name": name}, "spec": {"selectors": [cel(expression)]}}


def device_configuration(driver: str, attribute: str) -> dict[str, Any]:
    return {"opaque": {"driver": driver, "parameters": {attribute: attribute + "Value"}}}


def class_with_config(name: str, driver: str, attribute: str) -> dict[str, Any]:
    c = device_class(name, driver)
    c["spec"]["config"] = [device_configuration(driver, attribute)]
    return c


class Request(dict[str, Any]):
    def with_capacity_request(self, q: str | None) -> Request:
        out = copy.deepcopy(self)
        out["exactly"]["capacity"] = {"requests": {CAPACITY0: q}} if q is not None else {}
        return out

    def with_selectors(self, *selectors: dict[str, Any]) -> Request:
        out = copy.deepcopy(self)
        out["exactly"]["selectors"] = list(selectors)
        return out

    def with_admin_access(self, admin: bool = True) -> Request:
        out = copy.deepcopy(self)
        out["exactly"]["adminAccess"] = admin
        return out

    def with_allocation_mode(self, mode: str, count: int = 0) -> Request:
        out = copy.deepcopy(self)
        out["exactly"]["allocationMode"] = mode
        if count:
            out["exactly"]["count"] = count
        else:
            out["exactly"].pop("count", None)
        return out


def request(name: str, cls: str, count: int, *selectors: dict[str, Any]) -> Request:
    exactly: dict[str, Any] = {"deviceClassName": cls, "allocationMode": "ExactCount", "count": count}
    if selectors:
        exactly["selectors"] = list(selectors)
    return Request(name=name, exactly=exactly)


def all_device_request(name: str, cls: str) -> Request:
    return Request(name=name, exactly={"deviceClassName": cls, "allocationMode": "All"})


class SubRequest(dict[str, Any]):
    def with_allocation_mode(self, mode: str) -> SubRequest:
        out = copy.deepcopy(self)
        out["allocationMode"] = mode
        return out

    def with_capacity_request(self, q: str | None) -> SubRequest:
        out = copy.deepcopy(self)
        out["capacity"] = {"requests": {CAPACITY0: q}} if q is not None else {}
        return out


def sub_request(name: str, cls: str, count: int, *fields: dict[str, Any]) -> SubRequest:
    """A subrequest; fields are selectors ({"cel": ...}) or tolerations."""
    out = SubRequest(name=name, deviceClassName=cls, allocationMode="ExactCount", count=count)
    for f in fields:
        out.setdefault("selectors" if "cel" in f else "tolerations", []).append(f)
    return out


def request_with_prioritized_list(name: str, *subs: SubRequest) -> Request:
    return Request(name=name, firstAvailable=[dict(s) for s in subs])


class Claim(dict[str, Any]):
    @property
    def _devices(self) -> dict[str, Any]:
        devices: dict[str, Any] = self["spec"]["devices"]
        return devices

    def with_requests(self, *requests: Mapping[str, Any]) -> Claim:
        out = copy.deepcopy(self)
        out._devices["requests"] = [copy.deepcopy(dict(r)) for r in requests]
        return out

    def with_constraints(self, *constraints: dict[str, Any]) -> Claim:
        out = copy.deepcopy(self)
        out._devices["constraints"] = list(constraints)
        return out

    def with_configs(self, *configs: dict[str, Any]) -> Claim:
        out = copy.deepcopy(self)
        out._devices["config"] = list(configs)
        return out

    def with_tolerations(self, *tolerations: dict[str, Any]) -> Claim:
        out = copy.deepcopy(self)
        for r in out._devices["requests"]:
            r["exactly"].setdefault("tolerations", []).extend(copy.deepcopy(list(tolerations)))
        return out

    def request(self, index: int) -> dict[str, Any]:
        """The index-th request's ExactDeviceRequest, for tests that edit it in place."""
        exactly: dict[str, Any] = self._devices["requests"][index]["exactly"]
        return exactly


def claim(name: str) -> Claim:
    return Claim(metadata={"name": name}, spec={"devices": {"requests": []}})


def claim_with_requests(name: str, constraints: list[dict[str, Any]] | None, *requests: Mapping[str, Any]) -> Claim:
    c = claim(name).with_requests(*requests)
    if constraints:
        c = c.with_constraints(*constraints)
    return c


def claim_with_request(name: str, req: str, cls: str, *constraints: dict[str, Any]) -> Claim:
    return claim_with_requests(name, list(constraints), request(req, cls, 1))


def device_claim_config(requests: list[str], config: dict[str, Any]) -> dict[str, Any]:
    return {"requests": list(requests), **config}


def claim_with_device_config(name: str, req: str, cls: str, driver: str, attribute: str) -> Claim:
    return claim_with_request(name, req, cls).with_configs(device_configuration(driver, attribute))


def match_attribute(name: str, *requests: str) -> dict[str, Any]:
    out: dict[str, Any] = {"matchAttribute": name}
    if requests:
        out["requests"] = list(requests)
    return out


def distinct_attribute(name: str, *requests: str) -> dict[str, Any]:
    out: dict[str, Any] = {"distinctAttribute": name}
    if requests:
        out["requests"] = list(requests)
    return out


def string_attr(v: str) -> dict[str, Any]:
    return {"string": v}


def int_attr(v: int) -> dict[str, Any]:
    return {"int": v}


def bool_attr(v: bool) -> dict[str, Any]:
    return {"bool": v}


def version_attr(v: str) -> dict[str, Any]:
    return {"version": v}


class Device(dict[str, Any]):
    from_counters: bool = False

    def _copy(self) -> Device:
        out = Device(copy.deepcopy(dict(self)))
        out.from_counters = self.from_counters
        return out

    def with_taints(self, *taints: dict[str, Any]) -> Device:
        out = self._copy()
        out.setdefault("taints", []).extend(copy.deepcopy(list(taints)))
        return out

    def with_device_counter_consumption(self, *consumption: dict[str, Any]) -> Device:
        out = self._copy()
        out.setdefault("consumesCounters", []).extend(copy.deepcopy(list(consumption)))
        if self.from_counters:
            out["capacity"] = {
                name: {"value": c["value"]} for cc in out["consumesCounters"] for name, c in cc["counters"].items()
            }
        out.from_counters = False
        return out

    def with_node_selection(self, selection: str | dict[str, Any]) -> Device:
        out = self._copy()
        if isinstance(selection, dict):
            out["nodeSelector"] = selection
        elif selection == NODE_SELECTION_ALL:
            out["allNodes"] = True
        else:
            out["nodeName"] = selection
        return out

    def with_binding_conditions(self, conditions: list[str], failure_conditions: list[str]) -> Device:
        out = self._copy()
        if conditions:
            out["bindingConditions"] = list(conditions)
        if failure_conditions:
            out["bindingFailureConditions"] = list(failure_conditions)
        return out

    def with_binds_to_node(self, binds: bool) -> Device:
        out = self._copy()
        out["bindsToNode"] = binds
        return out

    def with_allow_multiple_allocations(self) -> Device:
        out = self._copy()
        out["allowMultipleAllocations"] = True
        return out

    def with_capacity_request_policy_range(self, capacity: dict[str, str]) -> Device:
        """Capacities whose request policy is default 2, range 2..4 in steps of 2."""
        out = self._copy()
        caps = out.setdefault("capacity", {})
        for name, value in capacity.items():
            caps[name] = {
                "value": value,
                "requestPolicy": {"default": TWO, "validRange": {"min": TWO, "step": TWO, "max": FOUR}},
            }
        return out

    def with_capacity_request_policy_valid_values(
        self, default: str, capacity: dict[str, str], additional: list[str] | None = None
    ) -> Device:
        out = self._copy()
        caps = out.setdefault("capacity", {})
        valid = [default, *(additional or [])]
        for name, value in capacity.items():
            caps[name] = {"value": value, "requestPolicy": {"default": default, "validValues": list(valid)}}
        return out


def device(name: str, capacity: dict[str, str] | str | None = None, attributes: dict[str, Any] | None = None) -> Device:
    out = Device(name=name)
    if attributes is not None:
        out["attributes"] = attributes
    if isinstance(capacity, dict):
        out["capacity"] = {k: {"value": v} for k, v in capacity.items()}
    elif capacity == FROM_COUNTERS:
        out.from_counters = True
    return out


def device_counter_consumption(counter_set: str, counters: dict[str, str] | None) -> dict[str, Any]:
    return {"counterSet": counter_set, "counters": {k: {"value": v} for k, v in (counters or {}).items()}}


def counter_set(name: str, counters: dict[str, str] | None) -> dict[str, Any]:
    return {"name": name, "counters": {k: {"value": v} for k, v in (counters or {}).items()}}


def resource_pool(name: str, count: int, generation: int = 1) -> dict[str, Any]:
    return {"name": name, "generation": generation, "resourceSliceCount": count}


def resource_slice(
    name: str, node_selection: str | dict[str, Any], pool: str | dict[str, Any], driver: str
) -> dict[str, Any]:
    spec: dict[str, Any] = {
        "driver": driver,
        "pool": copy.deepcopy(pool) if isinstance(pool, dict) else resource_pool(pool, 1),
    }
    if isinstance(node_selection, dict):
        spec["nodeSelector"] = node_selection
    elif node_selection == NODE_SELECTION_ALL:
        spec["allNodes"] = True
    elif node_selection == NODE_SELECTION_PER_DEVICE:
        spec["perDeviceNodeSelection"] = True
    else:
        spec["nodeName"] = node_selection
    return {"metadata": {"name": name}, "spec": spec}


def slice_with_devices(
    name: str, node_selection: str | dict[str, Any], pool: str | dict[str, Any], driver: str, *devices: Device
) -> dict[str, Any]:
    s = resource_slice(name, node_selection, pool, driver)
    if devices:
        s["spec"]["devices"] = [dict(d) for d in devices]
    return s


def slice_with_one_device(
    name: str, node_selection: str | dict[str, Any], pool: str | dict[str, Any], driver: str
) -> dict[str, Any]:
    return slice_with_devices(name, node_selection, pool, driver, device(DEVICE1))


def slice_with_multiple_devices(
    name: str, node_selection: str | dict[str, Any], pool: str | dict[str, Any], driver: str, count: int
) -> dict[str, Any]:
    return slice_with_devices(name, node_selection, pool, driver, *(device(f"device-{i}") for i in range(count)))


def slice_with_counter_sets(
    name: str, node_selection: str | dict[str, Any], pool: str | dict[str, Any], driver: str, *sets: dict[str, Any]
) -> dict[str, Any]:
    s = resource_slice(name, node_selection, pool, driver)
    s["spec"]["sharedCounters"] = list(sets)
    return s


def with_pool(s: dict[str, Any], *, generation: int | None = None, count: int | None = None) -> dict[str, Any]:
    out = copy.deepcopy(s)
    if generation is not None:
        out["spec"]["pool"]["generation"] = generation
    if count is not None:
        out["spec"]["pool"]["resourceSliceCount"] = count
    return out


def node_label_selector(key: str, *values: str) -> dict[str, Any]:
    return {"nodeSelectorTerms": [{"matchExpressions": [{"key": key, "operator": "In", "values": list(values)}]}]}


def local_node_selector(name: str) -> dict[str, Any]:
    return {"nodeSelectorTerms": [{"matchFields": [{"key": FIELD_NAME_KEY, "operator": "In", "values": [name]}]}]}


class Result(dict[str, Any]):
    def with_consumed_capacity(self, share_id: str, consumed: dict[str, str] | None) -> Result:
        out = Result(copy.deepcopy(dict(self)))
        out["shareID"] = share_id
        if consumed:
            out["consumedCapacity"] = dict(consumed)
        return out


def device_allocation_result(
    req: str, driver: str, pool: str, dev: str, admin: bool = False, *tolerations: dict[str, Any]
) -> Result:
    out = Result(request=req, driver=driver, pool=pool, device=dev)
    if admin:
        out["adminAccess"] = True
    if tolerations:
        out["tolerations"] = copy.deepcopy(list(tolerations))
    return out


def device_request_allocation_result(req: str, driver: str, pool: str, dev: str) -> Result:
    return device_allocation_result(req, driver, pool, dev)


def result_with_binding_conditions(
    req: str,
    driver: str,
    pool: str,
    dev: str,
    conditions: list[str] | None,
    failure_conditions: list[str] | None,
    *tolerations: dict[str, Any],
) -> Result:
    out = device_allocation_result(req, driver, pool, dev, False, *tolerations)
    if conditions:
        out["bindingConditions"] = list(conditions)
    if failure_conditions:
        out["bindingFailureConditions"] = list(failure_conditions)
    return out


def multiple_device_allocation_results(req: str, driver: str, pool: str, count: int, start: int) -> list[Result]:
    return [device_allocation_result(req, driver, pool, f"device-{i}") for i in range(start, start + count)]


def allocation_result(selector: dict[str, Any] | None, *results: Mapping[str, Any]) -> dict[str, Any]:
    return allocation_result_with_configs(selector, list(results), [])


def allocation_result_with_configs(
    selector: dict[str, Any] | None, results: list[Mapping[str, Any]], configs: list[dict[str, Any]]
) -> dict[str, Any]:
    devices: dict[str, Any] = {}
    if results:
        devices["results"] = [dict(r) for r in results]
    if configs:
        devices["config"] = configs
    out: dict[str, Any] = {"devices": devices}
    if selector is not None:
        out["nodeSelector"] = selector
    return out


def allocation_config(source: str, requests: list[str] | None, config: dict[str, Any]) -> dict[str, Any]:
    out: dict[str, Any] = {"source": source}
    if requests:
        out["requests"] = list(requests)
    out.update(copy.deepcopy(config))
    return out


# The CEL test double.

Predicate = Callable[[DeviceView], bool]
_KINDS = ("int", "bool", "string", "version")


def _entries(view: DeviceView, entries: Mapping[str, Any], domain: str, name: str) -> Iterator[Any]:
    """The entries named domain/name (a name without a domain is in the driver's)."""
    for qualified, entry in entries.items():
        d, sep, short = qualified.partition("/")
        if not sep:
            d, short = view.driver, qualified
        if d == domain and short == name:
            yield entry


def attribute(view: DeviceView, domain: str, name: str) -> Any:
    """device.attributes[domain].name as CEL sees it: a missing key is a runtime error."""
    for attr in _entries(view, view.attributes, domain, name):
        for kind in _KINDS:
            if kind in attr:
                return attr[kind]
    raise SelectorRuntimeError(f"no such key: {name}")


def capacity(view: DeviceView, domain: str, name: str) -> Fraction:
    """device.capacity[domain].name as a number; a missing key is a runtime error."""
    for cap in _entries(view, view.capacity, domain, name):
        return quantity.parse(cap["value"]).value
    raise SelectorRuntimeError(f"no such key: {name}")


class FakeEvaluator:
    """Evaluates exactly the expressions it knows; like upstream's CEL, it first converts every attribute."""

    def __init__(self, predicates: Mapping[str, Predicate], compile_errors: Mapping[str, str] | None = None) -> None:
        self.predicates = dict(predicates)
        self.compile_errors = dict(compile_errors or {})
        self.calls = 0

    def matches(self, expression: str, device: DeviceView) -> bool:
        self.calls += 1
        if expression in self.compile_errors:
            raise SelectorCompileError(self.compile_errors[expression])
        for name, attr in device.attributes.items():
            if not any(kind in attr for kind in _KINDS):
                raise SelectorRuntimeError(f"attribute {name}: unsupported attribute value")
        predicate = self.predicates.get(expression)
        if predicate is None:
            raise AssertionError(f"the test double has no predicate for {expression!r}")
        return predicate(device)


def _driver_is(driver: str) -> Predicate:
    return lambda v: v.driver == driver


def _driver_and_multi(driver: str, multi: bool) -> Predicate:
    return lambda v: v.driver == driver and v.allow_multiple_allocations == multi


def _capacity_at_least(domain: str, name: str, amount: Fraction) -> Predicate:
    return lambda v: capacity(v, domain, name) >= amount


def _attribute_is(domain: str, name: str, value: Any) -> Predicate:
    return lambda v: bool(attribute(v, domain, name) == value)


def upstream_predicates() -> dict[str, Predicate]:
    """Every selector expression in upstream's allocator test table, for driver-a and driver-b."""
    a = DRIVER_A
    table: dict[str, Predicate] = {}
    for driver in (DRIVER_A, DRIVER_B):
        table[f'device.driver == "{driver}"'] = _driver_is(driver)
        for multi in (True, False):
            expression = f'device.driver == "{driver}" && device.allowMultipleAllocations == {str(multi).lower()}'
            table[expression] = _driver_and_multi(driver, multi)
    for n in (1, 2, 4, 6, 8):
        table[f'device.capacity["{a}"].memory.compareTo(quantity("{n}Gi")) >= 0'] = _capacity_at_least(
            a, "memory", Fraction(n * 2**30)
        )
    for n in (2, 4):
        table[f'device.capacity["{a}"]["{CAPACITY0}"].compareTo(quantity("{n}")) >= 0'] = _capacity_at_least(
            a, CAPACITY0, Fraction(n)
        )
    for attr, value in (
        ("generation", "v5"),
        ("generation", "v6"),
        ("type", "X"),
        ("type", "Y"),
        ("kind", "shared"),
        ("kind", "counteronly"),
        ("kind", "gate"),
        ("stringAttribute", "cap"),
        ("stringAttribute", "fb"),
        ("mode", "b"),
    ):
        table[f'device.attributes["{a}"].{attr} == "{value}"'] = _attribute_is(a, attr, value)
    table[f'device.attributes["{a}"].kind == "shared" || device.attributes["{a}"].kind == "fallback"'] = lambda v: (
        attribute(v, a, "kind") in ("shared", "fallback")
    )
    table[f'device.attributes["{a}"].boolAttribute'] = _attribute_is(a, "boolAttribute", True)
    table[f'device.attributes["{a}"].special'] = _attribute_is(a, "special", True)
    table[f'device.driver == "{a}" && device.attributes["{a}"].selected'] = lambda v: (
        v.driver == a and attribute(v, a, "selected") is True
    )
    return table


UNDECLARED = "ERROR: <input>:1:1: undeclared reference to 'noSuchVar' (in container '')"


def upstream_evaluator() -> FakeEvaluator:
    return FakeEvaluator(upstream_predicates(), {"noSuchVar": UNDECLARED})
