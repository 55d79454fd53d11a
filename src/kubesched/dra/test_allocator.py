"""The allocator against upstream's table (structured/internal/allocatortesting/allocator_testing.go, v1.36).

Each case keeps upstream's name and runs with the features upstream's case names (all
others off), as upstream runs it against the "incubating" allocator that v1.36's default
gates pick. Upstream compares results unordered; here the whole allocation, results in
order, must equal. Cases that need DRAListTypeAttributes (alpha, off in v1.36, only in the
"experimental" allocator) are not ported. Where upstream counts allocateOne calls, so do we.
"""

from __future__ import annotations

import copy
import time
from dataclasses import dataclass, field
from fractions import Fraction
from typing import Any

import pytest

from kubesched.dra.allocator import (
    AllocatedState,
    AllocationAborted,
    AllocationError,
    Allocator,
    AllocatorError,
    FailedAllocationOnNode,
    Features,
    allocated_state,
)
from kubesched.dra.model import DeviceID, SharedDeviceID
from kubesched.dra.selector import CELSelectors, SelectorEvaluator
from kubesched_testing.dra_fixtures import (
    CAPACITY0,
    CAPACITY1,
    CLAIM0,
    CLAIM1,
    CLASS_A,
    CLASS_B,
    COUNTER_SET1,
    COUNTER_SET2,
    DEVICE0,
    DEVICE1,
    DEVICE2,
    DEVICE3,
    DEVICE4,
    DRIVER_A,
    DRIVER_B,
    FIELD_NAME_KEY,
    FIXED_SHARE_ID,
    FOUR,
    FROM_COUNTERS,
    MAX_SIZE,
    NODE1,
    NODE2,
    NODE_SELECTION_ALL,
    NODE_SELECTION_PER_DEVICE,
    ONE,
    PLANET_KEY,
    PLANET_VALUE_EARTH,
    POOL1,
    POOL2,
    POOL3,
    POOL4,
    REGION1,
    REGION2,
    REGION_KEY,
    REQ0,
    REQ0_SUB_REQ0,
    REQ0_SUB_REQ1,
    REQ1,
    REQ1_SUB_REQ1,
    REQ2,
    REQ2_SUB_REQ0,
    REQ2_SUB_REQ1,
    REQ3,
    SLICE1,
    SLICE2,
    SLICE3,
    SLICE4,
    SUB_REQ0,
    SUB_REQ1,
    THREE,
    TWO,
    ZERO,
    all_device_request,
    allocation_config,
    allocation_result,
    allocation_result_with_configs,
    bool_attr,
    cel,
    claim,
    claim_with_device_config,
    claim_with_request,
    claim_with_requests,
    class_with_allow_multiple_allocations,
    class_with_config,
    counter_set,
    device,
    device_allocation_result,
    device_claim_config,
    device_class,
    device_configuration,
    device_counter_consumption,
    device_request_allocation_result,
    distinct_attribute,
    int_attr,
    local_node_selector,
    match_attribute,
    multiple_device_allocation_results,
    node,
    node_label_selector,
    request,
    request_with_prioritized_list,
    resource_pool,
    result_with_binding_conditions,
    slice_with_counter_sets,
    slice_with_devices,
    slice_with_multiple_devices,
    slice_with_one_device,
    string_attr,
    sub_request,
    upstream_evaluator,
    version_attr,
    with_pool,
)

A = DRIVER_A
NON_EXISTENT_ATTRIBUTE = f"{A}/NonExistentAttribute"
BOOL_ATTRIBUTE = f"{A}/boolAttribute"
STRING_ATTRIBUTE = f"{A}/stringAttribute"
VERSION_ATTRIBUTE = f"{A}/driverVersion"
INT_ATTRIBUTE = f"{A}/numa"
TAINT_KEY = "taint-key"
TAINT_NONE = {"key": TAINT_KEY, "value": "taint-value", "effect": "None"}
TAINT_NO_SCHEDULE = {"key": TAINT_KEY, "value": "taint-value", "effect": "NoSchedule"}
TAINT_NO_EXECUTE = {"key": TAINT_KEY, "value": "taint-value-2", "effect": "NoExecute"}
TOLERATION_NO_SCHEDULE = {"operator": "Exists", "key": TAINT_KEY, "effect": "NoSchedule"}
TOLERATION_NO_EXECUTE = {"operator": "Equal", "key": TAINT_KEY, "value": "taint-value-2", "effect": "NoExecute"}
TOLERATION_NO_SCHEDULE_KEY1 = {"operator": "Exists", "key": "key1", "effect": "NoSchedule"}
TAINT_KEY1 = {"key": "key1", "value": "value1", "effect": "NoSchedule"}


def mem(expression_gi: int) -> dict[str, Any]:
    return cel(f'device.capacity["{A}"].memory.compareTo(quantity("{expression_gi}Gi")) >= 0')


def attr_is(name: str, value: str) -> dict[str, Any]:
    return cel(f'device.attributes["{A}"].{name} == "{value}"')


def counters(**values: str) -> dict[str, str]:
    return dict(values)


LOCAL1 = local_node_selector(NODE1)


@dataclass
class Case:
    claims: list[dict[str, Any]] = field(default_factory=list)
    classes: list[dict[str, Any]] = field(default_factory=list)
    slices: list[dict[str, Any]] = field(default_factory=list)
    node: dict[str, Any] | None = None
    features: Features = field(default_factory=Features.none)
    allocated: list[tuple[str, str, str]] = field(default_factory=list)
    allocated_shared: list[tuple[str, str, str, str]] = field(default_factory=list)
    allocated_capacity: dict[tuple[str, str, str], dict[str, str]] = field(default_factory=dict)
    # None: cannot be allocated; a list: one allocation result per claim.
    expect: list[dict[str, Any]] | None = None
    error: str | None = None
    error_type: type[AllocatorError] = AllocationError
    invocations: int | None = None


F = Features.none


def run(case: Case, evaluator: SelectorEvaluator | None = None) -> tuple[Allocator, list[dict[str, Any]] | None]:
    state = AllocatedState(
        allocated_devices={DeviceID(*d) for d in case.allocated},
        allocated_shared_device_ids={SharedDeviceID(*s) for s in case.allocated_shared},
        aggregated_capacity={
            DeviceID(*d): {n: Fraction(int(v)) for n, v in caps.items()} for d, caps in case.allocated_capacity.items()
        },
    )
    allocator = Allocator(
        allocated=state,
        classes={c["metadata"]["name"]: c for c in case.classes},
        slices=case.slices,
        evaluator=evaluator or upstream_evaluator(),
        features=case.features,
        new_share_id=lambda: FIXED_SHARE_ID,
    )
    return allocator, allocator.allocate(case.node or node(NODE1, REGION1), case.claims)


CASES: dict[str, Case] = {}

CASES["empty"] = Case(expect=[])
CASES["simple"] = Case(
    claims=[claim_with_request(CLAIM0, REQ0, CLASS_A)],
    classes=[device_class(CLASS_A, A)],
    slices=[slice_with_one_device(SLICE1, NODE1, POOL1, A)],
    expect=[allocation_result(LOCAL1, device_allocation_result(REQ0, A, POOL1, DEVICE1))],
)
CASES["other-node"] = Case(
    claims=[claim_with_request(CLAIM0, REQ0, CLASS_A)],
    classes=[device_class(CLASS_A, A)],
    slices=[slice_with_one_device(SLICE1, NODE1, POOL1, DRIVER_B), slice_with_one_device(SLICE2, NODE2, POOL2, A)],
    node=node(NODE2, REGION2),
    expect=[allocation_result(local_node_selector(NODE2), device_allocation_result(REQ0, A, POOL2, DEVICE1))],
)
_SMALL_LARGE = [
    device(DEVICE1, {"memory": "1Gi"}),
    device(DEVICE2, {"memory": "2Gi"}),
]
CASES["small-and-large"] = Case(
    claims=[claim_with_requests(CLAIM0, None, request(REQ0, CLASS_A, 1, mem(1)), request(REQ1, CLASS_A, 1, mem(2)))],
    classes=[device_class(CLASS_A, A)],
    slices=[slice_with_devices(SLICE1, NODE1, POOL1, A, *_SMALL_LARGE)],
    expect=[
        allocation_result(
            LOCAL1,
            device_allocation_result(REQ0, A, POOL1, DEVICE1),
            device_allocation_result(REQ1, A, POOL1, DEVICE2),
        )
    ],
)
CASES["small-and-large-backtrack-requests"] = Case(
    claims=[claim_with_requests(CLAIM0, None, request(REQ0, CLASS_A, 1, mem(1)), request(REQ1, CLASS_A, 1, mem(2)))],
    classes=[device_class(CLASS_A, A)],
    slices=[slice_with_devices(SLICE1, NODE1, POOL1, A, *reversed(_SMALL_LARGE))],
    expect=[
        allocation_result(
            LOCAL1,
            device_allocation_result(REQ0, A, POOL1, DEVICE1),
            device_allocation_result(REQ1, A, POOL1, DEVICE2),
        )
    ],
)
CASES["small-and-large-backtrack-claims"] = Case(
    claims=[
        claim_with_requests(CLAIM0, None, request(REQ0, CLASS_A, 1, mem(1))),
        claim_with_requests(CLAIM1, None, request(REQ1, CLASS_A, 1, mem(2))),
    ],
    classes=[device_class(CLASS_A, A)],
    slices=[slice_with_devices(SLICE1, NODE1, POOL1, A, *reversed(_SMALL_LARGE))],
    expect=[
        allocation_result(LOCAL1, device_allocation_result(REQ0, A, POOL1, DEVICE1)),
        allocation_result(LOCAL1, device_allocation_result(REQ1, A, POOL1, DEVICE2)),
    ],
)
CASES["devices-split-across-different-slices"] = Case(
    claims=[claim_with_requests(CLAIM0, None, request(REQ0, CLASS_A, 2))],
    classes=[device_class(CLASS_A, A)],
    slices=[slice_with_one_device(SLICE1, NODE1, POOL1, A), slice_with_one_device(SLICE2, NODE1, POOL2, A)],
    expect=[
        allocation_result(
            LOCAL1,
            device_allocation_result(REQ0, A, POOL1, DEVICE1),
            device_allocation_result(REQ0, A, POOL2, DEVICE1),
        )
    ],
)
CASES["obsolete-slice"] = Case(
    claims=[claim_with_request(CLAIM0, REQ0, CLASS_A)],
    classes=[device_class(CLASS_A, A)],
    slices=[
        slice_with_devices("slice-1-obsolete", NODE1, resource_pool(POOL1, 2), A, device(DEVICE1)),
        slice_with_devices("slice-1-obsolete", NODE1, resource_pool(POOL1, 2, generation=2), A, device(DEVICE2)),
    ],
)
_DUP = with_pool(slice_with_one_device(SLICE1, NODE1, POOL1, A), count=2)
_DUP2 = copy.deepcopy(_DUP)
_DUP2["metadata"]["name"] += "-2"
CASES["duplicate-slice"] = Case(
    claims=[claim_with_request(CLAIM0, REQ0, CLASS_A)],
    classes=[device_class(CLASS_A, A)],
    slices=[_DUP, _DUP2],
    error="invalid resource pools were encountered",
    error_type=FailedAllocationOnNode,
)
CASES["no-slices"] = Case(
    claims=[claim_with_request(CLAIM0, REQ0, CLASS_A)],
    classes=[device_class(CLASS_A, A)],
)
CASES["not-enough-suitable-devices"] = Case(
    claims=[claim_with_request(CLAIM0, REQ0, CLASS_A), claim_with_request(CLAIM0, REQ1, CLASS_A)],
    classes=[device_class(CLASS_A, A)],
    slices=[slice_with_one_device(SLICE1, NODE1, POOL1, A)],
)
CASES["no-classes"] = Case(
    claims=[claim_with_request(CLAIM0, REQ0, CLASS_A)],
    slices=[slice_with_one_device(SLICE1, NODE1, POOL1, A)],
    error="could not retrieve device class class-a",
)
CASES["unknown-class"] = Case(
    claims=[claim_with_request(CLAIM0, REQ0, "unknown-class")],
    classes=[device_class(CLASS_A, A)],
    slices=[slice_with_one_device(SLICE1, NODE1, POOL1, A)],
    error="could not retrieve device class unknown-class",
)
CASES["empty-class"] = Case(
    claims=[claim_with_request(CLAIM0, REQ0, "")],
    classes=[device_class(CLASS_A, A)],
    slices=[slice_with_one_device(SLICE1, NODE1, POOL1, A)],
    error="claim claim-0, request req-0: missing device class name (unsupported request type?)",
)
CASES["no-claims-to-allocate"] = Case(
    classes=[device_class(CLASS_A, A)],
    slices=[slice_with_one_device(SLICE1, NODE1, POOL1, A)],
    expect=[],
)
CASES["all-devices-single"] = Case(
    claims=[claim_with_requests(CLAIM0, None, all_device_request(REQ0, CLASS_A))],
    classes=[device_class(CLASS_A, A)],
    slices=[slice_with_one_device(SLICE1, NODE1, POOL1, A)],
    expect=[allocation_result(LOCAL1, device_allocation_result(REQ0, A, POOL1, DEVICE1))],
)
CASES["all-devices-with-consumed-counters"] = Case(
    features=F(partitionable_devices=True),
    claims=[claim_with_requests(CLAIM0, None, all_device_request(REQ0, CLASS_A))],
    classes=[device_class(CLASS_A, A)],
    slices=[
        slice_with_devices(
            SLICE1,
            NODE1,
            resource_pool(POOL1, 2),
            A,
            device(DEVICE1).with_device_counter_consumption(
                device_counter_consumption(COUNTER_SET1, counters(memory="4Gi"))
            ),
        ),
        slice_with_counter_sets(
            SLICE2, NODE1, resource_pool(POOL1, 2), A, counter_set(COUNTER_SET1, counters(memory="8Gi"))
        ),
    ],
    expect=[allocation_result(LOCAL1, device_allocation_result(REQ0, A, POOL1, DEVICE1))],
)
CASES["all-devices-many"] = Case(
    claims=[claim_with_requests(CLAIM0, None, all_device_request(REQ0, CLASS_A))],
    classes=[device_class(CLASS_A, A)],
    slices=[slice_with_one_device(SLICE1, NODE1, POOL1, A), slice_with_one_device(SLICE1, NODE1, POOL2, A)],
    expect=[
        allocation_result(
            LOCAL1,
            device_allocation_result(REQ0, A, POOL1, DEVICE1),
            device_allocation_result(REQ0, A, POOL2, DEVICE1),
        )
    ],
)
CASES["all-devices-of-the-incomplete-pool"] = Case(
    claims=[claim_with_requests(CLAIM0, None, all_device_request(REQ0, CLASS_A).with_allocation_mode("All", 1))],
    classes=[device_class(CLASS_A, A)],
    slices=[with_pool(slice_with_one_device(SLICE1, NODE1, POOL1, A), count=2)],
    error="claim claim-0, request req-0: asks for all devices, "
    "but resource pool driver-a/pool-1 is currently being updated",
)
_ALL_A = claim_with_requests(CLAIM0, None, all_device_request(REQ0, CLASS_A))
_ONE_B = claim_with_requests(CLAIM1, None, request(REQ0, CLASS_B, 1))
CASES["all-devices-plus-another"] = Case(
    claims=[_ALL_A, _ONE_B],
    classes=[device_class(CLASS_A, A), device_class(CLASS_B, DRIVER_B)],
    slices=[slice_with_one_device(SLICE1, NODE1, POOL1, A), slice_with_one_device(SLICE1, NODE1, POOL1, DRIVER_B)],
    expect=[
        allocation_result(LOCAL1, device_allocation_result(REQ0, A, POOL1, DEVICE1)),
        allocation_result(LOCAL1, device_allocation_result(REQ0, DRIVER_B, POOL1, DEVICE1)),
    ],
)
CASES["all-devices-plus-another-reversed"] = Case(
    claims=[_ONE_B, _ALL_A],
    classes=[device_class(CLASS_A, A), device_class(CLASS_B, DRIVER_B)],
    slices=[slice_with_one_device(SLICE1, NODE1, POOL1, A), slice_with_one_device(SLICE1, NODE1, POOL1, DRIVER_B)],
    expect=[
        allocation_result(LOCAL1, device_allocation_result(REQ0, DRIVER_B, POOL1, DEVICE1)),
        allocation_result(LOCAL1, device_allocation_result(REQ0, A, POOL1, DEVICE1)),
    ],
)
_TWO_A_ONE_B = [
    slice_with_devices(SLICE1, NODE1, POOL1, A, device(DEVICE1), device(DEVICE2)),
    slice_with_one_device(SLICE1, NODE1, POOL1, DRIVER_B),
]
CASES["all-devices-many-plus-another"] = Case(
    claims=[_ALL_A, _ONE_B],
    classes=[device_class(CLASS_A, A), device_class(CLASS_B, DRIVER_B)],
    slices=_TWO_A_ONE_B,
    expect=[
        allocation_result(
            LOCAL1,
            device_allocation_result(REQ0, A, POOL1, DEVICE1),
            device_allocation_result(REQ0, A, POOL1, DEVICE2),
        ),
        allocation_result(LOCAL1, device_allocation_result(REQ0, DRIVER_B, POOL1, DEVICE1)),
    ],
)
CASES["all-devices-many-plus-another-reversed"] = Case(
    claims=[_ONE_B, _ALL_A],
    classes=[device_class(CLASS_A, A), device_class(CLASS_B, DRIVER_B)],
    slices=_TWO_A_ONE_B,
    expect=[
        allocation_result(LOCAL1, device_allocation_result(REQ0, DRIVER_B, POOL1, DEVICE1)),
        allocation_result(
            LOCAL1,
            device_allocation_result(REQ0, A, POOL1, DEVICE1),
            device_allocation_result(REQ0, A, POOL1, DEVICE2),
        ),
    ],
)
CASES["all-devices-no-solution"] = Case(
    claims=[claim_with_requests(CLAIM1, None, request(REQ0, CLASS_A, 1)), _ALL_A],
    classes=[device_class(CLASS_A, A)],
    slices=[slice_with_one_device(SLICE1, NODE1, POOL1, A)],
)
CASES["all-devices-no-solution-reversed"] = Case(
    claims=[_ALL_A, claim_with_requests(CLAIM1, None, request(REQ0, CLASS_A, 1))],
    classes=[device_class(CLASS_A, A)],
    slices=[slice_with_one_device(SLICE1, NODE1, POOL1, A)],
)
CASES["all-devices-slice-without-devices"] = Case(
    claims=[_ALL_A],
    classes=[device_class(CLASS_A, A)],
    slices=[slice_with_devices(SLICE1, NODE1, POOL1, A)],
)
CASES["all-devices-no-slices"] = Case(claims=[_ALL_A], classes=[device_class(CLASS_A, A)])
_TWO_DEVICES = [slice_with_devices(SLICE1, NODE1, POOL1, A, device(DEVICE1), device(DEVICE2))]
CASES["all-devices-some-allocated"] = Case(
    claims=[_ALL_A],
    allocated=[(A, POOL1, DEVICE1)],
    classes=[device_class(CLASS_A, A)],
    slices=_TWO_DEVICES,
)
CASES["all-devices-some-allocated-admin-access"] = Case(
    features=F(admin_access=True),
    claims=[
        claim_with_requests(CLAIM0, None, request(REQ0, CLASS_A, 1).with_admin_access().with_allocation_mode("All", 1))
    ],
    allocated=[(A, POOL1, DEVICE1)],
    classes=[device_class(CLASS_A, A)],
    slices=_TWO_DEVICES,
    expect=[
        allocation_result(
            LOCAL1,
            device_allocation_result(REQ0, A, POOL1, DEVICE1, True),
            device_allocation_result(REQ0, A, POOL1, DEVICE2, True),
        )
    ],
)
CASES["all-devices-some-allocating-admin-access"] = Case(
    features=F(admin_access=True),
    claims=[
        claim_with_requests(
            CLAIM0,
            None,
            request(REQ0, CLASS_A, 1).with_admin_access(),
            request(REQ1, CLASS_A, 1).with_admin_access().with_allocation_mode("All", 1),
        )
    ],
    classes=[device_class(CLASS_A, A)],
    slices=_TWO_DEVICES,
)
CASES["count-devices-some-allocated-admin-access"] = Case(
    features=F(admin_access=True),
    claims=[claim_with_requests(CLAIM0, None, request(REQ0, CLASS_A, 2).with_admin_access())],
    allocated=[(A, POOL1, DEVICE1)],
    classes=[device_class(CLASS_A, A)],
    slices=_TWO_DEVICES,
    expect=[
        allocation_result(
            LOCAL1,
            device_allocation_result(REQ0, A, POOL1, DEVICE1, True),
            device_allocation_result(REQ0, A, POOL1, DEVICE2, True),
        )
    ],
)
CASES["separate-claims-share-device-admin-access"] = Case(
    features=F(admin_access=True),
    claims=[
        claim_with_requests(CLAIM0, None, request(REQ0, CLASS_A, 1).with_admin_access()),
        claim_with_requests(CLAIM1, None, request(REQ0, CLASS_A, 1).with_admin_access()),
    ],
    classes=[device_class(CLASS_A, A)],
    slices=_TWO_DEVICES,
    expect=[
        allocation_result(LOCAL1, device_allocation_result(REQ0, A, POOL1, DEVICE1, True)),
        allocation_result(LOCAL1, device_allocation_result(REQ0, A, POOL1, DEVICE1, True)),
    ],
)
CASES["admin-access-claims-device-allocating-for-non-admin-access"] = Case(
    features=F(admin_access=True),
    claims=[
        claim_with_request(CLAIM0, REQ0, CLASS_A),
        claim_with_requests(CLAIM1, None, request(REQ0, CLASS_A, 1).with_admin_access()),
    ],
    classes=[device_class(CLASS_A, A)],
    slices=_TWO_DEVICES,
    expect=[
        allocation_result(LOCAL1, device_allocation_result(REQ0, A, POOL1, DEVICE1)),
        allocation_result(LOCAL1, device_allocation_result(REQ0, A, POOL1, DEVICE1, True)),
    ],
)
_ALL_FIRST_THEN_B = claim(CLAIM0).with_requests(
    request_with_prioritized_list(
        REQ0, sub_request(SUB_REQ0, CLASS_A, 0).with_allocation_mode("All"), sub_request(SUB_REQ1, CLASS_B, 1)
    )
)
CASES["all-devices-slice-without-devices-prioritized-list"] = Case(
    features=F(prioritized_list=True),
    claims=[_ALL_FIRST_THEN_B],
    classes=[device_class(CLASS_A, A), device_class(CLASS_B, DRIVER_B)],
    slices=[slice_with_devices(SLICE1, NODE1, POOL1, A), slice_with_one_device(SLICE2, NODE1, POOL2, DRIVER_B)],
    expect=[allocation_result(LOCAL1, device_allocation_result(REQ0_SUB_REQ1, DRIVER_B, POOL2, DEVICE1))],
)
CASES["all-devices-no-slices-prioritized-list"] = Case(
    features=F(prioritized_list=True),
    claims=[_ALL_FIRST_THEN_B],
    classes=[device_class(CLASS_A, A), device_class(CLASS_B, DRIVER_B)],
    slices=[slice_with_one_device(SLICE2, NODE1, POOL2, DRIVER_B)],
    expect=[allocation_result(LOCAL1, device_allocation_result(REQ0_SUB_REQ1, DRIVER_B, POOL2, DEVICE1))],
)
CASES["all-devices-some-allocated-prioritized-list"] = Case(
    features=F(prioritized_list=True),
    claims=[_ALL_FIRST_THEN_B],
    allocated=[(A, POOL1, DEVICE1)],
    classes=[device_class(CLASS_A, A), device_class(CLASS_B, DRIVER_B)],
    slices=[
        slice_with_devices(SLICE1, NODE1, POOL1, A, device(DEVICE1), device(DEVICE2)),
        slice_with_one_device(SLICE2, NODE1, POOL2, DRIVER_B),
    ],
    expect=[allocation_result(LOCAL1, device_allocation_result(REQ0_SUB_REQ1, DRIVER_B, POOL2, DEVICE1))],
)
CASES["network-attached-device"] = Case(
    claims=[claim_with_request(CLAIM0, REQ0, CLASS_A)],
    classes=[device_class(CLASS_A, A)],
    slices=[slice_with_one_device(SLICE1, node_label_selector(REGION_KEY, REGION1), POOL1, A)],
    expect=[
        allocation_result(node_label_selector(REGION_KEY, REGION1), device_allocation_result(REQ0, A, POOL1, DEVICE1))
    ],
)
CASES["unsuccessful-allocation-network-attached-device"] = Case(
    claims=[claim_with_request(CLAIM0, REQ0, CLASS_A)],
    classes=[device_class(CLASS_A, A)],
    slices=[slice_with_one_device(SLICE1, node_label_selector(REGION_KEY, REGION1), POOL1, A)],
    node=node(NODE2, REGION2),
)
CASES["many-network-attached-devices"] = Case(
    claims=[claim_with_requests(CLAIM0, None, request(REQ0, CLASS_A, 4))],
    classes=[device_class(CLASS_A, A)],
    slices=[
        slice_with_one_device(SLICE1, node_label_selector(REGION_KEY, REGION1), POOL1, A),
        slice_with_one_device(SLICE1, NODE_SELECTION_ALL, POOL2, A),
        slice_with_one_device(SLICE1, node_label_selector(PLANET_KEY, PLANET_VALUE_EARTH), POOL3, A),
        slice_with_one_device(SLICE1, local_node_selector(NODE1), POOL4, A),
    ],
    expect=[
        allocation_result(
            {
                "nodeSelectorTerms": [
                    {
                        "matchExpressions": [
                            {"key": REGION_KEY, "operator": "In", "values": [REGION1]},
                            {"key": PLANET_KEY, "operator": "In", "values": [PLANET_VALUE_EARTH]},
                        ],
                        "matchFields": [{"key": FIELD_NAME_KEY, "operator": "In", "values": [NODE1]}],
                    }
                ]
            },
            device_allocation_result(REQ0, A, POOL1, DEVICE1),
            device_allocation_result(REQ0, A, POOL2, DEVICE1),
            device_allocation_result(REQ0, A, POOL3, DEVICE1),
            device_allocation_result(REQ0, A, POOL4, DEVICE1),
        )
    ],
)
CASES["local-and-network-attached-devices"] = Case(
    claims=[claim_with_requests(CLAIM0, None, request(REQ0, CLASS_A, 2))],
    classes=[device_class(CLASS_A, A)],
    slices=[
        slice_with_one_device(SLICE1, node_label_selector(REGION_KEY, REGION1), POOL1, A),
        slice_with_one_device(SLICE1, NODE1, POOL2, A),
    ],
    expect=[
        allocation_result(
            LOCAL1,
            device_allocation_result(REQ0, A, POOL1, DEVICE1),
            device_allocation_result(REQ0, A, POOL2, DEVICE1),
        )
    ],
)
CASES["several-different-drivers"] = Case(
    claims=[claim_with_request(CLAIM0, REQ0, CLASS_A), claim_with_request(CLAIM0, REQ0, CLASS_B)],
    classes=[device_class(CLASS_A, A), device_class(CLASS_B, DRIVER_B)],
    slices=_TWO_A_ONE_B,
    expect=[
        allocation_result(LOCAL1, device_allocation_result(REQ0, A, POOL1, DEVICE1)),
        allocation_result(LOCAL1, device_allocation_result(REQ0, DRIVER_B, POOL1, DEVICE1)),
    ],
)
CASES["already-allocated-devices"] = Case(
    claims=[claim_with_request(CLAIM0, REQ0, CLASS_A)],
    allocated=[(A, POOL1, DEVICE1), (A, POOL1, DEVICE2)],
    classes=[device_class(CLASS_A, A)],
    slices=[slice_with_one_device(SLICE1, NODE1, POOL1, A)],
)
CASES["admin-access-disabled"] = Case(
    features=F(admin_access=False),
    claims=[claim_with_requests(CLAIM0, None, request(REQ0, CLASS_A, 1).with_admin_access())],
    classes=[device_class(CLASS_A, A)],
    slices=[slice_with_one_device(SLICE1, NODE1, POOL1, A)],
    error="claim claim-0, request req-0: admin access is requested, but the feature is disabled",
)
CASES["admin-access-enabled"] = Case(
    features=F(admin_access=True),
    claims=[claim_with_requests(CLAIM0, None, request(REQ0, CLASS_A, 1).with_admin_access())],
    allocated=[(A, POOL1, DEVICE1), (A, POOL1, DEVICE2)],
    classes=[device_class(CLASS_A, A)],
    slices=[slice_with_one_device(SLICE1, NODE1, POOL1, A)],
    expect=[allocation_result(LOCAL1, device_allocation_result(REQ0, A, POOL1, DEVICE1, True))],
)

