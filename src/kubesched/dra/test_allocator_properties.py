"""Properties of the allocator over random device inventories and claims.

Whatever it picks: no device twice (unless shared or admin access), never a device in use,
every selector and taint respected, counters and shared capacity never exceeded, exact
counts, matchAttribute held. And it misses nothing: when a brute-force search over the
same (small) inventory finds an allocation, so does the allocator; the input order of the
slices does not matter; an allocator asked for several nodes (as in one scheduling cycle)
answers each as a fresh one would, though it reuses answers between nodes that see the same pools.
"""

from __future__ import annotations

import itertools
from collections.abc import Iterator
from dataclasses import dataclass, field
from fractions import Fraction
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from kubesched.dra.allocator import AllocatedState, Allocator, AllocatorError, Features
from kubesched.dra.model import DeviceID
from kubesched_testing.dra_fixtures import REGION_KEY, FakeEvaluator, attribute, node, node_label_selector

A = "driver-a"
NODE1, NODE2 = "node-1", "node-2"
CLASS = "gpu"
RED = f'device.attributes["{A}"].color == "red"'
NUMA0 = f'device.attributes["{A}"].numa == 0'
EVALUATOR_TABLE = {
    f'device.driver == "{A}"': lambda v: v.driver == A,
    RED: lambda v: attribute(v, A, "color") == "red",
    NUMA0: lambda v: attribute(v, A, "numa") == 0,
}
BLOCKING = ("NoSchedule", "NoExecute")


@dataclass
class Inventory:
    slices: list[dict[str, Any]] = field(default_factory=list)
    devices: dict[DeviceID, dict[str, Any]] = field(default_factory=dict)
    visible: set[DeviceID] = field(default_factory=set)  # on node-1, in a complete pool
    counters: dict[str, dict[str, int]] = field(default_factory=dict)  # pool -> counter -> total


@dataclass
class Scenario:
    inventory: Inventory
    claims: list[dict[str, Any]]
    allocated: set[DeviceID]
    capacity_in_use: dict[DeviceID, int]
    order: list[int]


@st.composite
def inventories(draw: st.DrawFn) -> Inventory:
    inv = Inventory()
    sharing = draw(st.booleans())  # devices that allow multiple allocations, in some inventories only
    for p in range(draw(st.integers(1, 3))):
        pool = f"pool-{p}"
        where = draw(st.sampled_from([NODE1, NODE1, NODE1, "all", NODE2, "region", "per-device"]))
        partitioned = draw(st.booleans())
        incomplete = draw(st.integers(0, 9)) == 0
        n_slices = draw(st.integers(1, 2))
        count = n_slices + (1 if partitioned else 0) + (1 if incomplete else 0)
        placement: dict[str, Any] = {"nodeName": where}
        if where == "all":
            placement = {"allNodes": True}
        elif where == "region":  # the nodes of region r, node-1 among them
            placement = {"nodeSelector": node_label_selector(REGION_KEY, "r")}
        elif where == "per-device":  # each device says which nodes reach it
            placement = {"perDeviceNodeSelection": True}
        n = 0
        for s in range(n_slices):
            devices = []
            for _ in range(draw(st.integers(0, 4))):
                dev: dict[str, Any] = {
                    "name": f"dev-{n}",
                    "attributes": {
                        "color": {"string": draw(st.sampled_from(["red", "blue"]))},
                        "numa": {"int": draw(st.integers(0, 1))},
                    },
                }
                n += 1
                if sharing and draw(st.integers(0, 2)) == 0:
                    dev["allowMultipleAllocations"] = True
                    dev["capacity"] = {"mem": {"value": str(draw(st.integers(1, 4)))}}
                if partitioned and draw(st.booleans()):
                    dev["consumesCounters"] = [
                        {"counterSet": "cs", "counters": {"c": {"value": str(draw(st.integers(1, 2)))}}}
                    ]
                if draw(st.integers(0, 6)) == 0:
                    dev["taints"] = [{"key": "t", "effect": draw(st.sampled_from(["NoSchedule", "NoExecute", "None"]))}]
                if draw(st.integers(0, 5)) == 0:
                    dev["bindsToNode"] = True
                reaches = where
                if where == "per-device":
                    reaches = draw(st.sampled_from([NODE1, "node-3", "all", "region"]))
                    dev.update(
                        {"nodeName": reaches}
                        if reaches in (NODE1, "node-3")
                        else {"allNodes": True}
                        if reaches == "all"
                        else {"nodeSelector": node_label_selector(REGION_KEY, "r")}
                    )
                devices.append(dev)
                device_id = DeviceID(A, pool, dev["name"])
                inv.devices[device_id] = dev
                if reaches not in (NODE2, "node-3") and not incomplete:
                    inv.visible.add(device_id)
            spec = {"driver": A, "pool": {"name": pool, "generation": 1, "resourceSliceCount": count}, **placement}
            if devices:
                spec["devices"] = devices
            inv.slices.append({"metadata": {"name": f"{pool}-s{s}"}, "spec": spec})
        if partitioned:
            total = draw(st.integers(0, 5))
            inv.counters[pool] = {"c": total}
            counter_slice = {
                "driver": A,
                "pool": {"name": pool, "generation": 1, "resourceSliceCount": count},
                **placement,
                "sharedCounters": [{"name": "cs", "counters": {"c": {"value": str(total)}}}],
            }
            inv.slices.append({"metadata": {"name": f"{pool}-counters"}, "spec": counter_slice})
    return inv


