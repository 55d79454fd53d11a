"""Scheduler: profiles, cache, queue and the loop that feeds them pods (scheduler.go).

One scheduling cycle runs at a time (schedule_one.py); its binding cycle is handed to
the clock and runs after it, possibly later in virtual time (Permit waits, bind
latency), exactly where upstream starts a goroutine. Observers (the simulator) hear
every step as events.
"""

from __future__ import annotations

import logging
import random
from collections.abc import Callable, Iterable
from typing import TYPE_CHECKING

from kubesched.cache.cache import Cache
from kubesched.cache.pod_groups import PodGroupStates, pod_group_name
from kubesched.cache.snapshot import Snapshot
from kubesched.clock import VirtualClock
from kubesched.config.load import SchedulerConfig
from kubesched.extender import new_extenders
from kubesched.framework import events
from kubesched.framework.extender import Extender
from kubesched.framework.interface import (
    APIClient,
    ClusterEvent,
    EnqueueExtensions,
    Handle,
    Lister,
)
from kubesched.framework.outcome import SchedulerObserver
from kubesched.framework.plugins.dynamicresources.dra_manager import DRAManager
from kubesched.framework.runtime.registry import Registry
from kubesched.framework.status import Status
from kubesched.framework.types import AttemptRecord, PodInfo
from kubesched.profile import new_map, plugin_registry, unknown_plugin_configs
from kubesched.queue.nominator import Nominator
from kubesched.queue.scheduling_queue import HintEntry, PriorityQueue, QueuedPodInfo, QueueingHintMap
from kubesched.schedule_one import Reporter, ScheduleOne
from kubesched.schedule_one_podgroup import PodGroupCycle

if TYPE_CHECKING:
    from kubesched.metrics import SchedulerMetrics

log = logging.getLogger(__name__)

# Points whose plugins can reject a pod, hence whose events can bring it back.
_REJECTING_POINTS = ("preEnqueue", "preFilter", "filter", "reserve", "permit")
# A pod failing with errors alone is retried until its backoff saturates; then, with
# nothing else left to happen, a simulation may end.
_ERROR_RETRIES_WHEN_IDLE = 5


