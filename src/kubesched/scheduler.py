"""Scheduler: profiles, cache, queue and the scheduling/binding cycles (scheduler.go, schedule_one.go).

The binding cycle runs synchronously after the scheduling cycle here; the
asynchronous binding cycle, Permit waiting and PostFilter preemption come with the
full lifecycle. Observers (the simulator, later the real-cluster recorder) hear
about every outcome through `SchedulerObserver`.
"""

from __future__ import annotations

import dataclasses
import logging
import random
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Protocol

from kubesched.cache.cache import Cache
from kubesched.cache.snapshot import Snapshot
from kubesched.config.load import SchedulerConfig
from kubesched.framework import events
from kubesched.framework.cycle_state import CycleState
from kubesched.framework.interface import ClusterEvent, EnqueueExtensions, Handle
from kubesched.framework.plugins.registry import NOT_BUILT, new_in_tree_registry
from kubesched.framework.runtime.framework import Framework
from kubesched.framework.runtime.registry import Registry
from kubesched.framework.status import Code, Status
from kubesched.framework.types import PodInfo
from kubesched.queue.scheduling_queue import PriorityQueue, QueuedPodInfo
from kubesched.schedule_one import AttemptRecord, FitError, NoNodesAvailable, schedule_pod

log = logging.getLogger(__name__)

REASON_UNSCHEDULABLE = "Unschedulable"


@dataclass(slots=True)
class Outcome:
    pod: PodInfo
    result: str  # Scheduled | Unschedulable | Error
    node: str | None
    message: str
    attempts: int
    record: AttemptRecord | None


class SchedulerObserver(Protocol):
    def on_outcome(self, outcome: Outcome) -> None: ...


