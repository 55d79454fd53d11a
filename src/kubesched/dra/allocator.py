"""The structured-parameters allocator of Kubernetes v1.36 (k8s.io/dynamic-resource-allocation/structured).

v1.36's default feature gates (DRAPrioritizedList and DRAAdminAccess GA; DRAPartitionableDevices,
DRADeviceTaints, DRAConsumableCapacity, DRADeviceBindingConditions and DRAResourceClaimDeviceStatus
beta and on; DRAListTypeAttributes alpha and off) select upstream's "incubating" allocator; this is
that allocator. For one node it picks devices for a pod's unallocated claims by a first-fit
backtracking search that tries every combination (never permutations of one request's devices)
in a fixed order: claims, their requests, and for each device pools by driver and name, slices
by name, devices as listed. The first complete solution wins; there is no scoring.

Allocate answers the allocation result of each claim (as the scheduler writes it into
claim.status.allocation, but without allocationTimestamp), or None when the claims cannot be
allocated on this node. Broken input raises AllocationError, whose text is upstream's;
FailedAllocationOnNode means only this node is out (its text is the Filter's reason);
AllocationAborted means the caller's deadline passed. Upstream's only search limit is that
deadline (the DynamicResources filterTimeout, 10s by default) besides 32 devices per claim.
"""

from __future__ import annotations

import copy
import sys
import time
import uuid
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from fractions import Fraction
from typing import Any, Final

from kubesched.dra import capacity as cap
from kubesched.dra.constraints import Constraint, DistinctAttribute, MatchAttribute
from kubesched.dra.model import (
    Device,
    DeviceID,
    InvalidObjectError,
    NodeSelectorParseError,
    SharedDeviceID,
    Slice,
    as_slices,
    node_matches,
)
from kubesched.dra.pools import GatherError, Pool, gather_pools
from kubesched.dra.quantity import Quantity
from kubesched.dra.quantity import parse as parse_quantity
from kubesched.dra.selector import (
    EVALUATION_DEADLINE,
    SelectorCompileError,
    SelectorEvaluator,
    SelectorRuntimeError,
)

ALLOCATION_RESULTS_MAX_SIZE: Final = 32
EXACT_COUNT: Final = "ExactCount"
ALL: Final = "All"
FROM_CLASS: Final = "FromClass"
FROM_CLAIM: Final = "FromClaim"
_BLOCKING_TAINT_EFFECTS: Final = frozenset({"NoSchedule", "NoExecute"})


class AllocatorError(Exception):
    """Base of what Allocate raises; the text is what upstream's error says."""


class AllocationError(AllocatorError):
    """Broken input (a claim, class or slice): upstream's Filter turns this into an error status."""


class FailedAllocationOnNode(AllocatorError):
    """Allocation failed on this node only (upstream's ErrFailedAllocationOnNode): an unschedulable reason."""


class AllocationAborted(AllocatorError):
    """The deadline passed while searching (upstream: the filter operation's context expired)."""


@dataclass(frozen=True, slots=True)
class Features:
    """The allocator's feature switches (structured.Features), on as in v1.36 by default."""

    admin_access: bool = True
    prioritized_list: bool = True
    partitionable_devices: bool = True
    device_taints: bool = True
    device_binding_and_status: bool = True
    consumable_capacity: bool = True

    # Upstream keeps allocator variants and uses the oldest that supports every enabled feature. The
    # one v1.35 picks by default ignores capacity requests and refuses distinctAttribute as an unknown
    # constraint, where the newest refuses the requests instead (and v1.34 picks the newest, as it counts
    # device status as a feature of its own). None: the newest unless neither feature needs it.
    newest_variant: bool | None = None
    result_tolerations: bool = True  # the requests' tolerations copied into the results (since v1.35)
    # v1.34: an incomplete pool is allocated from (an invalid one is an error), and a request whose
    # subrequests ask for capacity is refused naming the request.
    incomplete_pools_usable: bool = False
    capacity_checked_per_request: bool = False

    @property
    def knows_consumable_capacity(self) -> bool:
        """Whether the allocator upstream picks for these features knows consumable capacity at all."""
        if self.newest_variant is not None:
            return self.newest_variant
        return self.consumable_capacity or self.device_binding_and_status

    @classmethod
    def none(cls, **enabled: bool) -> Features:
        """All off except those named: how upstream's tests pick features."""
        release_only = (
            "newest_variant",
            "result_tolerations",
            "incomplete_pools_usable",
            "capacity_checked_per_request",
        )
        switches = [name for name in cls.__dataclass_fields__ if name not in release_only]
        return cls(**{name: enabled.get(name, False) for name in switches})