_ALL_ATTRS = {
    "driverVersion": version_attr("1.0.0"),
    "numa": int_attr(1),
    "stringAttribute": string_attr("stringAttributeValue"),
    "boolAttribute": bool_attr(True),
}
CASES["with-constraint"] = Case(
    claims=[
        claim_with_requests(
            CLAIM0,
            [
                match_attribute(INT_ATTRIBUTE),
                match_attribute(VERSION_ATTRIBUTE),
                match_attribute(STRING_ATTRIBUTE),
                match_attribute(BOOL_ATTRIBUTE),
            ],
            request(REQ0, CLASS_A, 1),
            request(REQ1, CLASS_A, 1),
        )
    ],
    classes=[device_class(CLASS_A, A)],
    slices=[
        slice_with_devices(
            SLICE1, NODE1, POOL1, A, device(DEVICE1, None, _ALL_ATTRS), device(DEVICE2, None, _ALL_ATTRS)
        )
    ],
    expect=[
        allocation_result(
            LOCAL1,
            device_allocation_result(REQ0, A, POOL1, DEVICE1),
            device_allocation_result(REQ1, A, POOL1, DEVICE2),
        )
    ],
)
CASES["with-constraint-non-existent-attribute"] = Case(
    claims=[claim_with_request(CLAIM0, REQ0, CLASS_A, match_attribute(NON_EXISTENT_ATTRIBUTE))],
    classes=[device_class(CLASS_A, A)],
    slices=[slice_with_one_device(SLICE1, NODE1, POOL1, A)],
)


def _two_with(name: str, first: dict[str, Any], second: dict[str, Any]) -> list[dict[str, Any]]:
    return [
        slice_with_devices(
            SLICE1, NODE1, POOL1, A, device(DEVICE1, None, {name: first}), device(DEVICE2, None, {name: second})
        )
    ]


