"""The DRA manager the plugin reads through (dynamicresources/dra_manager.go, allocateddevices.go).

One manager serves every profile of a scheduler, as upstream's SharedDRAManager does:

- ResourceClaims as an assume cache: the informer's objects, overlaid by what PreBind
  wrote and assumed until the informer delivers that version or a newer one;
- the devices the allocations of those claims hold, kept up to date from claim events
  (allocatedDevices: added when an allocation appears, removed when it goes);
- in-flight allocations: made in Reserve, not yet written by PreBind, so the next pod's
  cycle already sees their devices as taken;
- ResourceSlices parsed once per object version, and the allocator's grouping of them by
  node built once per set of slices;
- DeviceClasses, read from the lister.

Stores that can be subscribed to (both backends' stores) feed the claim index event by
event. Any other lister is re-read when its ResourceClaim version moves; both ways give
the same index (tests compare them).
"""

from __future__ import annotations

import threading
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from fractions import Fraction
from typing import Any, ClassVar, Final

from kubesched.api.object import Obj
from kubesched.api.quantity import QuantityError
from kubesched.dra import capacity as cap
from kubesched.dra.allocator import AllocatedState, AllocationError, Allocator, Features
from kubesched.dra.model import DeviceID, InvalidObjectError, SharedDeviceID, Slice, parse_slice
from kubesched.dra.quantity import parse as parse_quantity
from kubesched.dra.selector import CELSelectors, DeviceView, SelectorError
from kubesched.framework.interface import Handle, Lister
from kubesched.framework.plugins.dynamicresources.extended import EXTENDED_CLAIM_ANNOTATION, ExtendedResourceCache
from kubesched.release import DEFAULT, Release

CLAIM = "ResourceClaim"
SLICE = "ResourceSlice"
CLASS = "DeviceClass"

Key = tuple[str, str]  # namespace, name


def meta(obj: Mapping[str, Any]) -> Mapping[str, Any]:
    return obj.get("metadata") or {}


def allocation_of(claim: Mapping[str, Any] | None) -> Mapping[str, Any] | None:
    if claim is None:
        return None
    allocation: Mapping[str, Any] | None = (claim.get("status") or {}).get("allocation")
    return allocation


def _version(obj: Mapping[str, Any]) -> int:
    try:
        return int(meta(obj).get("resourceVersion") or 0)
    except ValueError:
        return 0


@dataclass(slots=True)
class DeviceUse:
    """What one allocation holds (foreachAllocatedDevice): dedicated devices, shares, consumed capacity."""

    ids: list[DeviceID] = field(default_factory=list)
    share_ids: list[SharedDeviceID] = field(default_factory=list)
    capacities: list[tuple[DeviceID, dict[str, Fraction]]] = field(default_factory=list)


def allocator_features(release: Release) -> Features:
    """The allocator's switches from the release's DRA gates (AllocatorFeatures in upstream's plugin)."""
    on = release.enabled
    return Features(
        admin_access=on("DRAAdminAccess"),
        prioritized_list=on("DRAPrioritizedList"),
        partitionable_devices=on("DRAPartitionableDevices"),
        device_taints=on("DRADeviceTaints"),
        device_binding_and_status=on("DRADeviceBindingConditions") and on("DRAResourceClaimDeviceStatus"),
        consumable_capacity=on("DRAConsumableCapacity"),
        newest_variant=release.dra_newest_allocator,
        result_tolerations=release.dra_result_tolerations,
        incomplete_pools_usable=release.dra_v1_34_allocator,
        capacity_checked_per_request=release.dra_v1_34_allocator,
    )


