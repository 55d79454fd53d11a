"""DynamicResources (pkg/scheduler/framework/plugins/dynamicresources, v1.36): devices for pods' ResourceClaims.

- PreEnqueue: every claim the pod names must exist (and, for a template's claim, be the
  pod's own), or the pod waits for the claim or pod event that changes that.
- PreFilter: the pod's claims; allocated ones may restrict nodes by their allocation's
  node selector; for the others the device classes must exist, and one allocator is
  built over the slices, the devices in use (allocated and in-flight claims) and the
  classes.
- Filter: allocated claims must be usable on the node; the unallocated ones are
  allocated on the node, and the result kept for Score and Reserve.
- PostFilter: when no node fits, an allocated claim that was unusable somewhere and
  serves no other pod is deallocated, so that the next attempt may choose anew.
- Score: allocations that got an earlier firstAvailable alternative score higher.
- Reserve/Unreserve: the node's allocations become in-flight, so later pods' cycles
  see their devices as taken before PreBind writes them (and stop being so on failure).
- PreBind: each claim's allocation (with the finalizer and allocationTimestamp) and the
  pod's reservation are written through the API; devices with binding conditions must
  report them true: PreBind returns a BindingWait, and the scheduler checks again every 5s
  and on each event for the claims, up to bindingTimeout, while other pods go on.

Extended resources a DeviceClass serves (extended.py) ride along as one more claim, made
per node in Filter and created in PreBind. DRANodeAllocatableResources (alpha) is not
implemented.

In a pod-group cycle, an allocation Reserve made for one member is reused by the members
after it that share the claim (the group cycle's state lists such claims); with
DRAWorkloadResourceClaims (alpha) a claim a pod entry shares with its PodGroup's
spec.resourceClaims is reserved for the PodGroup, not the pod, and a group that fits
nowhere and has no scheduled member gives its claims' reservations back in PostFilter.
As in v1.36, a member reusing a pending allocation is not held to the allocation's node
selector, and only the first member to reach PreBind writes the allocation: the others
fail binding ("got allocated elsewhere in the meantime") and come back for the claim as
allocated.
"""

from __future__ import annotations

import copy
import json
import logging
import time
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from typing import Any, Final

import numpy as np

from kubesched.api.errors import ConflictError
from kubesched.api.object import Obj
from kubesched.api.resources import CPU, EPHEMERAL_STORAGE, MEMORY, PODS
from kubesched.api.selectors import NodeSelector, SelectorError, parse_node_selector, validate_node_selector_terms
from kubesched.config import names
from kubesched.config.goduration import go_quote, parse_go_duration
from kubesched.config.types import DynamicResourcesArgs
from kubesched.dra.allocator import AllocationAborted, AllocationError, Allocator, FailedAllocationOnNode
from kubesched.framework import events
from kubesched.framework.cycle_state import CycleState, StateNotFound
from kubesched.framework.interface import (
    BindingWait,
    ClusterEventWithHint,
    EnqueueExtensions,
    FilterPlugin,
    Handle,
    IntArray,
    NodeScoreList,
    PostFilterPlugin,
    PostFilterResult,
    PreBindPlugin,
    PreEnqueuePlugin,
    PreFilterPlugin,
    PreFilterResult,
    QueueingHint,
    ReservePlugin,
    ScorePlugin,
    SignFragment,
)
from kubesched.framework.node_info import NodeInfo
from kubesched.framework.node_table import NodeTable
from kubesched.framework.plugins.dynamicresources.dra_manager import CLASS, DRAManager, allocation_of, shared_manager
from kubesched.framework.plugins.dynamicresources.extended import (
    SPECIAL_NAME,
    find_extended_resource_claim,
    in_memory_claim,
    is_dra_extended_resource_name,
    mapped_resources,
    requests_and_mappings,
)
from kubesched.framework.plugins.dynamicresources.resourceclaim import (
    FINALIZER,
    ClaimError,
    bind_to,
    check_is_for_pod,
    claim_name,
    claim_uid,
    is_for_pod_group,
    is_reserved_for_pod,
    is_subrequest_ref,
    kobj,
    pod_consumer,
    pod_group_claim_name,
    pod_group_uid,
)
from kubesched.framework.plugins.helper.normalize_score import default_normalize_score
from kubesched.framework.status import Code, Status
from kubesched.framework.types import NodeToStatus, PodInfo
from kubesched.release import DRA_WORKLOAD_RESOURCE_CLAIMS

log = logging.getLogger(__name__)

NAME: Final = names.DYNAMIC_RESOURCES
STATE_KEY: Final = "PreFilter" + NAME
MAX_NODE_SCORE: Final = 100
FIRST_AVAILABLE_MAX_SIZE: Final = 8  # resourceapi.FirstAvailableDeviceRequestMaxSize
RETRIES: Final = 5  # retry.DefaultRetry: attempts of a write that met a conflict

NO_CLAIMS_TO_DEALLOCATE: Final = "no new claims to deallocate"
STILL_NOT_SCHEDULABLE: Final = "still not schedulable"
DELETED: Final = "deletion of ResourceClaim completed"
DEALLOCATED: Final = "deallocation of ResourceClaim completed"
CANNOT_ALLOCATE: Final = "cannot allocate all claims"
NOT_AVAILABLE: Final = "resourceclaim not available on the node"
UNRESERVED_FOR_POD_GROUP: Final = "ResourceClaim unreserved for PodGroup"
# What PostFilter answers when this plugin's PreFilter never ran (an earlier PreFilter plugin
# rejected the pod): upstream's state lookup fails, and the error text ends the FitError.
STATE_NOT_FOUND: Final = "not found"
BINDING_TIMEOUT: Final = "device binding timeout"
BINDING_FAILED: Final = "device binding failed"
BINDING_POLL: Final = 5.0  # seconds between checks of the binding conditions, as upstream's PreBind polls


class BindingFailed(Exception):
    """A device reports one of its binding failure conditions (ErrDeviceBindingFailed)."""


@dataclass(slots=True)
class _ClaimInfo:
    """informationForClaim: where an allocated claim can be used; the allocation Reserve made for it."""

    available_on_nodes: NodeSelector | None = None
    allocation: dict[str, Any] | None = None