CASES["with-constraint-not-matching-int-attribute"] = Case(
    claims=[claim_with_requests(CLAIM0, [match_attribute(INT_ATTRIBUTE)], request(REQ0, CLASS_A, 2))],
    classes=[device_class(CLASS_A, A), device_class(CLASS_B, DRIVER_B)],
    slices=_two_with("numa", int_attr(1), int_attr(2)),
)
CASES["with-constraint-not-matching-int-attribute-all-devices"] = Case(
    claims=[
        claim_with_requests(
            CLAIM0, [match_attribute(INT_ATTRIBUTE)], request(REQ0, CLASS_A, 0).with_allocation_mode("All")
        )
    ],
    classes=[device_class(CLASS_A, A), device_class(CLASS_B, DRIVER_B)],
    slices=_two_with("numa", int_attr(1), int_attr(2)),
    error="claim claim-0, request req-0: cannot add device driver-a/pool-1/device-2 "
    "because a claim constraint would not be satisfied",
)
CASES["partitionable-all-mode-constraint-must-error-with-reserved-counter"] = Case(
    features=F(partitionable_devices=True),
    claims=[
        claim_with_requests(
            CLAIM0, [match_attribute(INT_ATTRIBUTE)], request(REQ0, CLASS_A, 0).with_allocation_mode("All")
        )
    ],
    classes=[device_class(CLASS_A, A)],
    slices=[
        slice_with_devices(
            SLICE1,
            NODE1,
            resource_pool(POOL1, 2),
            A,
            device(DEVICE1, None, {"numa": int_attr(1)}),
            device(DEVICE2, None, {"numa": int_attr(2)}).with_device_counter_consumption(
                device_counter_consumption(COUNTER_SET1, counters(c="1"))
            ),
        ),
        slice_with_counter_sets(SLICE2, NODE1, resource_pool(POOL1, 2), A, counter_set(COUNTER_SET1, counters(c="1"))),
    ],
    error="claim claim-0, request req-0: cannot add device driver-a/pool-1/device-2 "
    "because a claim constraint would not be satisfied",
)
CASES["with-constraint-not-matching-string-attribute"] = Case(
    claims=[claim_with_requests(CLAIM0, [match_attribute(STRING_ATTRIBUTE)], request(REQ0, CLASS_A, 2))],
    classes=[device_class(CLASS_A, A), device_class(CLASS_B, DRIVER_B)],
    slices=_two_with("stringAttribute", string_attr("stringAttributeValue"), string_attr("stringAttributeValue2")),
)
CASES["with-constraint-not-matching-bool-attribute"] = Case(
    claims=[claim_with_requests(CLAIM0, [match_attribute(BOOL_ATTRIBUTE)], request(REQ0, CLASS_A, 2))],
    classes=[device_class(CLASS_A, A), device_class(CLASS_B, DRIVER_B)],
    slices=_two_with("boolAttribute", bool_attr(True), bool_attr(False)),
)
CASES["with-constraint-not-matching-version-attribute"] = Case(
    claims=[claim_with_requests(CLAIM0, [match_attribute(VERSION_ATTRIBUTE)], request(REQ0, CLASS_A, 2))],
    classes=[device_class(CLASS_A, A), device_class(CLASS_B, DRIVER_B)],
    slices=_two_with("driverVersion", version_attr("1.0.0"), version_attr("2.0.0")),
)
CASES["with-constraint-for-request"] = Case(
    claims=[
        claim_with_requests(
            CLAIM0, [match_attribute(VERSION_ATTRIBUTE, REQ0)], request(REQ0, CLASS_A, 1), request(REQ1, CLASS_A, 1)
        )
    ],
    classes=[device_class(CLASS_A, A), device_class(CLASS_B, DRIVER_B)],
    slices=_two_with("driverVersion", version_attr("1.0.0"), version_attr("2.0.0")),
    expect=[
        allocation_result(
            LOCAL1,
            device_allocation_result(REQ0, A, POOL1, DEVICE1),
            device_allocation_result(REQ1, A, POOL1, DEVICE2),
        )
    ],
)
CASES["with-constraint-for-request-retry"] = Case(
    claims=[
        claim_with_requests(
            CLAIM0,
            [match_attribute(VERSION_ATTRIBUTE, REQ0), match_attribute(STRING_ATTRIBUTE)],
            request(REQ0, CLASS_A, 1),
            request(REQ1, CLASS_A, 1),
        )
    ],
    classes=[device_class(CLASS_A, A), device_class(CLASS_B, DRIVER_B)],
    slices=[
        slice_with_devices(
            SLICE1,
            NODE1,
            POOL1,
            A,
            device(DEVICE1, None, {"driverVersion": version_attr("1.0.0"), "stringAttribute": string_attr("a")}),
            device(DEVICE2, None, {"driverVersion": version_attr("2.0.0"), "stringAttribute": string_attr("b")}),
            device(DEVICE3, None, {"driverVersion": version_attr("3.0.0"), "stringAttribute": string_attr("b")}),
        )
    ],
    expect=[
        allocation_result(
            LOCAL1,
            device_allocation_result(REQ0, A, POOL1, DEVICE2),
            device_allocation_result(REQ1, A, POOL1, DEVICE3),
        )
    ],
)
CASES["with-class-device-config"] = Case(
    claims=[claim_with_request(CLAIM0, REQ0, CLASS_A)],
    classes=[class_with_config(CLASS_A, A, "classAttribute")],
    slices=[slice_with_one_device(SLICE1, NODE1, POOL1, A)],
    expect=[
        allocation_result_with_configs(
            LOCAL1,
            [device_allocation_result(REQ0, A, POOL1, DEVICE1)],
            [allocation_config("FromClass", [REQ0], device_configuration(A, "classAttribute"))],
        )
    ],
)
CASES["with-class-device-config-with-multiple-request-and-configs"] = Case(
    claims=[
        claim_with_requests(CLAIM0, [], request(REQ0, CLASS_A, 1), request(REQ1, CLASS_A, 1), request(REQ2, CLASS_B, 1))
    ],
    classes=[
        class_with_config(CLASS_A, A, "classAttribute-A"),
        class_with_config(CLASS_B, DRIVER_B, "classAttribute-B"),
    ],
    slices=[
        slice_with_multiple_devices(SLICE1, NODE1, POOL1, A, 2),
        slice_with_one_device(SLICE2, NODE1, POOL1, DRIVER_B),
    ],
    expect=[
        allocation_result_with_configs(
            LOCAL1,
            [
                device_allocation_result(REQ0, A, POOL1, DEVICE0),
                device_allocation_result(REQ1, A, POOL1, DEVICE1),
                device_allocation_result(REQ2, DRIVER_B, POOL1, DEVICE1),
            ],
            [
                allocation_config("FromClass", [REQ0, REQ1], device_configuration(A, "classAttribute-A")),
                allocation_config("FromClass", [REQ2], device_configuration(DRIVER_B, "classAttribute-B")),
            ],
        )
    ],
)
CASES["claim-with-device-config"] = Case(
    claims=[claim_with_device_config(CLAIM0, REQ0, CLASS_A, A, "deviceAttribute")],
    classes=[device_class(CLASS_A, A)],
    slices=[slice_with_one_device(SLICE1, NODE1, POOL1, A)],
    expect=[
        allocation_result_with_configs(
            LOCAL1,
            [device_allocation_result(REQ0, A, POOL1, DEVICE1)],
            [allocation_config("FromClaim", None, device_configuration(A, "deviceAttribute"))],
        )
    ],
)
CASES["unknown-selector"] = Case(
    claims=[claim_with_requests(CLAIM0, None, request(REQ0, CLASS_A, 1).with_selectors({}))],
    classes=[device_class(CLASS_A, A)],
    slices=[slice_with_one_device(SLICE1, NODE1, POOL1, A)],
    error="CEL expression empty (unsupported selector type?)",
)
CASES["unknown-allocation-mode"] = Case(
    claims=[claim_with_requests(CLAIM0, None, request(REQ0, CLASS_A, 1).with_allocation_mode("future-mode", 1))],
    classes=[device_class(CLASS_A, A)],
    slices=[slice_with_one_device(SLICE1, NODE1, POOL1, A)],
    error="unsupported count mode future-mode",
)
CASES["unknown-constraint"] = Case(
    claims=[claim_with_request(CLAIM0, REQ0, CLASS_A).with_constraints({})],
    classes=[device_class(CLASS_A, A)],
    slices=[slice_with_one_device(SLICE1, NODE1, POOL1, A)],
    error="empty constraint (unsupported constraint type?)",
)
CASES["invalid-CEL-one-device"] = Case(
    claims=[claim_with_requests(CLAIM0, None, request(REQ0, CLASS_A, 1).with_selectors(cel("noSuchVar")))],
    classes=[device_class(CLASS_A, A)],
    slices=[slice_with_one_device(SLICE1, NODE1, POOL1, A)],
    error="undeclared reference",
)
_BROKEN_CLASS = device_class(CLASS_A, A)
_BROKEN_CLASS["spec"]["selectors"][0]["cel"]["expression"] = "noSuchVar"
CASES["invalid-CEL-one-device-class"] = Case(
    claims=[claim_with_request(CLAIM0, REQ0, CLASS_A)],
    classes=[_BROKEN_CLASS],
    slices=[slice_with_one_device(SLICE1, NODE1, POOL1, A)],
    error="undeclared reference",
)
CASES["invalid-CEL-all-devices"] = Case(
    claims=[
        claim_with_requests(
            CLAIM0, None, request(REQ0, CLASS_A, 1).with_selectors(cel("noSuchVar")).with_allocation_mode("All", 1)
        )
    ],
    classes=[device_class(CLASS_A, A)],
    slices=[slice_with_one_device(SLICE1, NODE1, POOL1, A)],
    error="undeclared reference",
)
CASES["too-many-devices-single-request"] = Case(
    claims=[claim_with_requests(CLAIM0, None, request(REQ0, CLASS_A, 500))],
    classes=[device_class(CLASS_A, A)],
    error="exceeds the claim limit",
)
CASES["many-devices-okay"] = Case(
    claims=[claim_with_requests(CLAIM0, None, request(REQ0, CLASS_A, MAX_SIZE))],
    classes=[device_class(CLASS_A, A)],
)
CASES["too-many-devices-total"] = Case(
    claims=[claim_with_requests(CLAIM0, None, request(REQ0, CLASS_A, MAX_SIZE), request(REQ1, CLASS_A, 1))],
    classes=[device_class(CLASS_A, A)],
    slices=[slice_with_multiple_devices(SLICE1, NODE1, POOL1, A, MAX_SIZE + 1)],
    error="exceeds the claim limit",
)
CASES["all-devices-invalid-CEL"] = Case(
    claims=[claim_with_requests(CLAIM0, None, request(REQ0, CLASS_A, 500))],
    classes=[device_class(CLASS_A, A)],
    error="exceeds the claim limit",
)
CASES["prioritized-list-first-unavailable"] = Case(
    features=F(prioritized_list=True),
    claims=[
        claim(CLAIM0).with_requests(
            request_with_prioritized_list(REQ0, sub_request(SUB_REQ0, CLASS_B, 1), sub_request(SUB_REQ1, CLASS_A, 1))
        )
    ],
    classes=[device_class(CLASS_A, A), device_class(CLASS_B, DRIVER_B)],
    slices=[slice_with_one_device(SLICE1, NODE1, POOL1, A)],
    expect=[allocation_result(LOCAL1, device_allocation_result(REQ0_SUB_REQ1, A, POOL1, DEVICE1))],
)
CASES["prioritized-list-non-available"] = Case(
    features=F(prioritized_list=True),
    claims=[
        claim(CLAIM0).with_requests(
            request_with_prioritized_list(REQ0, sub_request(SUB_REQ0, CLASS_B, 2), sub_request(SUB_REQ1, CLASS_A, 2))
        )
    ],
    classes=[device_class(CLASS_A, A), device_class(CLASS_B, DRIVER_B)],
    slices=[slice_with_one_device(SLICE1, NODE1, POOL1, A), slice_with_one_device(SLICE2, NODE1, POOL2, DRIVER_B)],
)
CASES["prioritized-list-device-config"] = Case(
    features=F(prioritized_list=True),
    claims=[
        claim(CLAIM0)
        .with_requests(
            request_with_prioritized_list(REQ0, sub_request(SUB_REQ0, CLASS_A, 1), sub_request(SUB_REQ1, CLASS_B, 2))
        )
        .with_configs(
            device_claim_config([REQ0_SUB_REQ0], device_configuration(A, "foo")),
            device_claim_config([REQ0_SUB_REQ1], device_configuration(DRIVER_B, "bar")),
        )
    ],
    classes=[device_class(CLASS_A, A), device_class(CLASS_B, DRIVER_B)],
    slices=[slice_with_devices(SLICE1, NODE1, POOL1, DRIVER_B, device(DEVICE1, None, {}), device(DEVICE2, None, {}))],
    expect=[
        allocation_result_with_configs(
            LOCAL1,
            [
                device_allocation_result(REQ0_SUB_REQ1, DRIVER_B, POOL1, DEVICE1),
                device_allocation_result(REQ0_SUB_REQ1, DRIVER_B, POOL1, DEVICE2),
            ],
            [allocation_config("FromClaim", [REQ0_SUB_REQ1], device_configuration(DRIVER_B, "bar"))],
        )
    ],
)
CASES["prioritized-list-class-config"] = Case(
    features=F(prioritized_list=True),
    claims=[
        claim(CLAIM0).with_requests(
            request_with_prioritized_list(REQ0, sub_request(SUB_REQ0, CLASS_A, 2), sub_request(SUB_REQ1, CLASS_B, 2))
        )
    ],
    classes=[class_with_config(CLASS_A, A, "foo"), class_with_config(CLASS_B, DRIVER_B, "bar")],
    slices=[
        slice_with_devices(SLICE1, NODE1, POOL1, DRIVER_B, device(DEVICE1), device(DEVICE2)),
        slice_with_devices(SLICE2, NODE1, POOL2, A, device(DEVICE3)),
    ],
    expect=[
        allocation_result_with_configs(
            LOCAL1,
            [
                device_allocation_result(REQ0_SUB_REQ1, DRIVER_B, POOL1, DEVICE1),
                device_allocation_result(REQ0_SUB_REQ1, DRIVER_B, POOL1, DEVICE2),
            ],
            [allocation_config("FromClass", [REQ0_SUB_REQ1], device_configuration(DRIVER_B, "bar"))],
        )
    ],
)
CASES["prioritized-list-subrequests-with-expressions"] = Case(
    features=F(prioritized_list=True),
    claims=[
        claim(CLAIM0).with_requests(
            request(REQ0, CLASS_A, 1).with_selectors(mem(1)),
            request_with_prioritized_list(
                REQ1, sub_request(SUB_REQ0, CLASS_A, 1, mem(4)), sub_request(SUB_REQ1, CLASS_A, 2, mem(2))
            ),
        )
    ],
    classes=[device_class(CLASS_A, A)],
    slices=[
        slice_with_devices(
            SLICE1,
            NODE1,
            POOL1,
            A,
            device(DEVICE1, {"memory": "2Gi"}),
            device(DEVICE2, {"memory": "2Gi"}),
            device(DEVICE3, {"memory": "1Gi"}),
        )
    ],
    expect=[
        allocation_result(
            LOCAL1,
            device_allocation_result(REQ0, A, POOL1, DEVICE3),
            device_allocation_result(REQ1_SUB_REQ1, A, POOL1, DEVICE1),
            device_allocation_result(REQ1_SUB_REQ1, A, POOL1, DEVICE2),
        )
    ],
)
_MEM_VERSION_SLICES = [
    slice_with_devices(
        SLICE1, NODE1, POOL1, A, device(DEVICE1, {"memory": "8Gi"}, {"driverVersion": version_attr("1.0.0")})
    ),
    slice_with_devices(
        SLICE2,
        NODE1,
        POOL2,
        A,
        device(DEVICE2, {"memory": "2Gi"}, {"driverVersion": version_attr("2.0.0")}),
        device(DEVICE3, {"memory": "1Gi"}, {"driverVersion": version_attr("1.0.0")}),
    ),
]
CASES["prioritized-list-subrequests-with-constraints-ref-parent-request"] = Case(
    features=F(prioritized_list=True),
    claims=[
        claim(CLAIM0)
        .with_constraints(match_attribute(VERSION_ATTRIBUTE, REQ0, REQ1))
        .with_requests(
            request(REQ0, CLASS_A, 1).with_selectors(mem(8)),
            request_with_prioritized_list(
                REQ1, sub_request(SUB_REQ0, CLASS_A, 1, mem(2)), sub_request(SUB_REQ1, CLASS_A, 1, mem(1))
            ),
        )
    ],
    classes=[device_class(CLASS_A, A)],
    slices=_MEM_VERSION_SLICES,
    expect=[
        allocation_result(
            LOCAL1,
            device_allocation_result(REQ0, A, POOL1, DEVICE1),
            device_allocation_result(REQ1_SUB_REQ1, A, POOL2, DEVICE3),
        )
    ],
)
CASES["prioritized-list-subrequests-with-constraints-ref-sub-request"] = Case(
    features=F(prioritized_list=True),
    claims=[
        claim(CLAIM0)
        .with_constraints(match_attribute(VERSION_ATTRIBUTE, REQ0, "req-1/subReq-0"))
        .with_requests(
            request(REQ0, CLASS_A, 1).with_selectors(mem(8)),
            request_with_prioritized_list(
                REQ1, sub_request(SUB_REQ0, CLASS_A, 1, mem(2)), sub_request(SUB_REQ1, CLASS_A, 1, mem(1))
            ),
        )
    ],
    classes=[device_class(CLASS_A, A)],
    slices=[
        _MEM_VERSION_SLICES[0],
        slice_with_devices(
            SLICE2, NODE1, POOL2, A, device(DEVICE2, {"memory": "2Gi"}, {"driverVersion": version_attr("2.0.0")})
        ),
    ],
    expect=[
        allocation_result(
            LOCAL1,
            device_allocation_result(REQ0, A, POOL1, DEVICE1),
            device_allocation_result(REQ1_SUB_REQ1, A, POOL2, DEVICE2),
        )
    ],
)
CASES["prioritized-list-subrequests-with-allocation-mode-all"] = Case(
    features=F(prioritized_list=True),
    claims=[
        claim(CLAIM0).with_requests(
            request_with_prioritized_list(
                REQ0, sub_request(SUB_REQ0, CLASS_A, 0).with_allocation_mode("All"), sub_request(SUB_REQ1, CLASS_A, 1)
            )
        )
    ],
    classes=[device_class(CLASS_A, A)],
    slices=_TWO_DEVICES,
    allocated=[(A, POOL1, DEVICE1)],
    expect=[allocation_result(LOCAL1, device_allocation_result(REQ0_SUB_REQ1, A, POOL1, DEVICE2))],
)
CASES["prioritized-list-allocation-mode-all-multiple-requests"] = Case(
    features=F(prioritized_list=True),
    claims=[
        claim(CLAIM0).with_requests(
            request(REQ0, CLASS_A, 1),
            request_with_prioritized_list(
                REQ1, sub_request(SUB_REQ0, CLASS_A, 0).with_allocation_mode("All"), sub_request(SUB_REQ1, CLASS_A, 1)
            ),
        )
    ],
    classes=[device_class(CLASS_A, A)],
    slices=_TWO_DEVICES,
    expect=[
        allocation_result(
            LOCAL1,
            device_allocation_result(REQ0, A, POOL1, DEVICE1),
            device_allocation_result(REQ1_SUB_REQ1, A, POOL1, DEVICE2),
        )
    ],
)
CASES["prioritized-list-disabled"] = Case(
    features=F(prioritized_list=False),
    claims=[claim(CLAIM0).with_requests(request_with_prioritized_list(REQ0, sub_request(SUB_REQ0, CLASS_A, 1)))],
    classes=[device_class(CLASS_A, A)],
    slices=[slice_with_one_device(SLICE1, NODE1, POOL1, A)],
    error="claim claim-0, request req-0: has subrequests, but the DRAPrioritizedList feature is disabled",
)
_EIGHT_FOUR = [
    slice_with_devices(SLICE1, NODE1, POOL1, A, device(DEVICE1, {"memory": "8Gi"}, {})),
    slice_with_devices(SLICE2, NODE1, POOL2, A, device(DEVICE2, {"memory": "4Gi"}, {})),
]
CASES["prioritized-list-multi-request"] = Case(
    features=F(prioritized_list=True),
    claims=[
        claim(CLAIM0).with_requests(
            request(REQ1, CLASS_A, 1).with_selectors(mem(8)),
            request_with_prioritized_list(
                REQ0, sub_request(SUB_REQ0, CLASS_A, 1, mem(8)), sub_request(SUB_REQ1, CLASS_A, 1, mem(4))
            ),
        )
    ],
    classes=[device_class(CLASS_A, A)],
    slices=_EIGHT_FOUR,
    expect=[
        allocation_result(
            LOCAL1,
            device_allocation_result(REQ1, A, POOL1, DEVICE1),
            device_allocation_result(REQ0_SUB_REQ1, A, POOL2, DEVICE2),
        )
    ],
)
CASES["prioritized-list-with-backtracking"] = Case(
    features=F(prioritized_list=True),
    claims=[
        claim(CLAIM0).with_requests(
            request_with_prioritized_list(
                REQ0, sub_request(SUB_REQ0, CLASS_A, 1, mem(8)), sub_request(SUB_REQ1, CLASS_A, 1, mem(4))
            ),
            request(REQ1, CLASS_A, 1).with_selectors(mem(8)),
        )
    ],
    classes=[device_class(CLASS_A, A)],
    slices=_EIGHT_FOUR,
    expect=[
        allocation_result(
            LOCAL1,
            device_allocation_result(REQ0_SUB_REQ1, A, POOL2, DEVICE2),
            device_allocation_result(REQ1, A, POOL1, DEVICE1),
        )
    ],
)
CASES["prioritized-list-too-many-in-first-subrequest"] = Case(
    features=F(prioritized_list=True),
    claims=[
        claim(CLAIM0).with_requests(
            request_with_prioritized_list(REQ0, sub_request(SUB_REQ0, CLASS_B, 500), sub_request(SUB_REQ1, CLASS_A, 1))
        )
    ],
    classes=[device_class(CLASS_A, A), device_class(CLASS_B, DRIVER_B)],
    slices=[slice_with_one_device(SLICE1, NODE1, POOL1, A)],
    expect=[allocation_result(LOCAL1, device_allocation_result(REQ0_SUB_REQ1, A, POOL1, DEVICE1))],
)


def _dcc(counter_set_name: str, **values: str) -> dict[str, Any]:
    return device_counter_consumption(counter_set_name, dict(values))


def _partitioned(
    pool: str,
    count: int,
    *devices: Any,
    counter_sets: list[dict[str, Any]],
    driver: str = A,
    names: tuple[str, str] = (SLICE1, SLICE2),
) -> list[dict[str, Any]]:
    """A device slice and a counter-set slice of one pool on node-1."""
    return [
        slice_with_devices(names[0], NODE1, resource_pool(pool, count), driver, *devices),
        slice_with_counter_sets(names[1], NODE1, resource_pool(pool, count), driver, *counter_sets),
    ]