def device_use(allocation: Mapping[str, Any], consumable_capacity: bool = True) -> DeviceUse:
    """The devices an allocation takes; admin access takes none."""
    use = DeviceUse()
    for result in (allocation.get("devices") or {}).get("results") or ():
        if result.get("adminAccess"):
            continue
        device_id = DeviceID(str(result.get("driver", "")), str(result.get("pool", "")), str(result.get("device", "")))
        share_id = result.get("shareID")
        if consumable_capacity and share_id is not None:
            use.share_ids.append(SharedDeviceID(*device_id, str(share_id)))
            consumed = result.get("consumedCapacity")
            if consumed is not None:
                try:
                    amounts = {str(n): parse_quantity(v).value for n, v in consumed.items()}
                except (QuantityError, ValueError):
                    continue  # the API server admits only quantities: nothing to count
                use.capacities.append((device_id, amounts))
            continue
        use.ids.append(device_id)
    return use


PoolID = tuple[str, str]  # driver, pool


class PoolEpochs:
    """A counter per pool, moved whenever a device of the pool is taken or freed (allocated or in flight).

    An allocation computed for a node stays valid while the counters of the pools the node
    sees stay where they were (AllocationMemo).
    """

    def __init__(self) -> None:
        self.epochs: dict[PoolID, int] = {}
        self._lock = threading.Lock()

    def bump(self, use: DeviceUse) -> None:
        pools = {(d.driver, d.pool) for d in use.ids}
        pools.update((d.driver, d.pool) for d in use.share_ids)
        pools.update((d.driver, d.pool) for d, _ in use.capacities)
        with self._lock:
            for pool in pools:
                self.epochs[pool] = self.epochs.get(pool, 0) + 1

    def snapshot(self) -> dict[PoolID, int]:
        with self._lock:
            return dict(self.epochs)


class AllocatedDevices:
    """allocatedDevices: the devices of allocated claims, as sets (a device counted twice is freed once)."""

    def __init__(self, epochs: PoolEpochs) -> None:
        self.ids: set[DeviceID] = set()
        self.share_ids: set[SharedDeviceID] = set()
        self.capacities: dict[DeviceID, dict[str, Fraction]] = {}
        self.epochs = epochs

    def _use(self, allocation: Mapping[str, Any]) -> DeviceUse | None:
        """The devices the allocation holds, their pools' epochs moved; None when it holds none."""
        use = device_use(allocation)
        if not (use.ids or use.share_ids or use.capacities):
            return None
        self.epochs.bump(use)
        return use

    def add(self, allocation: Mapping[str, Any]) -> None:
        use = self._use(allocation)
        if use is None:
            return
        self.ids.update(use.ids)
        self.share_ids.update(use.share_ids)
        for device_id, amounts in use.capacities:
            entry = self.capacities.get(device_id)
            if entry is None:
                self.capacities[device_id] = dict(amounts)
            else:
                cap.add(entry, amounts)

    def remove(self, allocation: Mapping[str, Any]) -> None:
        use = self._use(allocation)
        if use is None:
            return
        self.ids.difference_update(use.ids)
        self.share_ids.difference_update(use.share_ids)
        for device_id, amounts in use.capacities:
            entry = self.capacities.get(device_id)
            if entry is not None and cap.subtract(entry, amounts):
                del self.capacities[device_id]

    def state(self) -> AllocatedState:
        """A copy, for one scheduling cycle to add its in-flight allocations to."""
        return AllocatedState(
            allocated_devices=set(self.ids),
            allocated_shared_device_ids=set(self.share_ids),
            aggregated_capacity={d: dict(c) for d, c in self.capacities.items()},
        )


class AssumeError(Exception):
    """Assuming a claim the cache does not hold, or one older than what it holds (the text is upstream's)."""


@dataclass(slots=True)
class _InFlight:
    claim: Obj
    sharers: int