@dataclass(slots=True)
class AllocatedState:
    """Devices already in use (schedulerapi.AllocatedState): by allocated claims and in-flight allocations."""

    allocated_devices: set[DeviceID] = field(default_factory=set)
    allocated_shared_device_ids: set[SharedDeviceID] = field(default_factory=set)
    aggregated_capacity: dict[DeviceID, cap.ConsumedCapacity] = field(default_factory=dict)

    def add_allocation(self, allocation: Mapping[str, Any], consumable_capacity: bool = True) -> None:
        """Count in one claim's status.allocation (foreachAllocatedDevice): admin access takes nothing."""
        for result in (allocation.get("devices") or {}).get("results") or ():
            if result.get("adminAccess"):
                continue
            device_id = DeviceID(str(result.get("driver", "")), str(result.get("pool", "")), str(result.get("device")))
            share_id = result.get("shareID")
            if consumable_capacity and share_id is not None:
                self.allocated_shared_device_ids.add(SharedDeviceID(*device_id, str(share_id)))
                consumed = result.get("consumedCapacity")
                if consumed is not None:
                    entry = self.aggregated_capacity.setdefault(device_id, {})
                    try:
                        cap.add(entry, {name: parse_quantity(v).value for name, v in consumed.items()})
                    except ValueError as err:
                        raise AllocationError(f"consumed capacity of device {device_id}: {err}") from err
                continue
            self.allocated_devices.add(device_id)


def allocated_state(claims: Iterable[Mapping[str, Any]], consumable_capacity: bool = True) -> AllocatedState:
    """The devices the allocations of these claims hold (GatherAllocatedState)."""
    state = AllocatedState()
    for claim in claims:
        allocation = (claim.get("status") or {}).get("allocation")
        if allocation:
            state.add_allocation(allocation, consumable_capacity)
    return state


def _kobj(claim: Mapping[str, Any]) -> str:
    meta = claim.get("metadata") or {}
    ns, name = meta.get("namespace") or "", meta.get("name") or ""
    return f"{ns}/{name}" if ns else str(name)


@dataclass(eq=False, slots=True)
class _Request:
    """A request or one of its subrequests, as upstream's requestAccessor sees either."""

    name: str
    raw: Mapping[str, Any]  # the ExactDeviceRequest or DeviceSubRequest
    admin_access: bool
    has_admin_access: bool

    @property
    def class_name(self) -> str:
        return str(self.raw.get("deviceClassName") or "")

    @property
    def mode(self) -> str:
        return str(self.raw.get("allocationMode") or EXACT_COUNT)

    @property
    def count(self) -> int:
        count = self.raw.get("count")
        return int(count) if count else (1 if self.mode == EXACT_COUNT else 0)

    @property
    def selectors(self) -> list[Mapping[str, Any]]:
        return list(self.raw.get("selectors") or ())

    @property
    def tolerations(self) -> list[Mapping[str, Any]]:
        return list(self.raw.get("tolerations") or ())


def _exact(request: Mapping[str, Any]) -> _Request:
    exactly = request.get("exactly") or {}
    admin = exactly.get("adminAccess")
    return _Request(str(request.get("name", "")), exactly, bool(admin), admin is not None)


def _sub(sub: Mapping[str, Any]) -> _Request:
    return _Request(str(sub.get("name", "")), sub, False, False)


@dataclass(eq=False, slots=True)
class _RequestData:
    request: _Request
    parent: _Request | None
    class_: Mapping[str, Any]
    num_devices: int = 0
    capacity_requests: dict[str, Quantity] | None = None
    capacity_key: str = ""  # the requests' amounts, to look demands up by
    tolerations: tuple[tuple[str, str, str, str], ...] = ()
    all_devices: list[_Candidate] = field(default_factory=list)

    def request_name(self) -> str:
        return f"{self.parent.name}/{self.request.name}" if self.parent else self.request.name


@dataclass(eq=False, slots=True)
class _Candidate:
    id: DeviceID
    device: Device
    slice: Slice
    pool: Pool


@dataclass(eq=False, slots=True)
class _Result:
    request: _RequestData
    candidate: _Candidate
    share_id: str | None
    consumed: dict[str, Quantity] | None


@dataclass(slots=True)
class _Undo:
    """What one tentative device placement changed, so backtracking can take it back."""

    counters_reserved: bool = False
    constraints_added: int = 0
    device_marked: bool = False
    capacity_inserted: bool = False
    capacity_entry_existed: bool = False
    result_added: bool = False
    previous_results: int = 0
    consumed: dict[str, Fraction] = field(default_factory=dict)


class _MaxSizeExceeded(Exception):
    """Internal: this path would put more than 32 devices into one claim."""


CounterSets = dict[str, dict[str, Fraction]]