CASES["partitionable-devices-single-device"] = Case(
    features=F(partitionable_devices=True),
    claims=[claim_with_requests(CLAIM0, None, request(REQ0, CLASS_A, 1))],
    classes=[device_class(CLASS_A, A)],
    slices=_partitioned(
        POOL1,
        2,
        device(DEVICE1).with_device_counter_consumption(_dcc(COUNTER_SET1, memory="4Gi")),
        counter_sets=[counter_set(COUNTER_SET1, counters(memory="8Gi"))],
    ),
    expect=[allocation_result(LOCAL1, device_allocation_result(REQ0, A, POOL1, DEVICE1))],
)
CASES["partitionable-devices-taint-releases-counter"] = Case(
    features=F(partitionable_devices=True, device_taints=True),
    claims=[claim_with_requests(CLAIM0, None, request(REQ0, CLASS_A, 1))],
    classes=[device_class(CLASS_A, A)],
    slices=_partitioned(
        POOL1,
        2,
        device(DEVICE1).with_taints(TAINT_NO_SCHEDULE).with_device_counter_consumption(_dcc(COUNTER_SET1, c="1")),
        device(DEVICE2).with_device_counter_consumption(_dcc(COUNTER_SET1, c="1")),
        counter_sets=[counter_set(COUNTER_SET1, counters(c="1"))],
    ),
    expect=[allocation_result(LOCAL1, device_allocation_result(REQ0, A, POOL1, DEVICE2))],
)
CASES["partitionable-devices-constraint-releases-counter"] = Case(
    features=F(partitionable_devices=True),
    claims=[claim_with_requests(CLAIM0, [match_attribute(STRING_ATTRIBUTE)], request(REQ0, CLASS_A, 2))],
    classes=[device_class(CLASS_A, A)],
    slices=_partitioned(
        POOL1,
        2,
        *(
            device(name, None, {"stringAttribute": string_attr(color)}).with_device_counter_consumption(
                _dcc(COUNTER_SET1, c="1")
            )
            for name, color in ((DEVICE1, "red"), (DEVICE2, "blue"), (DEVICE3, "blue"))
        ),
        counter_sets=[counter_set(COUNTER_SET1, counters(c="2"))],
    ),
    expect=[
        allocation_result(
            LOCAL1,
            device_allocation_result(REQ0, A, POOL1, DEVICE2),
            device_allocation_result(REQ0, A, POOL1, DEVICE3),
        )
    ],
)
CASES["partitionable-consumable-capacity-backtrack-releases-counter"] = Case(
    features=F(partitionable_devices=True, consumable_capacity=True),
    claims=[
        claim_with_requests(
            CLAIM0,
            None,
            request(REQ0, CLASS_A, 1, attr_is("kind", "shared")),
            request(REQ1, CLASS_A, 1, attr_is("kind", "counteronly")),
        )
    ],
    classes=[device_class(CLASS_A, A)],
    slices=_partitioned(
        POOL1,
        2,
        device(DEVICE1, None, {"kind": string_attr("shared")})
        .with_allow_multiple_allocations()
        .with_device_counter_consumption(_dcc(COUNTER_SET1, c="1")),
        device(DEVICE2, None, {"kind": string_attr("shared")}),
        device(DEVICE3, None, {"kind": string_attr("counteronly")}).with_device_counter_consumption(
            _dcc(COUNTER_SET1, c="1")
        ),
        counter_sets=[counter_set(COUNTER_SET1, counters(c="1"))],
    ),
    expect=[
        allocation_result(
            LOCAL1,
            device_allocation_result(REQ0, A, POOL1, DEVICE2),
            device_allocation_result(REQ1, A, POOL1, DEVICE3),
        )
    ],
)
CASES["consumable-capacity-rejection-rolls-back-constraints"] = Case(
    features=F(consumable_capacity=True, prioritized_list=True),
    claims=[
        claim(CLAIM0).with_requests(
            request(REQ0, CLASS_A, 1).with_capacity_request(TWO).with_selectors(attr_is("stringAttribute", "cap"))
        ),
        claim(CLAIM1)
        .with_constraints(match_attribute(STRING_ATTRIBUTE))
        .with_requests(
            request_with_prioritized_list(
                REQ0,
                sub_request(SUB_REQ0, CLASS_A, 1, attr_is("stringAttribute", "cap"))
                .with_allocation_mode("All")
                .with_capacity_request(TWO),
                sub_request(SUB_REQ1, CLASS_A, 1, attr_is("stringAttribute", "fb")),
            )
        ),
    ],
    classes=[device_class(CLASS_A, A)],
    slices=[
        slice_with_devices(
            SLICE1,
            NODE1,
            POOL1,
            A,
            device(
                DEVICE1, {CAPACITY0: TWO}, {"stringAttribute": string_attr("cap")}
            ).with_allow_multiple_allocations(),
            device(DEVICE2, None, {"stringAttribute": string_attr("fb")}),
        )
    ],
    expect=[
        allocation_result(
            LOCAL1,
            device_request_allocation_result(REQ0, A, POOL1, DEVICE1).with_consumed_capacity(
                FIXED_SHARE_ID, {CAPACITY0: TWO}
            ),
        ),
        allocation_result(LOCAL1, device_allocation_result(REQ0_SUB_REQ1, A, POOL1, DEVICE2)),
    ],
)
CASES["partitionable-empty-capacity-multiple-share-backtrack-keeps-counter-ownership"] = Case(
    features=F(partitionable_devices=True, consumable_capacity=True),
    claims=[
        claim_with_requests(CLAIM0, None, request(REQ0, CLASS_A, 1, attr_is("kind", "shared"))),
        claim_with_requests(
            CLAIM1,
            [match_attribute(STRING_ATTRIBUTE, REQ1, REQ2)],
            request(
                REQ1,
                CLASS_A,
                1,
                cel(f'device.attributes["{A}"].kind == "shared" || device.attributes["{A}"].kind == "fallback"'),
            ),
            request(REQ2, CLASS_A, 1, attr_is("kind", "gate")),
            request(REQ3, CLASS_A, 1, attr_is("kind", "shared")),
        ),
    ],
    classes=[device_class(CLASS_A, A)],
    slices=_partitioned(
        POOL1,
        2,
        device(DEVICE1, None, {"kind": string_attr("shared"), "stringAttribute": string_attr("red")})
        .with_allow_multiple_allocations()
        .with_device_counter_consumption(_dcc(COUNTER_SET1, c="1")),
        device(DEVICE2, None, {"kind": string_attr("fallback"), "stringAttribute": string_attr("blue")}),
        device(DEVICE3, None, {"kind": string_attr("gate"), "stringAttribute": string_attr("blue")}),
        counter_sets=[counter_set(COUNTER_SET1, counters(c="1"))],
    ),
    expect=[
        allocation_result(
            LOCAL1,
            device_request_allocation_result(REQ0, A, POOL1, DEVICE1).with_consumed_capacity(FIXED_SHARE_ID, None),
        ),
        allocation_result(
            LOCAL1,
            device_allocation_result(REQ1, A, POOL1, DEVICE2),
            device_allocation_result(REQ2, A, POOL1, DEVICE3),
            device_request_allocation_result(REQ3, A, POOL1, DEVICE1).with_consumed_capacity(FIXED_SHARE_ID, None),
        ),
    ],
)
_THREE_PARTITIONS = [
    device(DEVICE1, FROM_COUNTERS).with_device_counter_consumption(_dcc(COUNTER_SET1, memory="4Gi")),
    device(DEVICE2, FROM_COUNTERS).with_device_counter_consumption(_dcc(COUNTER_SET1, memory="6Gi")),
    device(DEVICE3, FROM_COUNTERS).with_device_counter_consumption(_dcc(COUNTER_SET1, memory="4Gi")),
]
_REQ_AND_6_OR_4 = claim(CLAIM0).with_requests(
    request(REQ0, CLASS_A, 1),
    request_with_prioritized_list(
        REQ1, sub_request(SUB_REQ0, CLASS_A, 1, mem(6)), sub_request(SUB_REQ1, CLASS_A, 1, mem(4))
    ),
)
CASES["partitionable-devices-prioritized-list"] = Case(
    features=F(prioritized_list=True, partitionable_devices=True),
    claims=[_REQ_AND_6_OR_4],
    classes=[device_class(CLASS_A, A)],
    slices=_partitioned(POOL1, 2, *_THREE_PARTITIONS, counter_sets=[counter_set(COUNTER_SET1, counters(memory="8Gi"))]),
    expect=[
        allocation_result(
            LOCAL1,
            device_allocation_result(REQ0, A, POOL1, DEVICE1),
            device_allocation_result(REQ1_SUB_REQ1, A, POOL1, DEVICE3),
        )
    ],
)
CASES["partitionable-devices-multiple-devices"] = Case(
    features=F(partitionable_devices=True),
    claims=[claim_with_requests(CLAIM0, None, request(REQ0, CLASS_A, 1), request(REQ1, CLASS_A, 1))],
    classes=[device_class(CLASS_A, A)],
    slices=_partitioned(POOL1, 2, *_THREE_PARTITIONS, counter_sets=[counter_set(COUNTER_SET1, counters(memory="8Gi"))]),
    expect=[
        allocation_result(
            LOCAL1,
            device_allocation_result(REQ0, A, POOL1, DEVICE1),
            device_allocation_result(REQ1, A, POOL1, DEVICE3),
        )
    ],
)
CASES["partitionable-devices-multiple-capacity-pools"] = Case(
    features=F(prioritized_list=True, partitionable_devices=True),
    claims=[_REQ_AND_6_OR_4],
    classes=[device_class(CLASS_A, A)],
    slices=_partitioned(
        POOL1,
        2,
        *(
            device(name, FROM_COUNTERS).with_device_counter_consumption(
                _dcc(COUNTER_SET1, memory=f"{n}Gi"), _dcc(COUNTER_SET2, cpus=str(n))
            )
            for name, n in ((DEVICE1, 4), (DEVICE2, 6), (DEVICE3, 4))
        ),
        counter_sets=[
            counter_set(COUNTER_SET1, counters(memory="18Gi")),
            counter_set(COUNTER_SET2, counters(cpus="8")),
        ],
    ),
    expect=[
        allocation_result(
            LOCAL1,
            device_allocation_result(REQ0, A, POOL1, DEVICE1),
            device_allocation_result(REQ1_SUB_REQ1, A, POOL1, DEVICE3),
        )
    ],
)
CASES["partitionable-devices-multiple-counters"] = Case(
    features=F(partitionable_devices=True),
    claims=[claim_with_requests(CLAIM0, None, request(REQ0, CLASS_A, 1), request(REQ1, CLASS_A, 1))],
    classes=[device_class(CLASS_A, A)],
    slices=_partitioned(
        POOL1,
        2,
        device(DEVICE1, FROM_COUNTERS).with_device_counter_consumption(
            _dcc(COUNTER_SET1, memory="4Gi", cpus="6"), _dcc(COUNTER_SET2, cpus="4", memory="2Gi")
        ),
        device(DEVICE2, FROM_COUNTERS).with_device_counter_consumption(
            _dcc(COUNTER_SET1, memory="6Gi", cpus="4"), _dcc(COUNTER_SET2, cpus="6", memory="6Gi")
        ),
        device(DEVICE3, FROM_COUNTERS).with_device_counter_consumption(
            _dcc(COUNTER_SET1, memory="4Gi", cpus="4"), _dcc(COUNTER_SET2, cpus="4", memory="4Gi")
        ),
        counter_sets=[
            counter_set(COUNTER_SET1, counters(cpus="8", memory="18Gi")),
            counter_set(COUNTER_SET2, counters(cpus="12", memory="18Gi")),
        ],
    ),
    expect=[
        allocation_result(
            LOCAL1,
            device_allocation_result(REQ0, A, POOL1, DEVICE2),
            device_allocation_result(REQ1, A, POOL1, DEVICE3),
        )
    ],
)
CASES["partitionable-devices-multiple-pools"] = Case(
    features=F(partitionable_devices=True),
    claims=[claim_with_requests(CLAIM0, None, request(REQ0, CLASS_A, 1), request(REQ1, CLASS_A, 1))],
    classes=[device_class(CLASS_A, A)],
    slices=[
        *_partitioned(
            POOL1,
            2,
            device(DEVICE1, FROM_COUNTERS).with_device_counter_consumption(_dcc(COUNTER_SET1, cpus="6", memory="4Gi")),
            device(DEVICE2, FROM_COUNTERS).with_device_counter_consumption(_dcc(COUNTER_SET1, cpus="4", memory="6Gi")),
            device(DEVICE3, FROM_COUNTERS).with_device_counter_consumption(_dcc(COUNTER_SET1, cpus="4", memory="4Gi")),
            counter_sets=[counter_set(COUNTER_SET1, counters(cpus="8", memory="18Gi"))],
        ),
        *_partitioned(
            POOL2,
            2,
            device(DEVICE1, FROM_COUNTERS).with_device_counter_consumption(_dcc(COUNTER_SET1, cpus="6", memory="4Gi")),
            device(DEVICE2, FROM_COUNTERS).with_device_counter_consumption(_dcc(COUNTER_SET1, cpus="1", memory="7Gi")),
            device(DEVICE3, FROM_COUNTERS).with_device_counter_consumption(_dcc(COUNTER_SET1, cpus="1", memory="7Gi")),
            counter_sets=[counter_set(COUNTER_SET1, counters(cpus="8", memory="18Gi"))],
            names=(SLICE3, SLICE4),
        ),
    ],
    allocated=[(A, POOL1, DEVICE2), (A, POOL1, DEVICE3), (A, POOL2, DEVICE1)],
    expect=[
        allocation_result(
            LOCAL1,
            device_allocation_result(REQ0, A, POOL2, DEVICE2),
            device_allocation_result(REQ1, A, POOL2, DEVICE3),
        )
    ],
)
CASES["partitionable-devices-unused-counters-in-counter-set"] = Case(
    features=F(partitionable_devices=True),
    claims=[claim_with_requests(CLAIM0, None, request(REQ0, CLASS_A, 2))],
    classes=[device_class(CLASS_A, A)],
    slices=_partitioned(
        POOL1,
        2,
        device(DEVICE1).with_device_counter_consumption(_dcc(COUNTER_SET1, memory="5Gi")),
        device(DEVICE2).with_device_counter_consumption(_dcc(COUNTER_SET1, memory="4Gi")),
        device(DEVICE3).with_device_counter_consumption(_dcc(COUNTER_SET1, memory="4Gi")),
        counter_sets=[counter_set(COUNTER_SET1, counters(memory="8Gi", unused="1Gi"))],
    ),
    expect=[
        allocation_result(
            LOCAL1,
            device_allocation_result(REQ0, A, POOL1, DEVICE2),
            device_allocation_result(REQ0, A, POOL1, DEVICE3),
        )
    ],
)


def _one_slice_pool_with_counters(*devices: Any, memory: str) -> list[dict[str, Any]]:
    """Upstream's variant where both slices claim resourceSliceCount 1 (so the pool is incomplete)."""
    return [
        slice_with_devices(SLICE1, NODE1, POOL1, A, *devices),
        slice_with_counter_sets(SLICE2, NODE1, POOL1, A, counter_set(COUNTER_SET1, counters(memory=memory))),
    ]


CASES["partitionable-devices-no-capacity-available"] = Case(
    features=F(partitionable_devices=True),
    claims=[claim_with_requests(CLAIM0, None, request(REQ0, CLASS_A, 1))],
    classes=[device_class(CLASS_A, A)],
    slices=_one_slice_pool_with_counters(
        device(DEVICE1, FROM_COUNTERS).with_device_counter_consumption(_dcc(COUNTER_SET1, memory="4Gi")),
        device(DEVICE2, FROM_COUNTERS).with_device_counter_consumption(_dcc(COUNTER_SET1, memory="16Gi")),
        memory="18Gi",
    ),
    allocated=[(A, POOL1, DEVICE2)],
)
CASES["partitionable-devices-overallocated-capacity-pool"] = Case(
    features=F(partitionable_devices=True),
    claims=[claim_with_requests(CLAIM0, None, request(REQ0, CLASS_A, 1))],
    classes=[device_class(CLASS_A, A)],
    slices=_one_slice_pool_with_counters(
        device(DEVICE1, FROM_COUNTERS).with_device_counter_consumption(_dcc(COUNTER_SET1, memory="4Gi")),
        device(DEVICE2, FROM_COUNTERS).with_device_counter_consumption(_dcc(COUNTER_SET1, memory="20Gi")),
        memory="18Gi",
    ),
    allocated=[(A, POOL1, DEVICE2)],
)
CASES["partitionable-devices-disabled-device-consumes-counters"] = Case(
    features=F(partitionable_devices=False),
    claims=[claim_with_requests(CLAIM0, None, request(REQ0, CLASS_A, 1))],
    classes=[device_class(CLASS_A, A)],
    slices=_one_slice_pool_with_counters(
        device(DEVICE1).with_device_counter_consumption(_dcc(COUNTER_SET1, memory="4Gi")), memory="18Gi"
    ),
)
CASES["partitionable-devices-disabled-other-device-do-not-consume-counters"] = Case(
    features=F(partitionable_devices=False),
    claims=[claim_with_requests(CLAIM0, None, request(REQ0, CLASS_A, 1))],
    classes=[device_class(CLASS_A, A)],
    slices=_partitioned(
        POOL1,
        2,
        device(DEVICE1).with_device_counter_consumption(_dcc(COUNTER_SET1, memory="4Gi")),
        device(DEVICE2),
        counter_sets=[counter_set(COUNTER_SET1, counters(memory="18Gi"))],
    ),
    expect=[allocation_result(LOCAL1, device_allocation_result(REQ0, A, POOL1, DEVICE2))],
)
CASES["partitionable-devices-disabled-per-device-node-selection"] = Case(
    features=F(partitionable_devices=False),
    claims=[claim_with_requests(CLAIM0, None, request(REQ0, CLASS_A, 1))],
    classes=[device_class(CLASS_A, A)],
    slices=[
        slice_with_devices(SLICE1, NODE_SELECTION_PER_DEVICE, POOL1, A, device(DEVICE2).with_node_selection(NODE1))
    ],
)


def _per_device(*devices: Any, memory: str = "18Gi") -> list[dict[str, Any]]:
    return [
        slice_with_devices(SLICE1, NODE_SELECTION_PER_DEVICE, resource_pool(POOL1, 2), A, *devices),
        slice_with_counter_sets(
            SLICE2,
            NODE_SELECTION_PER_DEVICE,
            resource_pool(POOL1, 2),
            A,
            counter_set(COUNTER_SET1, counters(memory=memory)),
        ),
    ]


CASES["partitionable-devices-per-device-node-selection-nodename"] = Case(
    features=F(partitionable_devices=True, prioritized_list=True),
    claims=[
        claim(CLAIM0).with_requests(
            request_with_prioritized_list(
                REQ0, sub_request(SUB_REQ0, CLASS_A, 1, mem(6)), sub_request(SUB_REQ1, CLASS_A, 1, mem(4))
            )
        )
    ],
    classes=[device_class(CLASS_A, A)],
    slices=_per_device(
        device(DEVICE1, FROM_COUNTERS)
        .with_device_counter_consumption(_dcc(COUNTER_SET1, memory="4Gi"))
        .with_node_selection(NODE1),
        device(DEVICE2, FROM_COUNTERS)
        .with_device_counter_consumption(_dcc(COUNTER_SET1, memory="6Gi"))
        .with_node_selection(NODE2),
    ),
    expect=[allocation_result(LOCAL1, device_allocation_result(REQ0_SUB_REQ1, A, POOL1, DEVICE1))],
)
CASES["partitionable-devices-per-device-node-selection-node-selector"] = Case(
    features=F(partitionable_devices=True, prioritized_list=True),
    claims=[claim_with_requests(CLAIM0, None, request(REQ0, CLASS_A, 1))],
    classes=[device_class(CLASS_A, A)],
    slices=_per_device(
        device(DEVICE1, FROM_COUNTERS)
        .with_device_counter_consumption(_dcc(COUNTER_SET1, memory="4Gi"))
        .with_node_selection(node_label_selector(REGION_KEY, REGION1))
    ),
    expect=[
        allocation_result(node_label_selector(REGION_KEY, REGION1), device_allocation_result(REQ0, A, POOL1, DEVICE1))
    ],
)
CASES["partitionable-devices-per-device-node-selection-node-selector-multiple-devices"] = Case(
    features=F(partitionable_devices=True, prioritized_list=True),
    claims=[claim_with_requests(CLAIM0, None, request(REQ0, CLASS_A, 3), request(REQ1, CLASS_B, 3))],
    classes=[device_class(CLASS_A, A), device_class(CLASS_B, DRIVER_B)],
    slices=[
        *_per_device(
            device(DEVICE1, FROM_COUNTERS)
            .with_device_counter_consumption(_dcc(COUNTER_SET1, memory="4Gi"))
            .with_node_selection(node_label_selector(REGION_KEY, REGION1)),
            device(DEVICE2, FROM_COUNTERS)
            .with_device_counter_consumption(_dcc(COUNTER_SET1, memory="4Gi"))
            .with_node_selection(NODE1),
            device(DEVICE3, FROM_COUNTERS)
            .with_device_counter_consumption(_dcc(COUNTER_SET1, memory="4Gi"))
            .with_node_selection(NODE_SELECTION_ALL),
        ),
        *_partitioned(
            POOL2,
            2,
            *(
                device(name, FROM_COUNTERS).with_device_counter_consumption(_dcc(COUNTER_SET2, memory="4Gi"))
                for name in (DEVICE1, DEVICE2, DEVICE3)
            ),
            counter_sets=[counter_set(COUNTER_SET2, counters(memory="12Gi"))],
            driver=DRIVER_B,
            names=(SLICE3, SLICE4),
        ),
    ],
    expect=[
        allocation_result(
            LOCAL1,
            device_allocation_result(REQ0, A, POOL1, DEVICE1),
            device_allocation_result(REQ0, A, POOL1, DEVICE2),
            device_allocation_result(REQ0, A, POOL1, DEVICE3),
            device_allocation_result(REQ1, DRIVER_B, POOL2, DEVICE1),
            device_allocation_result(REQ1, DRIVER_B, POOL2, DEVICE2),
            device_allocation_result(REQ1, DRIVER_B, POOL2, DEVICE3),
        )
    ],
)