class ClaimTracker:
    """ResourceClaimTracker: claims through an assume cache, their devices, and in-flight allocations."""

    def __init__(self, lister: Lister, release: Release = DEFAULT) -> None:
        self.lister = lister
        self.release = release
        self.epochs = PoolEpochs()
        self.devices = AllocatedDevices(self.epochs)
        self._assumed: dict[Key, Obj] = {}
        self._indexed: dict[Key, Obj] = {}  # per claim: the object the device index last counted
        self._api_seen: dict[Key, Obj] = {}  # per claim: the informer object last looked at (unsubscribed mode)
        self._seen_version = -1
        self._in_flight: dict[str, _InFlight] = {}
        # Claims for extended resources by the uids of the pods that control them (findExtendedResourceClaim).
        self._extended_by_owner: dict[str, set[Key]] = {}
        self._lock = threading.Lock()  # in-flight allocations change in binding threads too (live mode)
        subscribe = getattr(lister, "subscribe", None)
        self.subscribed = callable(subscribe)
        if self.subscribed:
            for claim in lister.list(CLAIM):
                self._refresh(_key(claim))
            assert subscribe is not None
            subscribe(self._on_store_event)

    # The assume cache.

    def _on_store_event(self, kind: str, event: str, old: Obj | None, new: Obj | None) -> None:
        if kind == CLAIM:
            obj = new if new is not None else old
            assert obj is not None
            self._refresh(_key(obj))

    def sync(self) -> None:
        """Catch up with a lister that cannot be subscribed to (a no-op for subscribed stores)."""
        if self.subscribed:
            return
        version = self.lister.kind_version(CLAIM)
        if version == self._seen_version:
            return
        self._seen_version = version
        current = {_key(c): c for c in self.lister.list(CLAIM)}
        for key in [k for k in self._api_seen if k not in current]:
            del self._api_seen[key]
            self._refresh(key)
        for key, claim in current.items():
            if self._api_seen.get(key) is not claim:
                self._api_seen[key] = claim
                self._refresh(key)

    def get(self, namespace: str, name: str) -> Obj | None:
        """The claim as the scheduler knows it: assumed if the informer has not caught up, else the informer's."""
        api = self.lister.get(CLAIM, namespace, name)
        key = (namespace, name)
        assumed = self._assumed.get(key)
        if assumed is None:
            return api
        if api is None or _version(api) > _version(assumed):
            del self._assumed[key]  # deleted, or the informer moved past the assumed version
            return api
        return assumed

    def all(self) -> list[Obj]:
        """Every claim, assumed versions in place (List)."""
        out: list[Obj] = []
        for claim in self.lister.list(CLAIM):
            current = self.get(*_key(claim))
            if current is not None:
                out.append(current)
        return out

    def extended_claims_of(self, pod_uid: str) -> list[Obj]:
        """Claims that may be the pod's claim for extended resources: annotated as one and controlled by a
        pod of this uid, in List order. Upstream scans every claim; the index keeps that to the pod's own."""
        self.sync()
        keys = self._extended_by_owner.get(pod_uid)
        if not keys:
            return []
        if len(keys) > 1:
            return [c for c in self.all() if _key(c) in keys]
        found = self.get(*next(iter(keys)))
        return [] if found is None else [found]

    def assume(self, claim: Obj) -> None:
        """AssumeClaimAfterAPICall: keep what the API server answered until the informer has it."""
        key = _key(claim)
        current = self.get(*key)
        if current is None:
            raise AssumeError(f'could not find ResourceClaim "{key[0]}/{key[1]}"')
        stored, new = _version(current), _version(claim)
        if new < stored:
            raise AssumeError(f'ResourceClaim "{key[0]}/{key[1]}" is out of sync (stored: {stored}, assume: {new})')
        self._assumed[key] = claim
        self._refresh(key)

    def restore(self, namespace: str, name: str) -> None:
        """AssumedClaimRestore: back to the informer's version."""
        if self._assumed.pop((namespace, name), None) is not None:
            self._refresh((namespace, name))

    def _refresh(self, key: Key) -> None:
        """The device index follows the claim's allocation appearing or going (allocatedDevices' handlers); the
        index of claims for extended resources follows the claim."""
        latest = self.get(*key)
        before = self._indexed.get(key)
        if before is not None or latest is not None:
            for uid in _extended_owners(before):
                keys = self._extended_by_owner.get(uid)
                if keys is not None:
                    keys.discard(key)
                    if not keys:
                        del self._extended_by_owner[uid]
            for uid in _extended_owners(latest):
                self._extended_by_owner.setdefault(uid, set()).add(key)
        old_alloc, new_alloc = allocation_of(before), allocation_of(latest)
        if latest is None:
            self._indexed.pop(key, None)
            if old_alloc is not None:
                self.devices.remove(old_alloc)
            return
        self._indexed[key] = latest
        if before is None or old_alloc is None:
            if new_alloc is not None:
                self.devices.add(new_alloc)
        elif new_alloc is None:
            self.devices.remove(old_alloc)

    # In-flight allocations.

    def get_pending_allocation(self, uid: str) -> Mapping[str, Any] | None:
        with self._lock:
            in_flight = self._in_flight.get(uid)
            return None if in_flight is None else allocation_of(in_flight.claim)

    def signal_pending_allocation(self, uid: str, claim: Obj) -> None:
        """SignalClaimPendingAllocation: the claim's allocation is in flight (one more sharer if it already was)."""
        with self._lock:
            in_flight = self._in_flight.get(uid)
            if in_flight is not None:
                in_flight.sharers += 1
                return
            self._in_flight[uid] = _InFlight(claim, 1)
        self._bump(claim)

    def _bump(self, claim: Mapping[str, Any]) -> None:
        allocation = allocation_of(claim)
        if allocation is not None:
            self.epochs.bump(device_use(allocation))

    def maybe_remove_pending_allocation(self, uid: str, force: bool) -> bool:
        """MaybeRemoveClaimPendingAllocation: True when the allocation is no longer in flight because of this call."""
        with self._lock:
            in_flight = self._in_flight.get(uid)
            if in_flight is None:
                return False
            if not (force or in_flight.sharers == 1):
                in_flight.sharers -= 1
                return False
            del self._in_flight[uid]
        self._bump(in_flight.claim)
        return True

    def in_flight_claims(self) -> list[Obj]:
        with self._lock:
            return [f.claim for f in self._in_flight.values()]

    def gather_allocated_state(self) -> tuple[AllocatedState, dict[PoolID, int]]:
        """GatherAllocatedState: the allocated claims' devices plus those of in-flight allocations.

        With it, the pools' epochs at that moment: what an allocation made from this state depends on.
        """
        self.sync()
        epochs = self.epochs.snapshot()
        state = self.devices.state()
        for claim in self.in_flight_claims():
            allocation = allocation_of(claim)
            if allocation is not None:
                state.add_allocation(allocation)
        return state, epochs