@dataclass(slots=True)
class _NodeAllocation:
    """Filter's answer for one node: the allocations of the claims to allocate, in order, and for extended
    resources backed by DRA the node's version of the pod's claim for them with the containers' mappings."""

    results: list[dict[str, Any]]
    extended_claim: Obj | None = None
    mappings: list[dict[str, str]] = field(default_factory=list)


@dataclass(eq=False, slots=True)
class _StateData:
    """What PreFilter learned about the pod's claims, shared by the later points of this cycle.

    `claims` holds the pod's claims as of PreFilter (replaced by PreBind's written versions),
    the claim for its extended resources last (claimStore); empty when the pod has none, and
    then every point does nothing for it.
    """

    claims: list[Obj] = field(default_factory=list)
    num_user: int = 0  # the pod's own claims; a claim for extended resources backed by DRA follows them
    pod_scalar: dict[str, int] = field(default_factory=dict)  # the pod's extended requests (draExtendedResource)
    initial_extended_uid: str = ""
    infos: list[_ClaimInfo] = field(default_factory=list)
    allocator: Allocator | None = None
    unavailable: set[int] = field(default_factory=set)
    node_allocations: dict[str, _NodeAllocation] = field(default_factory=dict)
    allocated: list[int] = field(default_factory=list)  # indices of the claims allocated before this cycle
    claims_to_allocate: list[Obj] = field(default_factory=list)  # the others, in order (not those reusing one)
    # Whom each of the pod's own claims is reserved for (DRAWorkloadResourceClaims): the pod or its PodGroup.
    bindings: list[dict[str, str]] = field(default_factory=list)
    pending_results: list[dict[str, Any]] = field(default_factory=list)  # allocations reused from the group cycle
    first_available: bool = False  # some request has alternatives: Score has something to weigh
    # For AllocationMemo: the claims' specs as a key, and what the allocator was built from. With a claim
    # for extended resources to allocate, its spec is the node's: memo_specs holds the others', and the key
    # is made per set of resources DRA serves on a node (extended_variants).
    memo_key: str | None = None
    memo_specs: list[Any] | None = None
    memo_base: tuple[int, int] = (0, 0)
    epochs: dict[tuple[str, str], int] = field(default_factory=dict)
    # The node's version of the claim for extended resources, its mappings and memo key, by what DRA serves.
    extended_variants: dict[tuple[tuple[str, int], ...], tuple[Obj, list[dict[str, str]], str | None]] = field(
        default_factory=dict
    )

    def clone(self) -> _StateData:
        return self

    def to_allocate(self) -> Iterator[tuple[int, Obj]]:
        for i, claim in enumerate(self.claims):
            if allocation_of(claim) is None:
                yield i, claim

    @property
    def extended_claim(self) -> Obj | None:
        return self.claims[self.num_user] if len(self.claims) > self.num_user else None


def _memo_key(specs: list[Any]) -> str:
    """The claims to allocate, by their specs, as AllocationMemo's key."""
    return json.dumps(specs, sort_keys=True, separators=(",", ":"))


def _state_data(state: CycleState) -> _StateData | Status:
    """PreFilter's findings for this cycle, or the error status for a cycle whose PreFilter of this plugin never ran."""
    try:
        data: _StateData = state.read(STATE_KEY)
    except StateNotFound as err:
        return Status(Code.ERROR, err=err)
    return data


def _pod_group_pending(state: CycleState) -> set[str] | None:
    """podGroupStateData: the uids of claims whose pending allocation was made in this pod-group cycle, None
    outside one."""
    group = state.pod_group_cycle
    if group is None:
        return None
    try:
        pending: set[str] = group.read(STATE_KEY)
    except StateNotFound:
        pending = set()
        group.write(STATE_KEY, pending)
    return pending


def has_claims(pod: PodInfo) -> bool:
    return bool((pod.obj.get("spec") or {}).get("resourceClaims"))


def _meta(obj: Mapping[str, Any]) -> Mapping[str, Any]:
    return obj.get("metadata") or {}


def _error(message: str) -> Status:
    return Status(Code.ERROR, err=RuntimeError(message))


def _unresolvable(message: str) -> Status:
    return Status(Code.UNSCHEDULABLE_AND_UNRESOLVABLE, message)


def _parse_time(text: str) -> datetime | None:
    try:
        return datetime.fromisoformat(text.replace("Z", "+00:00"))
    except ValueError:
        return None