class Allocator:
    """Allocates a pod's claims on one node at a time; built once per pod (structured.NewAllocator).

    `slices` may be ResourceSlice JSON or slices already read with model.parse_slice
    (a caller may keep those per object version). `classes` maps DeviceClass names to
    their JSON. `new_share_id` names each share of a device that allows multiple
    allocations (a random UID upstream).
    """

    def __init__(
        self,
        *,
        allocated: AllocatedState,
        classes: Mapping[str, Mapping[str, Any]],
        slices: Sequence[Slice | Mapping[str, Any]],
        evaluator: SelectorEvaluator,
        features: Features | None = None,
        new_share_id: Callable[[], str] = lambda: str(uuid.uuid4()),
    ) -> None:
        self.features = features or Features()
        self.allocated = allocated
        self.classes = classes
        self.evaluator = evaluator
        self.new_share_id = new_share_id
        try:
            self.all_slices = as_slices(slices)
        except InvalidObjectError as err:
            raise AllocationError(str(err)) from err
        self.slices_on_node: dict[str, list[Slice]] = {}
        self.slices_shared: list[Slice] = []
        for s in self.all_slices:
            if not s.node_name or s.shared_counters:
                self.slices_shared.append(s)
            else:
                self.slices_on_node.setdefault(s.node_name, []).append(s)
        # Counters left per pool once allocated devices took theirs; fixed for this allocator.
        # Keyed by pool name alone, as upstream does (two drivers' pools of one name share it).
        self.available_counters: dict[str, CounterSets] = {}
        self.allocated_shared = {s.device_id() for s in allocated.allocated_shared_device_ids}
        self.num_allocate_one = 0
        # The pools each node sees, by node name (kept while the node object stays the same); shared with
        # the allocators with_allocated makes, as the slices are.
        self.pools_by_node: dict[str, _NodePools] = {}
        # What a request takes of a device's capacities, by the device's identity (the device object is kept
        # with it) and the request's amounts; shared like pools_by_node.
        self.demands: dict[tuple[int, str], tuple[Device, cap.Demand]] = {}
        # Answers for nodes that see the same pools and nothing else of theirs (see _NodePools.signature).
        self.answers: dict[tuple[Any, ...], tuple[tuple[Mapping[str, Any], ...], list[dict[str, Any]] | None]] = {}

    def with_allocated(self, allocated: AllocatedState) -> Allocator:
        """An allocator over the same slices, classes and evaluator with other devices in use.

        The slices are grouped by node once; a caller that keeps them per slice version
        builds one allocator per version and this per scheduling cycle.
        """
        other = copy.copy(self)
        other.allocated = allocated
        other.available_counters = {}
        other.allocated_shared = {s.device_id() for s in allocated.allocated_shared_device_ids}
        other.num_allocate_one = 0
        other.answers = {}
        return other

    def node_pools(self, node: Mapping[str, Any]) -> _NodePools:
        """GatherPools for the node, once per node object. Raises AllocationError when node selection fails."""
        name = str((node.get("metadata") or {}).get("name", ""))
        known = self.pools_by_node.get(name)
        if known is not None and known.node is node:
            return known
        slices_for_node = self.slices_on_node.get(name, []) + self.slices_shared
        try:
            pools = gather_pools(
                slices_for_node,
                node,
                self.features.partitionable_devices,
                self.all_slices,
                self.features.incomplete_pools_usable,
            )
        except GatherError as err:
            raise AllocationError(f"gather pool information: {err}") from err
        found = self.pools_by_node[name] = _NodePools(node, pools, _signature(pools))
        return found

    def allocate(
        self, node: Mapping[str, Any], claims: Sequence[Mapping[str, Any]], *, deadline: float | None = None
    ) -> list[dict[str, Any]] | None:
        """One allocation result per claim, in claim order, or None when they do not fit on this node.

        As upstream's plugin does, pass only the claims still to allocate; devices of allocated
        claims and of this cycle's in-flight allocations belong in `allocated`
        (AllocatedState.add_allocation). `deadline` is a time.monotonic() value (upstream: the
        Filter call's start plus filterTimeout); past it the search raises AllocationAborted.
        """
        pools = self.node_pools(node)
        if pools.signature is not None:
            # Another node that sees exactly these pools, none of them its own, got an answer for these
            # claims from this allocator: the search would go the same way here.
            known = self.answers.get(pools.signature)
            if (
                known is not None
                and len(known[0]) == len(claims)
                and all(a is b for a, b in zip(known[0], claims, strict=True))
            ):
                return known[1]
        run = _Run(self, node, claims, deadline, pools.pools)
        token = EVALUATION_DEADLINE.set(deadline)
        try:
            result = run.allocate()
        finally:
            EVALUATION_DEADLINE.reset(token)
        if pools.signature is not None:
            self.answers[pools.signature] = (tuple(claims), result)
        return result


@dataclass(eq=False, slots=True)
class _NodePools:
    """The pools a node sees, in allocation order, and when nothing in them depends on the node (no slice of
    the node's own, no per-device node selection, no device bound to its node) their identity: an allocation
    on any node with that signature is the same search over the same devices, with the same result."""

    node: Mapping[str, Any]
    pools: list[Pool]
    signature: tuple[Any, ...] | None


def _signature(pools: list[Pool]) -> tuple[Any, ...] | None:
    for p in pools:
        for s in p.slices:
            if s.node_name or s.per_device_node_selection or any(d.binds_to_node for d in s.devices):
                return None
    return tuple(
        (
            p.driver,
            p.pool,
            p.incomplete,
            p.invalid,
            tuple(map(id, p.slices)),
            tuple(map(id, p.slices_not_targeting_node)),
        )
        for p in pools
    )