def _extended_owners(claim: Mapping[str, Any] | None) -> list[str]:
    """The uids of the controllers of a claim annotated as a pod's claim for extended resources."""
    if claim is None or (meta(claim).get("annotations") or {}).get(EXTENDED_CLAIM_ANNOTATION) != "true":
        return []
    refs = meta(claim).get("ownerReferences") or ()
    return [r["uid"] for r in refs if r.get("controller") and isinstance(r.get("uid"), str)]


def _key(obj: Mapping[str, Any]) -> Key:
    m = meta(obj)
    return str(m.get("namespace") or "default"), str(m.get("name") or "")


class CachedSelectors:
    """CEL selectors evaluated once per device and expression: a device's answer never changes.

    Devices are those of the parsed slices the SliceIndex keeps; when a slice is parsed
    again, its old devices' answers are dropped.
    """

    def __init__(self) -> None:
        self.evaluator = CELSelectors()
        self._answers: dict[DeviceView, dict[str, bool | SelectorError]] = {}

    def matches(self, expression: str, device: DeviceView) -> bool:
        answers = self._answers.get(device)
        if answers is None:
            answers = self._answers[device] = {}
        answer = answers.get(expression)
        if answer is None:
            try:
                answer = self.evaluator.matches(expression, device)
            except SelectorError as err:
                answer = err
            answers[expression] = answer
        if isinstance(answer, SelectorError):
            raise answer
        return answer

    def forget(self, s: Slice) -> None:
        for device in s.devices:
            self._answers.pop(device.view, None)