@st.composite
def exact(draw: st.DrawFn, name: str, sub: bool) -> dict[str, Any]:
    out: dict[str, Any] = {"name": name, "deviceClassName": CLASS, "allocationMode": "ExactCount"}
    out["count"] = draw(st.sampled_from([1, 1, 1, 2]))
    selector = draw(st.sampled_from([None, RED, NUMA0]))
    if selector:
        out["selectors"] = [{"cel": {"expression": selector}}]
    if draw(st.integers(0, 2)) == 0:
        out["tolerations"] = [{"key": "t", "operator": "Exists"}]
    if draw(st.integers(0, 5)) == 0:
        out["capacity"] = {"requests": {"mem": str(draw(st.integers(1, 2)))}}
    if not sub and draw(st.integers(0, 9)) == 0:
        out["allocationMode"] = "All"
        del out["count"]
    if not sub and draw(st.integers(0, 9)) == 0:
        out["adminAccess"] = True
    return out


@st.composite
def claims(draw: st.DrawFn) -> list[dict[str, Any]]:
    out: list[dict[str, Any]] = []
    for c in range(draw(st.integers(1, 2))):
        requests: list[dict[str, Any]] = []
        for r in range(draw(st.integers(1, 2))):
            name = f"req-{r}"
            if draw(st.integers(0, 3)) == 0:
                subs = [draw(exact(f"sub-{i}", True)) for i in range(2)]
                requests.append({"name": name, "firstAvailable": subs})
            else:
                body = draw(exact(name, False))
                requests.append({"name": name, "exactly": {k: v for k, v in body.items() if k != "name"}})
        devices: dict[str, Any] = {"requests": requests}
        if draw(st.integers(0, 3)) == 0:
            devices["constraints"] = [{"matchAttribute": f"{A}/color"}]
        out.append({"metadata": {"name": f"claim-{c}", "namespace": "default"}, "spec": {"devices": devices}})
    return out


@st.composite
def scenarios(draw: st.DrawFn) -> Scenario:
    inv = draw(inventories())
    ids = sorted(inv.devices)
    allocated = {d for d in ids if not inv.devices[d].get("allowMultipleAllocations") and draw(st.integers(0, 4)) == 0}
    in_use = {
        d: draw(st.integers(1, 2))
        for d in ids
        if inv.devices[d].get("allowMultipleAllocations") and draw(st.booleans())
    }
    order = draw(st.permutations(range(len(inv.slices))))
    return Scenario(inv, draw(claims()), allocated, in_use, list(order))


def allocate(s: Scenario, slice_order: list[int] | None = None) -> list[dict[str, Any]] | None | str:
    """The allocation, None, or the error's text (an "All" request meeting an incomplete pool is one)."""
    return answer(allocator_for(s, slice_order), node(NODE1, "r"), s)


def answer(allocator: Allocator, on: dict[str, Any], s: Scenario) -> list[dict[str, Any]] | None | str:
    try:
        return allocator.allocate(on, s.claims)
    except AllocatorError as err:
        return str(err)