class DynamicResourcesWithoutScore(
    PreEnqueuePlugin,
    PreFilterPlugin,
    FilterPlugin,
    PostFilterPlugin,
    ReservePlugin,
    PreBindPlugin,
    EnqueueExtensions,
):
    """The plugin as v1.34 has it: no Score point, so a configuration cannot enable it there.

    Its score methods are kept for DynamicResources below, which adds the ScorePlugin type.
    """

    NAME = NAME

    def sign_pod(self, pod: PodInfo) -> tuple[list[SignFragment], Status | None]:
        """A pod with claims is never batched: the devices it gets are its own."""
        if (pod.obj.get("spec") or {}).get("resourceClaims"):
            return [], Status(Code.UNSCHEDULABLE, "pods with dra resource claims are not signable")
        return [], None

    def __init__(self, args: DynamicResourcesArgs, handle: Handle) -> None:
        self.handle = handle
        self.filter_timeout = parse_go_duration(args.filterTimeout or "0s") / 1e9
        self.binding_timeout = parse_go_duration(args.bindingTimeout or "10m") / 1e9
        self._manager: DRAManager | None = None
        self.workload_claims = handle.release.enabled(DRA_WORKLOAD_RESOURCE_CLAIMS)

    @property
    def manager(self) -> DRAManager:
        """The scheduler's shared DRA manager, looked up on first use (tests may build the plugin without one)."""
        manager = self._manager
        if manager is None:
            manager = self._manager = shared_manager(self.handle)
        return manager

    # Events.

    def events_to_register(self) -> list[ClusterEventWithHint]:
        """Upstream's registrations with queueing hints on."""
        return [
            events.event(events.NODE, events.ADD | events.UPDATE_NODE_LABEL | events.UPDATE_NODE_ALLOCATABLE),
            events.event(events.RESOURCE_CLAIM, events.ADD | events.UPDATE, self.is_schedulable_after_claim_change),
            events.event(events.POD, events.UPDATE_POD_GENERATED_RESOURCE_CLAIM, self.is_schedulable_after_pod_change),
            events.event(events.DEVICE_CLASS, events.ADD | events.UPDATE),
            events.event(events.RESOURCE_SLICE, events.ADD | events.UPDATE),
        ]

    def is_schedulable_after_claim_change(self, pod: PodInfo, old: Any, new: Any) -> QueueingHint:
        """A claim was added or changed: Queue if it is one of the pod's and its status moved, or one was freed."""
        if new is None:
            return QueueingHint.QUEUE_SKIP
        if not isinstance(new, Mapping) or (old is not None and not isinstance(old, Mapping)):
            raise TypeError(f"unexpected object in isSchedulableAfterClaimChange: {type(new).__name__}")
        freed = old is not None and allocation_of(old) is not None and allocation_of(new) is None
        if not freed and not _names_claim(pod, new):
            return QueueingHint.QUEUE_SKIP  # not the pod's claim (by name, so its uid cannot be either's)
        try:
            claims = self.pod_claims(pod)
        except ClaimError:
            return QueueingHint.QUEUE_SKIP
        if freed:
            return QueueingHint.QUEUE  # deallocated: its devices may serve this pod
        uid = claim_uid(new)
        if not any(claim_uid(c) == uid for c in claims):
            return QueueingHint.QUEUE_SKIP
        if old is None:
            return QueueingHint.QUEUE
        if (old.get("status") or {}) == (new.get("status") or {}):
            return QueueingHint.QUEUE_SKIP  # e.g. a finalizer added: nothing the pod waits for
        return QueueingHint.QUEUE

    def is_schedulable_after_pod_change(self, pod: PodInfo, old: Any, new: Any) -> QueueingHint:
        """The pod's own status now names its claims: Queue once all of them exist."""
        if not isinstance(new, PodInfo):
            raise TypeError(f"unexpected object in isSchedulableAfterPodChange: {type(new).__name__}")
        if new.uid != pod.uid:
            return QueueingHint.QUEUE_SKIP
        try:
            self.pod_claims(new)
        except ClaimError:
            return QueueingHint.QUEUE_SKIP
        return QueueingHint.QUEUE

    # The pod's claims.

    def pod_claims(self, pod: PodInfo) -> list[Obj]:
        """foreachPodResourceClaim: the claims of the pod's entries; ClaimError if one is missing or not its own."""
        entries = (pod.obj.get("spec") or {}).get("resourceClaims") or ()
        if not entries:
            return []
        tracker = self.manager.claims
        tracker.sync()
        out: list[Obj] = []
        for entry in entries:
            name, must_check_owner = claim_name(pod, entry)
            if name is None:
                continue  # the claim was not needed (the template's controller said so)
            claim = tracker.get(pod.namespace, name)
            if claim is None:
                raise ClaimError(f'could not find ResourceClaim "{pod.namespace}/{name}"')
            if (claim.get("metadata") or {}).get("deletionTimestamp"):
                raise ClaimError(f'resourceclaim "{name}" is being deleted')
            if must_check_owner:
                check_is_for_pod(pod, claim, self.workload_claims)
            out.append(claim)
        return out

    def pre_enqueue(self, pod: PodInfo) -> Status | None:
        if not has_claims(pod):
            return None
        try:
            self.pod_claims(pod)
        except ClaimError as err:
            return _unresolvable(str(err))
        return None

    # PreFilter.

    def pre_filter(
        self, state: CycleState, pod: PodInfo, nodes: Sequence[NodeInfo]
    ) -> tuple[PreFilterResult | None, Status | None]:
        s = _StateData()
        state.write(STATE_KEY, s)
        try:
            user_claims = self.pod_claims(pod)
        except ClaimError as err:
            return None, _unresolvable(str(err))
        extended_claim = self._pre_filter_extended_resources(pod, s)
        try:
            bindings = self._bindings(pod)
        except ClaimError as err:
            return None, _unresolvable(str(err))
        claims = user_claims + ([extended_claim] if extended_claim is not None else [])
        if not claims:
            return None, Status(Code.SKIP)
        tracker = self.manager.claims
        group_pending = _pod_group_pending(state)
        infos = [_ClaimInfo() for _ in claims]
        to_allocate = 0
        for claim, info in zip(claims, infos, strict=True):
            allocation = allocation_of(claim)
            if allocation is not None:
                raw = allocation.get("nodeSelector")
                if raw is not None:
                    try:
                        validate_node_selector_terms(raw.get("nodeSelectorTerms") or [])
                    except SelectorError as err:
                        return None, _error(str(err))
                    info.available_on_nodes = parse_node_selector(raw)
                continue
            to_allocate += 1
            if group_pending is not None and claim_uid(claim) in group_pending:
                shared = tracker.get_pending_allocation(claim_uid(claim))
                if shared is not None:  # reserved for an earlier member of this group cycle: reused as it is
                    info.allocation = copy.deepcopy(dict(shared))
                    continue
            if tracker.get_pending_allocation(claim_uid(claim)) is not None:
                return None, _unresolvable(f"resource claim {kobj(claim)} is in the process of being allocated")
            if claim is extended_claim:
                continue  # its requests depend on the node: Filter makes them
            status = self._validate_requests(claim)
            if status is not None:
                return None, status
        if to_allocate:
            manager = self.manager
            allocated, epochs = tracker.gather_allocated_state()
            try:
                s.allocator = manager.slices.allocator(allocated)
            except AllocationError as err:
                return None, Status(Code.ERROR, err=err)
            if manager.memo.enabled and manager.slices.memo_safe:
                specs = [
                    c.get("spec")
                    for c, info in zip(claims, infos, strict=True)
                    if allocation_of(c) is None and info.allocation is None
                ]
                if extended_claim is None or allocation_of(extended_claim) is not None:
                    s.memo_key = _memo_key(specs)
                else:
                    s.memo_specs = specs[:-1]  # the claim for extended resources comes last
                s.memo_base = (manager.slices.version, manager.lister.kind_version(CLASS))
                s.epochs = epochs
        s.claims = claims
        s.num_user = len(user_claims)
        s.infos = infos
        s.allocated = [i for i, c in enumerate(claims) if allocation_of(c) is not None]
        s.claims_to_allocate = [
            c for c, info in zip(claims, infos, strict=True) if allocation_of(c) is None and info.allocation is None
        ]
        s.pending_results = [
            info.allocation
            for c, info in zip(claims, infos, strict=True)
            if allocation_of(c) is None and info.allocation is not None
        ]
        s.bindings = bindings
        s.first_available = any(
            r.get("firstAvailable")
            for c in claims
            for r in ((c.get("spec") or {}).get("devices") or {}).get("requests") or ()
        )
        return None, None

    def _pod_group(self, pod: PodInfo) -> Obj | None:
        """getPodGroup: the pod's PodGroup when DRAWorkloadResourceClaims is on and it names one; ClaimError if
        it is not there."""
        group = (pod.obj.get("spec") or {}).get("schedulingGroup")
        name = group.get("podGroupName") if isinstance(group, Mapping) else None
        if not self.workload_claims or not name:
            return None
        found = self.handle.listers().get("PodGroup", pod.namespace, str(name))
        if found is None:
            raise ClaimError(f'podgroup.scheduling.k8s.io "{name}" not found')
        return found

    def _bindings(self, pod: PodInfo) -> list[dict[str, str]]:
        """podResourceClaimBindings: whom each pod entry's claim is reserved for ([] with the gate off: the pod)."""
        if not self.workload_claims:
            return []
        group = self._pod_group(pod)
        return [bind_to(pod, group, entry) for entry in (pod.obj.get("spec") or {}).get("resourceClaims") or ()]

    def _binding(self, s: _StateData, index: int, pod: PodInfo) -> dict[str, str]:
        """claimStore.getBinding: the claim's consumer, the pod itself past the entries (its extended claim)."""
        return dict(s.bindings[index]) if index < len(s.bindings) else pod_consumer(pod)

    def _pre_filter_extended_resources(self, pod: PodInfo, s: _StateData) -> Obj | None:
        """preFilterExtendedResources: the pod's claim for extended resources a DeviceClass serves, if it asks for any.

        The claim made in an earlier cycle if there is one (allocated or not), else one in memory
        without requests (Filter gives each node its own).
        """
        if not self.handle.release.enabled("DRAExtendedResource"):
            return None
        if not any(v and is_dra_extended_resource_name(n) for n, v in pod.requests.items()):
            return None
        manager = self.manager
        if not mapped_resources(pod, manager.device_class_for):
            return None
        s.pod_scalar = {n: v for n, v in pod.requests.items() if n not in (CPU, MEMORY, EPHEMERAL_STORAGE, PODS)}
        claim = find_extended_resource_claim(pod, manager.claims.extended_claims_of(pod.uid)) or in_memory_claim(pod)
        s.initial_extended_uid = claim_uid(claim)
        return claim

    def _validate_requests(self, claim: Obj) -> Status | None:
        """Every request's class must exist: a missing class is a reason to wait for it (a DeviceClass event)."""
        for request in ((claim.get("spec") or {}).get("devices") or {}).get("requests") or ():
            name = str(request.get("name", ""))
            if request.get("exactly") is not None:
                status = self._validate_class(str(request["exactly"].get("deviceClassName") or ""), name)
                if status is not None:
                    return status
            elif request.get("firstAvailable"):
                for sub in request["firstAvailable"]:
                    qualified = f"{name}/{sub.get('name', '')}"
                    status = self._validate_class(str(sub.get("deviceClassName") or ""), qualified)
                    if status is not None:
                        return status
            else:
                return _unresolvable(f"resource claim {kobj(claim)}, request {name}: unknown request type")
        return None

    def _validate_class(self, class_name: str, request_name: str) -> Status | None:
        if not class_name:
            return _error(f"request {request_name}: unsupported request type")
        if self.manager.classes.get(class_name) is None:
            return _unresolvable(f"request {request_name}: device class {class_name} does not exist")
        return None

    # Filter.

    def filter(self, state: CycleState, pod: PodInfo, node_info: NodeInfo) -> Status | None:
        s = _state_data(state)
        if isinstance(s, Status):
            return s
        if not s.claims:
            return None
        node = node_info.node
        assert node is not None
        node_claim: Obj | None = None
        mappings: list[dict[str, str]] = []
        memo_key = s.memo_key
        if s.num_user < len(s.claims):
            node_claim, mappings, extended_key, status = self._filter_extended_resources(s, pod, node.allocatable)
            if status is not None:
                return status
            if node_claim is None and s.num_user == 0:
                return None  # device plugins serve every extended resource here
        unavailable: list[int] = []
        for i in s.allocated:
            claim = s.claims[i]
            selector = s.infos[i].available_on_nodes
            if selector is not None and not selector.matches(node.labels, node.name):
                unavailable.append(i)
                continue
            try:
                ready = self.is_claim_ready_for_binding(claim)
            except BindingFailed:
                unavailable.append(i)
                continue
            if not ready and self.is_claim_timed_out(claim):
                unavailable.append(i)
        results: list[dict[str, Any]] = []
        if s.allocator is not None:
            to_allocate = s.claims_to_allocate
            extended = s.extended_claim
            if node_claim is not None and extended is not None and allocation_of(extended) is None:
                to_allocate = [node_claim if c is extended else c for c in to_allocate]
                memo_key = extended_key
            try:
                result = self._allocate(s, node.obj, node.name, to_allocate, memo_key)
            except AllocationAborted:
                return _error(f"node {node.name}: timed out trying to allocate devices")
            except FailedAllocationOnNode as err:
                return _unresolvable(str(err))
            except AllocationError as err:
                return Status(Code.ERROR, err=err)
            if result is None or len(result) != len(to_allocate):
                return _unresolvable(CANNOT_ALLOCATE)
            results = [*result, *s.pending_results]  # upstream's order, whatever the claims' order
        if unavailable:
            s.unavailable.update(unavailable)
            return _unresolvable(NOT_AVAILABLE)
        if s.allocator is not None:
            s.node_allocations[node.name] = _NodeAllocation(results, node_claim, mappings)
        return None

    def _filter_extended_resources(
        self, s: _StateData, pod: PodInfo, allocatable: Mapping[str, int]
    ) -> tuple[Obj | None, list[dict[str, str]], str | None, Status | None]:
        """filterExtendedResources: this node's version of the pod's claim for extended resources, if DRA serves any,
        with the memo key of the claims to allocate on the node.

        A resource goes to DRA on a node whose allocatable of it is zero (no device plugin there);
        one that neither a device plugin nor a DeviceClass serves does not fit the node. Nodes where
        DRA serves the same resources get the same version of the claim (made once per cycle); it is
        read only from here on (Reserve and PreBind copy it).
        """
        extended_claim = s.extended_claim
        if extended_claim is None:
            return None, [], None, None
        if ((extended_claim.get("spec") or {}).get("devices") or {}).get("requests") is not None:
            # Made in an earlier cycle: PostFilter deletes it, and the next attempt starts anew.
            return None, [], None, _unresolvable("cannot schedule extended resource claim")
        resolve = self.manager.device_class_for
        wanted: dict[str, int] = {}
        for name, quantity in s.pod_scalar.items():
            if not is_dra_extended_resource_name(name) or quantity == 0:
                continue
            if resolve(name) is not None and allocatable.get(name, 0) == 0:
                wanted[name] = quantity
            elif name not in allocatable:
                return None, [], None, _unresolvable("cannot fit resource")
        if s.num_user == 0 and not wanted:
            return None, [], None, None
        if allocation_of(extended_claim) is not None:
            return None, [], None, None
        variant_key = tuple(sorted(wanted.items()))
        variant = s.extended_variants.get(variant_key)
        if variant is None:
            requests, mappings = requests_and_mappings(pod.obj, wanted, resolve)
            node_claim = {**extended_claim, "spec": {"devices": {"requests": requests}}}
            key = None if s.memo_specs is None else _memo_key([*s.memo_specs, node_claim["spec"]])
            variant = s.extended_variants[variant_key] = (node_claim, mappings, key)
        return variant[0], variant[1], variant[2], None

    def _allocate(
        self, s: _StateData, node: Obj, node_name: str, claims: list[Obj], memo_key: str | None
    ) -> list[dict[str, Any]] | None:
        """The allocator's answer for this node, or the same answer found earlier (AllocationMemo) when the
        claims to allocate have a memo key."""
        assert s.allocator is not None
        manager = self.manager
        memo = manager.memo
        if memo_key is not None:
            pools = manager.slices.node_pools(node_name)
            epochs = s.epochs
            if len(pools) == 1:  # the common case: the node's own pool only
                token: tuple[Any, ...] = (s.memo_base, epochs.get(pools[0], 0))
            else:
                token = (s.memo_base, *[epochs.get(p, 0) for p in pools])
            hit, result = memo.get((memo_key, node_name), node, token)
            if hit:
                return result
        deadline = time.monotonic() + self.filter_timeout if self.filter_timeout > 0 else None
        result = s.allocator.allocate(node, claims, deadline=deadline)
        if memo_key is not None:
            memo.put((memo_key, node_name), node, token, result)
        return result

    # Binding conditions (DRADeviceBindingConditions and DRAResourceClaimDeviceStatus, beta and on).

    @staticmethod
    def is_claim_ready_for_binding(claim: Mapping[str, Any]) -> bool:
        """All binding conditions of the allocated devices are true; BindingFailed if a failure condition is."""
        allocation = allocation_of(claim)
        if allocation is None:
            return False
        for result in (allocation.get("devices") or {}).get("results") or ():
            if not result.get("bindingConditions"):
                continue
            device = _device_status(claim, result)
            if device is None:
                return False
            conditions = {c.get("type"): c for c in device.get("conditions") or ()}
            for name in result.get("bindingFailureConditions") or ():
                failed = conditions.get(name)
                if failed is not None and failed.get("status") == "True":
                    raise BindingFailed(
                        f"{BINDING_FAILED}: claim={(claim.get('metadata') or {}).get('name', '')}, "
                        f"reason={failed.get('reason', '')}, message={go_quote(str(failed.get('message', '')))}"
                    )
            for name in result.get("bindingConditions") or ():
                if (conditions.get(name) or {}).get("status") != "True":
                    return False
        return True

    def is_claim_timed_out(self, claim: Mapping[str, Any]) -> bool:
        """The allocation, made at allocationTimestamp, has waited longer than bindingTimeout for its conditions."""
        allocation = allocation_of(claim)
        if allocation is None or not allocation.get("allocationTimestamp"):
            return False
        if not any(
            r.get("bindingConditions") is not None for r in (allocation.get("devices") or {}).get("results") or ()
        ):
            return False
        allocated_at = _parse_time(str(allocation["allocationTimestamp"]))
        now = self._now()
        if allocated_at is None or now is None:
            return False
        return allocated_at + timedelta(seconds=self.binding_timeout) < now

    def _now(self) -> datetime | None:
        client = self.handle.client
        return None if client is None else _parse_time(client.timestamp())

    # PostFilter.

    def post_filter(
        self, state: CycleState, pod: PodInfo, filtered_node_status_map: NodeToStatus
    ) -> tuple[PostFilterResult | None, Status | None]:
        s = _state_data(state)
        if isinstance(s, Status):
            return None, _error(STATE_NOT_FOUND)
        if not s.claims:
            return None, Status(Code.UNSCHEDULABLE, NO_CLAIMS_TO_DEALLOCATE)
        extended = s.extended_claim
        # Upstream picks one at random from a map; here the lowest index, so that runs repeat.
        for index in sorted(s.unavailable):
            claim = s.claims[index]
            if claim is extended:
                if _meta(claim).get("name") != SPECIAL_NAME:
                    break  # deleted below
                continue
            reserved = (claim.get("status") or {}).get("reservedFor") or ()
            if not reserved or (len(reserved) == 1 and reserved[0].get("uid") == pod.uid):
                updated = copy.deepcopy(claim)
                status = updated.setdefault("status", {})
                for key in ("reservedFor", "allocation", "devices"):
                    status.pop(key, None)
                try:
                    self.handle.api_client().update_status(updated)
                except Exception as err:
                    return None, Status(Code.ERROR, err=err)
                return None, Status(Code.UNSCHEDULABLE, DEALLOCATED)
        if extended is not None and _meta(extended).get("name") != SPECIAL_NAME:
            # Made (and maybe allocated) in an earlier cycle: deleted, so that the next attempt starts anew.
            try:
                self._delete_claim(extended)
            except Exception as err:
                return None, Status(Code.ERROR, err=err)
            return None, Status(Code.UNSCHEDULABLE, DELETED)
        if self.workload_claims:
            status = self._unreserve_pod_group_claims(pod)
            if status is not None:
                return None, status
        return None, Status(Code.UNSCHEDULABLE, STILL_NOT_SCHEDULABLE)

    def _unreserve_pod_group_claims(self, pod: PodInfo) -> Status | None:
        """unreservePodGroupClaims: a group none of whose members is scheduled gives back the first of its claims
        reserved for it, so that the next attempt may allocate anew."""
        group = (pod.obj.get("spec") or {}).get("schedulingGroup")
        name = group.get("podGroupName") if isinstance(group, Mapping) else None
        if not name:
            return None
        states = self.handle.pod_groups
        members = states.get(pod.namespace, str(name)) if states is not None else None
        if members is None:
            return _error(f"pod group state not found for pod group {pod.namespace}/{name}")
        if members.scheduled_count() > 0:
            return None
        try:
            pod_group = self._pod_group(pod)
        except ClaimError as err:
            return _error(str(err))
        assert pod_group is not None
        tracker = self.manager.claims
        for entry in (pod_group.get("spec") or {}).get("resourceClaims") or ():
            try:
                claim_name_, must_check_owner = pod_group_claim_name(pod_group, entry)
            except ClaimError as err:
                return _error(str(err))
            if claim_name_ is None:
                continue
            claim = tracker.get(pod.namespace, claim_name_)
            if claim is None:
                return _error(f'resourceclaim.resource.k8s.io "{claim_name_}" not found')
            if must_check_owner and not is_for_pod_group(pod_group, claim):
                continue
            if allocation_of(claim) is None or not is_reserved_for_pod(pod, claim, True):
                continue
            try:
                self._remove_reservation(claim, pod_group_uid(pod_group))
            except Exception as err:  # retried with the pod's next attempt
                log.error("postfilter unreserving claim %s: %s", kobj(claim), err)
                continue
            return _unresolvable(UNRESERVED_FOR_POD_GROUP)
        return None

    def _delete_claim(self, claim: Obj) -> None:
        """deleteClaim: without the scheduler's finalizer first, then deleted."""
        client = self.handle.api_client()
        ns, name = str(_meta(claim).get("namespace") or "default"), str(_meta(claim).get("name") or "")
        for attempt in range(RETRIES):
            current = claim if attempt == 0 else client.get("ResourceClaim", ns, name)
            if current is None:
                raise ClaimError(f'get resourceclaim {ns}/{name}: resourceclaims.resource.k8s.io "{name}" not found')
            updated = copy.deepcopy(current)
            finalizers = list(_meta(updated).get("finalizers") or ())
            if FINALIZER in finalizers:
                finalizers.remove(FINALIZER)
            updated["metadata"]["finalizers"] = finalizers
            try:
                client.update(updated)
                break
            except ConflictError as err:
                if attempt == RETRIES - 1:
                    raise ClaimError(f"update resourceclaim {ns}/{name}: {err}") from err
        client.delete("ResourceClaim", ns, name)

    # Score.

    def score(self, state: CycleState, pod: PodInfo, node_info: NodeInfo) -> tuple[int, Status | None]:
        s = _state_data(state)
        if isinstance(s, Status):
            return 0, s
        if not s.first_available:
            return 0, None
        allocations = s.node_allocations.get(node_info.name)
        if allocations is None:
            return 0, None
        try:
            return compute_score(s.claims, allocations.results), None
        except ValueError as err:
            return 0, Status(Code.ERROR, err=err)

    def score_batch(self, state: CycleState, pod: PodInfo, table: NodeTable, positions: IntArray) -> IntArray:
        """Score per row: zero unless some claim was allocated here by the allocator this cycle."""
        out = np.zeros(len(positions), dtype=np.int64)
        s = _state_data(state)
        if isinstance(s, Status):
            return out
        if not s.first_available or not s.node_allocations:
            return out
        names_ = table.names
        for i, p in enumerate(positions.tolist()):
            allocations = s.node_allocations.get(names_[p])
            if allocations is not None:
                out[i] = compute_score(s.claims, allocations.results)
        return out

    def normalize_score(self, state: CycleState, pod: PodInfo, scores: NodeScoreList) -> Status | None:
        default_normalize_score(MAX_NODE_SCORE, False, scores.scores)
        return None

    # Reserve and Unreserve.

    def reserve(self, state: CycleState, pod: PodInfo, node_name: str) -> Status | None:
        s = _state_data(state)
        if isinstance(s, Status):
            return s
        group_pending = _pod_group_pending(state)
        pending = list(s.to_allocate())
        if not s.claims or not pending or s.allocator is None:
            return None
        extended = s.extended_claim
        need_user_claims = any(claim is not extended for _, claim in pending)
        na = s.node_allocations.get(node_name)
        if na is None or not na.results:
            if not need_user_claims:
                return None  # only extended resources, and device plugins serve them on this node
            return _error("claim allocation not found for node")
        if len(na.results) != len(pending):
            return _error(
                f"internal error, have {len(na.results)} allocations, {len(pending)} claims to allocate, "
                f"want {len(pending)} claims"
            )
        tracker = self.manager.claims
        for (index, claim), shared in zip(pending, na.results, strict=True):
            allocation = copy.deepcopy(
                shared
            )  # this node's answer may be reused for later pods: the claim gets its own
            s.infos[index].allocation = allocation
            if claim is extended:
                if na.extended_claim is None:
                    return _error("extended resource claim not found for node " + node_name)
                claim = na.extended_claim  # the node's version of the claim, with its requests
            allocated = copy.deepcopy(claim)
            finalizers = allocated.setdefault("metadata", {}).setdefault("finalizers", [])
            if FINALIZER not in finalizers:
                finalizers.append(FINALIZER)
            allocated.setdefault("status", {})["allocation"] = allocation
            tracker.signal_pending_allocation(claim_uid(claim), allocated)
            if group_pending is not None:
                group_pending.add(claim_uid(claim))
        return None

    def unreserve(self, state: CycleState, pod: PodInfo, node_name: str) -> None:
        s = _state_data(state)
        if isinstance(s, Status):
            return
        tracker = self.manager.claims if s.claims else None
        group_pending = _pod_group_pending(state)
        for claim in s.claims[: s.num_user]:
            assert tracker is not None
            meta = _meta(claim)
            if tracker.maybe_remove_pending_allocation(claim_uid(claim), False):
                tracker.restore(str(meta.get("namespace") or "default"), str(meta.get("name") or ""))
                if group_pending is not None:
                    group_pending.discard(claim_uid(claim))
            # A reservation for the PodGroup stays: other members may still need the claim.
            if allocation_of(claim) is not None and is_reserved_for_pod(pod, claim):
                try:
                    self._remove_reservation(claim, pod.uid)
                except Exception as err:  # PreBind is retried with the pod: nothing else to do here
                    log.error("unreserve resourceclaim %s: %s", kobj(claim), err)
        extended = s.extended_claim
        if extended is None or tracker is None:
            return
        meta = _meta(extended)
        if tracker.maybe_remove_pending_allocation(s.initial_extended_uid, False):
            tracker.restore(str(meta.get("namespace") or "default"), str(meta.get("name") or ""))
        if meta.get("name") == SPECIAL_NAME:
            return  # never written
        try:
            self._delete_claim(extended)  # written in PreBind: it must not outlive this attempt
        except Exception as err:
            log.error("delete resourceclaim %s: %s", kobj(extended), err)

    def _remove_reservation(self, claim: Obj, uid: str) -> None:
        """Take a consumer out of status.reservedFor (upstream patches the entry away by uid)."""
        client = self.handle.api_client()
        meta = _meta(claim)
        ns, name = str(meta.get("namespace") or "default"), str(meta.get("name") or "")
        for _ in range(RETRIES):
            current = client.get("ResourceClaim", ns, name)
            if current is None or _meta(current).get("uid") != meta.get("uid"):
                return
            status = current.get("status") or {}
            kept = [r for r in status.get("reservedFor") or () if r.get("uid") != uid]
            updated = {**current, "status": {**status, "reservedFor": kept}}
            if not kept:
                updated["status"].pop("reservedFor")
            try:
                client.update_status(updated)
                return
            except ConflictError:
                continue

    # PreBind.

    def pre_bind_pre_flight(self, state: CycleState, pod: PodInfo, node_name: str) -> Status | None:
        s = _state_data(state)
        if isinstance(s, Status):
            return s
        return None if s.claims else Status(Code.SKIP)

    def pre_bind(self, state: CycleState, pod: PodInfo, node_name: str) -> Status | None:
        s = _state_data(state)
        if isinstance(s, Status):
            return s
        if not s.claims:
            return None
        for index, claim in enumerate(s.claims):
            if not is_reserved_for_pod(pod, claim, self.workload_claims):
                try:
                    s.claims[index] = self._bind_claim(s, index, pod, node_name)
                except (ClaimError, ConflictError) as err:
                    return Status(Code.ERROR, err=err)
        if not any(_has_binding_conditions(c) for c in s.claims):
            return None
        client = self.handle.api_client()
        client.record_event(
            pod,
            "Normal",
            "BindingConditionsPending",
            "Scheduling",
            f"waiting for binding conditions for device on node {node_name}",
        )
        status = self._check_binding_conditions(s)
        if status is None or not status.is_wait():
            return status
        return BindingWait(
            lambda: self._check_binding_conditions(s),
            self.binding_timeout,
            lambda: _error(f"{BINDING_TIMEOUT}: context deadline exceeded"),
            poll=BINDING_POLL,
            wake=lambda kind, obj: kind == events.RESOURCE_CLAIM and any(_same_claim(obj, c) for c in s.claims),
        )

    def _bind_claim(self, s: _StateData, index: int, pod: PodInfo, node_name: str) -> Obj:
        """bindClaim: write the allocation from Reserve (if any) and the pod's reservation into the claim.

        The claim for extended resources is created first, from the node's version of it.
        """
        claim = s.claims[index]
        allocation = s.infos[index].allocation
        is_extended = index == s.num_user
        if (
            is_extended
            and allocation is None
            and ((claim.get("spec") or {}).get("devices") or {}).get("requests") is None
        ):
            return claim  # device plugins serve the extended resources on this node
        uid = claim_uid(claim)
        tracker = self.manager.claims
        client = self.handle.api_client()
        written: Obj | None = None
        created = False
        try:
            if is_extended and _meta(claim).get("name") == SPECIAL_NAME:
                claim = self._create_extended_claim(s, pod, node_name)
                created = True
                s.claims[index] = claim  # Unreserve deletes it if binding fails from here on
            current = copy.deepcopy(claim)
            for attempt in range(RETRIES):
                if attempt:
                    meta = _meta(claim)
                    fresh = client.get("ResourceClaim", str(meta.get("namespace") or "default"), str(meta.get("name")))
                    if fresh is None:
                        raise ClaimError(
                            f"get updated claim {kobj(claim)} after conflict: "
                            f'resourceclaims.resource.k8s.io "{meta.get("name")}" not found'
                        )
                    current = copy.deepcopy(fresh)
                try:
                    written = self._write_claim(current, allocation, self._binding(s, index, pod))
                    break
                except ConflictError:
                    if attempt == RETRIES - 1:
                        raise
        finally:
            force = False
            modified = written if written is not None else (claim if created else None)
            if modified is not None:
                try:
                    tracker.assume(modified)
                    force = not is_extended
                except Exception as err:  # concurrent changes: the informer will bring the current version
                    log.debug("claim %s not stored in assume cache: %s", kobj(claim), err)
            if allocation is not None:
                tracker.maybe_remove_pending_allocation(uid, force)
        assert written is not None
        if is_extended:
            self._record_extended_claim(s, pod, node_name, written)
        return written

    def _create_extended_claim(self, s: _StateData, pod: PodInfo, node_name: str) -> Obj:
        """createExtendedResourceClaimInAPI: the node's version of the claim, named by the API server."""
        na = s.node_allocations.get(node_name)
        if na is None or na.extended_claim is None:
            raise ClaimError(f"extended resource claim not found for node {node_name}")
        claim = copy.deepcopy(na.extended_claim)
        claim.get("status", {}).pop("allocation", None)
        claim["metadata"].pop("name", None)
        claim["metadata"].pop("uid", None)
        try:
            return self.handle.api_client().create(claim)
        except Exception as err:
            raise ClaimError(f"create claim for extended resources {kobj(claim)}: {err}") from err

    def _record_extended_claim(self, s: _StateData, pod: PodInfo, node_name: str, claim: Obj) -> None:
        """patchPodExtendedResourceClaimStatus: the pod's status names the claim and which container uses what."""
        na = s.node_allocations.get(node_name)
        mappings = na.mappings if na is not None else []
        if not mappings:
            raise ClaimError(
                "nil or empty request mappings, no update of pod "
                f"{pod.namespace}/{pod.name} ExtendedResourceClaimStatus"
            )
        fields = {
            "extendedResourceClaimStatus": {"requestMappings": mappings, "resourceClaimName": _meta(claim)["name"]}
        }
        try:
            self.handle.api_client().merge_status("Pod", pod.namespace, pod.name, fields)
        except Exception as err:
            raise ClaimError(f"update pod {pod.namespace}/{pod.name} ExtendedResourceClaimStatus: {err}") from err

    def _write_claim(self, claim: Obj, allocation: dict[str, Any] | None, consumer: dict[str, str]) -> Obj:
        client = self.handle.api_client()
        meta = claim.setdefault("metadata", {})
        if meta.get("deletionTimestamp"):
            raise ClaimError(f"claim {kobj(claim)} got deleted in the meantime")
        status = claim.setdefault("status", {})
        if allocation is not None:
            if status.get("allocation") is not None:
                raise ClaimError(f"claim {kobj(claim)} got allocated elsewhere in the meantime")
            if FINALIZER not in (meta.get("finalizers") or ()):
                meta["finalizers"] = [*(meta.get("finalizers") or ()), FINALIZER]
                try:
                    claim = copy.deepcopy(client.update(claim))
                except ConflictError:
                    raise
                except Exception as err:
                    raise ClaimError(f"add finalizer to claim {kobj(claim)}: {err}") from err
                status = claim.setdefault("status", {})
            status["allocation"] = copy.deepcopy(allocation)
        status["reservedFor"] = [*(status.get("reservedFor") or ()), consumer]
        current = status.get("allocation")
        if current is None:
            raise ClaimError(f"claim {kobj(claim)} got deallocated elsewhere in the meantime")
        if not current.get("allocationTimestamp"):
            current["allocationTimestamp"] = client.timestamp()
        try:
            return client.update_status(claim)
        except ConflictError:
            raise
        except Exception as err:
            what = "add allocation and reservation to" if allocation is not None else "add reservation to"
            raise ClaimError(f"{what} claim {kobj(claim)}: {err}") from err

    def _check_binding_conditions(self, s: _StateData) -> Status | None:
        """isPodReadyForBinding: None when every device's binding conditions are true, Wait while some are not
        (PreBind's BindingWait checks again), an error once a failure condition is true or the claim timed out."""
        tracker = self.manager.claims
        for index, claim in enumerate(s.claims):
            meta = claim.get("metadata") or {}
            current = tracker.get(str(meta.get("namespace") or "default"), str(meta.get("name") or ""))
            if current is None:
                return _error(f'could not find ResourceClaim "{kobj(claim)}"')
            s.claims[index] = current
            try:
                ready = self.is_claim_ready_for_binding(current)
            except BindingFailed as err:
                return _error(str(err))
            if not ready:
                if self.is_claim_timed_out(current):
                    return _error(f"{BINDING_TIMEOUT}: claim={meta.get('name', '')}")
                return Status(Code.WAIT)
        return None