class SliceIndex:
    """ResourceSlices parsed once per object version, and an allocator built once per set of slices."""

    def __init__(
        self,
        lister: Lister,
        selectors: CachedSelectors,
        classes: Mapping[str, Mapping[str, Any]],
        features: Features | None = None,
    ) -> None:
        self.features = features if features is not None else Features()
        self.lister = lister
        self.selectors = selectors
        self.classes = classes
        self._version = -1
        self._parsed: dict[str, tuple[Obj, Slice]] = {}
        self._allocator: Allocator | None = None
        self._error: str = ""
        self._node_pools: dict[str, tuple[PoolID, ...]] = {}
        self._shared_pools: tuple[PoolID, ...] = ()
        self.memo_safe = True

    @property
    def version(self) -> int:
        """The slices' version the index was built at (moves with every slice change)."""
        self._sync()
        return self._version

    def node_pools(self, node_name: str) -> tuple[PoolID, ...]:
        """The pools an allocation on this node may look at: its own slices' and those of slices for many nodes."""
        return self._node_pools.get(node_name, self._shared_pools)

    def _sync(self) -> None:
        version = self.lister.kind_version(SLICE)
        if version == self._version:
            return
        parsed: dict[str, tuple[Obj, Slice]] = {}
        error = ""
        for raw in self.lister.list(SLICE):
            name = str(meta(raw).get("name") or "")
            known = self._parsed.get(name)
            if known is not None and (known[0] is raw or _same_version(known[0], raw)):
                parsed[name] = known
                continue
            if known is not None:
                self.selectors.forget(known[1])
            try:
                parsed[name] = (raw, parse_slice(raw))
            except InvalidObjectError as err:
                error = error or str(err)
        for name, (_, old) in self._parsed.items():
            if name not in parsed:
                self.selectors.forget(old)
        self._parsed = parsed
        self._version = version
        self._error = error
        self._allocator = None
        own: dict[str, set[PoolID]] = {}
        shared: set[PoolID] = set()
        drivers_of: dict[str, set[str]] = {}
        for _, sl in parsed.values():
            drivers_of.setdefault(sl.pool, set()).add(sl.driver)
            if not sl.node_name or sl.shared_counters:  # as the allocator splits them
                shared.add((sl.driver, sl.pool))
            else:
                own.setdefault(sl.node_name, set()).add((sl.driver, sl.pool))
        self._shared_pools = tuple(sorted(shared))
        self._node_pools = {n: tuple(sorted(pools | shared)) for n, pools in own.items()}
        # The allocator keeps the counters left per pool *name*: with two drivers' pools of one name,
        # what one node gets may depend on which node was looked at first, so nothing is reused then.
        self.memo_safe = all(len(d) == 1 for d in drivers_of.values())

    def allocator(self, allocated: AllocatedState) -> Allocator:
        """An allocator over the current slices with these devices in use (NewAllocator).

        Raises AllocationError for a slice the allocator cannot read.
        """
        self._sync()
        if self._error:
            raise AllocationError(self._error)
        if self._allocator is None:
            self._allocator = Allocator(
                allocated=AllocatedState(),
                classes=self.classes,
                slices=[s for _, s in self._parsed.values()],
                evaluator=self.selectors,
                features=self.features,
            )
        return self._allocator.with_allocated(allocated)


@dataclass(slots=True)
class _MemoEntry:
    node: Obj
    token: tuple[Any, ...]
    result: list[dict[str, Any]] | None