def allocator_for(s: Scenario, slice_order: list[int] | None = None) -> Allocator:
    state = AllocatedState(
        allocated_devices=set(s.allocated),
        aggregated_capacity={d: {"mem": Fraction(v)} for d, v in s.capacity_in_use.items()},
    )
    slices = [s.inventory.slices[i] for i in slice_order] if slice_order else s.inventory.slices
    return Allocator(
        allocated=state,
        classes={
            CLASS: {
                "metadata": {"name": CLASS},
                "spec": {"selectors": [{"cel": {"expression": f'device.driver == "{A}"'}}]},
            }
        },
        slices=slices,
        evaluator=FakeEvaluator(EVALUATOR_TABLE),
        features=Features(),
        new_share_id=lambda: "share",
    )


def _request_specs(claim: dict[str, Any]) -> dict[str, dict[str, Any]]:
    """Result request name ("req" or "req/sub") -> the ExactDeviceRequest or subrequest it names."""
    out = {}
    for r in claim["spec"]["devices"]["requests"]:
        if "firstAvailable" in r:
            for sub in r["firstAvailable"]:
                out[f"{r['name']}/{sub['name']}"] = sub
        else:
            out[r["name"]] = r["exactly"]
    return out


def _selected(device: dict[str, Any], spec: dict[str, Any]) -> bool:
    for selector in spec.get("selectors") or ():
        expression = selector["cel"]["expression"]
        attrs = device["attributes"]
        if expression == RED and attrs["color"]["string"] != "red":
            return False
        if expression == NUMA0 and attrs["numa"]["int"] != 0:
            return False
    return True


def _tolerated(device: dict[str, Any], spec: dict[str, Any]) -> bool:
    blocking = [t for t in device.get("taints") or () if t["effect"] in BLOCKING]
    return not blocking or bool(spec.get("tolerations"))


def _consumption(device: dict[str, Any]) -> int:
    return sum(int(cc["counters"]["c"]["value"]) for cc in device.get("consumesCounters") or ())


@settings(max_examples=300, deadline=None)
@given(scenarios())
def test_what_it_allocates_is_allowed(s: Scenario) -> None:
    results = allocate(s)
    if results is None or isinstance(results, str):
        # Upstream's errors for "All" requests: an incomplete pool, or devices a constraint cannot all take.
        assert results is None or "is currently being updated" in results or "claim constraint" in results
        return
    inv = s.inventory
    assert len(results) == len(s.claims)
    exclusive: list[DeviceID] = []
    shared_mem: dict[DeviceID, int] = {}
    new: set[DeviceID] = set()
    for claim, allocation in zip(s.claims, results, strict=True):
        specs = _request_specs(claim)
        picked = allocation["devices"].get("results", [])
        per_request: dict[str, int] = {}
        for r in picked:
            device_id = DeviceID(r["driver"], r["pool"], r["device"])
            device, spec = inv.devices[device_id], specs[r["request"]]
            assert device_id in inv.visible, "only devices the node can reach, from complete pools"
            assert _selected(device, spec), "every selector holds"
            assert _tolerated(device, spec), "no untolerated NoSchedule/NoExecute taint"
            per_request[r["request"]] = per_request.get(r["request"], 0) + 1
            if r.get("adminAccess"):
                continue
            new.add(device_id)
            if device.get("allowMultipleAllocations"):
                assert r["shareID"] == "share"
                shared_mem[device_id] = shared_mem.get(device_id, 0) + int(r["consumedCapacity"]["mem"])
            else:
                assert "shareID" not in r
                exclusive.append(device_id)
        for name, got in per_request.items():
            if specs[name].get("allocationMode") != "All":
                assert got == specs[name]["count"], "exactly the count asked for"
        for r in claim["spec"]["devices"]["requests"]:
            chosen = [n for n in per_request if n == r["name"] or n.startswith(r["name"] + "/")]
            assert len(chosen) == 1, "every request is served, by one alternative"
        if claim["spec"]["devices"].get("constraints"):
            colors = {
                inv.devices[DeviceID(r["driver"], r["pool"], r["device"])]["attributes"]["color"]["string"]
                for r in picked
            }
            assert len(colors) <= 1, "matchAttribute holds across the claim"
        assert allocation.get("nodeSelector") in (
            None,
            {"nodeSelectorTerms": [{"matchFields": [{"key": "metadata.name", "operator": "In", "values": [NODE1]}]}]},
            node_label_selector(REGION_KEY, "r"),  # devices of region r's pools only
        )
    assert len(exclusive) == len(set(exclusive)), "no device is allocated twice"
    assert not set(exclusive) & s.allocated, "no device that is in use"
    for device_id, mem in shared_mem.items():
        total = int(inv.devices[device_id]["capacity"]["mem"]["value"])
        assert s.capacity_in_use.get(device_id, 0) + mem <= total, "shared capacity never exceeded"
    for pool, counters in inv.counters.items():
        consuming = [d for d in new if d.pool == pool and _consumption(inv.devices[d]) and d not in s.capacity_in_use]
        if not consuming:
            continue
        holders = {d for d in inv.devices if d.pool == pool and (d in s.allocated or d in s.capacity_in_use)} | set(
            consuming
        )
        used = sum(_consumption(inv.devices[d]) for d in holders)
        assert used <= counters["c"], "shared counters never exceeded"