def _same_claim(obj: object, claim: Mapping[str, Any]) -> bool:
    """Whether an informer's object is this claim (by namespace and name, as the claim tracker looks it up)."""
    if not isinstance(obj, Mapping):
        return False
    meta, want = _meta(obj), _meta(claim)
    return meta.get("name") == want.get("name") and (meta.get("namespace") or "default") == (
        want.get("namespace") or "default"
    )


def _names_claim(pod: PodInfo, claim: Mapping[str, Any]) -> bool:
    """Whether one of the pod's entries refers to a claim of this namespace and name (directly or by its status)."""
    meta = claim.get("metadata") or {}
    if (meta.get("namespace") or "default") != pod.namespace:
        return False
    name = meta.get("name")
    for entry in (pod.obj.get("spec") or {}).get("resourceClaims") or ():
        if entry.get("resourceClaimName") == name:
            return True
    return any(
        isinstance(st, Mapping) and st.get("resourceClaimName") == name
        for st in (pod.obj.get("status") or {}).get("resourceClaimStatuses") or ()
    )


def _device_status(claim: Mapping[str, Any], result: Mapping[str, Any]) -> Mapping[str, Any] | None:
    for device in (claim.get("status") or {}).get("devices") or ():
        if (
            device.get("device") == result.get("device")
            and device.get("driver") == result.get("driver")
            and device.get("pool") == result.get("pool")
        ):
            return device
    return None