class _Run:
    """One Allocate call (upstream's unexported allocator): the search state for one node."""

    def __init__(
        self,
        a: Allocator,
        node: Mapping[str, Any],
        claims: Sequence[Mapping[str, Any]],
        deadline: float | None,
        pools: list[Pool],
    ) -> None:
        self.a = a
        self.features = a.features
        self.node = node
        self.claims = claims
        self.deadline = deadline
        self.pools = pools
        self.matches_cache: dict[tuple[DeviceID, tuple[int, int, int]], bool] = {}
        self.constraints: list[list[Constraint]] = [[] for _ in claims]
        self.consumed_counters: dict[str, CounterSets] = {}
        self.request_data: dict[tuple[int, int, int], _RequestData] = {}
        self.selected_sub: dict[tuple[int, int], int] = {}
        self.allocating_devices: dict[DeviceID, set[int]] = {}
        self.allocating_capacity: dict[DeviceID, cap.ConsumedCapacity] = {}
        self.results: list[list[_Result]] = [[] for _ in claims]
        self.requests = [_requests(claim) for claim in claims]

    # Setup: pools, requests, constraints.

    def allocate(self) -> list[dict[str, Any]] | None:
        depth = 0
        for ci, claim in enumerate(self.claims):
            min_devices = 0
            for ri, request in enumerate(self.requests[ci]):
                subs = list(request.get("firstAvailable") or ())
                if not self.features.prioritized_list and subs:
                    raise AllocationError(
                        f"claim {_kobj(claim)}, request {request.get('name', '')}: has subrequests, "
                        "but the DRAPrioritizedList feature is disabled"
                    )
                if not self.features.consumable_capacity and self.features.knows_consumable_capacity:
                    if (request.get("exactly") or {}).get("capacity") is not None:
                        raise AllocationError(
                            f"claim {_kobj(claim)}, request {request.get('name', '')}: has capacity requests, "
                            "but the DRAConsumableCapacity feature is disabled"
                        )
                    if self.features.capacity_checked_per_request and any(
                        sub.get("capacity") is not None for sub in subs
                    ):
                        raise AllocationError(
                            f"claim {_kobj(claim)}, request {request.get('name', '')}: has capacity requests, "
                            "but the DRAConsumableCapacity feature is disabled"
                        )
                    for sub in subs:
                        if sub.get("capacity") is not None:
                            raise AllocationError(
                                f"claim {_kobj(claim)}, subrequest {sub.get('name', '')}: has capacity requests, "
                                "but the DRAConsumableCapacity feature is disabled"
                            )
                if subs:
                    parent = _exact(request)
                    fewest = sys.maxsize
                    most = 0
                    for si, sub in enumerate(subs):
                        data = self._validate(_sub(sub), parent, (ci, ri, si))
                        self.request_data[(ci, ri, si)] = data
                        fewest = min(fewest, data.num_devices)
                        most = max(most, data.num_devices)
                    min_devices += fewest
                    depth += most + len(subs) + 2
                else:
                    data = self._validate(_exact(request), None, (ci, ri, 0))
                    self.request_data[(ci, ri, 0)] = data
                    min_devices += data.num_devices
                    depth += data.num_devices + 2
            if min_devices > ALLOCATION_RESULTS_MAX_SIZE:
                raise AllocationError(
                    f"claim {_kobj(claim)}: number of requested devices {min_devices} "
                    f"exceeds the claim limit of {ALLOCATION_RESULTS_MAX_SIZE}"
                )
            for i, constraint in enumerate(_claim_devices(claim).get("constraints") or ()):
                names = frozenset(str(n) for n in constraint.get("requests") or ())
                if constraint.get("matchAttribute") is not None:
                    self.constraints[ci].append(MatchAttribute(names, str(constraint["matchAttribute"])))
                elif constraint.get("distinctAttribute") is not None and self.features.knows_consumable_capacity:
                    self.constraints[ci].append(DistinctAttribute(names, str(constraint["distinctAttribute"])))
                else:
                    raise AllocationError(
                        f"claim {_kobj(claim)}, constraint #{i}: empty constraint (unsupported constraint type?)"
                    )
            depth += 1

        # Matching a device against a request does not depend on what is allocated: cache it.
        self.matches_cache = {}
        limit = sys.getrecursionlimit()
        if depth * 2 + 200 > limit:
            sys.setrecursionlimit(depth * 2 + 200)
        try:
            done = self._allocate_one(0, 0, 0, 0, False, (0, 0, 0))
        except _MaxSizeExceeded as err:
            raise AllocationError("allocation max size exceeded") from err
        finally:
            sys.setrecursionlimit(limit)
        if not done:
            if any(p.invalid for p in self.pools):
                raise FailedAllocationOnNode("invalid resource pools were encountered")
            return None
        return [self._allocation_result(ci, claim) for ci, claim in enumerate(self.claims)]

    def _validate(self, request: _Request, parent: _Request | None, key: tuple[int, int, int]) -> _RequestData:
        """validateDeviceRequest: selectors known, class found, how many devices ("All": which ones)."""
        claim = self.claims[key[0]]
        for i, selector in enumerate(request.selectors):
            if not isinstance(selector.get("cel"), Mapping):
                raise AllocationError(
                    f"claim {_kobj(claim)}, request {request.name}, selector #{i}: "
                    "CEL expression empty (unsupported selector type?)"
                )
        if not self.features.admin_access and request.has_admin_access:
            raise AllocationError(
                f"claim {_kobj(claim)}, request {request.name}: admin access is requested, but the feature is disabled"
            )
        class_name = request.class_name
        if not class_name:
            raise AllocationError(
                f"claim {_kobj(claim)}, request {request.name}: missing device class name (unsupported request type?)"
            )
        class_ = self.a.classes.get(class_name)
        if class_ is None:
            raise AllocationError(
                f"claim {_kobj(claim)}, request {request.name}: could not retrieve device class {class_name}: "
                f'deviceclass.resource.k8s.io "{class_name}" not found'
            )
        data = _RequestData(request, parent, class_)
        requests = (request.raw.get("capacity") or {}).get("requests")
        if requests is not None:
            try:
                data.capacity_requests = {str(n): parse_quantity(v) for n, v in requests.items()}
                data.capacity_key = repr(sorted((n, q.value) for n, q in data.capacity_requests.items()))
            except ValueError as err:
                raise AllocationError(f"claim {_kobj(claim)}, request {request.name}: capacity: {err}") from err
        data.tolerations = tuple(
            (
                str(t.get("key", "") or ""),
                str(t.get("operator", "") or ""),
                str(t.get("value", "") or ""),
                str(t.get("effect", "") or ""),
            )
            for t in request.tolerations
        )
        mode = request.mode
        if mode == EXACT_COUNT:
            data.num_devices = request.count
        elif mode == ALL:
            for pool in self.pools:
                if pool.incomplete:
                    raise AllocationError(
                        f"claim {_kobj(claim)}, request {request.name}: asks for all devices, "
                        f"but resource pool {pool.id} is currently being updated"
                    )
                if pool.invalid:
                    raise AllocationError(
                        f"claim {_kobj(claim)}, request {request.name}: asks for all devices, "
                        f"but resource pool {pool.id} is currently invalid"
                    )
                for s in pool.slices:
                    for di, device in enumerate(s.devices):
                        device_id = DeviceID(s.driver, s.pool, device.name)
                        if not self._selectable(key, data, s, di, device_id):
                            continue
                        if self.features.consumable_capacity and not self._fits(data, device, device_id):
                            continue
                        data.all_devices.append(_Candidate(device_id, device, s, pool))
            data.num_devices = len(data.all_devices)
        else:
            raise AllocationError(f"claim {_kobj(claim)}, request {request.name}: unsupported count mode {mode}")
        return data

    # The search.

    def _allocate_one(self, ci: int, ri: int, si: int, di: int, in_sub: bool, start: tuple[int, int, int]) -> bool:
        """allocateOne: find a device for device `di` of request `ri` (alternative `si`) of claim `ci`, and the rest.

        Only devices at or after `start` (pool, slice, device) are tried, so one request's
        devices are chosen as combinations in device order. Raises _MaxSizeExceeded when
        every way on would put more than 32 devices into one claim.
        """
        self.a.num_allocate_one += 1
        if self.deadline is not None and time.monotonic() >= self.deadline:
            raise AllocationAborted("filter operation aborted: context deadline exceeded")
        if ci >= len(self.claims):
            return True
        if ri >= len(self.requests[ci]):
            try:
                return self._allocate_one(ci + 1, 0, 0, 0, False, (0, 0, 0))
            except _MaxSizeExceeded:
                # Not for this claim to give up on: an earlier claim may choose differently.
                return False

        data = self.request_data[(ci, ri, si)]
        if not in_sub and data.parent is not None:
            all_exceeded = True
            sub = 0
            while (ci, ri, sub) in self.request_data:
                try:
                    success = self._allocate_one(ci, ri, sub, di, True, (0, 0, 0))
                except _MaxSizeExceeded:
                    sub += 1
                    continue
                all_exceeded = False
                if success:
                    self.selected_sub[(ci, ri)] = sub
                    return True
                sub += 1
            if all_exceeded:
                raise _MaxSizeExceeded
            return False

        request = data.request
        do_all = request.mode == ALL
        if do_all and not data.all_devices:
            return False
        if di >= data.num_devices:
            return self._allocate_one(ci, ri + 1, 0, 0, False, (0, 0, 0))
        if len(self.results[ci]) + data.num_devices - di > ALLOCATION_RESULTS_MAX_SIZE:
            raise _MaxSizeExceeded

        if do_all:
            # The devices are known; allocation fails unless each of them can be had, in this order.
            undo = self._allocate_device(ci, ri, si, data.all_devices[di], True)
            if undo is None:
                return False
            try:
                done = self._allocate_one(ci, ri, si, di + 1, in_sub, (0, 0, 0))
            except _MaxSizeExceeded:
                self._rollback(ci, data, data.all_devices[di], undo)
                raise
            if not done:
                self._rollback(ci, data, data.all_devices[di], undo)
            return done

        key = (ci, ri, si)
        admin = request.admin_access
        pools = self.pools
        for pi in range(start[0], len(pools)):
            pool = pools[pi]
            if self.features.incomplete_pools_usable:
                if pool.invalid:
                    raise AllocationError(f"pool {pool.pool} is invalid: {pool.invalid_reason}")
            elif pool.incomplete or pool.invalid:
                continue
            first_slice = start[1] if pi == start[0] else 0
            for sli in range(first_slice, len(pool.slices)):
                s = pool.slices[sli]
                first_device = start[2] if pi == start[0] and sli == start[1] else 0
                for dvi in range(first_device, len(s.devices)):
                    device = s.devices[dvi]
                    device_id = DeviceID(pool.driver, pool.pool, device.name)
                    if admin:
                        if ci in self.allocating_devices.get(device_id, ()):
                            continue
                    elif self._in_use(device_id):
                        continue
                    if not self._selectable(key, data, s, dvi, device_id):
                        continue
                    if self.features.consumable_capacity and not self._fits(data, device, device_id):
                        continue
                    candidate = _Candidate(device_id, device, s, pool)
                    undo = self._allocate_device(ci, ri, si, candidate, False, fits_checked=True)
                    if undo is None:
                        continue
                    try:
                        done = self._allocate_one(ci, ri, si, di + 1, in_sub, (pi, sli, dvi + 1))
                    except _MaxSizeExceeded:
                        self._rollback(ci, data, candidate, undo)
                        raise
                    if done:
                        return True
                    self._rollback(ci, data, candidate, undo)
        return False

    def _in_use(self, device_id: DeviceID) -> bool:
        return device_id in self.a.allocated.allocated_devices or bool(self.allocating_devices.get(device_id))

    def _capacity_in_use(self, device_id: DeviceID) -> bool:
        return device_id in self.a.allocated.aggregated_capacity or device_id in self.allocating_capacity

    def _selectable(
        self, key: tuple[int, int, int], data: _RequestData, s: Slice, index: int, device_id: DeviceID
    ) -> bool:
        """isSelectable: class selectors, then request selectors, then the device's own node selection."""
        device = s.devices[index]
        if not self.features.device_binding_and_status and device.binding_conditions:
            return False
        cache_key = (device_id, key)
        cached = self.matches_cache.get(cache_key)
        if cached is not None:
            return cached
        class_ = data.class_
        class_selectors = list((class_.get("spec") or {}).get("selectors") or ())
        if not self._selectors_match(key, device, class_selectors, str((class_.get("metadata") or {}).get("name"))):
            self.matches_cache[cache_key] = False
            return False
        if not self._selectors_match(key, device, data.request.selectors, None):
            self.matches_cache[cache_key] = False
            return False
        if s.per_device_node_selection:
            try:
                matched = node_matches(self.node, device.node_name, device.all_nodes, device.node_selector, device)
            except NodeSelectorParseError as err:
                raise AllocationError(str(err)) from err
            if not matched:
                self.matches_cache[cache_key] = False
                return False
        self.matches_cache[cache_key] = True
        return True

    def _selectors_match(
        self, key: tuple[int, int, int], device: Device, selectors: list[Mapping[str, Any]], class_name: str | None
    ) -> bool:
        for i, selector in enumerate(selectors):
            expression = str((selector.get("cel") or {}).get("expression", ""))
            try:
                if not self.a.evaluator.matches(expression, device.view):
                    return False
            except (SelectorCompileError, SelectorRuntimeError) as err:
                if self.deadline is not None and time.monotonic() >= self.deadline:  # interrupted, as cel-go is
                    raise AllocationAborted("filter operation aborted: context deadline exceeded") from err
                owner = f"class {class_name}" if class_name is not None else f"claim {_kobj(self.claims[key[0]])}"
                kind = "compile" if isinstance(err, SelectorCompileError) else "runtime"
                raise AllocationError(f"{owner}: selector #{i}: CEL {kind} error: {err}") from err
        return True

    def _fits(self, data: _RequestData, device: Device, device_id: DeviceID) -> bool:
        """The request's capacity fits what the device has left (False also when it names unknown capacity)."""
        demands = self.a.demands
        key = (id(device), data.capacity_key)
        known = demands.get(key)
        if known is None or known[0] is not device:
            known = demands[key] = (device, cap.demand(data.capacity_requests, device.capacity))
        return cap.request_fits(
            self.a.allocated.aggregated_capacity.get(device_id), known[1], self.allocating_capacity.get(device_id)
        )

    def _allocate_device(
        self, ci: int, ri: int, si: int, c: _Candidate, must: bool, fits_checked: bool = False
    ) -> _Undo | None:
        """allocateDevice: take the device for the request if nothing forbids it; None when something does.

        With `must` (an "All" request, which wants exactly this device) a violated constraint
        is an error. `fits_checked`: the caller has just found that the request's capacity fits
        the device, and nothing has been taken since.
        """
        data = self.request_data[(ci, ri, si)]
        request = data.request
        device = c.device
        multi = self.features.consumable_capacity and device.allow_multiple_allocations
        if not multi and request.admin_access and ci in self.allocating_devices.get(c.id, ()):
            return None
        if not request.admin_access and self._in_use(c.id):
            return None
        if not self.features.partitionable_devices and device.consumes_counters:
            return None

        undo = _Undo(previous_results=len(self.results[ci]))
        # A device is taken only if every check passes, and a failed check takes back what the others did:
        # unless a violated constraint is an error (`must`), the cheap constraints go first, so that a
        # device of another pool (matchAttribute) costs no counter arithmetic. Upstream checks counters first.
        if not must and not self._add_to_constraints(ci, data, c, undo, must):
            return None
        skip_counters = multi and self._capacity_in_use(c.id)
        if not skip_counters and device.consumes_counters:
            if not self._take_counters(c):
                self._rollback(ci, data, c, undo)
                return None
            undo.counters_reserved = True

        if self.features.device_taints and self._taint_blocks(device, data):
            self._rollback(ci, data, c, undo)
            return None

        if must and not self._add_to_constraints(ci, data, c, undo, must):
            return None

        if not multi:
            self.allocating_devices.setdefault(c.id, set()).add(ci)
            undo.device_marked = True

        consumed: dict[str, Quantity] | None = None
        share_id: str | None = None
        if self.features.consumable_capacity:
            if not fits_checked and not self._fits(data, device, c.id):
                self._rollback(ci, data, c, undo)
                return None
            if multi:
                consumed = cap.consumed_by_request(data.capacity_requests, device.capacity)
                share_id = self.a.new_share_id()
                undo.capacity_entry_existed = c.id in self.allocating_capacity
                undo.consumed = {name: q.value for name, q in consumed.items()}
                cap.add(self.allocating_capacity.setdefault(c.id, {}), undo.consumed)
                undo.capacity_inserted = True

        self.results[ci].append(_Result(data, c, share_id, consumed or None))
        undo.result_added = True
        return undo

    def _add_to_constraints(self, ci: int, data: _RequestData, c: _Candidate, undo: _Undo, must: bool) -> bool:
        """Add the device to the claim's constraints; on a violation take back all `undo` holds and say False
        (raise with `must`)."""
        request = data.request
        base, sub = (data.parent.name, request.name) if data.parent else (request.name, "")
        for constraint in self.constraints[ci]:
            if not constraint.add(base, sub, c.device.attributes, c.id):
                self._rollback(ci, data, c, undo)
                if must:
                    raise AllocationError(
                        f"claim {_kobj(self.claims[ci])}, request {request.name}: cannot add device {c.id} "
                        "because a claim constraint would not be satisfied"
                    )
                return False
            undo.constraints_added += 1
        return True

    def _rollback(self, ci: int, data: _RequestData, c: _Candidate, undo: _Undo) -> None:
        """rollbackDevice: take back what _allocate_device did, last change first."""
        if undo.result_added:
            del self.results[ci][undo.previous_results :]
        if undo.capacity_inserted:
            entry = self.allocating_capacity.get(c.id)
            if entry is not None and cap.subtract(entry, undo.consumed):
                del self.allocating_capacity[c.id]
            if undo.capacity_entry_existed and c.id not in self.allocating_capacity:
                # An earlier share of the device still holds it (and, with it, the device's counters).
                self.allocating_capacity[c.id] = {}
        if undo.device_marked:
            self.allocating_devices[c.id].discard(ci)
        if undo.constraints_added:
            base, sub = (data.parent.name, data.request.name) if data.parent else (data.request.name, "")
            for constraint in reversed(self.constraints[ci][: undo.constraints_added]):
                constraint.remove(base, sub, c.device.attributes, c.id)
        if undo.counters_reserved:
            self._release_counters(c)

    @staticmethod
    def _taint_blocks(device: Device, data: _RequestData) -> bool:
        """A NoSchedule or NoExecute taint no toleration of the request tolerates (other effects do not count)."""
        for taint in device.taints:
            if taint.effect not in _BLOCKING_TAINT_EFFECTS:
                continue
            if not any(_tolerates(t, taint.key, taint.value, taint.effect) for t in data.tolerations):
                return True
        return False

    # Shared counters of partitionable devices.

    def _available_counters(self, pool: Pool) -> CounterSets:
        """What the pool's counter sets have left after the already allocated devices (computed once)."""
        available = self.a.available_counters.get(pool.pool)
        if available is not None:
            return available
        available = {name: dict(counters) for name, counters in pool.counter_sets.items()}
        state = self.a.allocated
        for slices in (pool.slices, pool.slices_not_targeting_node):
            for s in slices:
                for device in s.devices:
                    device_id = DeviceID(s.driver, s.pool, device.name)
                    if not (
                        device_id in state.allocated_devices
                        or device_id in self.a.allocated_shared
                        or device_id in state.aggregated_capacity
                    ):
                        continue
                    for cc in device.consumes_counters:
                        counter_set = available.get(cc.counter_set)
                        if counter_set is None:
                            continue
                        for name, v in cc.counters:
                            if name in counter_set:
                                counter_set[name] -= v  # may go negative: then nothing is left
        self.a.available_counters[pool.pool] = available
        return available

    def _take_counters(self, c: _Candidate) -> bool:
        """checkAvailableCounters: reserve the device's counters if every counter of the pool stays covered."""
        available = self._available_counters(c.pool)
        consumed = self.consumed_counters.setdefault(c.pool.pool, {})
        for cc in c.device.consumes_counters:
            counter_set = consumed.setdefault(cc.counter_set, {})
            for name, v in cc.counters:
                counter_set[name] = counter_set.get(name, 0) + v
        for set_name, counters in available.items():
            used = consumed.get(set_name, {})
            for name, left in counters.items():
                if left < used.get(name, 0):
                    self._release_counters(c)
                    return False
        return True

    def _release_counters(self, c: _Candidate) -> None:
        consumed = self.consumed_counters[c.pool.pool]
        for cc in c.device.consumes_counters:
            counter_set = consumed[cc.counter_set]
            for name, v in cc.counters:
                counter_set[name] -= v

    # The result.

    def _allocation_result(self, ci: int, claim: Mapping[str, Any]) -> dict[str, Any]:
        results: list[dict[str, Any]] = []
        for r in self.results[ci]:
            out: dict[str, Any] = {
                "request": r.request.request_name(),
                "driver": r.candidate.id.driver,
                "pool": r.candidate.id.pool,
                "device": r.candidate.id.device,
            }
            if r.request.request.admin_access:
                out["adminAccess"] = True
            if r.request.request.tolerations and self.features.result_tolerations:
                out["tolerations"] = copy.deepcopy(r.request.request.tolerations)
            if self.features.device_binding_and_status:
                if r.candidate.device.binding_conditions:
                    out["bindingConditions"] = list(r.candidate.device.binding_conditions)
                if r.candidate.device.binding_failure_conditions:
                    out["bindingFailureConditions"] = list(r.candidate.device.binding_failure_conditions)
            if r.share_id is not None:
                out["shareID"] = r.share_id
            if r.consumed:
                out["consumedCapacity"] = {name: str(q) for name, q in sorted(r.consumed.items())}
            results.append(out)

        requests = self.requests[ci]
        config: list[dict[str, Any]] = []
        class_ranges: dict[str, tuple[int, int]] = {}
        for ri in range(len(requests)):
            data = self.request_data[(ci, ri, 0)]
            if data.parent is not None:
                data = self.request_data[(ci, ri, self.selected_sub.get((ci, ri), 0))]
            class_name = str((data.class_.get("metadata") or {}).get("name", ""))
            known = class_ranges.get(class_name)
            if known is not None:
                for i in range(*known):
                    config[i]["requests"].append(data.request_name())
                continue
            first = len(config)
            for cfg in (data.class_.get("spec") or {}).get("config") or ():
                config.append({"source": FROM_CLASS, "requests": [data.request_name()], **_device_configuration(cfg)})
            class_ranges[class_name] = (first, len(config))
        for cfg in _claim_devices(claim).get("config") or ():
            names = list(cfg.get("requests") or ())
            entry = {"source": FROM_CLAIM, **({"requests": names} if names else {}), **_device_configuration(cfg)}
            if not names:
                config.append(copy.deepcopy(entry))
                continue
            for ri, request in enumerate(requests):
                if request.get("name") in names:
                    config.append(copy.deepcopy(entry))
                    continue
                data = self.request_data[(ci, ri, 0)]
                if data.parent is None:
                    continue
                chosen = (request.get("firstAvailable") or [])[self.selected_sub.get((ci, ri), 0)]
                if f"{request.get('name')}/{chosen.get('name')}" in names:
                    config.append(copy.deepcopy(entry))

        devices: dict[str, Any] = {}
        if results:
            devices["results"] = results
        if config:
            devices["config"] = config
        allocation: dict[str, Any] = {"devices": devices}
        try:
            selector = _node_selector(self.results[ci], str((self.node.get("metadata") or {}).get("name", "")))
        except ValueError as err:
            name = (claim.get("metadata") or {}).get("name", "")
            raise AllocationError(f"create NodeSelector for claim {name}: {err}") from err
        if selector is not None:
            allocation["nodeSelector"] = selector
        return allocation