class Scheduler:
    def __init__(
        self,
        config: SchedulerConfig,
        *,
        lister: Any,
        client: Any,
        registry: Registry | None = None,
        seed: int | None = None,
        clock: Callable[[], float] = lambda: 0.0,
        record: bool = True,
        observer: SchedulerObserver | None = None,
    ) -> None:
        reg = new_in_tree_registry()
        if registry is not None:
            reg.merge(registry)
        raw = config.raw
        self.profiles: dict[str, Framework] = {}
        for prof, args in zip(raw.profiles, config.profile_args, strict=True):
            handle = Handle(lister=lister, client=client, parallelism=raw.parallelism)
            self.profiles[prof.schedulerName or ""] = Framework(
                reg, prof, args, handle, percentage_of_nodes_to_score=raw.percentageOfNodesToScore, not_built=NOT_BUILT
            )
        self.percentage_of_nodes_to_score = raw.percentageOfNodesToScore or 0
        self.cache = Cache()
        self.snapshot = Snapshot()
        self.next_start_node_index = 0
        self.rng = random.Random(seed)
        self.record = record
        self.observer = observer
        first = next(iter(self.profiles.values()))
        self.queue = PriorityQueue(
            first.queue_sort.less,  # type: ignore[attr-defined]
            self._pre_enqueue,
            clock=clock,
            sort_key=getattr(first.queue_sort, "sort_key", None),
        )
        self._plugin_events = self._collect_events()

    @property
    def missing_plugins(self) -> list[str]:
        seen: dict[str, None] = {}
        for fwk in self.profiles.values():
            for name in fwk.missing:
                seen.setdefault(name, None)
        return list(seen)

    def _collect_events(self) -> dict[str, list[ClusterEvent] | None]:
        """Per plugin, the events it registered; None means interested in every event."""
        out: dict[str, list[ClusterEvent] | None] = {}
        for fwk in self.profiles.values():
            for name, pl in fwk.plugins_map.items():
                if isinstance(pl, EnqueueExtensions):
                    out[name] = [e.event for e in pl.events_to_register()]
                else:
                    out.setdefault(name, None)
        return out

    def _pre_enqueue(self, pod: PodInfo) -> Status | None:
        fwk = self.profiles.get(pod.scheduler_name)
        return fwk.run_pre_enqueue_plugins(pod) if fwk is not None else None

    def responsible_for(self, pod: PodInfo) -> bool:
        return pod.scheduler_name in self.profiles

    def on_cluster_event(self, resource: str, action: int) -> None:
        """MoveAllToActiveOrBackoffQueue: requeue pods whose rejecting plugins registered this event."""

        def interested(plugins: set[str]) -> bool:
            for name in plugins:
                registered = self._plugin_events.get(name)
                if registered is None:
                    return True
                if any(events.matches(e, resource, action) for e in registered):
                    return True
            return False

        self.queue.move_all_to_active_queue(f"{resource}{action}", interested)

    # The scheduling cycle

    def schedule_one(self, qpi: QueuedPodInfo) -> None:
        pod = qpi.pod_info
        fwk = self.profiles.get(pod.scheduler_name)
        if fwk is None or pod.deleting or self.cache.is_assumed_pod(pod):
            self.queue.done(pod.uid)
            return
        state = CycleState()
        record = AttemptRecord() if self.record else None
        try:
            result = schedule_pod(self, fwk, state, pod, record)
        except FitError as fit_err:
            status = Status(Code.UNSCHEDULABLE, str(fit_err))
            if fwk.post_filter_plugins:
                _, pf = fwk.run_post_filter_plugins(state, pod, fit_err.diagnosis.node_to_status)
                if pf is not None and pf.is_rejected() and pf.message():
                    fit_err.diagnosis.post_filter_msg = pf.message()
                    status = Status(Code.UNSCHEDULABLE, str(fit_err))
            qpi.unschedulable_plugins = set(fit_err.diagnosis.unschedulable_plugins)
            qpi.pending_plugins = set(fit_err.diagnosis.pending_plugins)
            self._handle_failure(qpi, status, record)
            return
        except NoNodesAvailable as err:
            self._handle_failure(qpi, Status(Code.UNSCHEDULABLE_AND_UNRESOLVABLE, str(err)), record)
            return
        except Exception as err:  # a plugin's bug must not take other pods down
            log.exception("Error scheduling pod pod=%s", pod.key)
            self._handle_failure(qpi, Status(Code.ERROR, err=err), record)
            return
        assumed = dataclasses.replace(pod, node_name=result.suggested_host)
        self.cache.assume_pod(assumed)
        host = result.suggested_host
        s = fwk.run_reserve_plugins_reserve(state, assumed, host)
        if s is not None and not s.is_success():
            self._unwind(fwk, state, assumed, host)
            self._handle_failure(qpi, s, record, single_node_fit=True)
            return
        s, _waits = fwk.run_permit_plugins(state, assumed, host)
        if s is not None and s.is_wait():
            # Waiting pods need the asynchronous binding cycle; until then a Wait is refused here.
            s = Status(Code.UNSCHEDULABLE, "Permit Wait is not supported by the synchronous binding cycle yet")
            s.with_plugin("Permit")
        if s is not None and not s.is_success():
            self._unwind(fwk, state, assumed, host)
            self._handle_failure(qpi, s, record, single_node_fit=True)
            return
        self.queue.activate(list(state.pods_to_activate))
        self._binding_cycle(fwk, state, qpi, assumed, host, record)

    def _binding_cycle(
        self,
        fwk: Framework,
        state: CycleState,
        qpi: QueuedPodInfo,
        assumed: PodInfo,
        host: str,
        record: AttemptRecord | None,
    ) -> None:
        self.queue.done(assumed.uid)
        s = fwk.run_pre_bind_plugins(state, assumed, host)
        if s is None or s.is_success():
            s = fwk.run_bind_plugins(state, assumed, host)
        self.cache.finish_binding(assumed)
        if s is not None and not s.is_success():
            self._unwind(fwk, state, assumed, host)
            self.on_cluster_event(events.ASSIGNED_POD, events.DELETE)
            self._handle_failure(qpi, s, record, single_node_fit=True)
            return
        fwk.run_post_bind_plugins(state, assumed, host)
        self._notify(Outcome(qpi.pod_info, "Scheduled", host, "", qpi.attempts, record))

    def _unwind(self, fwk: Framework, state: CycleState, assumed: PodInfo, host: str) -> None:
        fwk.run_reserve_plugins_unreserve(state, assumed, host)
        if self.cache.is_assumed_pod(assumed):
            self.cache.forget_pod(assumed)

    def _handle_failure(
        self, qpi: QueuedPodInfo, status: Status, record: AttemptRecord | None, *, single_node_fit: bool = False
    ) -> None:
        """handleSchedulingFailure: requeue as unschedulable and tell observers."""
        message = status.message()
        if single_node_fit and status.is_rejected():
            message = f"0/1 nodes are available: {message}."
        if status.is_rejected() and status.plugin:
            qpi.unschedulable_plugins.add(status.plugin)
        self.queue.done(qpi.pod_info.uid)
        self.queue.add_unschedulable_if_not_present(qpi)
        result = REASON_UNSCHEDULABLE if status.is_rejected() else "Error"
        self._notify(Outcome(qpi.pod_info, result, None, message, qpi.attempts, record))

    def _notify(self, outcome: Outcome) -> None:
        if self.observer is not None:
            self.observer.on_outcome(outcome)

    def run_until_idle(self) -> None:
        """Schedule until activeQ is empty: what is left is unschedulable or gated."""
        while (qpi := self.queue.pop()) is not None:
            self.schedule_one(qpi)
