"""Scheduler: profiles, cache, queue, the scheduling cycle and the asynchronous binding cycle.

(scheduler.go, schedule_one.go.) One scheduling cycle runs at a time; its binding
cycle is handed to the clock and runs after it, possibly later in virtual time
(Permit waits, bind latency), exactly where upstream starts a goroutine. Failures
go through `_handle_failure` as upstream's handleSchedulingFailure: requeue with
the plugins that rejected the pod, record the nomination, patch PodScheduled=False
and emit FailedScheduling. Observers (the simulator) hear every step as events.
"""

from __future__ import annotations

import dataclasses
import logging
import random
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Protocol

from kubesched.cache.cache import Cache, CacheError
from kubesched.cache.snapshot import Snapshot
from kubesched.clock import VirtualClock
from kubesched.config.load import SchedulerConfig
from kubesched.extender import ExtenderError, new_extenders
from kubesched.framework import events
from kubesched.framework.cycle_state import CycleState
from kubesched.framework.interface import ClusterEvent, EnqueueExtensions, Handle, NominatingInfo
from kubesched.framework.plugins.registry import new_in_tree_registry
from kubesched.framework.runtime.framework import Framework, FrameworkError
from kubesched.framework.runtime.out_of_tree import entry_point_registry
from kubesched.framework.runtime.registry import Registry
from kubesched.framework.runtime.waiting_pods import WaitingPod
from kubesched.framework.status import Code, Status
from kubesched.framework.types import PodInfo
from kubesched.queue.scheduling_queue import HintEntry, PriorityQueue, QueuedPodInfo, QueueingHintMap
from kubesched.schedule_one import AttemptRecord, FitError, NoNodesAvailable, schedule_pod

if TYPE_CHECKING:
    from kubesched.metrics import SchedulerMetrics

log = logging.getLogger(__name__)

REASON_UNSCHEDULABLE = "Unschedulable"
REASON_SCHEDULER_ERROR = "SchedulerError"
EVENT_NOTE_LIMIT = 1024
# Points whose plugins can reject a pod, hence whose events can bring it back.
_REJECTING_POINTS = ("preEnqueue", "preFilter", "filter", "reserve", "permit")
# A pod failing with errors alone is retried until its backoff saturates; then, with
# nothing else left to happen, a simulation may end.
_ERROR_RETRIES_WHEN_IDLE = 5


@dataclass(slots=True)
class Outcome:
    pod: PodInfo
    result: str  # Scheduled | Unschedulable | Error
    node: str | None
    message: str
    attempts: int
    record: AttemptRecord | None


@dataclass(slots=True)
class SchedulerEvent:
    """One step of a pod's life, for the simulator's timeline."""

    time: float
    pod: str
    type: str  # Gated | Scheduled | Bound | Unschedulable | Error | Nominated | Preempted | Deleted
    node: str | None = None
    message: str | None = None
    preemptor: str | None = None  # for Preempted: the pod the victim made room for


@dataclass(slots=True)
class _Binding:
    """What the binding cycle carries over from the scheduling cycle that chose the node."""

    fwk: Framework
    state: CycleState
    qpi: QueuedPodInfo
    assumed: PodInfo
    host: str
    record: AttemptRecord | None


class SchedulerObserver(Protocol):
    def on_outcome(self, outcome: Outcome) -> None: ...
    def on_event(self, event: SchedulerEvent) -> None: ...


def truncate_event_note(message: str) -> str:
    if len(message) <= EVENT_NOTE_LIMIT:
        return message
    return message[: EVENT_NOTE_LIMIT - 4] + " ..."


