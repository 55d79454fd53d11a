"""The allocator as each release's kube-scheduler runs it at its default gates (--kubernetes-version).

Found against the v1.34.7 and v1.35.7 binaries (bench/parity.py --kubernetes-version, dra
family): v1.35 picks upstream's allocator variant without consumable capacity, which ignores
capacity requests and does not know distinctAttribute; v1.34 picks the newest (it counts device
status as a feature of its own), allocates from incomplete pools, fails on invalid ones, names
the request when its subrequests ask for capacity, and copies no tolerations into results.
"""

from __future__ import annotations

import pytest

from kubesched.dra.allocator import AllocationError, Features
from kubesched.dra.test_allocator import (
    CLAIM0,
    CLASS_A,
    DEVICE1,
    LOCAL1,
    NODE1,
    POOL1,
    REQ0,
    SLICE1,
    STRING_ATTRIBUTE,
    TAINT_NO_SCHEDULE,
    TOLERATION_NO_SCHEDULE,
    A,
    Case,
    run,
)
from kubesched.framework.plugins.dynamicresources.dra_manager import allocator_features
from kubesched.release import release
from kubesched_testing.dra_fixtures import (
    allocation_result,
    claim_with_requests,
    device,
    device_allocation_result,
    device_class,
    distinct_attribute,
    request,
    request_with_prioritized_list,
    resource_pool,
    slice_with_devices,
    sub_request,
)

V134, V135, V136 = (allocator_features(release(v)) for v in ("1.34", "1.35", "1.36"))
SUB0 = "sub-0"


def _capacity_request() -> dict:
    r = request(REQ0, CLASS_A, 1)
    r["exactly"]["capacity"] = {"requests": {"memory": "1Gi"}}
    return r


def _capacity_subrequest() -> dict:
    sub = sub_request(SUB0, CLASS_A, 1)
    sub["capacity"] = {"requests": {"memory": "1Gi"}}
    return request_with_prioritized_list(REQ0, sub)


def _one_device_pool(count: int = 1) -> list[dict]:
    return [slice_with_devices(SLICE1, NODE1, resource_pool(POOL1, count), A, device(DEVICE1))]


def test_the_variant_follows_the_gates() -> None:
    assert not V135.knows_consumable_capacity and V134.knows_consumable_capacity and V136.knows_consumable_capacity
    assert allocator_features(release("1.35", "DRAConsumableCapacity=true")).knows_consumable_capacity
    assert not allocator_features(release("1.34", "DRAResourceClaimDeviceStatus=false")).knows_consumable_capacity


@pytest.mark.parametrize(
    ("features", "claim_request", "error"),
    [
        (V135, _capacity_request(), None),  # ignored: one whole device
        (V134, _capacity_request(), f"claim {CLAIM0}, request {REQ0}: has capacity requests"),
        (V134, _capacity_subrequest(), f"claim {CLAIM0}, request {REQ0}: has capacity requests"),
        (
            Features(consumable_capacity=False),  # v1.36 with the gate off: the newest variant, per subrequest
            _capacity_subrequest(),
            f"claim {CLAIM0}, subrequest {SUB0}: has capacity requests",
        ),
    ],
)
def test_capacity_requests_with_consumable_capacity_off(
    features: Features, claim_request: dict, error: str | None
) -> None:
    case = Case(
        claims=[claim_with_requests(CLAIM0, None, claim_request)],
        classes=[device_class(CLASS_A, A)],
        slices=_one_device_pool(),
        features=features,
    )
    if error is None:
        assert run(case)[1] is not None
    else:
        with pytest.raises(AllocationError, match=error):
            run(case)


def test_distinct_attribute_is_unknown_to_v1_35s_variant() -> None:
    case = Case(
        claims=[claim_with_requests(CLAIM0, [distinct_attribute(STRING_ATTRIBUTE)], request(REQ0, CLASS_A, 1))],
        classes=[device_class(CLASS_A, A)],
        slices=_one_device_pool(),
        features=V135,
    )
    with pytest.raises(AllocationError, match="constraint #0: empty constraint"):
        run(case)
    run(Case(**{**case.__dict__, "features": V134}))  # known to the newest variant: no error


@pytest.mark.parametrize(("features", "allocated"), [(V134, True), (V135, False), (V136, False)])
def test_incomplete_pools(features: Features, allocated: bool) -> None:
    """A pool that announces two slices and has one: v1.34 allocates from it, later releases wait."""
    case = Case(
        claims=[claim_with_requests(CLAIM0, None, request(REQ0, CLASS_A, 1))],
        classes=[device_class(CLASS_A, A)],
        slices=_one_device_pool(count=2),
        features=features,
    )
    assert (run(case)[1] is not None) == allocated


def test_v1_34_copies_no_tolerations_into_results() -> None:
    toleration_request = request(REQ0, CLASS_A, 1)
    toleration_request["exactly"]["tolerations"] = [TOLERATION_NO_SCHEDULE]
    tainted = device(DEVICE1)
    tainted["taints"] = [TAINT_NO_SCHEDULE]
    for features, tolerations in ((V134, ()), (V136, (TOLERATION_NO_SCHEDULE,))):
        case = Case(
            claims=[claim_with_requests(CLAIM0, None, toleration_request)],
            classes=[device_class(CLASS_A, A)],
            slices=[slice_with_devices(SLICE1, NODE1, POOL1, A, tainted)],
            features=features,
        )
        expected = allocation_result(LOCAL1, device_allocation_result(REQ0, A, POOL1, DEVICE1, False, *tolerations))
        assert run(case)[1] == [expected]