_TAINTED_TWO = [
    slice_with_devices(
        SLICE1,
        NODE1,
        POOL1,
        A,
        device(DEVICE1).with_taints(TAINT_NO_SCHEDULE),
        device(DEVICE2).with_taints(TAINT_NO_EXECUTE),
    )
]
CASES["tainted-two-devices"] = Case(
    features=F(device_taints=True),
    claims=[claim_with_request(CLAIM0, REQ0, CLASS_A)],
    classes=[device_class(CLASS_A, A)],
    slices=_TAINTED_TWO,
)
CASES["tainted-one-device-two-taints"] = Case(
    features=F(device_taints=True),
    claims=[claim_with_request(CLAIM0, REQ0, CLASS_A)],
    classes=[device_class(CLASS_A, A)],
    slices=[
        slice_with_devices(SLICE1, NODE1, POOL1, A, device(DEVICE1).with_taints(TAINT_NO_SCHEDULE, TAINT_NO_EXECUTE))
    ],
)
CASES["tainted-two-devices-tolerated"] = Case(
    features=F(device_taints=True),
    claims=[claim_with_request(CLAIM0, REQ0, CLASS_A).with_tolerations(TOLERATION_NO_EXECUTE)],
    classes=[device_class(CLASS_A, A)],
    slices=_TAINTED_TWO,
    expect=[allocation_result(LOCAL1, device_allocation_result(REQ0, A, POOL1, DEVICE2, False, TOLERATION_NO_EXECUTE))],
)
CASES["tainted-two-devices-prioritized-list-tolerated"] = Case(
    features=F(device_taints=True, prioritized_list=True),
    claims=[
        claim(CLAIM0).with_requests(
            request_with_prioritized_list(
                REQ0, sub_request(SUB_REQ0, CLASS_A, 1), sub_request(SUB_REQ1, CLASS_A, 1, TOLERATION_NO_EXECUTE)
            )
        )
    ],
    classes=[device_class(CLASS_A, A)],
    slices=_TAINTED_TWO,
    expect=[
        allocation_result(
            LOCAL1, device_allocation_result(REQ0_SUB_REQ1, A, POOL1, DEVICE2, False, TOLERATION_NO_EXECUTE)
        )
    ],
)
CASES["tainted-no-effect"] = Case(
    features=F(device_taints=True),
    claims=[claim_with_request(CLAIM0, REQ0, CLASS_A)],
    classes=[device_class(CLASS_A, A)],
    slices=[slice_with_devices(SLICE1, NODE1, POOL1, A, device(DEVICE1).with_taints(TAINT_NONE))],
    expect=[allocation_result(LOCAL1, device_allocation_result(REQ0, A, POOL1, DEVICE1))],
)
_TWO_TAINTS = [
    slice_with_devices(SLICE1, NODE1, POOL1, A, device(DEVICE1).with_taints(TAINT_NO_SCHEDULE, TAINT_NO_EXECUTE))
]
CASES["tainted-one-device-two-taints-both-tolerated"] = Case(
    features=F(device_taints=True),
    claims=[claim_with_request(CLAIM0, REQ0, CLASS_A).with_tolerations(TOLERATION_NO_SCHEDULE, TOLERATION_NO_EXECUTE)],
    classes=[device_class(CLASS_A, A)],
    slices=_TWO_TAINTS,
    expect=[
        allocation_result(
            LOCAL1,
            device_allocation_result(REQ0, A, POOL1, DEVICE1, False, TOLERATION_NO_SCHEDULE, TOLERATION_NO_EXECUTE),
        )
    ],
)
CASES["tainted-disabled"] = Case(
    features=F(device_taints=False),
    claims=[claim_with_request(CLAIM0, REQ0, CLASS_A)],
    classes=[device_class(CLASS_A, A)],
    slices=_TWO_TAINTS,
    expect=[allocation_result(LOCAL1, device_allocation_result(REQ0, A, POOL1, DEVICE1))],
)
_B_THEN_A = claim(CLAIM0).with_requests(
    request_with_prioritized_list(REQ0, sub_request(SUB_REQ0, CLASS_B, 1), sub_request(SUB_REQ1, CLASS_A, 1))
)
_ONE_TAINTED = [slice_with_devices(SLICE1, NODE1, POOL1, A, device(DEVICE1).with_taints(TAINT_NO_SCHEDULE))]
CASES["tainted-prioritized-list"] = Case(
    features=F(device_taints=True, prioritized_list=True),
    claims=[_B_THEN_A],
    classes=[device_class(CLASS_A, A), device_class(CLASS_B, DRIVER_B)],
    slices=_ONE_TAINTED,
)
CASES["tainted-prioritized-list-disabled"] = Case(
    features=F(device_taints=False, prioritized_list=True),
    claims=[_B_THEN_A],
    classes=[device_class(CLASS_A, A), device_class(CLASS_B, DRIVER_B)],
    slices=_ONE_TAINTED,
    expect=[allocation_result(LOCAL1, device_allocation_result(REQ0_SUB_REQ1, A, POOL1, DEVICE1))],
)
_ADMIN = claim_with_requests(CLAIM0, None, request(REQ0, CLASS_A, 1).with_admin_access())
CASES["tainted-admin-access"] = Case(
    features=F(device_taints=True, admin_access=True),
    claims=[_ADMIN],
    allocated=[(A, POOL1, DEVICE1), (A, POOL1, DEVICE2)],
    classes=[device_class(CLASS_A, A)],
    slices=_ONE_TAINTED,
)
CASES["tainted-admin-access-disabled"] = Case(
    features=F(device_taints=False, admin_access=True),
    claims=[_ADMIN],
    allocated=[(A, POOL1, DEVICE1), (A, POOL1, DEVICE2)],
    classes=[device_class(CLASS_A, A)],
    slices=_ONE_TAINTED,
    expect=[allocation_result(LOCAL1, device_allocation_result(REQ0, A, POOL1, DEVICE1, True))],
)
CASES["tainted-all-devices-single"] = Case(
    features=F(device_taints=True),
    claims=[_ALL_A],
    classes=[device_class(CLASS_A, A)],
    slices=_ONE_TAINTED,
)
CASES["tainted-all-devices-single-disabled"] = Case(
    features=F(device_taints=False),
    claims=[_ALL_A],
    classes=[device_class(CLASS_A, A)],
    slices=_ONE_TAINTED,
    expect=[allocation_result(LOCAL1, device_allocation_result(REQ0, A, POOL1, DEVICE1))],
)
CASES["prioritized-list-allocation-mode-all"] = Case(
    features=F(prioritized_list=True),
    claims=[
        claim(CLAIM0).with_requests(
            request_with_prioritized_list(
                REQ0, sub_request(SUB_REQ0, CLASS_A, 0).with_allocation_mode("All"), sub_request(SUB_REQ1, CLASS_A, 1)
            )
        )
    ],
    classes=[device_class(CLASS_A, A)],
    slices=_TWO_DEVICES,
    allocated=[(A, POOL1, DEVICE2)],
    expect=[allocation_result(LOCAL1, device_allocation_result(REQ0_SUB_REQ1, A, POOL1, DEVICE1))],
)
_V6_OR_V5_ALL = claim(CLAIM0).with_requests(
    request_with_prioritized_list(
        REQ0,
        sub_request(SUB_REQ0, CLASS_A, 0, attr_is("generation", "v6")).with_allocation_mode("All"),
        sub_request(SUB_REQ1, CLASS_A, 0, attr_is("generation", "v5")).with_allocation_mode("All"),
    )
)
CASES["prioritized-list-allocation-mode-all-with-selectors"] = Case(
    features=F(prioritized_list=True),
    claims=[_V6_OR_V5_ALL],
    classes=[device_class(CLASS_A, A)],
    slices=[slice_with_devices(SLICE1, NODE1, POOL1, A, device(DEVICE1, None, {"generation": string_attr("v5")}))],
    expect=[allocation_result(LOCAL1, device_allocation_result(REQ0_SUB_REQ1, A, POOL1, DEVICE1))],
)
CASES["prioritized-list-allocation-mode-all-with-selectors-multiple-pools"] = Case(
    features=F(prioritized_list=True),
    claims=[_V6_OR_V5_ALL],
    classes=[device_class(CLASS_A, A)],
    slices=[
        slice_with_devices(SLICE1, NODE1, POOL1, A, device(DEVICE1, None, {"generation": string_attr("v5")})),
        slice_with_devices(SLICE2, NODE1, POOL2, A, device(DEVICE1, None, {"generation": string_attr("v5")})),
    ],
    expect=[
        allocation_result(
            LOCAL1,
            device_allocation_result(REQ0_SUB_REQ1, A, POOL1, DEVICE1),
            device_allocation_result(REQ0_SUB_REQ1, A, POOL2, DEVICE1),
        )
    ],
)
CASES["prioritized-list-allocation-mode-all-with-selectors-multiple-pools-across-nodes"] = Case(
    features=F(prioritized_list=True),
    claims=[_V6_OR_V5_ALL],
    classes=[device_class(CLASS_A, A)],
    slices=[
        slice_with_devices(SLICE1, NODE1, POOL1, A, device(DEVICE1, None, {"generation": string_attr("v5")})),
        slice_with_devices(
            SLICE2,
            NODE2,
            POOL2,
            A,
            device(DEVICE1, None, {"generation": string_attr("v5")}),
            device(DEVICE2, None, {"generation": string_attr("v6")}),
        ),
    ],
    expect=[allocation_result(LOCAL1, device_allocation_result(REQ0_SUB_REQ1, A, POOL1, DEVICE1))],
)
_SELECTED_CLASS = {
    "metadata": {"name": CLASS_A},
    "spec": {"selectors": [cel(f'device.driver == "{A}" && device.attributes["{A}"].selected')]},
}
CASES["prioritized-list-allocation-mode-all-with-selectors-deviceclass-subset"] = Case(
    features=F(prioritized_list=True),
    claims=[_V6_OR_V5_ALL],
    classes=[_SELECTED_CLASS],
    slices=[
        slice_with_devices(
            SLICE1,
            NODE1,
            POOL1,
            A,
            device(DEVICE1, None, {"generation": string_attr("v6"), "selected": bool_attr(False)}),
            device(DEVICE2, None, {"generation": string_attr("v5"), "selected": bool_attr(False)}),
            device(DEVICE3, None, {"generation": string_attr("v5"), "selected": bool_attr(True)}),
        )
    ],
    expect=[allocation_result(LOCAL1, device_allocation_result(REQ0_SUB_REQ1, A, POOL1, DEVICE3))],
)
CASES["max-number-devices"] = Case(
    claims=[claim_with_requests(CLAIM0, None, request(REQ0, CLASS_A, MAX_SIZE))],
    classes=[device_class(CLASS_A, A)],
    slices=[slice_with_multiple_devices(SLICE1, NODE1, POOL1, A, MAX_SIZE)],
    expect=[allocation_result(LOCAL1, *multiple_device_allocation_results(REQ0, A, POOL1, MAX_SIZE, 0))],
)
CASES["partitionable-devices-with-attribute-selector"] = Case(
    features=F(partitionable_devices=True),
    claims=[
        claim_with_requests(
            CLAIM0, None, request(REQ0, CLASS_A, 2), request(REQ1, CLASS_A, 1, cel(f'device.attributes["{A}"].special'))
        )
    ],
    classes=[device_class(CLASS_A, A)],
    slices=_partitioned(
        POOL1,
        2,
        *(
            device(name, None, {"special": bool_attr(special)}).with_device_counter_consumption(
                device_counter_consumption(COUNTER_SET1, {cpu: "1"}), _dcc(COUNTER_SET2, mem="10Gi")
            )
            for name, special, cpu in ((DEVICE1, True, "cpu1"), (DEVICE2, False, "cpu2"), (DEVICE3, False, "cpu3"))
        ),
        counter_sets=[
            counter_set(COUNTER_SET1, counters(cpu1="1", cpu2="1", cpu3="1")),
            counter_set(COUNTER_SET2, counters(mem="30Gi")),
        ],
    ),
    expect=[
        allocation_result(
            LOCAL1,
            device_allocation_result(REQ0, A, POOL1, DEVICE2),
            device_allocation_result(REQ0, A, POOL1, DEVICE3),
            device_allocation_result(REQ1, A, POOL1, DEVICE1),
        )
    ],
)
CASES["prioritized-list-max-allocation-limit-request"] = Case(
    features=F(prioritized_list=True),
    claims=[
        claim(CLAIM0).with_requests(
            request_with_prioritized_list(
                REQ0, sub_request(SUB_REQ0, CLASS_A, MAX_SIZE), sub_request(SUB_REQ1, CLASS_A, MAX_SIZE // 2)
            ),
            request_with_prioritized_list(
                REQ1, sub_request(SUB_REQ0, CLASS_A, MAX_SIZE), sub_request(SUB_REQ1, CLASS_A, MAX_SIZE // 2)
            ),
        )
    ],
    classes=[device_class(CLASS_A, A)],
    slices=[slice_with_multiple_devices(SLICE1, NODE1, POOL1, A, MAX_SIZE * 2)],
    expect=[
        allocation_result(
            LOCAL1,
            *multiple_device_allocation_results(REQ0_SUB_REQ1, A, POOL1, MAX_SIZE // 2, 0),
            *multiple_device_allocation_results(REQ1_SUB_REQ1, A, POOL1, MAX_SIZE // 2, MAX_SIZE // 2),
        )
    ],
    invocations=75,
)
CASES["prioritized-list-max-allocation-allocation-mode-all"] = Case(
    features=F(prioritized_list=True),
    claims=[
        claim(CLAIM0).with_requests(
            request_with_prioritized_list(
                REQ0, sub_request(SUB_REQ0, CLASS_A, 0).with_allocation_mode("All"), sub_request(SUB_REQ1, CLASS_A, 2)
            ),
            request(REQ1, CLASS_B, 2),
        )
    ],
    classes=[device_class(CLASS_A, A), device_class(CLASS_B, DRIVER_B)],
    slices=[
        slice_with_multiple_devices(SLICE1, NODE1, POOL1, A, MAX_SIZE - 1),
        slice_with_multiple_devices(SLICE2, NODE1, POOL2, DRIVER_B, 2),
    ],
    expect=[
        allocation_result(
            LOCAL1,
            device_allocation_result(REQ0_SUB_REQ1, A, POOL1, DEVICE0),
            device_allocation_result(REQ0_SUB_REQ1, A, POOL1, DEVICE1),
            device_allocation_result(REQ1, DRIVER_B, POOL2, DEVICE0),
            device_allocation_result(REQ1, DRIVER_B, POOL2, DEVICE1),
        )
    ],
    invocations=42,
)
CASES["device-binding-conditions"] = Case(
    features=F(device_binding_and_status=True),
    claims=[claim_with_requests(CLAIM0, None, request(REQ0, CLASS_A, 1))],
    classes=[device_class(CLASS_A, A)],
    slices=[
        slice_with_devices(
            SLICE1, NODE1, POOL1, A, device(DEVICE1).with_binding_conditions(["IsPrepare"], ["BindingFailed"])
        )
    ],
    expect=[
        allocation_result(
            LOCAL1, result_with_binding_conditions(REQ0, A, POOL1, DEVICE1, ["IsPrepare"], ["BindingFailed"])
        )
    ],
)
CASES["binding-conditions-multiple-devices"] = Case(
    features=F(device_binding_and_status=True),
    claims=[claim_with_requests(CLAIM0, None, request(REQ0, CLASS_A, 2), request(REQ1, CLASS_A, 1))],
    classes=[device_class(CLASS_A, A)],
    slices=[
        slice_with_devices(
            SLICE1,
            NODE1,
            POOL1,
            A,
            device(DEVICE1).with_binding_conditions(["IsPrepare"], ["BindingFailed"]),
            device(DEVICE2).with_binding_conditions(["IsPrepare2"], ["BindingFailed2"]),
            device(DEVICE3).with_binding_conditions(["IsPrepare3"], ["BindingFailed3"]),
        )
    ],
    expect=[
        allocation_result(
            LOCAL1,
            result_with_binding_conditions(REQ0, A, POOL1, DEVICE1, ["IsPrepare"], ["BindingFailed"]),
            result_with_binding_conditions(REQ0, A, POOL1, DEVICE2, ["IsPrepare2"], ["BindingFailed2"]),
            result_with_binding_conditions(REQ1, A, POOL1, DEVICE3, ["IsPrepare3"], ["BindingFailed3"]),
        )
    ],
)
CASES["binding-conditions-with-and-without"] = Case(
    features=F(device_binding_and_status=True),
    claims=[claim_with_requests(CLAIM0, None, request(REQ0, CLASS_A, 1), request(REQ1, CLASS_A, 1))],
    classes=[device_class(CLASS_A, A)],
    slices=[
        slice_with_devices(
            SLICE1,
            NODE1,
            POOL1,
            A,
            device(DEVICE1),
            device(DEVICE2).with_binding_conditions(["IsPrepare"], ["BindingFailed"]),
        )
    ],
    expect=[
        allocation_result(
            LOCAL1,
            device_allocation_result(REQ0, A, POOL1, DEVICE1),
            result_with_binding_conditions(REQ1, A, POOL1, DEVICE2, ["IsPrepare"], ["BindingFailed"]),
        )
    ],
)
CASES["binding-conditions-without-feature-gate"] = Case(
    features=F(device_binding_and_status=False),
    claims=[claim_with_requests(CLAIM0, None, request(REQ0, CLASS_A, 1))],
    classes=[device_class(CLASS_A, A)],
    slices=[
        slice_with_devices(
            SLICE1, NODE1, POOL1, A, device(DEVICE1).with_binding_conditions(["IsPrepare"], ["BindingFailed"])
        )
    ],
)
CASES["node-restriction"] = Case(
    features=F(device_binding_and_status=True),
    claims=[claim_with_request(CLAIM0, REQ0, CLASS_A)],
    classes=[device_class(CLASS_A, A)],
    slices=[
        slice_with_devices(
            SLICE1,
            node_label_selector(PLANET_KEY, PLANET_VALUE_EARTH),
            POOL1,
            A,
            device(DEVICE1).with_binds_to_node(True),
        )
    ],
    expect=[allocation_result(LOCAL1, device_allocation_result(REQ0, A, POOL1, DEVICE1))],
)
CASES["partitionable-devices-with-binding-conditions"] = Case(
    features=F(partitionable_devices=True, device_binding_and_status=True),
    claims=[claim_with_requests(CLAIM0, None, request(REQ0, CLASS_A, 1))],
    classes=[device_class(CLASS_A, A)],
    slices=_partitioned(
        POOL1,
        2,
        device(DEVICE1, FROM_COUNTERS)
        .with_device_counter_consumption(_dcc(COUNTER_SET1, memory="4Gi"))
        .with_binding_conditions(["IsPrepare"], ["BindingFailed"]),
        counter_sets=[counter_set(COUNTER_SET1, counters(memory="8Gi"))],
    ),
    expect=[
        allocation_result(
            LOCAL1, result_with_binding_conditions(REQ0, A, POOL1, DEVICE1, ["IsPrepare"], ["BindingFailed"])
        )
    ],
)
CASES["partitionable-devices-with-binding-conditions-multiple"] = Case(
    features=F(partitionable_devices=True, device_binding_and_status=True),
    claims=[claim_with_requests(CLAIM0, None, request(REQ0, CLASS_A, 2))],
    classes=[device_class(CLASS_A, A)],
    slices=_partitioned(
        POOL1,
        2,
        device(DEVICE1, FROM_COUNTERS)
        .with_device_counter_consumption(_dcc(COUNTER_SET1, memory="4Gi"))
        .with_binding_conditions(["IsPrepare"], ["BindingFailed"]),
        device(DEVICE2, FROM_COUNTERS)
        .with_device_counter_consumption(_dcc(COUNTER_SET1, memory="4Gi"))
        .with_binding_conditions(["IsPrepare2"], ["BindingFailed2"]),
        counter_sets=[counter_set(COUNTER_SET1, counters(memory="8Gi"))],
    ),
    expect=[
        allocation_result(
            LOCAL1,
            result_with_binding_conditions(REQ0, A, POOL1, DEVICE1, ["IsPrepare"], ["BindingFailed"]),
            result_with_binding_conditions(REQ0, A, POOL1, DEVICE2, ["IsPrepare2"], ["BindingFailed2"]),
        )
    ],
)
CASES["partitionable-devices-with-binding-conditions-some-devices-no-conditions"] = Case(
    features=F(partitionable_devices=True, device_binding_and_status=True),
    claims=[claim_with_requests(CLAIM0, None, request(REQ0, CLASS_A, 3))],
    classes=[device_class(CLASS_A, A)],
    slices=_partitioned(
        POOL1,
        2,
        device(DEVICE1, FROM_COUNTERS)
        .with_device_counter_consumption(_dcc(COUNTER_SET1, memory="2Gi"))
        .with_binding_conditions(["IsPrepare"], ["BindingFailed"]),
        device(DEVICE2, FROM_COUNTERS).with_device_counter_consumption(_dcc(COUNTER_SET1, memory="2Gi")),
        device(DEVICE3, FROM_COUNTERS)
        .with_device_counter_consumption(_dcc(COUNTER_SET1, memory="4Gi"))
        .with_binding_conditions(["IsReady"], ["BindingTimeout"]),
        counter_sets=[counter_set(COUNTER_SET1, counters(memory="8Gi"))],
    ),
    expect=[
        allocation_result(
            LOCAL1,
            result_with_binding_conditions(REQ0, A, POOL1, DEVICE1, ["IsPrepare"], ["BindingFailed"]),
            result_with_binding_conditions(REQ0, A, POOL1, DEVICE2, None, None),
            result_with_binding_conditions(REQ0, A, POOL1, DEVICE3, ["IsReady"], ["BindingTimeout"]),
        )
    ],
)
CASES["partitionable-devices-with-binding-conditions-multi-slices"] = Case(
    features=F(partitionable_devices=True, device_binding_and_status=True),
    claims=[claim_with_requests(CLAIM0, None, request(REQ0, CLASS_A, 2))],
    classes=[device_class(CLASS_A, A)],
    slices=[
        slice_with_devices(
            SLICE4,
            NODE1,
            resource_pool(POOL1, 4),
            A,
            device(DEVICE1, FROM_COUNTERS)
            .with_device_counter_consumption(_dcc(COUNTER_SET1, memory="4Gi"))
            .with_binding_conditions(["IsPrepare"], ["BindingFailed"]),
        ),
        slice_with_counter_sets(
            SLICE3, NODE1, resource_pool(POOL1, 4), A, counter_set(COUNTER_SET1, counters(memory="8Gi"))
        ),
        slice_with_devices(
            SLICE2,
            NODE1,
            resource_pool(POOL1, 4),
            A,
            device(DEVICE2, FROM_COUNTERS).with_device_counter_consumption(_dcc(COUNTER_SET2, memory="4Gi")),
        ),
        slice_with_counter_sets(
            SLICE1, NODE1, resource_pool(POOL1, 4), A, counter_set(COUNTER_SET2, counters(memory="8Gi"))
        ),
    ],
    expect=[
        allocation_result(
            LOCAL1,
            result_with_binding_conditions(REQ0, A, POOL1, DEVICE2, None, None),
            result_with_binding_conditions(REQ0, A, POOL1, DEVICE1, ["IsPrepare"], ["BindingFailed"]),
        )
    ],
)
_BC_TAINTED = (
    device(DEVICE1, FROM_COUNTERS)
    .with_device_counter_consumption(_dcc(COUNTER_SET1, memory="4Gi"))
    .with_binding_conditions(["IsPrepare"], ["BindingFailed"])
    .with_taints(TAINT_KEY1)
)
_BC_CLEAN = device(DEVICE2, FROM_COUNTERS).with_device_counter_consumption(_dcc(COUNTER_SET1, memory="4Gi"))
CASES["partitionable-devices-with-binding-conditions-and-taints"] = Case(
    features=F(partitionable_devices=True, device_binding_and_status=True, device_taints=True),
    claims=[claim_with_requests(CLAIM0, None, request(REQ0, CLASS_A, 2))],
    classes=[device_class(CLASS_A, A)],
    slices=_one_slice_pool_with_counters(_BC_TAINTED, _BC_CLEAN, memory="8Gi"),
)
CASES["partitionable-devices-with-binding-conditions-and-taints-tolerated"] = Case(
    features=F(partitionable_devices=True, device_binding_and_status=True, device_taints=True),
    claims=[claim_with_requests(CLAIM0, None, request(REQ0, CLASS_A, 2)).with_tolerations(TOLERATION_NO_SCHEDULE_KEY1)],
    classes=[device_class(CLASS_A, A)],
    slices=_partitioned(
        POOL1, 2, _BC_TAINTED, _BC_CLEAN, counter_sets=[counter_set(COUNTER_SET1, counters(memory="8Gi"))]
    ),
    expect=[
        allocation_result(
            LOCAL1,
            result_with_binding_conditions(
                REQ0, A, POOL1, DEVICE1, ["IsPrepare"], ["BindingFailed"], TOLERATION_NO_SCHEDULE_KEY1
            ),
            result_with_binding_conditions(REQ0, A, POOL1, DEVICE2, None, None, TOLERATION_NO_SCHEDULE_KEY1),
        )
    ],
)


MULTI_A = class_with_allow_multiple_allocations(CLASS_A, A, True)
DEDICATED_A = class_with_allow_multiple_allocations(CLASS_A, A, False)


def shared(req: str, dev: str, consumed: dict[str, str] | None, pool: str = POOL1) -> dict[str, Any]:
    return device_request_allocation_result(req, A, pool, dev).with_consumed_capacity(FIXED_SHARE_ID, consumed)


def one_claim_asking(q: str | None, name: str = CLAIM0) -> dict[str, Any]:
    return claim(name).with_requests(request(REQ0, CLASS_A, 1).with_capacity_request(q))


CASES["consumable-capacity-disabled-feature"] = Case(
    features=F(device_binding_and_status=True),
    claims=[one_claim_asking(ONE)],
    classes=[device_class(CLASS_A, A)],
    slices=[slice_with_one_device(SLICE1, NODE1, POOL1, A)],
    error="claim claim-0, request req-0: has capacity requests, but the DRAConsumableCapacity feature is disabled",
)
CASES["consumable-capacity-disabled-feature-with-prioritized-list"] = Case(
    features=F(prioritized_list=True, device_binding_and_status=True),
    claims=[
        claim(CLAIM0).with_requests(
            request_with_prioritized_list(
                REQ0,
                sub_request(SUB_REQ0, CLASS_A, 1).with_capacity_request(ONE),
                sub_request(SUB_REQ1, CLASS_A, 1).with_capacity_request(ONE),
            )
        )
    ],
    classes=[device_class(CLASS_A, A)],
    slices=[slice_with_one_device(SLICE1, NODE1, POOL1, A)],
    error="claim claim-0, subrequest subReq-0: has capacity requests, "
    "but the DRAConsumableCapacity feature is disabled",
)
CASES["consumable-capacity-multi-allocatable-device-with-missing-capacity-request"] = Case(
    features=F(consumable_capacity=True),
    claims=[one_claim_asking(ONE)],
    classes=[device_class(CLASS_A, A)],
    slices=[
        slice_with_devices(SLICE1, NODE1, POOL1, A, device(DEVICE1, {CAPACITY1: ONE}).with_allow_multiple_allocations())
    ],
)
CASES["consumable-capacity-multi-allocatable-device-allocation-mode-all-with-missing-capacity-request"] = Case(
    features=F(consumable_capacity=True),
    claims=[claim(CLAIM0).with_requests(all_device_request(REQ0, CLASS_A).with_capacity_request(ONE))],
    classes=[MULTI_A],
    slices=[
        slice_with_devices(SLICE1, NODE1, POOL1, A, device(DEVICE1, {CAPACITY1: ONE}).with_allow_multiple_allocations())
    ],
)
_TWO_PLAIN_CLAIMS: list[dict[str, Any]] = [
    claim(CLAIM0).with_requests(request(REQ0, CLASS_A, 1)),
    claim(CLAIM1).with_requests(request(REQ0, CLASS_A, 1)),
]
CASES["consumable-capacity-multi-allocatable-device-without-capacity-without-capacity-request"] = Case(
    features=F(consumable_capacity=True),
    claims=_TWO_PLAIN_CLAIMS,
    classes=[MULTI_A],
    slices=[slice_with_devices(SLICE1, NODE1, POOL1, A, device(DEVICE1).with_allow_multiple_allocations())],
    expect=[
        allocation_result(LOCAL1, shared(REQ0, DEVICE1, None)),
        allocation_result(LOCAL1, shared(REQ0, DEVICE1, None)),
    ],
)
CASES["consumable-capacity-multi-allocatable-device-without-policy-without-capacity-request"] = Case(
    features=F(consumable_capacity=True),
    claims=_TWO_PLAIN_CLAIMS,
    classes=[MULTI_A],
    slices=[
        slice_with_devices(
            SLICE1,
            NODE1,
            POOL1,
            A,
            device(DEVICE1, {CAPACITY0: ONE}).with_allow_multiple_allocations(),
            device(DEVICE2, {CAPACITY0: ONE}).with_allow_multiple_allocations(),
        )
    ],
    expect=[
        allocation_result(LOCAL1, shared(REQ0, DEVICE1, {CAPACITY0: ONE})),
        allocation_result(LOCAL1, shared(REQ0, DEVICE2, {CAPACITY0: ONE})),
    ],
)
CASES["consumable-capacity-multi-allocatable-device-without-policy-without-capacity-request-block"] = Case(
    features=F(consumable_capacity=True),
    claims=_TWO_PLAIN_CLAIMS,
    classes=[MULTI_A],
    slices=[
        slice_with_devices(SLICE1, NODE1, POOL1, A, device(DEVICE1, {CAPACITY0: TWO}).with_allow_multiple_allocations())
    ],
)
CASES["consumable-capacity-multi-allocatable-device-without-policy-with-capacity-request"] = Case(
    features=F(consumable_capacity=True),
    claims=[one_claim_asking(ONE), one_claim_asking(ONE, CLAIM1)],
    classes=[MULTI_A],
    slices=[
        slice_with_devices(SLICE1, NODE1, POOL1, A, device(DEVICE1, {CAPACITY0: TWO}).with_allow_multiple_allocations())
    ],
    expect=[
        allocation_result(LOCAL1, shared(REQ0, DEVICE1, {CAPACITY0: ONE})),
        allocation_result(LOCAL1, shared(REQ0, DEVICE1, {CAPACITY0: ONE})),
    ],
)


def _ranged(name: str, value: str) -> Any:
    return device(name).with_allow_multiple_allocations().with_capacity_request_policy_range({CAPACITY0: value})


CASES["consumable-capacity-multi-allocatable-device-with-policy-without-capacity-request"] = Case(
    features=F(consumable_capacity=True),
    claims=[
        claim_with_requests(CLAIM0, None, request(REQ0, CLASS_A, 1)),
        claim_with_requests(CLAIM1, None, request(REQ0, CLASS_A, 1)),
    ],
    classes=[MULTI_A],
    slices=[slice_with_devices(SLICE1, NODE1, POOL1, A, _ranged(DEVICE1, FOUR))],
    expect=[
        allocation_result(LOCAL1, shared(REQ0, DEVICE1, {CAPACITY0: TWO})),
        allocation_result(LOCAL1, shared(REQ0, DEVICE1, {CAPACITY0: TWO})),
    ],
)
_ZERO_POLICY = (
    device(DEVICE1).with_allow_multiple_allocations().with_capacity_request_policy_valid_values(ZERO, {CAPACITY0: ONE})
)
CASES["consumable-capacity-multi-allocatable-device-with-zero-request-policy"] = Case(
    features=F(consumable_capacity=True),
    claims=[
        claim_with_requests(CLAIM0, None, request(REQ0, CLASS_A, 1)),
        claim_with_requests(CLAIM1, None, request(REQ0, CLASS_A, 1)),
    ],
    classes=[MULTI_A],
    slices=[slice_with_devices(SLICE1, NODE1, POOL1, A, _ZERO_POLICY)],
    expect=[
        allocation_result(LOCAL1, shared(REQ0, DEVICE1, {CAPACITY0: ZERO})),
        allocation_result(LOCAL1, shared(REQ0, DEVICE1, {CAPACITY0: ZERO})),
    ],
)
CASES["consumable-capacity-multi-allocatable-device-violates-zero-request-policy"] = Case(
    features=F(consumable_capacity=True),
    claims=[one_claim_asking(ONE)],
    classes=[MULTI_A],
    slices=[slice_with_devices(SLICE1, NODE1, POOL1, A, _ZERO_POLICY)],
)
CASES["consumable-capacity-multi-allocatable-device-with-range-policy-with-capacity-request"] = Case(
    features=F(consumable_capacity=True),
    claims=[one_claim_asking(ONE), one_claim_asking(ONE, CLAIM1)],
    classes=[MULTI_A],
    slices=[slice_with_devices(SLICE1, NODE1, POOL1, A, _ranged(DEVICE1, FOUR))],
    expect=[
        allocation_result(LOCAL1, shared(REQ0, DEVICE1, {CAPACITY0: TWO})),
        allocation_result(LOCAL1, shared(REQ0, DEVICE1, {CAPACITY0: TWO})),
    ],
)
CASES["consumable-capacity-multi-allocatable-device-with-range-policy-step"] = Case(
    features=F(consumable_capacity=True),
    claims=[one_claim_asking(THREE)],
    classes=[MULTI_A],
    slices=[slice_with_devices(SLICE1, NODE1, POOL1, A, _ranged(DEVICE1, FOUR))],
    expect=[allocation_result(LOCAL1, shared(REQ0, DEVICE1, {CAPACITY0: FOUR}))],
)
CASES["consumable-capacity-multi-allocatable-device-with-valid-values-policy"] = Case(
    features=F(consumable_capacity=True),
    claims=[one_claim_asking(TWO)],
    classes=[MULTI_A],
    slices=[
        slice_with_devices(
            SLICE1,
            NODE1,
            POOL1,
            A,
            device(DEVICE1)
            .with_allow_multiple_allocations()
            .with_capacity_request_policy_valid_values(ONE, {CAPACITY0: FOUR}, [TWO]),
        )
    ],
    expect=[allocation_result(LOCAL1, shared(REQ0, DEVICE1, {CAPACITY0: TWO}))],
)
CASES["consumable-capacity-multi-allocatable-device-with-valid-values-policy-round-up"] = Case(
    features=F(consumable_capacity=True),
    claims=[one_claim_asking(TWO)],
    classes=[MULTI_A],
    slices=[
        slice_with_devices(
            SLICE1,
            NODE1,
            POOL1,
            A,
            device(DEVICE1)
            .with_allow_multiple_allocations()
            .with_capacity_request_policy_valid_values(ONE, {CAPACITY0: THREE}, [THREE]),
        )
    ],
    expect=[allocation_result(LOCAL1, shared(REQ0, DEVICE1, {CAPACITY0: THREE}))],
)
CASES["consumable-capacity-multi-allocatable-device-with-exceeded-consumable-capacity-request"] = Case(
    features=F(consumable_capacity=True),
    claims=[one_claim_asking(ONE), one_claim_asking(TWO, CLAIM1)],
    classes=[MULTI_A],
    slices=[slice_with_devices(SLICE1, NODE1, POOL1, A, _ranged(DEVICE1, TWO))],
)
CASES["consumable-capacity-multi-allocatable-device-with-request-over-max-sharing-policy"] = Case(
    features=F(consumable_capacity=True),
    claims=[one_claim_asking("6")],
    classes=[MULTI_A],
    slices=[slice_with_devices(SLICE1, NODE1, POOL1, A, _ranged(DEVICE1, "10"))],
)
CASES["consumable-capacity-multi-allocatable-device-with-allocated-capacity-use-remaining"] = Case(
    features=F(consumable_capacity=True),
    claims=[one_claim_asking(TWO)],
    allocated_capacity={(A, POOL1, DEVICE1): {CAPACITY0: TWO}},
    classes=[MULTI_A],
    slices=[slice_with_devices(SLICE1, NODE1, POOL1, A, _ranged(DEVICE1, FOUR))],
    expect=[allocation_result(LOCAL1, shared(REQ0, DEVICE1, {CAPACITY0: TWO}))],
)
CASES["consumable-capacity-multi-allocatable-device-with-allocated-capacity-next-device"] = Case(
    features=F(consumable_capacity=True),
    claims=[one_claim_asking(TWO)],
    allocated_capacity={(A, POOL1, DEVICE1): {CAPACITY0: TWO}},
    classes=[MULTI_A],
    slices=[slice_with_devices(SLICE1, NODE1, POOL1, A, _ranged(DEVICE1, TWO), _ranged(DEVICE2, TWO))],
    expect=[allocation_result(LOCAL1, shared(REQ0, DEVICE2, {CAPACITY0: TWO}))],
)
CASES["consumable-capacity-with-multi-allocatable-device-backtrack"] = Case(
    features=F(consumable_capacity=True),
    claims=[
        claim(CLAIM0)
        .with_constraints(match_attribute(STRING_ATTRIBUTE))
        .with_requests(
            request(REQ0, CLASS_A, 1).with_capacity_request(TWO), request(REQ1, CLASS_A, 1).with_capacity_request(TWO)
        ),
        one_claim_asking(TWO, CLAIM1),
    ],
    classes=[device_class(CLASS_A, A)],
    slices=[
        slice_with_devices(
            SLICE1,
            NODE1,
            POOL1,
            A,
            device(DEVICE2, None, {"stringAttribute": string_attr("stringAttributeValue1")})
            .with_allow_multiple_allocations()
            .with_capacity_request_policy_range({CAPACITY0: TWO}),
            device(DEVICE1, None, {"stringAttribute": string_attr("stringAttributeValue2")})
            .with_allow_multiple_allocations()
            .with_capacity_request_policy_range({CAPACITY0: FOUR}),
        )
    ],
    expect=[
        allocation_result(LOCAL1, shared(REQ0, DEVICE1, {CAPACITY0: TWO}), shared(REQ1, DEVICE1, {CAPACITY0: TWO})),
        allocation_result(LOCAL1, shared(REQ0, DEVICE2, {CAPACITY0: TWO})),
    ],
)
CASES["consumable-capacity-multi-allocatable-device-with-subrequest"] = Case(
    features=F(consumable_capacity=True, prioritized_list=True),
    claims=[
        claim(CLAIM0).with_requests(
            request_with_prioritized_list(
                REQ0,
                sub_request(SUB_REQ0, CLASS_A, 1).with_capacity_request(FOUR),
                sub_request(SUB_REQ1, CLASS_A, 1).with_capacity_request(TWO),
                sub_request(SUB_REQ1, CLASS_A, 1),
            )
        )
    ],
    classes=[MULTI_A],
    slices=[slice_with_devices(SLICE1, NODE1, POOL1, A, _ranged(DEVICE1, TWO))],
    expect=[allocation_result(LOCAL1, shared(REQ0_SUB_REQ1, DEVICE1, {CAPACITY0: TWO}))],
)
CASES["consumable-capacity-multi-allocatable-device-with-no-available-consumable-capacity"] = Case(
    features=F(consumable_capacity=True),
    claims=[one_claim_asking(TWO)],
    allocated_capacity={(A, POOL1, DEVICE1): {CAPACITY0: TWO}},
    classes=[MULTI_A],
    slices=[slice_with_devices(SLICE1, NODE1, POOL1, A, _ranged(DEVICE1, TWO))],
)
_ALL_ASKING_TWO = claim(CLAIM0).with_requests(all_device_request(REQ0, CLASS_A).with_capacity_request(TWO))
CASES["consumable-capacity-multi-allocatable-device-allocation-mode-all-filter-out-no-capacity"] = Case(
    features=F(consumable_capacity=True),
    claims=[_ALL_ASKING_TWO],
    classes=[MULTI_A],
    slices=[
        slice_with_devices(
            SLICE1,
            NODE1,
            POOL1,
            A,
            device(DEVICE1, {CAPACITY0: TWO}).with_allow_multiple_allocations(),
            device(DEVICE2).with_allow_multiple_allocations(),
        )
    ],
    expect=[allocation_result(LOCAL1, shared(REQ0, DEVICE1, {CAPACITY0: TWO}))],
)
CASES["consumable-capacity-multi-allocatable-device-allocation-mode-all-filter-out-insufficient-capacity"] = Case(
    features=F(consumable_capacity=True),
    claims=[_ALL_ASKING_TWO],
    classes=[MULTI_A],
    slices=[
        slice_with_devices(
            SLICE1,
            NODE1,
            POOL1,
            A,
            device(DEVICE1, {CAPACITY0: TWO}).with_allow_multiple_allocations(),
            device(DEVICE2, {CAPACITY0: ONE}).with_allow_multiple_allocations(),
        )
    ],
    expect=[allocation_result(LOCAL1, shared(REQ0, DEVICE1, {CAPACITY0: TWO}))],
)
_ONE_AND_ALL = claim(CLAIM0).with_requests(
    request(REQ0, CLASS_A, 1).with_capacity_request(ONE), all_device_request(REQ1, CLASS_A).with_capacity_request(ONE)
)
_ALL_ASKING_ONE = claim(CLAIM0).with_requests(all_device_request(REQ0, CLASS_A).with_capacity_request(ONE))


def _two_shared(first: str, second: str) -> list[dict[str, Any]]:
    return [
        slice_with_devices(
            SLICE1,
            NODE1,
            POOL1,
            A,
            device(DEVICE1, {CAPACITY0: first}).with_allow_multiple_allocations(),
            device(DEVICE2, {CAPACITY0: second}).with_allow_multiple_allocations(),
        )
    ]


CASES["consumable-capacity-multi-allocatable-device-allocation-mode-all-allocating-sufficient"] = Case(
    features=F(consumable_capacity=True),
    claims=[_ONE_AND_ALL],
    classes=[device_class(CLASS_A, A)],
    slices=_two_shared(TWO, ONE),
    expect=[
        allocation_result(
            LOCAL1,
            shared(REQ0, DEVICE1, {CAPACITY0: ONE}),
            shared(REQ1, DEVICE1, {CAPACITY0: ONE}),
            shared(REQ1, DEVICE2, {CAPACITY0: ONE}),
        )
    ],
)
CASES["consumable-capacity-multi-allocatable-device-allocation-mode-all-in-use-sufficient"] = Case(
    features=F(consumable_capacity=True),
    allocated_capacity={(A, POOL1, DEVICE1): {CAPACITY0: ONE}},
    claims=[_ALL_ASKING_ONE],
    classes=[device_class(CLASS_A, A)],
    slices=_two_shared(TWO, ONE),
    expect=[
        allocation_result(LOCAL1, shared(REQ0, DEVICE1, {CAPACITY0: ONE}), shared(REQ0, DEVICE2, {CAPACITY0: ONE}))
    ],
)
CASES["consumable-capacity-multi-allocatable-device-allocation-mode-all-allocating-insufficient"] = Case(
    features=F(consumable_capacity=True),
    claims=[_ONE_AND_ALL],
    classes=[device_class(CLASS_A, A)],
    slices=_two_shared(ONE, ONE),
)
CASES["consumable-capacity-multi-allocatable-device-allocation-mode-all-in-use-insufficient"] = Case(
    features=F(consumable_capacity=True),
    allocated_capacity={(A, POOL1, DEVICE1): {CAPACITY0: ONE}},
    claims=[_ALL_ASKING_ONE],
    classes=[device_class(CLASS_A, A)],
    slices=_two_shared(ONE, ONE),
    expect=[allocation_result(LOCAL1, shared(REQ0, DEVICE2, {CAPACITY0: ONE}))],
)
CASES["consumable-capacity-dedicated-device-with-consumable-capacity-request"] = Case(
    features=F(consumable_capacity=True),
    claims=[one_claim_asking(ONE)],
    classes=[DEDICATED_A],
    slices=[slice_with_devices(SLICE1, NODE1, POOL1, A, device(DEVICE1, {CAPACITY0: ONE}))],
    expect=[allocation_result(LOCAL1, device_allocation_result(REQ0, A, POOL1, DEVICE1))],
)
CASES["consumable-capacity-dedicated-device-with-multiple-consumable-capacity-request"] = Case(
    features=F(consumable_capacity=True),
    claims=[one_claim_asking(ONE), one_claim_asking(ONE, CLAIM1)],
    classes=[DEDICATED_A],
    slices=[
        slice_with_devices(
            SLICE1, NODE1, POOL1, A, device(DEVICE1).with_capacity_request_policy_range({CAPACITY0: TWO})
        )
    ],
)
CASES["allow-multiple-allocations-exclude-multi-allocatable-device-by-class-selector"] = Case(
    features=F(consumable_capacity=True),
    claims=[one_claim_asking(ONE)],
    classes=[DEDICATED_A],
    slices=[
        slice_with_devices(SLICE1, NODE1, POOL1, A, device(DEVICE1, {CAPACITY0: ONE}).with_allow_multiple_allocations())
    ],
)
CASES["allow-multiple-allocations-not-allocate-multi-allocatable-device-which-already-dedicated"] = Case(
    features=F(consumable_capacity=True),
    allocated=[(A, POOL1, DEVICE1)],
    claims=[one_claim_asking(ONE)],
    classes=[MULTI_A],
    slices=[slice_with_devices(SLICE1, NODE1, POOL1, A, _ranged(DEVICE1, TWO))],
)
CASES["allow-multiple-allocations-not-allocate-dedicated-device-which-change-from-multi-allocatable"] = Case(
    features=F(consumable_capacity=True),
    claims=[one_claim_asking(ONE)],
    allocated_capacity={(A, POOL1, DEVICE1): {CAPACITY0: ONE}},
    classes=[MULTI_A],
    slices=[
        slice_with_devices(
            SLICE1, NODE1, POOL1, A, device(DEVICE1).with_capacity_request_policy_range({CAPACITY0: TWO})
        )
    ],
)
CASES["allow-multiple-allocations-with-partitionable-device"] = Case(
    features=F(prioritized_list=True, partitionable_devices=True, consumable_capacity=True),
    claims=[_REQ_AND_6_OR_4],
    classes=[MULTI_A],
    slices=_partitioned(
        POOL1,
        2,
        *(
            device(name, FROM_COUNTERS)
            .with_device_counter_consumption(_dcc(COUNTER_SET1, memory=f"{n}Gi"))
            .with_allow_multiple_allocations()
            for name, n in ((DEVICE1, 4), (DEVICE2, 6), (DEVICE3, 4))
        ),
        counter_sets=[counter_set(COUNTER_SET1, counters(memory="8Gi"))],
    ),
    expect=[
        allocation_result(
            LOCAL1, shared(REQ0, DEVICE1, {"memory": "4Gi"}), shared(REQ1_SUB_REQ1, DEVICE3, {"memory": "4Gi"})
        )
    ],
)
CASES["allow-multiple-allocations-with-shared-device-counter-cross-cycle"] = Case(
    features=F(partitionable_devices=True, consumable_capacity=True),
    claims=[
        claim(CLAIM0).with_requests(
            request(REQ0, CLASS_A, 1).with_capacity_request(ONE).with_selectors(attr_is("mode", "b"))
        )
    ],
    allocated_shared=[(A, POOL1, DEVICE1, FIXED_SHARE_ID)],
    allocated_capacity={(A, POOL1, DEVICE1): {CAPACITY0: ONE}},
    classes=[MULTI_A],
    slices=_partitioned(
        POOL1,
        2,
        *(
            device(name, FROM_COUNTERS, {"mode": string_attr(mode)})
            .with_device_counter_consumption(device_counter_consumption(COUNTER_SET1, {CAPACITY0: ONE}))
            .with_allow_multiple_allocations()
            for name, mode in ((DEVICE1, "a"), (DEVICE2, "b"))
        ),
        counter_sets=[counter_set(COUNTER_SET1, {CAPACITY0: ONE})],
    ),
)
CASES["consumable-capacity-with-partitionable-device-multiple-capacity-pools"] = Case(
    features=F(prioritized_list=True, partitionable_devices=True, consumable_capacity=True),
    claims=[
        claim(CLAIM0).with_requests(
            request(REQ0, CLASS_A, 1).with_capacity_request(ONE),
            request(REQ2, CLASS_A, 1).with_capacity_request(TWO),
            request_with_prioritized_list(
                REQ1,
                sub_request(
                    SUB_REQ0, CLASS_A, 1, cel(f'device.capacity["{A}"]["{CAPACITY0}"].compareTo(quantity("4")) >= 0')
                ).with_capacity_request(ONE),
                sub_request(
                    SUB_REQ1, CLASS_A, 1, cel(f'device.capacity["{A}"]["{CAPACITY0}"].compareTo(quantity("2")) >= 0')
                ).with_capacity_request(ONE),
            ),
        )
    ],
    classes=[device_class(CLASS_A, A)],
    slices=_partitioned(
        POOL1,
        2,
        *(
            device(name, FROM_COUNTERS)
            .with_device_counter_consumption(
                device_counter_consumption(COUNTER_SET1, {CAPACITY0: c0}),
                device_counter_consumption(COUNTER_SET2, {CAPACITY1: FOUR}),
            )
            .with_allow_multiple_allocations()
            .with_capacity_request_policy_range({CAPACITY1: FOUR})
            for name, c0 in ((DEVICE1, TWO), (DEVICE2, FOUR), (DEVICE3, TWO))
        ),
        counter_sets=[counter_set(COUNTER_SET1, {CAPACITY0: FOUR}), counter_set(COUNTER_SET2, {CAPACITY1: "8"})],
    ),
    expect=[
        allocation_result(
            LOCAL1,
            shared(REQ0, DEVICE1, {CAPACITY0: ONE, CAPACITY1: TWO}),
            shared(REQ2, DEVICE3, {CAPACITY0: TWO, CAPACITY1: TWO}),
            shared(REQ1_SUB_REQ1, DEVICE1, {CAPACITY0: ONE, CAPACITY1: TWO}),
        )
    ],
)


CASES["with-distinct-constraints"] = Case(
    features=F(consumable_capacity=True),
    claims=[
        claim(CLAIM0)
        .with_constraints(
            distinct_attribute(BOOL_ATTRIBUTE, REQ0, REQ1),
            distinct_attribute(VERSION_ATTRIBUTE, REQ0, REQ1, REQ2),
            distinct_attribute(INT_ATTRIBUTE, REQ0, REQ1, REQ2, REQ3),
        )
        .with_requests(*(request(r, CLASS_A, 1) for r in (REQ0, REQ1, REQ2, REQ3)))
    ],
    classes=[device_class(CLASS_A, A)],
    slices=[
        slice_with_devices(
            SLICE1,
            NODE1,
            POOL1,
            A,
            *(
                device(
                    name,
                    None,
                    {"driverVersion": version_attr(v), "numa": int_attr(numa), "boolAttribute": bool_attr(b)},
                ).with_allow_multiple_allocations()
                for name, v, numa, b in (
                    (DEVICE1, "1.0.0", 0, True),
                    (DEVICE2, "1.0.1", 1, False),
                    (DEVICE3, "1.0.2", 2, True),
                    (DEVICE4, "1.0.0", 3, True),
                )
            ),
        )
    ],
    expect=[
        allocation_result(
            LOCAL1,
            shared(REQ0, DEVICE1, None),
            shared(REQ1, DEVICE2, None),
            shared(REQ2, DEVICE3, None),
            shared(REQ3, DEVICE4, None),
        )
    ],
)
CASES["with-distinct-constraints-attribute-not-set"] = Case(
    features=F(consumable_capacity=True),
    claims=[
        claim(CLAIM0)
        .with_constraints(distinct_attribute(BOOL_ATTRIBUTE, REQ0))
        .with_requests(request(REQ0, CLASS_A, 1))
    ],
    classes=[device_class(CLASS_A, A)],
    slices=[slice_with_devices(SLICE1, NODE1, POOL1, A, device(DEVICE1).with_allow_multiple_allocations())],
)
CASES["with-distinct-constraints-unknown-type-attribute"] = Case(
    features=F(consumable_capacity=True),
    claims=[
        claim(CLAIM0)
        .with_constraints(distinct_attribute(BOOL_ATTRIBUTE, REQ0))
        .with_requests(request(REQ0, CLASS_A, 1))
    ],
    classes=[device_class(CLASS_A, A)],
    slices=[
        slice_with_devices(
            SLICE1, NODE1, POOL1, A, device(DEVICE1, None, {"boolAttribute": {}}).with_allow_multiple_allocations()
        )
    ],
    error="unsupported attribute value",
)
_BOOL_THEN_ANY = [
    request_with_prioritized_list(
        r,
        sub_request(SUB_REQ0, CLASS_A, 1, cel(f'device.attributes["{A}"].boolAttribute')),
        sub_request(SUB_REQ1, CLASS_A, 1),
    )
    for r in (REQ0, REQ1, REQ2)
]
CASES["with-distinct-constraints-with-subrequests"] = Case(
    features=F(consumable_capacity=True, prioritized_list=True),
    claims=[
        claim(CLAIM0).with_constraints(distinct_attribute(BOOL_ATTRIBUTE, REQ0, REQ1)).with_requests(*_BOOL_THEN_ANY)
    ],
    classes=[device_class(CLASS_A, A)],
    slices=[
        slice_with_devices(
            SLICE1,
            NODE1,
            POOL1,
            A,
            device(DEVICE1, None, {"boolAttribute": bool_attr(True)}).with_allow_multiple_allocations(),
            device(DEVICE2, None, {"boolAttribute": bool_attr(False)}).with_allow_multiple_allocations(),
        )
    ],
    expect=[
        allocation_result(
            LOCAL1,
            shared(REQ0_SUB_REQ0, DEVICE1, None),
            shared(REQ1_SUB_REQ1, DEVICE2, None),
            shared(REQ2_SUB_REQ0, DEVICE1, None),
        )
    ],
)
CASES["distinct-constraint-one-multi-allocatable-device-with-distinct-constraint"] = Case(
    features=F(consumable_capacity=True),
    claims=[
        claim(CLAIM0)
        .with_constraints(distinct_attribute(STRING_ATTRIBUTE))
        .with_requests(
            request(REQ0, CLASS_A, 1).with_capacity_request(ONE), request(REQ1, CLASS_A, 1).with_capacity_request(ONE)
        )
    ],
    classes=[MULTI_A],
    slices=[
        slice_with_devices(
            SLICE1,
            NODE1,
            POOL1,
            A,
            device(DEVICE1, None, {"stringAttribute": string_attr("stringAttributeValue")})
            .with_allow_multiple_allocations()
            .with_capacity_request_policy_range({CAPACITY0: TWO}),
        )
    ],
)
CASES["distinct-constraint-two-multi-allocatable-devices-with-distinct-constraint"] = Case(
    features=F(consumable_capacity=True),
    claims=[
        claim(CLAIM0)
        .with_constraints(distinct_attribute(STRING_ATTRIBUTE))
        .with_requests(
            request(REQ0, CLASS_A, 1).with_capacity_request(TWO), request(REQ1, CLASS_A, 1).with_capacity_request(TWO)
        )
    ],
    classes=[MULTI_A],
    slices=[
        slice_with_devices(
            SLICE1,
            NODE1,
            resource_pool(POOL1, 2),
            A,
            device(name, None, {"stringAttribute": string_attr(value)})
            .with_allow_multiple_allocations()
            .with_capacity_request_policy_range({CAPACITY0: FOUR}),
        )
        for name, value in ((DEVICE1, "stringAttributeValue1"), (DEVICE2, "stringAttributeValue2"))
    ],
    expect=[
        allocation_result(LOCAL1, shared(REQ0, DEVICE1, {CAPACITY0: TWO}), shared(REQ1, DEVICE2, {CAPACITY0: TWO}))
    ],
)
CASES["allocation-mode-all-with-multi-host-resource-pool"] = Case(
    claims=[_ALL_A],
    classes=[device_class(CLASS_A, A)],
    slices=[
        slice_with_devices(SLICE1, NODE1, resource_pool(POOL1, 2), A, device(DEVICE1)),
        slice_with_devices(SLICE2, NODE2, resource_pool(POOL1, 2), A, device(DEVICE2)),
    ],
    expect=[allocation_result(LOCAL1, device_allocation_result(REQ0, A, POOL1, DEVICE1))],
)


def _gen(name: str, node_name: str, dev: str, generation: int) -> dict[str, Any]:
    return with_pool(slice_with_devices(name, node_name, POOL1, A, device(dev)), generation=generation, count=2)


CASES["multi-host-resource-pool-with-stale-slice-for-current-node"] = Case(
    claims=[claim_with_request(CLAIM0, REQ0, CLASS_A)],
    classes=[device_class(CLASS_A, A)],
    slices=[_gen(SLICE1, NODE1, DEVICE1, 1), _gen(SLICE2, NODE2, DEVICE2, 2)],
)
CASES["multi-host-resource-pool-complete-update-from-node-1-to-node-2"] = Case(
    claims=[claim_with_request(CLAIM0, REQ0, CLASS_A)],
    classes=[device_class(CLASS_A, A)],
    slices=[
        _gen(SLICE1, NODE1, DEVICE1, 1),
        _gen(SLICE1, NODE1, DEVICE2, 1),
        _gen(SLICE2, NODE2, DEVICE1, 2),
        _gen(SLICE2, NODE2, DEVICE2, 2),
    ],
    expect=[allocation_result(LOCAL1, device_allocation_result(REQ0, A, POOL1, DEVICE1))],
)
CASES["multi-host-resource-pool-complete-update-from-node-2-to-node-1"] = Case(
    claims=[claim_with_request(CLAIM0, REQ0, CLASS_A)],
    classes=[device_class(CLASS_A, A)],
    slices=[
        _gen(SLICE1, NODE2, DEVICE1, 1),
        _gen(SLICE1, NODE2, DEVICE2, 1),
        _gen(SLICE2, NODE1, DEVICE1, 2),
        _gen(SLICE2, NODE1, DEVICE2, 2),
    ],
    expect=[allocation_result(LOCAL1, device_allocation_result(REQ0, A, POOL1, DEVICE1))],
)
CASES["multi-host-resource-pool-incomplete-update-from-node-1-to-node-2"] = Case(
    claims=[claim_with_request(CLAIM0, REQ0, CLASS_A)],
    classes=[device_class(CLASS_A, A)],
    slices=[_gen(SLICE1, NODE1, DEVICE1, 1), _gen(SLICE1, NODE1, DEVICE2, 1), _gen(SLICE2, NODE2, DEVICE1, 2)],
    expect=[allocation_result(LOCAL1, device_allocation_result(REQ0, A, POOL1, DEVICE1))],
)
CASES["multi-host-resource-pool-incomplete-update-from-node-2-to-node-1"] = Case(
    claims=[claim_with_request(CLAIM0, REQ0, CLASS_A)],
    classes=[device_class(CLASS_A, A)],
    slices=[_gen(SLICE1, NODE2, DEVICE1, 1), _gen(SLICE1, NODE2, DEVICE2, 1), _gen(SLICE2, NODE1, DEVICE1, 2)],
)
_ONE_REQ = claim(CLAIM0).with_requests(request(REQ0, CLASS_A, 1))
CASES["partitionable-devices-same-counter-set-name-in-different-resource-slices"] = Case(
    features=F(partitionable_devices=True),
    claims=[_ONE_REQ],
    classes=[device_class(CLASS_A, A)],
    slices=[
        slice_with_devices(SLICE1, NODE1, resource_pool(POOL1, 4), A, device(DEVICE1)),
        slice_with_counter_sets(SLICE2, NODE1, resource_pool(POOL1, 4), A, counter_set(COUNTER_SET1, None)),
        slice_with_devices(SLICE3, NODE1, resource_pool(POOL1, 4), A, device(DEVICE2)),
        slice_with_counter_sets(SLICE4, NODE1, resource_pool(POOL1, 4), A, counter_set(COUNTER_SET1, None)),
    ],
    error="invalid resource pools were encountered",
    error_type=FailedAllocationOnNode,
)
CASES["partitionable-devices-device-counter-consumption-references-unknown-counter-set"] = Case(
    features=F(partitionable_devices=True),
    claims=[_ONE_REQ],
    classes=[device_class(CLASS_A, A)],
    slices=_partitioned(
        POOL1,
        2,
        device(DEVICE1).with_device_counter_consumption(device_counter_consumption(COUNTER_SET2, None)),
        counter_sets=[counter_set(COUNTER_SET1, None)],
    ),
    error="invalid resource pools were encountered",
    error_type=FailedAllocationOnNode,
)
CASES["partitionable-devices-device-counter-consumption-references-unknown-counter-in-counter-set"] = Case(
    features=F(partitionable_devices=True),
    claims=[_ONE_REQ],
    classes=[device_class(CLASS_A, A)],
    slices=_partitioned(
        POOL1,
        2,
        device(DEVICE1).with_device_counter_consumption(_dcc(COUNTER_SET1, memory="8Gi")),
        counter_sets=[counter_set(COUNTER_SET1, {"other-memory": "8Gi"})],
    ),
    error="invalid resource pools were encountered",
    error_type=FailedAllocationOnNode,
)
CASES["partitionable-devices-device-counter-consumption-references-counter-set-in-other-pool"] = Case(
    features=F(partitionable_devices=True),
    claims=[_ONE_REQ],
    classes=[device_class(CLASS_A, A)],
    slices=[
        slice_with_devices(
            SLICE1, NODE1, POOL1, A, device(DEVICE1).with_device_counter_consumption(_dcc(COUNTER_SET1, memory="8Gi"))
        ),
        slice_with_counter_sets(SLICE2, NODE1, POOL2, A, counter_set(COUNTER_SET1, counters(memory="8Gi"))),
    ],
    error="invalid resource pools were encountered",
    error_type=FailedAllocationOnNode,
)
CASES["partitionable-devices-devices-on-different-nodes-consume-same-counter-set"] = Case(
    features=F(partitionable_devices=True, prioritized_list=True),
    claims=[
        claim(CLAIM0).with_requests(
            request_with_prioritized_list(
                REQ0, sub_request(SUB_REQ0, CLASS_A, 1, mem(6)), sub_request(SUB_REQ1, CLASS_A, 1, mem(2))
            )
        )
    ],
    classes=[device_class(CLASS_A, A)],
    slices=[
        slice_with_counter_sets(
            SLICE1, NODE1, resource_pool(POOL1, 3), A, counter_set(COUNTER_SET1, counters(memory="8Gi"))
        ),
        slice_with_devices(
            SLICE2,
            NODE1,
            resource_pool(POOL1, 3),
            A,
            device(DEVICE1, FROM_COUNTERS).with_device_counter_consumption(_dcc(COUNTER_SET1, memory="6Gi")),
            device(DEVICE2, FROM_COUNTERS).with_device_counter_consumption(_dcc(COUNTER_SET1, memory="2Gi")),
        ),
        slice_with_devices(
            SLICE3,
            NODE2,
            resource_pool(POOL1, 3),
            A,
            device(DEVICE3).with_device_counter_consumption(_dcc(COUNTER_SET1, memory="6Gi")),
        ),
    ],
    allocated=[(A, POOL1, DEVICE3)],
    expect=[allocation_result(LOCAL1, device_allocation_result(REQ0_SUB_REQ1, A, POOL1, DEVICE2))],
)
CASES["partitionable-devices-validation-error-on-non-targeting-slice"] = Case(
    features=F(partitionable_devices=True),
    claims=[claim_with_requests(CLAIM0, None, request(REQ0, CLASS_A, 1))],
    classes=[device_class(CLASS_A, A)],
    slices=[
        slice_with_counter_sets(
            SLICE1, NODE1, resource_pool(POOL1, 3), A, counter_set(COUNTER_SET1, counters(memory="8Gi"))
        ),
        slice_with_devices(
            SLICE2,
            NODE1,
            resource_pool(POOL1, 3),
            A,
            device(DEVICE1, FROM_COUNTERS).with_device_counter_consumption(_dcc(COUNTER_SET1, memory="6Gi")),
        ),
        slice_with_devices(
            SLICE3,
            NODE2,
            resource_pool(POOL1, 3),
            A,
            device(DEVICE3).with_device_counter_consumption(_dcc(COUNTER_SET2, memory="6Gi")),
        ),
    ],
    error="invalid resource pools were encountered",
    error_type=FailedAllocationOnNode,
)
CASES["different-resourceslices-in-pool-can-target-different-nodes"] = Case(
    claims=[claim_with_requests(CLAIM0, None, request(REQ0, CLASS_A, 1))],
    classes=[device_class(CLASS_A, A)],
    slices=[
        slice_with_devices(SLICE1, NODE2, resource_pool(POOL1, 2), A, device(DEVICE1)),
        slice_with_devices(SLICE2, NODE1, resource_pool(POOL1, 2), A, device(DEVICE2)),
    ],
    expect=[allocation_result(LOCAL1, device_allocation_result(REQ0, A, POOL1, DEVICE2))],
)
_INVALID_AND_VALID = [
    slice_with_devices(SLICE1, NODE1, resource_pool(POOL1, 2), A, device(DEVICE1)),
    slice_with_devices(SLICE2, NODE1, resource_pool(POOL1, 2), A, device(DEVICE1)),
    slice_with_devices(SLICE3, NODE1, resource_pool(POOL2, 1), A, device(DEVICE2)),
]
CASES["invalid-pool-is-ok-if-devices-can-be-allocated-from-other"] = Case(
    claims=[claim_with_requests(CLAIM0, None, request(REQ0, CLASS_A, 1))],
    classes=[device_class(CLASS_A, A)],
    slices=_INVALID_AND_VALID,
    expect=[allocation_result(LOCAL1, device_allocation_result(REQ0, A, POOL2, DEVICE2))],
)
CASES["invalid-pool-is-error-if-no-other-device-can-be-allocated"] = Case(
    claims=[claim_with_requests(CLAIM0, None, request(REQ0, CLASS_A, 1))],
    classes=[device_class(CLASS_A, A)],
    slices=_INVALID_AND_VALID,
    allocated=[(A, POOL2, DEVICE2)],
    error="invalid resource pools were encountered",
    error_type=FailedAllocationOnNode,
)
CASES["no-allocation-from-incomplete-pools"] = Case(
    claims=[claim_with_requests(CLAIM0, None, request(REQ0, CLASS_A, 1))],
    classes=[device_class(CLASS_A, A)],
    slices=[slice_with_devices(SLICE1, NODE1, resource_pool(POOL1, 2), A, device(DEVICE1))],
)
_FIVE_OF_FOUR: list[dict[str, Any]] = [claim_with_requests(CLAIM0, None, request(REQ0, CLASS_A, 5))]
CASES["check-combinations-within-single-request-single-pool-single-slice"] = Case(
    claims=_FIVE_OF_FOUR,
    classes=[device_class(CLASS_A, A)],
    slices=[slice_with_devices(SLICE1, NODE1, POOL1, A, *(device(d) for d in (DEVICE1, DEVICE2, DEVICE3, DEVICE4)))],
    invocations=16,
)
CASES["check-combinations-within-single-request-single-pool-multiple-slices"] = Case(
    claims=_FIVE_OF_FOUR,
    classes=[device_class(CLASS_A, A)],
    slices=[
        slice_with_devices(SLICE1, NODE1, resource_pool(POOL1, 2), A, device(DEVICE1), device(DEVICE2)),
        slice_with_devices(SLICE2, NODE1, resource_pool(POOL1, 2), A, device(DEVICE3), device(DEVICE4)),
    ],
    invocations=16,
)
CASES["check-combinations-within-single-request-multiple-pools-multiple-slices"] = Case(
    claims=_FIVE_OF_FOUR,
    classes=[device_class(CLASS_A, A)],
    slices=[
        slice_with_devices(SLICE1, NODE1, resource_pool(POOL1, 2), A, device(DEVICE1)),
        slice_with_devices(SLICE2, NODE1, resource_pool(POOL1, 2), A, device(DEVICE2)),
        slice_with_devices(SLICE3, NODE1, POOL2, A, device(DEVICE3), device(DEVICE4)),
    ],
    invocations=16,
)
CASES["check-combinations-within-single-request-many-pools"] = Case(
    claims=_FIVE_OF_FOUR,
    classes=[device_class(CLASS_A, A)],
    slices=[
        slice_with_devices(s, NODE1, p, A, device(d))
        for s, p, d in (
            (SLICE1, POOL1, DEVICE1),
            (SLICE2, POOL2, DEVICE2),
            (SLICE3, POOL3, DEVICE3),
            (SLICE4, POOL4, DEVICE4),
        )
    ],
    invocations=16,
)
_X_Y_Y = [
    device(DEVICE1, None, {"type": string_attr("X")}),
    device(DEVICE2, None, {"type": string_attr("Y")}),
    device(DEVICE3, None, {"type": string_attr("Y")}),
]
_TWO_THEN_X: list[dict[str, Any]] = [
    claim_with_requests(CLAIM0, None, request(REQ1, CLASS_A, 2), request(REQ2, CLASS_A, 1, attr_is("type", "X")))
]
CASES["check-combinations-with-backtracking"] = Case(
    claims=_TWO_THEN_X,
    classes=[device_class(CLASS_A, A)],
    slices=[slice_with_devices(SLICE1, NODE1, POOL1, A, *_X_Y_Y)],
    expect=[
        allocation_result(
            LOCAL1,
            device_allocation_result(REQ1, A, POOL1, DEVICE2),
            device_allocation_result(REQ1, A, POOL1, DEVICE3),
            device_allocation_result(REQ2, A, POOL1, DEVICE1),
        )
    ],
    invocations=12,
)
CASES["check-combinations-with-backtracking-across-slices-and-pools"] = Case(
    features=F(device_binding_and_status=True),
    claims=_TWO_THEN_X,
    classes=[device_class(CLASS_A, A)],
    slices=[
        slice_with_devices(SLICE1, NODE1, resource_pool(POOL1, 2), A, _X_Y_Y[0]),
        slice_with_devices(SLICE2, NODE1, resource_pool(POOL1, 2), A, _X_Y_Y[1]),
        slice_with_devices(SLICE3, NODE1, POOL2, A, _X_Y_Y[2].with_binding_conditions(["IsPrepare"], [])),
    ],
    expect=[
        allocation_result(
            LOCAL1,
            device_allocation_result(REQ1, A, POOL1, DEVICE2),
            result_with_binding_conditions(REQ1, A, POOL2, DEVICE3, ["IsPrepare"], []),
            device_allocation_result(REQ2, A, POOL1, DEVICE1),
        )
    ],
    invocations=12,
)
CASES["check-combinations-with-prioritized-list"] = Case(
    features=F(prioritized_list=True),
    claims=[
        claim(CLAIM0).with_requests(
            request_with_prioritized_list(
                REQ1, sub_request(SUB_REQ0, CLASS_A, 3, attr_is("type", "Y")), sub_request(SUB_REQ1, CLASS_A, 2)
            ),
            request_with_prioritized_list(
                REQ2, sub_request(SUB_REQ0, CLASS_A, 2), sub_request(SUB_REQ1, CLASS_A, 1, attr_is("type", "X"))
            ),
        )
    ],
    classes=[device_class(CLASS_A, A)],
    slices=[slice_with_devices(SLICE1, NODE1, POOL1, A, *_X_Y_Y)],
    expect=[
        allocation_result(
            LOCAL1,
            device_allocation_result(REQ1_SUB_REQ1, A, POOL1, DEVICE2),
            device_allocation_result(REQ1_SUB_REQ1, A, POOL1, DEVICE3),
            device_allocation_result(REQ2_SUB_REQ1, A, POOL1, DEVICE1),
        )
    ],
    invocations=26,
)

# lexicographical_testing.go: pools and slices are tried in name order, whatever the input order.
CASES["lexicographical-sorting-pools"] = Case(
    claims=[claim_with_requests(CLAIM0, None, request(REQ0, CLASS_A, 2))],
    classes=[device_class(CLASS_A, A)],
    slices=[
        slice_with_one_device(SLICE1, NODE1, resource_pool(POOL3, 1), A),
        slice_with_one_device(SLICE2, NODE1, resource_pool(POOL2, 1), A),
        slice_with_one_device(SLICE3, NODE1, resource_pool(POOL1, 1), A),
    ],
    expect=[
        allocation_result(
            LOCAL1,
            device_allocation_result(REQ0, A, POOL1, DEVICE1),
            device_allocation_result(REQ0, A, POOL2, DEVICE1),
        )
    ],
)
CASES["lexicographical-sorting-pools-with-binding-conditions"] = Case(
    features=F(device_binding_and_status=True),
    claims=[claim_with_requests(CLAIM0, None, request(REQ0, CLASS_A, 2))],
    classes=[device_class(CLASS_A, A)],
    slices=[
        slice_with_devices(
            SLICE1,
            NODE1,
            resource_pool(POOL1, 1),
            A,
            device(DEVICE1).with_binding_conditions(["IsPrepare"], ["BindingFailed"]),
        ),
        slice_with_devices(SLICE3, NODE1, resource_pool(POOL3, 1), A, device(DEVICE3)),
        slice_with_devices(SLICE2, NODE1, resource_pool(POOL2, 1), A, device(DEVICE2)),
    ],
    expect=[
        allocation_result(
            LOCAL1,
            device_allocation_result(REQ0, A, POOL2, DEVICE2),
            device_allocation_result(REQ0, A, POOL3, DEVICE3),
        )
    ],
)
CASES["lexicographical-sorting-slices"] = Case(
    claims=[claim_with_requests(CLAIM0, None, request(REQ0, CLASS_A, 2))],
    classes=[device_class(CLASS_A, A)],
    slices=[
        slice_with_devices(SLICE3, NODE1, resource_pool(POOL1, 3), A, device(DEVICE3)),
        slice_with_devices(SLICE2, NODE1, resource_pool(POOL1, 3), A, device(DEVICE2)),
        slice_with_devices(SLICE1, NODE1, resource_pool(POOL1, 3), A, device(DEVICE1)),
    ],
    expect=[
        allocation_result(
            LOCAL1,
            device_allocation_result(REQ0, A, POOL1, DEVICE1),
            device_allocation_result(REQ0, A, POOL1, DEVICE2),
        )
    ],
)
CASES["lexicographical-sorting-slices-with-binding-conditions"] = Case(
    features=F(device_binding_and_status=True),
    claims=[claim_with_requests(CLAIM0, None, request(REQ0, CLASS_A, 2))],
    classes=[device_class(CLASS_A, A)],
    slices=[
        slice_with_devices(
            SLICE1,
            NODE1,
            resource_pool(POOL1, 3),
            A,
            device(DEVICE1).with_binding_conditions(["IsPrepare"], ["BindingFailed"]),
        ),
        slice_with_devices(SLICE3, NODE1, resource_pool(POOL1, 3), A, device(DEVICE3)),
        slice_with_devices(SLICE2, NODE1, resource_pool(POOL1, 3), A, device(DEVICE2)),
    ],
    expect=[
        allocation_result(
            LOCAL1,
            result_with_binding_conditions(REQ0, A, POOL1, DEVICE1, ["IsPrepare"], ["BindingFailed"]),
            device_allocation_result(REQ0, A, POOL1, DEVICE2),
        )
    ],
)


@pytest.mark.parametrize("evaluator", ["test double", "cel.py"])
@pytest.mark.parametrize("name", sorted(CASES))
def test_upstream_table(name: str, evaluator: str) -> None:
    """Each case with the CEL test double and again with the real CEL (the expressions are upstream's)."""
    case = CASES[name]
    before = copy.deepcopy((case.claims, case.classes, case.slices))
    selectors = upstream_evaluator() if evaluator == "test double" else CELSelectors()
    if case.error is not None:
        with pytest.raises(case.error_type) as info:
            run(case, selectors)
        assert case.error in str(info.value)
    else:
        allocator, results = run(case, selectors)
        assert results == case.expect
        if case.invocations is not None:
            assert allocator.num_allocate_one == case.invocations
    assert (case.claims, case.classes, case.slices) == before, "the allocator must not modify its inputs"


# Beyond upstream's table.


@pytest.mark.parametrize("deadline_passed", [False, True])
def test_interrupt(deadline_passed: bool) -> None:
    """Upstream's "interrupt" test: six of five devices is a long search, and the deadline stops it."""
    allocator = Allocator(
        allocated=AllocatedState(),
        classes={CLASS_A: device_class(CLASS_A, A)},
        slices=[
            slice_with_devices(
                SLICE1, NODE1, POOL1, A, *(device(d) for d in (DEVICE1, DEVICE2, DEVICE3, DEVICE4, "device-5"))
            )
        ],
        evaluator=upstream_evaluator(),
    )
    claims = [claim_with_requests(CLAIM0, None, request(REQ0, CLASS_A, 6))]
    if deadline_passed:
        with pytest.raises(AllocationAborted, match="filter operation aborted: context deadline exceeded"):
            allocator.allocate(node(NODE1, REGION1), claims, deadline=time.monotonic())
    else:
        assert allocator.allocate(node(NODE1, REGION1), claims, deadline=time.monotonic() + 3600) is None


def test_interrupt_during_a_selector() -> None:
    """A selector within the cost limit can still take celpy seconds per device: the deadline stops it in the
    middle, as cel-go's evaluation stops when the Filter's context ends."""
    ten = "[" + ", ".join(str(i) for i in range(10)) + "]"
    slow = "".join(f"{ten}.all(x{i}, " for i in range(5)) + f'device.driver == "{A}"' + ")" * 5
    klass = device_class(CLASS_A, A)
    klass["spec"]["selectors"] = [cel(slow)]
    allocator = Allocator(
        allocated=AllocatedState(),
        classes={CLASS_A: klass},
        slices=[slice_with_devices(SLICE1, NODE1, POOL1, A, device(DEVICE1))],
        evaluator=CELSelectors(),
    )
    claims = [claim_with_requests(CLAIM0, None, request(REQ0, CLASS_A, 1))]
    started = time.monotonic()
    with pytest.raises(AllocationAborted, match="filter operation aborted: context deadline exceeded"):
        allocator.allocate(node(NODE1, REGION1), claims, deadline=started + 0.2)
    assert time.monotonic() - started < 1.5


def test_allocated_state_from_claims() -> None:
    """foreachAllocatedDevice: admin access holds nothing, shares are counted with their capacity."""

    def allocated(*results: dict[str, Any]) -> dict[str, Any]:
        return {"status": {"allocation": allocation_result(LOCAL1, *results)}}

    state = allocated_state(
        [
            allocated(device_allocation_result(REQ0, A, POOL1, DEVICE1)),
            allocated(device_allocation_result(REQ0, A, POOL1, DEVICE2, True)),
            allocated(shared(REQ0, DEVICE3, {CAPACITY0: "1Gi"}), shared(REQ1, DEVICE3, {CAPACITY0: "512Mi"})),
            allocated(shared(REQ0, DEVICE4, None)),
            claim(CLAIM1),
        ]
    )
    assert state.allocated_devices == {DeviceID(A, POOL1, DEVICE1)}
    assert state.allocated_shared_device_ids == {
        SharedDeviceID(A, POOL1, DEVICE3, FIXED_SHARE_ID),
        SharedDeviceID(A, POOL1, DEVICE4, FIXED_SHARE_ID),
    }
    assert state.aggregated_capacity == {DeviceID(A, POOL1, DEVICE3): {CAPACITY0: Fraction(3 * 2**29)}}
    without = allocated_state([allocated(shared(REQ0, DEVICE3, {CAPACITY0: "1Gi"}))], consumable_capacity=False)
    assert without.allocated_devices == {DeviceID(A, POOL1, DEVICE3)}
    assert not without.aggregated_capacity


def test_in_flight_allocation_blocks_the_device() -> None:
    """A result added to the state (an in-flight allocation of this cycle) takes its device for the next pod."""
    case = Case(
        claims=[claim_with_request(CLAIM0, REQ0, CLASS_A)],
        classes=[device_class(CLASS_A, A)],
        slices=_TWO_DEVICES,
        features=Features(),
    )
    _, first = run(case)
    assert first is not None
    state = AllocatedState()
    state.add_allocation(first[0])
    allocator = Allocator(
        allocated=state,
        classes={CLASS_A: device_class(CLASS_A, A)},
        slices=_TWO_DEVICES,
        evaluator=upstream_evaluator(),
    )
    second = allocator.allocate(node(NODE1, REGION1), case.claims)
    assert second == [allocation_result(LOCAL1, device_allocation_result(REQ0, A, POOL1, DEVICE2))]


def test_one_allocator_for_many_nodes() -> None:
    """Built once per pod, asked per node: each node sees its own slices, shared counters stay right."""
    slices = [
        slice_with_one_device(SLICE1, NODE1, POOL1, A),
        slice_with_devices(SLICE2, NODE2, POOL2, A, device(DEVICE2)),
    ]
    allocator = Allocator(
        allocated=AllocatedState(),
        classes={CLASS_A: device_class(CLASS_A, A)},
        slices=slices,
        evaluator=upstream_evaluator(),
    )
    claims = [claim_with_request(CLAIM0, REQ0, CLASS_A)]
    assert allocator.allocate(node(NODE2, REGION2), claims) == [
        allocation_result(local_node_selector(NODE2), device_allocation_result(REQ0, A, POOL2, DEVICE2))
    ]
    assert allocator.allocate(node(NODE1, REGION1), claims) == [
        allocation_result(LOCAL1, device_allocation_result(REQ0, A, POOL1, DEVICE1))
    ]
    assert allocator.allocate(node("node-3", REGION1), claims) is None


def test_default_features_are_v1_36() -> None:
    assert Features() == Features(
        admin_access=True,
        prioritized_list=True,
        partitionable_devices=True,
        device_taints=True,
        device_binding_and_status=True,
        consumable_capacity=True,
    )


@pytest.mark.parametrize(
    ("slices", "claims", "message"),
    [
        (
            [
                slice_with_one_device(
                    SLICE1, {"nodeSelectorTerms": [{"matchFields": [{"key": "x", "operator": "In"}]}]}, POOL1, A
                )
            ],
            [claim_with_request(CLAIM0, REQ0, CLASS_A)],
            "gather pool information: failed to perform node selection for slice slice-1: "
            "failed to parse node selector",
        ),
        (
            [slice_with_devices(SLICE1, NODE1, POOL1, A, device(DEVICE1, None, {"odd": {}}))],
            [claim_with_request(CLAIM0, REQ0, CLASS_A)],
            "class class-a: selector #0: CEL runtime error: attribute odd: unsupported attribute value",
        ),
        (
            [slice_with_one_device(SLICE1, NODE1, POOL1, A)],
            [
                claim_with_requests(
                    CLAIM0, None, request(REQ0, CLASS_A, 1).with_selectors(cel(f'device.attributes["{A}"].special'))
                )
            ],
            "claim claim-0: selector #0: CEL runtime error: no such key: special",
        ),
        (
            [
                slice_with_one_device(
                    SLICE1,
                    {
                        "nodeSelectorTerms": [
                            {"matchFields": [{"key": FIELD_NAME_KEY, "operator": "In", "values": [NODE1]}]}
                        ]
                        * 2
                    },
                    POOL1,
                    A,
                )
            ],
            [claim_with_request(CLAIM0, REQ0, CLASS_A)],
            "create NodeSelector for claim claim-0: unsupported ResourceSlice.NodeSelector with 2 terms",
        ),
        (
            [slice_with_devices(SLICE1, NODE1, POOL1, A, device(DEVICE1, {"memory": "lots"}))],
            [],
            "ResourceSlice slice-1: device device-1: capacity[memory]",
        ),
    ],
)
def test_broken_input(slices: list[dict[str, Any]], claims: list[dict[str, Any]], message: str) -> None:
    with pytest.raises(AllocationError) as info:
        Allocator(
            allocated=AllocatedState(),
            classes={CLASS_A: device_class(CLASS_A, A)},
            slices=slices,
            evaluator=upstream_evaluator(),
        ).allocate(node(NODE1, REGION1), claims)
    assert message in str(info.value)


def test_claim_config_is_repeated_per_matching_request() -> None:
    """As upstream: a claim config naming two requests is added once for each of them."""
    config = device_claim_config([REQ0, REQ1], device_configuration(A, "both"))
    case = Case(
        claims=[
            claim_with_requests(CLAIM0, None, request(REQ0, CLASS_A, 1), request(REQ1, CLASS_A, 1)).with_configs(config)
        ],
        classes=[device_class(CLASS_A, A)],
        slices=_TWO_DEVICES,
    )
    _, results = run(case)
    assert results is not None
    entry = allocation_config("FromClaim", [REQ0, REQ1], device_configuration(A, "both"))
    assert results[0]["devices"]["config"] == [entry, entry]