class AllocationMemo:
    """Allocations computed for a node, reused while nothing they depend on has changed.

    An allocation on a node is a function of the claims' specs, the node (its labels), the
    slices and classes, and which devices of the node's pools are in use. The claims' specs
    and the node name are the key; the node object, the slice and class versions and the
    epochs of the node's pools are the token a hit must match. Results with a shareID (a
    share of a device with consumable capacity, named at random) are not kept, nor errors.
    Pods made from one template ask for the same thing: most nodes' answers carry over from
    the previous pod, whose allocation changed one node's pools only.
    """

    MAX_ENTRIES: Final = 100_000
    enabled_by_default: ClassVar[bool] = True  # tests turn it off to compare with the allocator alone

    def __init__(self) -> None:
        self.enabled = self.enabled_by_default
        self._entries: dict[tuple[str, str], _MemoEntry] = {}
        self.hits = 0
        self.misses = 0

    def get(self, key: tuple[str, str], node: Obj, token: tuple[Any, ...]) -> tuple[bool, list[dict[str, Any]] | None]:
        entry = self._entries.get(key)
        if entry is not None and entry.node is node and entry.token == token:
            self.hits += 1
            return True, entry.result
        self.misses += 1
        return False, None

    def put(self, key: tuple[str, str], node: Obj, token: tuple[Any, ...], result: list[dict[str, Any]] | None) -> None:
        if result is not None and any(
            "shareID" in r for a in result for r in (a.get("devices") or {}).get("results") or ()
        ):
            return
        if len(self._entries) >= self.MAX_ENTRIES:
            self._entries.clear()
        self._entries[key] = _MemoEntry(node, token, result)


def _same_version(a: Mapping[str, Any], b: Mapping[str, Any]) -> bool:
    rv = meta(a).get("resourceVersion")
    return bool(rv) and rv == meta(b).get("resourceVersion") and meta(a).get("uid") == meta(b).get("uid")


class DeviceClasses(Mapping[str, Mapping[str, Any]]):
    """DeviceClasses by name, read from the lister when asked (the allocator looks classes up by name)."""

    def __init__(self, lister: Lister, release: Release = DEFAULT) -> None:
        self.lister = lister
        self.release = release

    def __getitem__(self, name: str) -> Mapping[str, Any]:
        found = self.lister.get(CLASS, "", name)
        if found is None:
            raise KeyError(name)
        return found

    def get(self, name: str, default: Any = None) -> Any:
        found = self.lister.get(CLASS, "", name)
        return default if found is None else found

    def __iter__(self) -> Iterator[str]:
        return (str(meta(c).get("name") or "") for c in self.lister.list(CLASS))

    def __len__(self) -> int:
        return sum(1 for _ in self.lister.list(CLASS))


class DRAManager:
    """SharedDRAManager: claims, slices and classes as every profile's DynamicResources sees them."""

    def __init__(self, lister: Lister, release: Release = DEFAULT) -> None:
        self.lister = lister
        self.release = release
        self.claims = ClaimTracker(lister)
        self.classes = DeviceClasses(lister)
        self.selectors = CachedSelectors()
        self.slices = SliceIndex(lister, self.selectors, self.classes, allocator_features(release))
        self.memo = AllocationMemo()
        self._extended = ExtendedResourceCache()
        self._classes_version = -1
        subscribe = getattr(lister, "subscribe", None)
        self._extended_subscribed = callable(subscribe)
        if self._extended_subscribed:
            for cls in lister.list(CLASS):
                self._extended.on_event("ADDED", None, cls)
            assert subscribe is not None
            subscribe(self._on_store_event)

    def _on_store_event(self, kind: str, event: str, old: Obj | None, new: Obj | None) -> None:
        if kind == CLASS:
            self._extended.on_event(event, old, new)

    def device_class_for(self, resource_name: str) -> Obj | None:
        """DeviceClassResolver: the DeviceClass that serves an extended resource name, if any."""
        if not self._extended_subscribed:
            version = self.lister.kind_version(CLASS)
            if version != self._classes_version:
                self._classes_version = version
                self._extended = ExtendedResourceCache()
                for cls in self.lister.list(CLASS):  # a lister without events: its classes, as added in order
                    self._extended.on_event("ADDED", None, cls)
        return self._extended.get(resource_name)


def shared_manager(handle: Handle) -> DRAManager:
    """The manager the scheduler gave this handle (DynamicResources needs all of it, not only the protocol)."""
    manager = handle.dra_manager
    if not isinstance(manager, DRAManager):
        raise RuntimeError("the framework handle has no DRA manager: plugins run only inside a scheduler")
    return manager
