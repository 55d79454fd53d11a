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
from typing import TYPE_CHECKING, Any

from kubesched.cache.cache import Cache
from kubesched.cache.snapshot import Snapshot
from kubesched.clock import VirtualClock
from kubesched.config.load import SchedulerConfig
from kubesched.config.trust import import_paths, is_import_path, refusal
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
from kubesched.framework.plugins.registry import new_in_tree_registry
from kubesched.framework.runtime.errors import FrameworkError
from kubesched.framework.runtime.framework import Framework
from kubesched.framework.runtime.out_of_tree import entry_point_registry, import_path_factory
from kubesched.framework.runtime.registry import Registry
from kubesched.framework.status import Status
from kubesched.framework.types import PodInfo
from kubesched.queue.scheduling_queue import HintEntry, PriorityQueue, QueueingHintMap
from kubesched.schedule_one import ScheduleOne

if TYPE_CHECKING:
    from kubesched.metrics import SchedulerMetrics

log = logging.getLogger(__name__)

# Points whose plugins can reject a pod, hence whose events can bring it back.
_REJECTING_POINTS = ("preEnqueue", "preFilter", "filter", "reserve", "permit")
# A pod failing with errors alone is retried until its backoff saturates; then, with
# nothing else left to happen, a simulation may end.
_ERROR_RETRIES_WHEN_IDLE = 5


class Scheduler(ScheduleOne):
    def __init__(
        self,
        config: SchedulerConfig,
        *,
        lister: Lister,
        client: APIClient,
        registry: Registry | None = None,
        seed: int | None = None,
        clock: VirtualClock | None = None,
        record: bool | Callable[[PodInfo], bool] = True,
        observer: SchedulerObserver | None = None,
        bind_latency: float = 0.0,
        pod_lookup: Callable[[str, str], PodInfo | None],
        bind_executor: Callable[[Callable[[], None]], None] | None = None,
    ) -> None:
        reg = new_in_tree_registry()
        if registry is not None:
            reg.merge(registry)
        for name, factory in entry_point_registry().items():
            if name not in reg:  # an installed package cannot replace an in-tree or explicitly given plugin
                reg.register(name, factory)
        raw = config.raw
        refused = refusal(raw, config.trust)
        if refused is not None:  # a SchedulerConfig not made by load_config
            raise FrameworkError(refused.message, config.field_in_document(refused.field) or refused.field)
        for name in import_paths(raw):  # the one place a plugin name becomes an import (when it is used)
            if name not in reg:
                reg.register(name, import_path_factory(name))
        self.clock = clock if clock is not None else VirtualClock()
        self.rng = random.Random(seed)
        self.client = client
        self.lister = lister
        self._pod_lookup = pod_lookup
        self.record = record
        self.observer = observer
        self.bind_latency = bind_latency
        self.bind_executor = bind_executor  # runs binding cycles elsewhere (threads, against a real cluster)
        self.metrics: SchedulerMetrics | None = None
        self.extenders: list[Extender] = list(new_extenders(raw.extenders))
        self.profiles: dict[str, Framework] = {}
        handles: list[Handle] = []
        # pluginConfig entries for plugins that do not exist: kube-scheduler accepts and ignores them.
        self.unknown_plugin_configs = [
            f'profiles[{i}].pluginConfig[{j}].name: no plugin "{pc.name}" exists, so its args are not used'
            for i, prof in enumerate(raw.profiles)
            for j, pc in enumerate(prof.pluginConfig)
            if pc.name not in reg and not is_import_path(pc.name)
        ]
        shared: dict[str, Any] = {}
        for i, (prof, args) in enumerate(zip(raw.profiles, config.profile_args, strict=True)):
            handle = Handle(
                lister=lister,
                client=client,
                parallelism=raw.parallelism,
                clock=self.clock,
                rng=self.rng,
                activate=self._activate,
                report=self._report,
                extenders=self.extenders,
                shared=shared,
            )
            handles.append(handle)
            try:
                self.profiles[prof.schedulerName or ""] = Framework(
                    reg, prof, args, handle, percentage_of_nodes_to_score=raw.percentageOfNodesToScore
                )
            except FrameworkError as err:
                raise FrameworkError(
                    f"initializing profiles: creating profile for scheduler name {prof.schedulerName}: {err}",
                    config.field_in_document(f"profiles[{i}].{err.field}" if err.field else f"profiles[{i}]"),
                ) from err
        self.percentage_of_nodes_to_score = raw.percentageOfNodesToScore or 0
        self.cache = Cache()
        self.snapshot = Snapshot()
        self.next_start_node_index = 0
        self.suspended_bindings = {}
        self.expired_binding_waits = set()
        first = next(iter(self.profiles.values()))
        self.queue = PriorityQueue(
            first.queue_sort.less,  # type: ignore[attr-defined]
            self._pre_enqueue,
            clock=self.clock,
            sort_key=getattr(first.queue_sort, "sort_key", None),
            hint_map=self._build_hint_map(),
            pod_initial_backoff=float(raw.podInitialBackoffSeconds or 0),
            pod_max_backoff=float(raw.podMaxBackoffSeconds or 0),
        )
        for handle in handles:
            handle.nominator = self.queue.nominator
        self._gated: set[str] = set()
        self._handles = handles

    def enable_metrics(self, metrics: SchedulerMetrics, pending_api_calls: Callable[[], int] = lambda: 0) -> None:
        """Record upstream's metrics from now on (kubesched run); simulations leave them off."""
        self.metrics = metrics
        for handle in self._handles:
            handle.metrics = metrics
        metrics.watch(self.queue, self.cache, pending_api_calls)
        self.queue.metrics = metrics  # and count the pods entering each queue

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
                self._report("Gated", pod.key, None, s.message())
        else:
            self._gated.discard(pod.uid)
        return s

    def _activate(self, pods: Iterable[PodInfo]) -> None:
        self.queue.activate(pods)

    def responsible_for(self, pod: PodInfo) -> bool:
        return pod.scheduler_name in self.profiles

    # The loop

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
            if self.suspended_bindings and self.only_repeated_binding_waits():
                nxt = None
            wake = self.queue.next_wakeup()
            if nxt is None:
                retry = self.queue.next_error_backoff()
                if retry is None or all(
                    q.consecutive_errors_count >= _ERROR_RETRIES_WHEN_IDLE for q in self.queue.pending_pods()["backoff"]
                ):
                    return
                nxt = retry
            elif wake is not None:
                nxt = min(nxt, wake)
            if until is not None and nxt > until:
                clock.advance_to(until)
                clock.run_due()
                return
            clock.advance_to(nxt)
