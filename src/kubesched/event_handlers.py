"""Cluster events into the cache and the queue (eventhandlers.go).

Assigned pods feed the cache; unassigned pods of our profiles feed the queue; every
change is also offered to the queue as a cluster event so that pods rejected by a
plugin interested in it are retried.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from typing import Any

from kubesched.api.errors import FieldError
from kubesched.backend.store import ObjectStore
from kubesched.cache.cache import CacheError
from kubesched.config.load import SchedulerConfig
from kubesched.framework import events
from kubesched.framework.interface import ClusterEvent
from kubesched.framework.node_info import ParsedNode, parse_node
from kubesched.framework.types import PodInfo, new_pod_info, pod_labels
from kubesched.release import GANG_SCHEDULING
from kubesched.scheduler import Scheduler

log = logging.getLogger(__name__)


def node_update_action(old: ParsedNode, new: ParsedNode) -> int:
    action = 0
    if old.allocatable != new.allocatable:
        action |= events.UPDATE_NODE_ALLOCATABLE
    if old.labels != new.labels:
        action |= events.UPDATE_NODE_LABEL
    if old.taints != new.taints or old.unschedulable != new.unschedulable:
        action |= events.UPDATE_NODE_TAINT
    if (old.obj.get("status") or {}).get("conditions") != (new.obj.get("status") or {}).get("conditions"):
        action |= events.UPDATE_NODE_CONDITION
    if (old.obj.get("metadata") or {}).get("annotations") != (new.obj.get("metadata") or {}).get("annotations"):
        action |= events.UPDATE_NODE_ANNOTATION
    if old.declared_features != new.declared_features:
        action |= events.UPDATE_NODE_DECLARED_FEATURE
    return action


class EventHandlers:
    def __init__(self, sched: Scheduler) -> None:
        self.sched = sched

    def _event(self, resource: str, action: int, old: object, new: object) -> None:
        self.sched.queue.move_all_to_active_or_backoff_queue(ClusterEvent(resource, action), old, new)

    def _event_for(self, resource: str, action: int, old: object, new: object, pods: list[Any]) -> None:
        """An event offered only to `pods` (upstream's PreEnqueueCheck)."""
        self.sched.queue.move_all_to_active_or_backoff_queue(ClusterEvent(resource, action), old, new, pods)

    def add_node(self, node: ParsedNode) -> None:
        self.sched.cache.add_node(node)
        self._event(events.NODE, events.ADD, None, node)

    def update_node(self, old: ParsedNode, new: ParsedNode) -> None:
        self.sched.cache.update_node(old, new)
        action = node_update_action(old, new)
        if action:
            self._event(events.NODE, action, old, new)

    def delete_node(self, node: ParsedNode) -> None:
        try:
            self.sched.cache.remove_node(node.name)
        except CacheError as err:
            log.error("Scheduler cache RemoveNode failed err=%s", err)
        self._event(events.NODE, events.DELETE, node, None)

    def on_object(self, kind: str, event: str, old: object, new: object) -> None:
        """A storage object changed: pods rejected by plugins watching that kind may be retried."""
        action = {"ADDED": events.ADD, "MODIFIED": events.UPDATE, "DELETED": events.DELETE}[event]
        self._event(kind, action, old, new)
        if self.sched.cycles.suspended_bindings:
            self.sched.cycles.wake_bindings(kind, new if new is not None else old)

    def add_pod(self, pod: PodInfo) -> None:
        if pod.node_name:
            self._add_assigned(pod)
        elif self.sched.responsible_for(pod):
            groups = self.sched.cache.pod_groups
            if groups is not None:
                groups.add(pod)
            self.sched.queue.add(pod)
            if groups is not None and self.sched.release.enabled(GANG_SCHEDULING):
                # A new member may complete its gang (GangScheduling's hint for Pod/Add).
                self._event(events.UNSCHEDULED_POD, events.ADD, None, pod)

    def _add_assigned(self, pod: PodInfo) -> None:
        moved_from: PodInfo | None = None
        try:
            moved_from = self.sched.cache.add_pod(pod)
        except CacheError as err:
            log.error("Scheduler cache AddPod failed err=%s", err)
        self.sched.queue.assigned_pod_added(pod)
        if moved_from is not None:
            # Another binder won the race for a pod assumed here: the room it held on the assumed node is free
            # again, which is an assigned pod's deletion to the pods it kept out. (Upstream's cache moves the pod
            # without a word, and those pods wait for the five-minute flush of the unschedulable pods.)
            self.sched.queue.move_all_to_active_or_backoff_queue(
                ClusterEvent(events.ASSIGNED_POD, events.DELETE), moved_from, None
            )

    def update_pod(self, old: PodInfo, new: PodInfo) -> None:
        if not old.node_name and new.node_name:
            self.sched.cycles.expired_binding_waits.discard(new.uid)  # bound: it waits no more
            self.sched.queue.delete(old)
            self._add_assigned(new)
        elif new.node_name:
            try:
                self.sched.cache.update_pod(old, new)
            except CacheError as err:
                log.error("Scheduler cache UpdatePod failed err=%s", err)
            action = events.pod_update_action(old, new)
            if action:
                self.sched.queue.assigned_pod_updated(old, new, action)
        elif self.sched.responsible_for(new):
            if self.sched.cache.is_assumed_pod(new):
                # Held by a binding cycle: only the start of its deletion matters (updatePodInSchedulingQueue).
                if new.deleting and not old.deleting:
                    self._assumed_pod_deleting(new)
                return
            if self.sched.cache.pod_groups is not None:
                self.sched.cache.pod_groups.update(old, new)
            self.sched.queue.update(old, new)
            if old.nominated_node_name and old.nominated_node_name != new.nominated_node_name:
                # The old nominated node loses a pod that lower or equal priority pods counted there.
                # Upstream offers the event to the pod itself too; after a failed binding cycle clears
                # its own nomination, that retries it forever with nothing changed: left out here.
                waiting = [
                    q
                    for q in (*self.sched.queue.unschedulable_pods.values(), *self.sched.queue.gated_pods.values())
                    if q.pod_info.priority <= old.priority and q.pod_info.uid != new.uid
                ]
                self._event_for(events.ASSIGNED_POD, events.DELETE, old, None, waiting)

    def _assumed_pod_deleting(self, pod: PodInfo) -> None:
        """handleAssumedPodDeletion: a pod waiting at Permit is rejected; one further on is forgotten."""
        assumed = self.sched.cache.get_pod(pod.uid) or pod
        fwk = self.sched.profiles.get(pod.scheduler_name)
        if fwk is None or not fwk.reject_waiting_pod(pod.uid):
            try:
                self.sched.cache.forget_pod(assumed)
            except CacheError as err:
                log.error("Scheduler cache ForgetPod failed err=%s", err)
        self._event(events.ASSIGNED_POD, events.DELETE, assumed, None)

    def delete_pod(self, pod: PodInfo) -> None:
        self.sched.cycles.expired_binding_waits.discard(pod.uid)
        if pod.node_name:
            try:
                self.sched.cache.remove_pod(pod)
            except CacheError as err:
                log.error("Scheduler cache RemovePod failed err=%s", err)
            self._event(events.ASSIGNED_POD, events.DELETE, pod, None)
            return
        self.sched.queue.delete(pod)
        if self.sched.cache.pod_groups is not None:
            self.sched.cache.pod_groups.remove(pod)
        fwk = self.sched.profiles.get(pod.scheduler_name)
        if fwk is not None and fwk.reject_waiting_pod(pod.uid):
            # It was assumed and held room: its deletion frees that room for others.
            self._event(events.ASSIGNED_POD, events.DELETE, pod, None)


def informed_scheduler(
    config: SchedulerConfig,
    store: ObjectStore,
    *,
    preparsed: Callable[[dict[str, Any]], PodInfo | None] | None = None,
    **kw: Any,
) -> Scheduler:
    """A scheduler fed by a store's events, reading pods from the parsed copies, as from its informer.
    `preparsed` gives the PodInfo already made of a pod about to be added (simulate's admission parsed it)."""
    bridge: InformerBridge
    sched = Scheduler(config, lister=store, pod_lookup=lambda ns, name: bridge.pods.get((ns, name)), **kw)
    bridge = InformerBridge(EventHandlers(sched), preparsed)
    store.subscribe(bridge)
    return sched


class InformerBridge:
    """Store events (kind, ADDED|MODIFIED|DELETED, old, new) into the handlers, parsing each object once.

    It keeps the parsed pods and nodes, as the informers' indexers keep upstream's. An
    object the scheduler cannot read (a bad quantity, a malformed selector) is logged and
    left out, as if it had not arrived: one bad object never stops the others.
    """

    def __init__(
        self, handlers: EventHandlers, preparsed: Callable[[dict[str, Any]], PodInfo | None] | None = None
    ) -> None:
        self.handlers = handlers
        self.preparsed = preparsed  # a pod parsed before it was added, so as not to parse it twice
        self.pods: dict[tuple[str, str], PodInfo] = {}
        self.nodes: dict[str, ParsedNode] = {}

    def __call__(self, kind: str, event: str, old: Any, new: Any) -> None:
        try:
            if kind == "Pod":
                self._pod(event, old, new)
            elif kind == "Node":
                self._node(event, old, new)
            elif kind in events.OTHER_RESOURCES:
                self.handlers.on_object(kind, event, old, new)
        except (FieldError, TypeError, ValueError, AttributeError, KeyError) as err:
            obj = new if new is not None else old
            meta = (obj or {}).get("metadata") or {}
            where = "/".join(p for p in (meta.get("namespace"), meta.get("name")) if p)
            log.error("Skipping %s %s that cannot be read: %s", kind, where, err)

    def _pod(self, event: str, old: Any, new: Any) -> None:
        if event == "DELETED":
            info = self.pods.pop(_key(old), None)
            if info is not None:
                self.handlers.delete_pod(info)
            return
        prev = self.pods.get(_key(new))
        info = self.preparsed(new) if prev is None and self.preparsed is not None else None
        if info is None or info.obj is not new:
            info = _reparse_pod(prev, new)
        self.pods[_key(new)] = info
        if prev is None:
            self.handlers.add_pod(info)
        else:
            self.handlers.update_pod(prev, info)

    def _node(self, event: str, old: Any, new: Any) -> None:
        if event == "DELETED":
            node = self.nodes.pop(old["metadata"]["name"], None)
            if node is not None:
                self.handlers.delete_node(node)
            return
        parsed = parse_node(new)
        prev = self.nodes.get(parsed.name)
        self.nodes[parsed.name] = parsed
        if prev is None:
            self.handlers.add_node(parsed)
        else:
            self.handlers.update_node(prev, parsed)


def _key(obj: dict[str, Any]) -> tuple[str, str]:
    meta = obj.get("metadata") or {}
    return str(meta.get("namespace") or "default"), str(meta.get("name") or "")


def _same(a: Any, b: Any) -> bool:
    """Identity first (the embedded cluster reuses spec values); a real API server sends fresh objects."""
    return a is b or a == b


def _same_but_node_name(old: dict[str, Any], new: dict[str, Any]) -> bool:
    """Whether `new` is `old` with spec.nodeName set (or changed): one dict comparison, which compares each
    value by identity first and then by equality, as _same does."""
    if "nodeName" not in new:
        return False
    probe = dict(new)
    if "nodeName" in old:
        probe["nodeName"] = old["nodeName"]
    else:
        del probe["nodeName"]
    return probe == old


def _reparse_pod(prev: PodInfo | None, new: dict[str, Any]) -> PodInfo:
    """A binding changes only spec.nodeName (and status), and labels (PodTopologyLabels admission copies
    the node's zone and region): reuse the parsed constraints then. Labels reach the parse elsewhere only
    through matchLabelKeys and mismatchLabelKeys, so a spec without them takes the new labels as they are.
    Of the metadata, the parse holds uid and deletionTimestamp besides the key: those must not change."""
    if prev is not None:
        new_spec = new.get("spec") or {}
        old_meta = prev.obj.get("metadata") or {}
        new_meta = new.get("metadata") or {}
        if (
            _same_but_node_name(prev.obj.get("spec") or {}, new_spec)
            and old_meta.get("uid") == new_meta.get("uid")
            and old_meta.get("deletionTimestamp") == new_meta.get("deletionTimestamp")
        ):
            node_name = str(new_spec.get("nodeName") or "")
            if _same(old_meta.get("labels"), new_meta.get("labels")):
                return prev.rebound(node_name, obj=new)
            if not _label_keys_used(new_spec):
                return prev.rebound(node_name, obj=new, labels=pod_labels(new))
    return new_pod_info(new)


_AFFINITY_KINDS = ("podAffinity", "podAntiAffinity")


def _names_label_keys(term: Any) -> bool:
    return isinstance(term, dict) and ("matchLabelKeys" in term or "mismatchLabelKeys" in term)


def _label_keys_used(spec: dict[str, Any]) -> bool:
    """Whether a spread constraint or pod (anti-)affinity term names matchLabelKeys or mismatchLabelKeys."""
    for t in spec.get("topologySpreadConstraints") or ():
        if _names_label_keys(t):
            return True
    affinity = spec.get("affinity") or {}
    for kind in _AFFINITY_KINDS:
        rules = affinity.get(kind)
        if not rules:
            continue
        for t in rules.get("requiredDuringSchedulingIgnoredDuringExecution") or ():
            if _names_label_keys(t):
                return True
        for w in rules.get("preferredDuringSchedulingIgnoredDuringExecution") or ():
            if _names_label_keys((w or {}).get("podAffinityTerm")):
                return True
    return False