class Scheduler:
    """The services, the profiles, the queue, and `cycles` (ScheduleOne) composed of them; nothing set later."""

    def __init__(
        self,
        config: SchedulerConfig,
        *,
        lister: Lister,
        client: APIClient,
        registry: Registry | None = None,
        seed: int | None = None,
        clock: VirtualClock | None = None,
        record: bool | Callable[[PodInfo], bool | AttemptRecord] = True,
        observer: SchedulerObserver | None = None,
        bind_latency: float = 0.0,
        pod_lookup: Callable[[str, str], PodInfo | None],
        bind_executor: Callable[[Callable[[], None]], None] | None = None,
        metrics: SchedulerMetrics | None = None,
    ) -> None:
        """scheduler.New: the services first, then the profiles that use them, then the queue that orders pods.

        `metrics` records upstream's metrics (kubesched run); simulations leave them off.
        """
        reg = plugin_registry(config, registry)
        raw = config.raw
        self.clock = clock if clock is not None else VirtualClock()
        self.rng = random.Random(seed)
        self.client = client
        self.lister = lister
        self.extenders: list[Extender] = list(new_extenders(raw.extenders))
        self.unknown_plugin_configs = unknown_plugin_configs(config, reg)
        self.cache = Cache()
        self.release = config.release
        if self.release.workload_aware:
            self.cache.pod_groups = PodGroupStates()
        self.snapshot = Snapshot()
        self._pod_lookup = pod_lookup
        self._reporter = Reporter(observer, self.clock)
        nominator = Nominator()
        services = Handle(
            lister=lister,
            client=client,
            snapshot=self.snapshot,
            parallelism=raw.parallelism,
            nominator=nominator,
            clock=self.clock,
            activate=self._activate,
            rng=self.rng,
            report=self._reporter.event,
            extenders=self.extenders,
            metrics=metrics,
            dra_manager=DRAManager(lister, config.release),
            release=config.release,
            pod_groups=self.cache.pod_groups,
        )
        self.profiles = new_map(config, reg, services)
        self.queue = self._new_queue(config, nominator, metrics)
        self._gated: set[str] = set()
        self.cycles = ScheduleOne(
            profiles=self.profiles,
            queue=self.queue,
            cache=self.cache,
            snapshot=self.snapshot,
            client=client,
            clock=self.clock,
            rng=self.rng,
            extenders=self.extenders,
            reporter=self._reporter,
            pod_lookup=pod_lookup,
            record=record,
            metrics=metrics,
            bind_latency=bind_latency,
            bind_executor=bind_executor,
            percentage_of_nodes_to_score=raw.percentageOfNodesToScore or 0,
        )
        self.group_cycle = PodGroupCycle(self.cycles, self.release) if self.release.workload_aware else None

    def _new_queue(
        self, config: SchedulerConfig, nominator: Nominator, metrics: SchedulerMetrics | None
    ) -> PriorityQueue:
        """NewSchedulingQueue: ordered by the first profile's queue sort (new_map made them all the same)."""
        first = next(iter(self.profiles.values()))
        raw = config.raw
        return PriorityQueue(
            first.queue_sort.less,  # type: ignore[attr-defined]
            self._pre_enqueue,
            clock=self.clock,
            sort_key=getattr(first.queue_sort, "sort_key", None),
            hint_map=self._build_hint_map(),
            pod_initial_backoff=float(raw.podInitialBackoffSeconds or 0),
            pod_max_backoff=float(raw.podMaxBackoffSeconds or 0),
            nominator=nominator,
            metrics=metrics,
        )

    def _build_hint_map(self) -> QueueingHintMap:
        """Per profile, the events of every plugin that can reject; a plugin without a list gets every event."""
        out: QueueingHintMap = {}
        for profile, fwk in self.profiles.items():
            entries: list[HintEntry] = []
            seen: set[str] = set()
            for point in _REJECTING_POINTS:
                for pl in fwk.points[point]:
                    if pl.name in seen:
                        continue
                    seen.add(pl.name)
                    if isinstance(pl, EnqueueExtensions):
                        entries.extend(HintEntry(pl.name, e.event, e.queueing_hint_fn) for e in pl.events_to_register())
                    else:
                        entries.append(HintEntry(pl.name, ClusterEvent(events.WILDCARD, events.ALL), None))
            out[profile] = entries
        return out

    def _pre_enqueue(self, pod: PodInfo) -> Status | None:
        fwk = self.profiles.get(pod.scheduler_name)
        s = fwk.run_pre_enqueue_plugins(pod) if fwk is not None else None
        if s is not None and not s.is_success():
            if pod.uid not in self._gated:
                self._gated.add(pod.uid)
                self._reporter.event("Gated", pod.key, None, s.message())
        else:
            self._gated.discard(pod.uid)
        return s

    def _activate(self, pods: Iterable[PodInfo]) -> None:
        self.queue.activate(pods)

    def responsible_for(self, pod: PodInfo) -> bool:
        return pod.scheduler_name in self.profiles

    def informer_pod(self, namespace: str, name: str) -> PodInfo | None:
        """The pod as the scheduler's informer holds it (parsed), or None if it has none."""
        return self._pod_lookup(namespace, name)

    def schedule_one(self, qpi: QueuedPodInfo) -> None:
        """ScheduleOne: one popped pod through its scheduling cycle; its binding cycle goes to the clock.

        With GenericWorkload, a pod that names a PodGroup brings its group into one cycle instead."""
        if self.group_cycle is not None and pod_group_name(qpi.pod_info.obj) is not None:
            self.group_cycle.schedule(qpi)
        else:
            self.cycles.schedule_one(qpi)

    # The loop

    def _retried_enough(self, qpi: QueuedPodInfo) -> bool:
        """A pod whose errors (or whose group's failures) repeated enough: alone, it would only fail again."""
        if qpi.consecutive_errors_count >= _ERROR_RETRIES_WHEN_IDLE:
            return True
        return self.group_cycle is not None and self.group_cycle.stuck(qpi.pod_info, _ERROR_RETRIES_WHEN_IDLE)

    def run(self, until: float | None = None) -> None:
        """Schedule until nothing is left to do: the queue idle and no timer pending (or `until` reached).

        Pods left unschedulable do not keep the run alive: only a timer (a scenario step,
        a binding, a Permit timeout) or a pod in backoff can change anything. Nor does a
        binding that waits in PreBind again after its wait ran out once, with nothing else
        left to happen.
        """
        clock = self.clock
        while True:
            clock.run_due()
            qpi = self.queue.pop()
            if qpi is not None:
                self.schedule_one(qpi)
                continue
            nxt = clock.next_timer()
            if self.cycles.suspended_bindings and self.cycles.only_repeated_binding_waits():
                nxt = None
            wake = self.queue.next_wakeup()
            if nxt is None:
                retry = self.queue.next_error_backoff()
                if retry is None or all(self._retried_enough(q) for q in self.queue.pending_pods()["backoff"]):
                    return
                nxt = retry
            elif wake is not None:
                nxt = min(nxt, wake)
            if until is not None and nxt > until:
                clock.advance_to(until)
                clock.run_due()
                return
            clock.advance_to(nxt)