class Scheduler:
    def __init__(
        self,
        config: SchedulerConfig,
        *,
        lister: Any,
        client: Any,
        registry: Registry | None = None,
        seed: int | None = None,
        clock: VirtualClock | None = None,
        record: bool = True,
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
        self.extenders = new_extenders(raw.extenders)
        self.profiles: dict[str, Framework] = {}
        handles: list[Handle] = []
        for prof, args in zip(raw.profiles, config.profile_args, strict=True):
            handle = Handle(
                lister=lister,
                client=client,
                parallelism=raw.parallelism,
                clock=self.clock,
                rng=self.rng,
                activate=self._activate,
                report=self._report,
                extenders=self.extenders,
            )
            handles.append(handle)
            try:
                self.profiles[prof.schedulerName or ""] = Framework(
                    reg, prof, args, handle, percentage_of_nodes_to_score=raw.percentageOfNodesToScore
                )
            except FrameworkError as err:
                raise FrameworkError(
                    f"initializing profiles: creating profile for scheduler name {prof.schedulerName}: {err}"
                ) from err
        self.percentage_of_nodes_to_score = raw.percentageOfNodesToScore or 0
        self.cache = Cache()
        self.snapshot = Snapshot()
        self.next_start_node_index = 0
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
        metrics.watch(self, pending_api_calls)

    def _observe_attempt(self, result: str, profile: str, qpi: QueuedPodInfo) -> None:
        m = self.metrics
        if m is None:
            return
        seconds = time.perf_counter() - qpi.cycle_start
        m.schedule_attempts.labels(result, profile).inc()
        m.attempt_duration.labels(result, profile).observe(seconds)
        if result == "scheduled":
            m.pod_attempts.observe(qpi.attempts)
            if qpi.initial_attempt_timestamp is not None:
                label = str(qpi.attempts) if qpi.attempts < 15 else "15+"
                m.sli_duration.labels(label).observe(self.clock.now - qpi.initial_attempt_timestamp)

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

    def _report(
        self, kind: str, pod: str, node: str | None = None, message: str | None = None, preemptor: str | None = None
    ) -> None:
        if self.observer is not None:
            self.observer.on_event(SchedulerEvent(self.clock.now, pod, kind, node, message, preemptor))

    def _notify(self, outcome: Outcome) -> None:
        if self.observer is not None:
            self.observer.on_outcome(outcome)

    def responsible_for(self, pod: PodInfo) -> bool:
        return pod.scheduler_name in self.profiles

    def _current_pod(self, pod: PodInfo) -> PodInfo | None:
        """The informer's copy of the pod, or None if it is gone."""
        return self._pod_lookup(pod.namespace, pod.name)

    # The scheduling cycle

    def schedule_one(self, qpi: QueuedPodInfo) -> None:
        pod = qpi.pod_info
        fwk = self.profiles.get(pod.scheduler_name)
        if fwk is None or self.cache.is_assumed_pod(pod):
            self.queue.done(pod.uid)
            return
        if pod.deleting:
            self._record_k8s_event(pod, "Warning", "FailedScheduling", f"skip schedule deleting pod: {pod.key}")
            self.queue.done(pod.uid)
            return
        state = CycleState()
        record = AttemptRecord() if self.record else None
        qpi.cycle_start = time.perf_counter()
        if self.metrics is not None:
            self.metrics.new_cycle()
        try:
            result = schedule_pod(self, fwk, state, pod, record)
            if self.metrics is not None:
                self.metrics.algorithm_duration.observe(time.perf_counter() - qpi.cycle_start)
        except FitError as fit_err:
            nominating: NominatingInfo | None = None
            if fwk.post_filter_plugins:
                if self.metrics is not None:
                    self.metrics.preemption_attempts.inc()
                pf_result, pf = fwk.run_post_filter_plugins(state, pod, fit_err.diagnosis.node_to_status_map())
                if pf is not None:
                    # Even an Error's text ends the FitError message, as upstream's PostFilterMsg.
                    fit_err.diagnosis.post_filter_msg = pf.message()
                    if pf.code == Code.ERROR:
                        log.info("Status after running PostFilter plugins for pod %s: %s", pod.key, pf.message())
                if pf_result is not None and pf_result.nominating_info is not None:
                    nominating = pf_result.nominating_info
            qpi.unschedulable_plugins = set(fit_err.diagnosis.unschedulable_plugins)
            qpi.pending_plugins = set(fit_err.diagnosis.pending_plugins)
            self._handle_failure(fwk, qpi, Status(Code.UNSCHEDULABLE, str(fit_err)), record, nominating)
            return
        except NoNodesAvailable as err:
            qpi.unschedulable_plugins, qpi.pending_plugins = set(), set()
            self._handle_failure(fwk, qpi, Status(Code.UNSCHEDULABLE_AND_UNRESOLVABLE, str(err)), record)
            return
        except Exception as err:  # a plugin's bug must not take other pods down
            log.exception("Error scheduling pod pod=%s", pod.key)
            self._handle_failure(fwk, qpi, Status(Code.ERROR, err=err), record)
            return
        host = result.suggested_host
        assumed = dataclasses.replace(pod, node_name=host)
        try:
            self.cache.assume_pod(assumed)
        except CacheError as err:
            self._handle_failure(fwk, qpi, Status(Code.ERROR, err=err), record)
            return
        self.queue.nominator.delete_nominated_pod_if_exists(pod)
        s = fwk.run_reserve_plugins_reserve(state, assumed, host)
        if s is not None and not s.is_success():
            self._unwind(fwk, state, assumed, host)
            self._handle_failure(fwk, qpi, s, record, single_node_fit=True)
            return
        s, waits = fwk.run_permit_plugins(state, assumed, host)
        if s is not None and not s.is_success() and not s.is_wait():
            self._unwind(fwk, state, assumed, host)
            self._handle_failure(fwk, qpi, s, record, single_node_fit=True)
            return
        self._activate_pods(state)
        self._report("Scheduled", pod.key, host)
        b = _Binding(fwk, state, qpi, assumed, host, record)

        def after_permit(status: Status | None) -> None:
            fwk.waiting_pods.pop(pod.uid, None)
            self._after_permit(b, status)

        if s is not None and s.is_wait():
            fwk.waiting_pods[pod.uid] = WaitingPod(assumed, waits, self.clock, after_permit)
        if not self._start_binding_cycle(b):
            return
        if s is None or not s.is_wait():
            self.clock.call_later(0, lambda: after_permit(None))

    def _start_binding_cycle(self, b: _Binding) -> bool:
        """PreBindPreFlight; when PreBind will work or the pod waits at Permit, the chosen node is written
        as its nominatedNodeName for other components to see (NominatedNodeNameForExpectation, v1.36)."""
        fwk, assumed = b.fwk, b.assumed
        pf = fwk.run_pre_bind_pre_flights(b.state, assumed, b.host)
        if pf is not None and not pf.is_skip():
            fwk.waiting_pods.pop(assumed.uid, None)
            self._binding_failed(b, pf)
            return False
        if pf is None or fwk.will_wait_on_permit(assumed):
            patch = getattr(self.client, "patch_pod_status", None)
            if patch is not None:
                try:
                    patch(assumed, None, b.host)
                except Exception as err:  # not critical: the binding goes on
                    log.error("Failed to update the nominated node name in the binding cycle %s: %s", assumed.key, err)
        return True

    def _activate_pods(self, state: CycleState) -> None:
        """PodsToActivate that plugins wrote during the cycle go to activeQ."""
        if state.pods_to_activate:
            self.queue.activate(list(state.pods_to_activate.values()))
            state.pods_to_activate.clear()

    # The binding cycle

    def _after_permit(self, b: _Binding, status: Status | None) -> None:
        """WaitOnPermit returned: fail, or go on to PreBind and Bind (after the bind latency)."""
        if status is not None and not status.is_success():
            self._binding_failed(b, status)
            return
        self.queue.done(b.assumed.uid)
        if self.bind_executor is not None:
            self.bind_executor(lambda: self._bind(b))
        elif self.bind_latency > 0:
            self.clock.call_later(self.bind_latency, lambda: self._bind(b))
        else:
            self._bind(b)

    def _bind(self, b: _Binding) -> None:
        fwk, state, assumed, host = b.fwk, b.state, b.assumed, b.host
        s = fwk.run_pre_bind_plugins(state, assumed, host)
        if s is None or s.is_success():
            bound, s = self._extenders_binding(assumed, host)
            if not bound:
                s = fwk.run_bind_plugins(state, assumed, host)
        self.cache.finish_binding(assumed)
        if s is not None and not s.is_success():
            self._binding_failed(b, s)
            return
        self._record_k8s_event(assumed, "Normal", "Scheduled", f"Successfully assigned {assumed.key} to {host}")
        self._observe_attempt("scheduled", fwk.profile_name, b.qpi)
        self._report("Bound", assumed.key, host)
        fwk.run_post_bind_plugins(state, assumed, host)
        self._activate_pods(state)
        self._notify(Outcome(b.qpi.pod_info, "Scheduled", host, "", b.qpi.attempts, b.record))

    def _extenders_binding(self, pod: PodInfo, host: str) -> tuple[bool, Status | None]:
        """An interested binder extender takes precedence over bind plugins (extendersBinding)."""
        for ext in self.extenders:
            if not ext.is_binder() or not ext.is_interested(pod):
                continue
            try:
                ext.bind(pod, host)
            except ExtenderError as err:
                return True, Status(Code.ERROR, err=err)
            # The extender writes the binding to the API server; the embedded cluster has no
            # server for it to reach, so the binding it reported is applied here.
            apply = getattr(self.client, "apply_extender_binding", None)
            if apply is not None:
                try:
                    apply(pod, host)
                except Exception as err:
                    return True, Status(Code.ERROR, err=err)
            return True, None
        return False, None

    def _binding_failed(self, b: _Binding, status: Status) -> None:
        """handleBindingCycleError: undo the reservation; the freed room is an AssignedPod delete for others."""
        assumed = b.assumed
        b.fwk.run_reserve_plugins_unreserve(b.state, assumed, b.host)
        forgot = False
        if self.cache.is_assumed_pod(assumed):
            try:
                self.cache.forget_pod(assumed)
                forgot = True
            except CacheError as err:
                log.error("scheduler cache ForgetPod failed: %s", err)
        delete_event = ClusterEvent(events.ASSIGNED_POD, events.DELETE)
        if forgot and not status.is_rejected():
            self.queue.move_all_to_active_or_backoff_queue(delete_event, assumed, None)
        self._handle_failure(b.fwk, b.qpi, status, b.record, single_node_fit=True, clear_nomination=True)
        if forgot and status.is_rejected():
            others = [
                q
                for q in (*self.queue.unschedulable_pods.values(), *self.queue.gated_pods.values())
                if q.pod_info.uid != assumed.uid
            ]
            self.queue.move_all_to_active_or_backoff_queue(delete_event, assumed, None, others)

    def _unwind(self, fwk: Framework, state: CycleState, assumed: PodInfo, host: str) -> None:
        fwk.run_reserve_plugins_unreserve(state, assumed, host)
        if self.cache.is_assumed_pod(assumed):
            self.cache.forget_pod(assumed)

    # Failures

    def _handle_failure(
        self,
        fwk: Framework,
        qpi: QueuedPodInfo,
        status: Status,
        record: AttemptRecord | None,
        nominating: NominatingInfo | None = None,
        *,
        single_node_fit: bool = False,
        clear_nomination: bool = False,
    ) -> None:
        """handleSchedulingFailure: requeue, nominate, and tell the pod (condition) and the user (event)."""
        pod = qpi.pod_info
        rejected = status.is_rejected()
        message = status.message()
        if single_node_fit and rejected:
            message = f"0/1 nodes are available: {message}."
            qpi.unschedulable_plugins = {status.plugin} if status.plugin else set()
            qpi.pending_plugins = set()
        elif not rejected:
            qpi.unschedulable_plugins, qpi.pending_plugins = set(), set()
        if clear_nomination:
            nominating = NominatingInfo("", "Override")
        current = self._current_pod(pod)
        if current is None:
            log.info("Pod doesn't exist in informer cache pod=%s", pod.key)
            self.queue.done(pod.uid)
            return
        if current.node_name:
            log.info("Pod has been assigned to node. Abort adding it back to queue. pod=%s", pod.key)
            self.queue.done(pod.uid)
            return
        qpi.pod_info = current
        self.queue.add_unschedulable_if_not_present(qpi)
        self.queue.nominator.add_nominated_pod(current, nominating)
        reason = REASON_UNSCHEDULABLE if rejected else REASON_SCHEDULER_ERROR
        self._observe_attempt("unschedulable" if rejected else "error", fwk.profile_name, qpi)
        self._record_k8s_event(current, "Warning", "FailedScheduling", truncate_event_note(message))
        nominated: str | None = None
        if nominating is not None and nominating.mode == "Override":
            nominated = nominating.nominated_node_name
        self._patch_pod_status(current, reason, message, nominated)
        result = REASON_UNSCHEDULABLE if rejected else "Error"
        self._report(result, pod.key, None, message)
        if nominated:
            self._report("Nominated", pod.key, nominated)
        self._notify(Outcome(current, result, None, message, qpi.attempts, record))

    def _patch_pod_status(self, pod: PodInfo, reason: str, message: str, nominated: str | None) -> None:
        patch = getattr(self.client, "patch_pod_status", None)
        if patch is None:
            return
        condition = {"type": "PodScheduled", "status": "False", "reason": reason, "message": message}
        try:
            patch(pod, condition, nominated)
        except Exception as err:  # the pod may be gone; the queue already holds what matters
            log.info("Error updating pod %s: %s", pod.key, err)

    def _record_k8s_event(self, pod: PodInfo, kind: str, reason: str, note: str) -> None:
        record_event = getattr(self.client, "record_event", None)
        if record_event is not None:
            action = "Binding" if reason == "Scheduled" else "Scheduling"
            record_event(pod, kind, reason, action, note)

    # The loop

    def run(self, until: float | None = None) -> None:
        """Schedule until nothing is left to do: the queue idle and no timer pending (or `until` reached).

        Pods left unschedulable do not keep the run alive: only a timer (a scenario step,
        a binding, a Permit timeout) or a pod in backoff can change anything.
        """
        clock = self.clock
        while True:
            clock.run_due()
            qpi = self.queue.pop()
            if qpi is not None:
                self.schedule_one(qpi)
                continue
            nxt = clock.next_timer()
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