def _has_binding_conditions(claim: Mapping[str, Any]) -> bool:
    allocation = allocation_of(claim)
    return allocation is not None and any(
        r.get("bindingConditions") for r in (allocation.get("devices") or {}).get("results") or ()
    )


def compute_score(claims: Sequence[Mapping[str, Any]], allocations: Sequence[Mapping[str, Any]]) -> int:
    """computeScore: per claim, 8 - i for each firstAvailable alternative i that got devices.

    Claims allocated before this cycle bring their own allocation; the others take this
    node's allocations in order. ValueError when there are fewer allocations than such claims.
    """
    score = 0
    unallocated = 0
    for claim in claims:
        allocation = allocation_of(claim)
        if allocation is None:
            if unallocated >= len(allocations):
                raise ValueError(
                    f"number of allocations {len(allocations)} is smaller than number of claims needing allocation"
                )
            allocation = allocations[unallocated]
            unallocated += 1
        chosen = {
            str(r.get("request", ""))
            for r in (allocation.get("devices") or {}).get("results") or ()
            if is_subrequest_ref(str(r.get("request", "")))
        }
        if not chosen:
            continue
        for request in ((claim.get("spec") or {}).get("devices") or {}).get("requests") or ():
            if request.get("exactly") is not None:
                continue
            for i, sub in enumerate(request.get("firstAvailable") or ()):
                if f"{request.get('name', '')}/{sub.get('name', '')}" in chosen:
                    score += FIRST_AVAILABLE_MAX_SIZE - i
    return score


class DynamicResources(DynamicResourcesWithoutScore, ScorePlugin):
    """Since v1.35 DynamicResources also scores nodes by the prioritized-list alternatives they allow."""


def new(args: Any, handle: Handle) -> DynamicResourcesWithoutScore:
    """The release's plugin: v1.34's does not score."""
    kind = DynamicResources if handle.release.dynamic_resources_scores else DynamicResourcesWithoutScore
    return kind(args if isinstance(args, DynamicResourcesArgs) else DynamicResourcesArgs(), handle)