@settings(max_examples=200, deadline=None)
@given(scenarios(), st.permutations([node(NODE1, "r"), node("node-3", "r"), node("node-4", "b"), node(NODE2, "r")]))
def test_one_allocator_answers_each_node_as_a_fresh_one(s: Scenario, nodes: list[dict[str, Any]]) -> None:
    shared = allocator_for(s)
    for on in nodes:
        assert answer(shared, on, s) == answer(allocator_for(s), on, s)


@settings(max_examples=200, deadline=None)
@given(scenarios())
def test_slice_order_does_not_matter(s: Scenario) -> None:
    assert allocate(s, s.order) == allocate(s)


def _simple(s: Scenario) -> bool:
    """Scenarios the brute force models: no shared devices, admin access or "All"."""
    if any(d.get("allowMultipleAllocations") for d in s.inventory.devices.values()):
        return False
    for claim in s.claims:
        for spec in _request_specs(claim).values():
            if spec.get("adminAccess") or spec.get("allocationMode") == "All":
                return False
    return True


def _brute_force(s: Scenario) -> bool:
    """Is there any allocation at all? Every choice of alternatives and devices, tried exhaustively."""
    inv = s.inventory
    free = [d for d in sorted(inv.visible) if d not in s.allocated]
    slots: list[tuple[int, list[tuple[int, list[DeviceID]]]]] = []  # (claim, [(count, candidates)] per alternative)
    for ci, claim in enumerate(s.claims):
        for r in claim["spec"]["devices"]["requests"]:
            alternatives = r.get("firstAvailable") or [r["exactly"]]
            options = []
            for spec in alternatives:
                if spec.get("capacity"):
                    continue  # no device here has capacity to request
                candidates = [d for d in free if _selected(inv.devices[d], spec) and _tolerated(inv.devices[d], spec)]
                options.append((spec["count"], candidates))
            slots.append((ci, options))

    def counters_ok(chosen: set[DeviceID]) -> bool:
        for pool, counters in inv.counters.items():
            mine = [d for d in chosen if d.pool == pool and _consumption(inv.devices[d])]
            if not mine:
                continue
            prior = [d for d in inv.devices if d.pool == pool and d in s.allocated]
            if sum(_consumption(inv.devices[d]) for d in prior + mine) > counters["c"]:
                return False
        return True

    def search(i: int, chosen: set[DeviceID], colors: dict[int, str]) -> Iterator[bool]:
        if i == len(slots):
            yield counters_ok(chosen)
            return
        ci, options = slots[i]
        constrained = bool(s.claims[ci]["spec"]["devices"].get("constraints"))
        for count, candidates in options:
            for combo in itertools.combinations([d for d in candidates if d not in chosen], count):
                seen = {inv.devices[d]["attributes"]["color"]["string"] for d in combo}
                if constrained:
                    seen |= {colors[ci]} if ci in colors else set()
                    if len(seen) > 1:
                        continue
                next_colors = {**colors, ci: next(iter(seen))} if constrained and seen else colors
                yield from search(i + 1, chosen | set(combo), next_colors)

    return any(search(0, set(), {}))


@settings(max_examples=300, deadline=None)
@given(scenarios())
def test_it_finds_an_allocation_whenever_one_exists(s: Scenario) -> None:
    if not _simple(s):
        return
    found = allocate(s) is not None
    assert found == _brute_force(s)
