"""The unschedulable pool and the gated pods, with the leftover flush; separate as pods that wait on events."""

from __future__ import annotations

import itertools
import math

from kubesched.config import names
from kubesched.framework.types import PodInfo
from kubesched.queue.queued_pod_info import QueuedPodInfo

DEFAULT_POD_MAX_IN_UNSCHEDULABLE_PODS_DURATION = 300.0
UNSCHEDULABLE_FLUSH_PERIOD = 30.0


class UnschedulablePods:
    """Pods no event has helped yet (in order of arrival, hence of timestamp), and pods a PreEnqueue plugin gates.

    The unschedulable pods are also kept by the plugins that rejected them, so that an
    event finds the pods it may move without walking the whole pool: with thousands of
    pods waiting, every binding in the cluster used to cost a pass over all of them.
    """

    def __init__(self, max_duration: float) -> None:
        self.max_duration = max_duration
        self.pods: dict[str, QueuedPodInfo] = {}  # changed only through _put and _drop, which keep the index
        self.gated: dict[str, QueuedPodInfo] = {}
        self._gating_seen: set[str] = set()  # PreEnqueue plugins that have gated some pod
        self._last_leftover_flush = 0.0
        self._arrivals = itertools.count()
        self._rank: dict[str, int] = {}  # uid -> arrival number: the order of self.pods
        self._rejectors: dict[str, frozenset[str]] = {}  # uid -> the plugins it is indexed under
        self._by_plugin: dict[str, dict[str, QueuedPodInfo]] = {}  # plugin -> pods it rejected
        self._unattributed: dict[str, QueuedPodInfo] = {}  # pods no plugin rejected (errors): any event may help

    def _put(self, qpi: QueuedPodInfo) -> None:
        uid = qpi.pod_info.uid
        if uid in self.pods:
            self._unindex(uid)  # replaced where it stands
        else:
            self._rank[uid] = next(self._arrivals)
        self.pods[uid] = qpi
        rejectors = frozenset(qpi.unschedulable_plugins | qpi.pending_plugins)
        self._rejectors[uid] = rejectors
        if not rejectors:
            self._unattributed[uid] = qpi
        for plugin in rejectors:
            self._by_plugin.setdefault(plugin, {})[uid] = qpi

    def _drop(self, uid: str) -> QueuedPodInfo | None:
        qpi = self.pods.pop(uid, None)
        if qpi is not None:
            self._unindex(uid)
            del self._rank[uid]
        return qpi

    def _unindex(self, uid: str) -> None:
        rejectors = self._rejectors.pop(uid)
        if not rejectors:
            del self._unattributed[uid]
        for plugin in rejectors:
            by_uid = self._by_plugin[plugin]
            del by_uid[uid]
            if not by_uid:
                del self._by_plugin[plugin]

    def get(self, uid: str) -> QueuedPodInfo | None:
        return self.pods.get(uid) or self.gated.get(uid)

    def add(self, qpi: QueuedPodInfo) -> None:
        if qpi.gated:
            self.gated[qpi.pod_info.uid] = qpi
        else:
            self._put(qpi)

    def gate(self, qpi: QueuedPodInfo, plugin: str) -> None:
        """A PreEnqueue plugin keeps the pod out of activeQ."""
        uid = qpi.pod_info.uid
        self._drop(uid)
        qpi.gated = True
        qpi.gating_plugin = plugin
        self._gating_seen.add(plugin)
        self.gated[uid] = qpi

    def release(self, qpi: QueuedPodInfo) -> None:
        """The pod passed PreEnqueue and goes to activeQ: neither unschedulable nor gated any more."""
        uid = qpi.pod_info.uid
        self._drop(uid)
        self.gated.pop(uid, None)
        qpi.gated = False
        qpi.gating_plugin = ""

    def remove(self, qpi: QueuedPodInfo) -> bool:
        """Take out this very pod; False if the pool no longer holds it."""
        held = self.gated if qpi.gated else self.pods
        uid = qpi.pod_info.uid
        if held.get(uid) is not qpi:
            return False
        if qpi.gated:
            del held[uid]
        else:
            self._drop(uid)
        return True

    def take(self, uid: str) -> QueuedPodInfo | None:
        """Take out the unschedulable (not gated) pod with this uid, if there is one."""
        return self._drop(uid)

    def delete(self, uid: str) -> None:
        self._drop(uid)
        self.gated.pop(uid, None)

    def candidates(self, interested: frozenset[str] | None) -> list[QueuedPodInfo]:
        """The pods an event may move: all for a wildcard (None), else those a registered plugin rejected or gates.

        In the pool's order, as a pass over it would find them.
        """
        if interested is None:
            return [*self.pods.values(), *self.gated.values()]
        found = dict(self._unattributed)
        for plugin in interested:
            by_uid = self._by_plugin.get(plugin)
            if by_uid:
                found.update(by_uid)
        rank = self._rank
        out = sorted(found.values(), key=lambda q: rank[q.pod_info.uid]) if len(found) > 1 else list(found.values())
        if not interested.isdisjoint(self._gating_seen):
            out.extend(q for q in self.gated.values() if q.gating_plugin in interested)
        return out

    def with_cross_topology_term(self, pod: PodInfo) -> list[QueuedPodInfo]:
        """Pods whose spread or required affinity may count the (assigned) pod, wherever it runs."""
        out: list[QueuedPodInfo] = []
        for qpi in self.pods.values():
            pi = qpi.pod_info
            if names.POD_TOPOLOGY_SPREAD in qpi.unschedulable_plugins and pi.namespace == pod.namespace:
                out.append(qpi)
            elif any(t.matches(pod, None) for t in pi.required_affinity_terms):
                out.append(qpi)
        return out

    def pop_leftover(self, now: float) -> list[QueuedPodInfo]:
        """The 30 s ticker: take out the pods unschedulable for over 5 minutes."""
        tick = math.floor(now / UNSCHEDULABLE_FLUSH_PERIOD) * UNSCHEDULABLE_FLUSH_PERIOD
        if tick <= self._last_leftover_flush:
            return []
        self._last_leftover_flush = tick
        stale: list[QueuedPodInfo] = []
        for qpi in self.pods.values():
            if tick - qpi.timestamp <= self.max_duration:
                break
            stale.append(qpi)
        for qpi in stale:
            self._drop(qpi.pod_info.uid)
        return stale

    def next_leftover_flush(self) -> float | None:
        """The tick at which the oldest pod will have waited too long."""
        first = next(iter(self.pods.values()), None)
        if first is None:
            return None
        due = first.timestamp + self.max_duration
        return (math.floor(due / UNSCHEDULABLE_FLUSH_PERIOD) + 1) * UNSCHEDULABLE_FLUSH_PERIOD