def _claim_devices(claim: Mapping[str, Any]) -> Mapping[str, Any]:
    return (claim.get("spec") or {}).get("devices") or {}


def _requests(claim: Mapping[str, Any]) -> list[Mapping[str, Any]]:
    return list(_claim_devices(claim).get("requests") or ())


def _device_configuration(cfg: Mapping[str, Any]) -> dict[str, Any]:
    """The inline DeviceConfiguration of a class or claim config entry (its opaque parameters)."""
    return {k: copy.deepcopy(v) for k, v in cfg.items() if k != "requests"}


def _tolerates(toleration: tuple[str, str, str, str], key: str, value: str, effect: str) -> bool:
    """resourceclaim.ToleratesTaint."""
    t_key, operator, t_value, t_effect = toleration
    if t_effect and t_effect != effect:
        return False
    if t_key and t_key != key:
        return False
    if operator in ("", "Equal"):
        return t_value == value
    return operator == "Exists"


def _node_selector(results: list[_Result], node_name: str) -> dict[str, Any] | None:
    """createNodeSelector: the node alone once any device is local to it, else the union of the slices' selectors."""
    fields: list[Mapping[str, Any]] = []
    expressions: list[Mapping[str, Any]] = []
    for r in results:
        s, device = r.candidate.slice, r.candidate.device
        if s.per_device_node_selection:
            name, selector = device.node_name, device.node_selector
        else:
            name, selector = s.node_name, s.node_selector
        if name or device.binds_to_node:
            return {
                "nodeSelectorTerms": [
                    {"matchFields": [{"key": "metadata.name", "operator": "In", "values": [node_name]}]}
                ]
            }
        if selector is None:
            continue
        terms = list(selector.get("nodeSelectorTerms") or ())
        if len(terms) > 1:
            raise ValueError(f"unsupported ResourceSlice.NodeSelector with {len(terms)} terms")
        if terms:
            _add_requirements(terms[0].get("matchFields") or (), fields)
            _add_requirements(terms[0].get("matchExpressions") or (), expressions)
    if not fields and not expressions:
        return None
    term: dict[str, Any] = {}
    if expressions:
        term["matchExpressions"] = expressions
    if fields:
        term["matchFields"] = fields
    return {"nodeSelectorTerms": [term]}


def _add_requirements(new: Iterable[Mapping[str, Any]], into: list[Mapping[str, Any]]) -> None:
    for requirement in new:
        values = set(requirement.get("values") or ())
        if not any(
            r.get("key") == requirement.get("key")
            and r.get("operator") == requirement.get("operator")
            and set(r.get("values") or ()) == values
            for r in into
        ):
            into.append(copy.deepcopy(requirement))
