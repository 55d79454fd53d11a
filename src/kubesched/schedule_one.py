"""One pod through the scheduler: the scheduling cycle and the binding cycle (schedule_one.go).

`ScheduleOne`, which the Scheduler builds with its collaborators, does what upstream
keeps in schedule_one.go: pick the profile, find the feasible nodes, prioritize,
select the host, assume, reserve, permit, then (after the cycle, possibly later in
virtual time) pre-bind, bind and post-bind. Failures go through `handle_scheduling_failure`: requeue with the
plugins that rejected the pod, record the nomination, patch PodScheduled=False and
emit FailedScheduling. Every loop over plugins is the framework runtime's.

The filter pass keeps upstream's contract: nodes are examined from the rotating
`next_start_node_index` until `num_feasible_nodes_to_find` feasible nodes are found,
and the index then advances by the number of nodes examined. Per-node reasons for
rejected nodes are worked out only when someone needs them: a FitError, or the
simulator's full record.
"""

from __future__ import annotations

import functools
import logging
import random
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np

from kubesched.cache.cache import Cache, CacheError
from kubesched.cache.snapshot import Snapshot
from kubesched.clock import Timer, VirtualClock
from kubesched.extender import extender_score
from kubesched.framework import events
from kubesched.framework.cycle_state import CycleState
from kubesched.framework.extender import EXTENDER_NAME, Extender, ExtenderError
from kubesched.framework.interface import APIClient, BindingWait, ClusterEvent, NominatingInfo
from kubesched.framework.node_info import NodeInfo
from kubesched.framework.node_table import NodeTable
from kubesched.framework.outcome import Outcome, SchedulerEvent, SchedulerObserver
from kubesched.framework.runtime.batch import SortedScoredNodes
from kubesched.framework.runtime.framework import Framework
from kubesched.framework.runtime.waiting_pods import WaitingPod
from kubesched.framework.status import Code, Status
from kubesched.framework.types import (
    AttemptRecord,
    Diagnosis,
    FitError,
    NoNodesAvailable,
    PodInfo,
)
from kubesched.klog import Message, V, info
from kubesched.queue.scheduling_queue import PriorityQueue, QueuedPodInfo

if TYPE_CHECKING:
    from kubesched.metrics import SchedulerMetrics

log = logging.getLogger(__name__)

REASON_UNSCHEDULABLE = "Unschedulable"
REASON_SCHEDULER_ERROR = "SchedulerError"
EVENT_NOTE_LIMIT = 1024


@dataclass(slots=True)
class _Binding:
    """What the binding cycle carries over from the scheduling cycle that chose the node."""

    fwk: Framework
    state: CycleState
    qpi: QueuedPodInfo
    assumed: PodInfo
    host: str
    record: AttemptRecord | None
    evaluated_nodes: int
    feasible_nodes: int


@dataclass(eq=False, slots=True)
class _SuspendedBinding:
    """A binding cycle that a PreBind plugin suspended (BindingWait): it resumes on a timer, never on a thread
    held for it, so other pods schedule and bind meanwhile (in simulations as against a cluster)."""

    binding: _Binding
    wait: BindingWait
    deadline: float
    timer: Timer | None = None
    dispatched: bool = False  # a check is on its way to the binding executor


def truncate_event_note(message: str) -> str:
    if len(message) <= EVENT_NOTE_LIMIT:
        return message
    return message[: EVENT_NOTE_LIMIT - 4] + " ..."


class Reporter:
    """Each step and outcome of a pod, at the clock's time, to the observer (the simulator's timeline, the
    annotation recorder); made before the profiles, whose handles report preemptions through it."""

    __slots__ = ("clock", "observer")

    def __init__(self, observer: SchedulerObserver | None, clock: VirtualClock) -> None:
        self.observer = observer
        self.clock = clock

    def event(
        self, kind: str, pod: str, node: str | None = None, message: str | None = None, preemptor: str | None = None
    ) -> None:
        if self.observer is not None:
            self.observer.on_event(SchedulerEvent(self.clock.now, pod, kind, node, message, preemptor))

    def outcome(self, outcome: Outcome) -> None:
        if self.observer is not None:
            self.observer.on_outcome(outcome)


class ScheduleOne:
    """What upstream keeps in schedule_one.go, given its collaborators by the Scheduler that composes it.

    It owns the state of the cycles alone: the rotating start index and the bindings
    that PreBind suspended; everything else (profiles, queue, cache, snapshot, client)
    is the Scheduler's and shared with it.
    """

    def __init__(
        self,
        *,
        profiles: dict[str, Framework],
        queue: PriorityQueue,
        cache: Cache,
        snapshot: Snapshot,
        client: APIClient,
        clock: VirtualClock,
        rng: random.Random,
        extenders: list[Extender],
        reporter: Reporter,
        pod_lookup: Callable[[str, str], PodInfo | None],
        record: bool | Callable[[PodInfo], bool | AttemptRecord] = True,
        metrics: SchedulerMetrics | None = None,
        bind_latency: float = 0.0,
        bind_executor: Callable[[Callable[[], None]], None] | None = None,
        percentage_of_nodes_to_score: int = 0,
    ) -> None:
        self.profiles = profiles
        self.queue = queue
        self.cache = cache
        self.snapshot = snapshot
        self.client = client
        self.clock = clock
        self.rng = rng
        self.extenders = extenders
        self.report_event = reporter.event  # one step for the observer (also a pod group's preemption victims)
        self._notify = reporter.outcome
        self._pod_lookup = pod_lookup
        self.record = record  # every pod's attempts, none, or those it picks
        self.metrics = metrics
        self.bind_latency = bind_latency
        self.bind_executor = bind_executor  # runs binding cycles elsewhere (threads, against a real cluster)
        self.percentage_of_nodes_to_score = percentage_of_nodes_to_score
        self.next_start_node_index = 0
        self.suspended_bindings: dict[str, _SuspendedBinding] = {}  # by pod uid
        self.expired_binding_waits: set[str] = set()  # pods whose binding wait ran out at least once

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

    def informer_pod(self, namespace: str, name: str) -> PodInfo | None:
        """The pod as the scheduler's informer holds it (parsed), or None if it has none."""
        return self._pod_lookup(namespace, name)

    # The scheduling cycle

    def schedule_one(self, qpi: QueuedPodInfo) -> None:
        """ScheduleOne: the scheduling cycle, then (once Permit allows) the binding cycle on the clock."""
        pod = qpi.pod_info
        info(log, V(4), "About to try and schedule pod", pod=pod.key)
        fwk = self.profiles.get(pod.scheduler_name)
        if fwk is None or self.skip_pod_schedule(pod):
            self.queue.done(pod.uid)
            return
        info(log, V(3), "Attempting to schedule pod", pod=pod.key)
        state = CycleState()
        wanted = self.record
        picked = wanted(pod) if callable(wanted) else wanted
        record = picked if isinstance(picked, AttemptRecord) else AttemptRecord() if picked else None
        qpi.cycle_start = time.perf_counter()
        if self.metrics is not None:
            self.metrics.new_cycle()
        cycle = self.scheduling_cycle(fwk, state, qpi, record)
        if cycle is not None:
            self.start_binding(*cycle)

    def start_binding(self, b: _Binding, permit: Status | None, waits: dict[str, float]) -> None:
        """After a successful scheduling cycle: wait at Permit if told to, then the binding cycle on the clock."""
        pod = b.qpi.pod_info
        fwk = b.fwk

        def after_permit(status: Status | None) -> None:
            fwk.waiting_pods.pop(pod.uid, None)
            self._after_permit(b, status)

        if permit is not None and permit.is_wait():
            fwk.waiting_pods[pod.uid] = WaitingPod(b.assumed, waits, self.clock, after_permit)
        if not self._start_binding_cycle(b):
            return
        if permit is None or not permit.is_wait():
            self.clock.call_later(0, lambda: after_permit(None))

    def pod_group_verdict(self, namespace: str, name: str, status: Status | None, waiting_on_preemption: bool) -> None:
        """updatePodGroupCondition: PodGroupScheduled on the PodGroup (never back from True), and the observer told."""
        if status is None:
            verdict, reason, message = "True", "Scheduled", ""
        else:
            verdict, message = "False", status.message()
            reason = REASON_UNSCHEDULABLE if status.is_rejected() else REASON_SCHEDULER_ERROR
        condition: dict[str, Any] = {
            "type": "PodGroupScheduled",
            "status": verdict,
            "reason": reason,
            "message": message,
        }
        kind = (
            "GroupScheduled"
            if status is None
            else ("GroupWaitingOnPreemption" if waiting_on_preemption else "GroupUnschedulable")
        )
        self.report_event(kind, f"{namespace}/{name}", None, status.message() if status is not None else None)
        current = self._pod_group(namespace, name)
        if current is None:
            return
        conditions = list((current.get("status") or {}).get("conditions") or [])
        existing = next((c for c in conditions if c.get("type") == "PodGroupScheduled"), None)
        if existing is not None and existing.get("status") == "True" and condition["status"] != "True":
            return
        if existing is not None and all(existing.get(k) == v for k, v in condition.items()):
            return
        condition["observedGeneration"] = (current.get("metadata") or {}).get("generation") or 0
        condition["lastTransitionTime"] = (
            existing.get("lastTransitionTime")
            if existing is not None and existing.get("status") == condition["status"]
            else self.client.timestamp()
        )
        conditions = [c for c in conditions if c.get("type") != "PodGroupScheduled"] + [condition]
        try:
            self.client.merge_status("PodGroup", namespace, name, {"conditions": conditions})
        except Exception as err:  # the group may be gone; the pods' own verdicts stand
            log.info("Failed to update PodGroup status %s/%s: %s", namespace, name, err)

    def _pod_group(self, namespace: str, name: str) -> dict[str, Any] | None:
        return self.client.get("PodGroup", namespace, name)

    def skip_pod_schedule(self, pod: PodInfo) -> bool:
        """skipPodSchedule: a pod being deleted, or one already assumed, is not scheduled again."""
        if self.cache.is_assumed_pod(pod):
            return True
        if pod.deleting:
            self._record_k8s_event(pod, "Warning", "FailedScheduling", f"skip schedule deleting pod: {pod.key}")
            info(log, V(3), "Skip schedule deleting pod", pod=pod.key)
            return True
        return False

    def scheduling_cycle(
        self, fwk: Framework, state: CycleState, qpi: QueuedPodInfo, record: AttemptRecord | None
    ) -> tuple[_Binding, Status | None, dict[str, float]] | None:
        """schedulingCycle: find a host, assume the pod there, reserve, permit. None when the pod failed."""
        pod = qpi.pod_info
        try:
            result = schedule_pod(self, fwk, state, pod, record)
            if self.metrics is not None:
                self.metrics.algorithm_duration.observe(time.perf_counter() - qpi.cycle_start)
        except FitError as fit_err:
            nominating = self.run_post_filter(fwk, state, pod, fit_err)
            qpi.unschedulable_plugins = set(fit_err.diagnosis.unschedulable_plugins)
            qpi.pending_plugins = set(fit_err.diagnosis.pending_plugins)
            reasons = fit_err.reason_counts()  # a walk over every rejected node: once, for message and outcome
            message = fit_err.message(reasons)
            info(log, V(2), "Unable to schedule pod; no fit; waiting", pod=pod.key, err=message)
            status = Status(Code.UNSCHEDULABLE, message)
            self.handle_failure(fwk, qpi, status, record, nominating, reasons=reasons)
            return None
        except NoNodesAvailable as err:
            info(log, V(2), "Unable to schedule pod; no nodes are registered to the cluster; waiting", pod=pod.key)
            qpi.unschedulable_plugins, qpi.pending_plugins = set(), set()
            self.handle_failure(fwk, qpi, Status(Code.UNSCHEDULABLE_AND_UNRESOLVABLE, str(err)), record)
            return None
        except Exception as err:  # a plugin's bug must not take other pods down
            # The traceback only for -v 4 and up: a Python API user without a logging setup sees the message.
            log.error("Error scheduling pod pod=%s err=%s", pod.key, err, exc_info=log.isEnabledFor(V(4)))
            self.handle_failure(fwk, qpi, Status(Code.ERROR, err=err), record)
            return None
        return self.place(fwk, state, qpi, record, result)

    def place(
        self,
        fwk: Framework,
        state: CycleState,
        qpi: QueuedPodInfo,
        record: AttemptRecord | None,
        result: ScheduleResult,
    ) -> tuple[_Binding, Status | None, dict[str, float]] | None:
        """The cycle once a host is chosen: assume, reserve, permit. None when the pod failed (and was requeued)."""
        pod = qpi.pod_info
        host = result.suggested_host
        assumed = self._assume(fwk, qpi, host, record)
        if assumed is None:
            return None
        s = fwk.run_reserve_plugins_reserve(state, assumed, host)
        if s is not None and not s.is_success():
            self._unwind(fwk, state, assumed, host)
            self.handle_failure(fwk, qpi, s, record, single_node_fit=True)
            return None
        permit, waits = fwk.run_permit_plugins(state, assumed, host)
        if permit is not None and not permit.is_success() and not permit.is_wait():
            self._unwind(fwk, state, assumed, host)
            self.handle_failure(fwk, qpi, permit, record, single_node_fit=True)
            return None
        self._activate_pods(state)
        self.report_event("Scheduled", pod.key, host)
        b = _Binding(fwk, state, qpi, assumed, host, record, result.evaluated_nodes, result.feasible_nodes)
        return b, permit, waits

    def run_post_filter(
        self, fwk: Framework, state: CycleState, pod: PodInfo, fit_err: FitError
    ) -> NominatingInfo | None:
        """PostFilter (preemption) after a FitError; its message ends the FitError's, and it may nominate a node."""
        if not fwk.post_filter_plugins:
            info(log, V(3), "No PostFilter plugins are registered, so no preemption will be performed")
            return None
        if self.metrics is not None:
            self.metrics.preemption_attempts.inc()
        pf_result, pf = fwk.run_post_filter_plugins(state, pod, fit_err.diagnosis.node_to_status_map())
        if pf is not None:
            # Even an Error's text ends the FitError message, as upstream's PostFilterMsg.
            fit_err.diagnosis.post_filter_msg = pf.message()
            if pf.code == Code.ERROR:
                log.info("Status after running PostFilter plugins for pod %s: %s", pod.key, pf.message())
            else:
                info(log, V(5), "Status after running PostFilter plugins for pod", pod=pod.key, status=pf.message())
        if pf_result is not None and pf_result.nominating_info is not None:
            return pf_result.nominating_info
        return None

    def _assume(self, fwk: Framework, qpi: QueuedPodInfo, host: str, record: AttemptRecord | None) -> PodInfo | None:
        """assume: the cache counts the pod on its host from now on, before the binding is written."""
        pod = qpi.pod_info
        assumed = pod.rebound(host)
        try:
            self.cache.assume_pod(assumed)
        except CacheError as err:
            self.handle_failure(fwk, qpi, Status(Code.ERROR, err=err), record)
            return None
        self.queue.nominator.delete_nominated_pod_if_exists(pod)
        return assumed

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
            try:
                self.client.patch_pod_status(assumed, None, b.host)
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
        s = b.fwk.run_pre_bind_plugins(b.state, b.assumed, b.host)
        if isinstance(s, BindingWait):
            self._suspend_binding(b, s)
            return
        self._bind_after_pre_bind(b, s)

    # A binding suspended by PreBind (BindingWait)

    def _suspend_binding(self, b: _Binding, wait: BindingWait) -> None:
        info(log, V(5), "Binding cycle waits in PreBind", pod=b.assumed.key, node=b.host, plugin=wait.plugin)
        sb = _SuspendedBinding(b, wait, self.clock.now + wait.timeout)
        self.suspended_bindings[b.assumed.uid] = sb
        self._arm_poll(sb)

    def _arm_poll(self, sb: _SuspendedBinding) -> None:
        when = min(self.clock.now + sb.wait.poll, sb.deadline)
        sb.timer = self.clock.call_at(when, lambda: self._dispatch_check(sb))

    def wake_bindings(self, kind: str, obj: object) -> None:
        """An informer event: suspended bindings that wait on it check again at once (after the event's
        other handlers, which update what they read)."""
        for sb in self.suspended_bindings.values():
            if sb.dispatched or not sb.wait.wake(kind, obj):
                continue
            if sb.timer is not None:
                sb.timer.cancel()
            sb.timer = self.clock.call_later(0, functools.partial(self._dispatch_check, sb))

    def only_repeated_binding_waits(self) -> bool:
        """Whether every pending timer is the poll of a binding wait whose pod already waited it out once: with
        nothing else to happen, such a wait can only run out again, and again (a simulation may end)."""
        waits = self.suspended_bindings
        return (
            bool(waits)
            and all(uid in self.expired_binding_waits for uid in waits)
            and self.clock.pending() == sum(sb.timer is not None for sb in waits.values())
        )

    def _dispatch_check(self, sb: _SuspendedBinding) -> None:
        """A timer fired: the check runs where binding cycles run (a binding thread, or here)."""
        sb.timer = None
        if sb.dispatched:
            return
        sb.dispatched = True
        if self.bind_executor is not None:
            self.bind_executor(lambda: self._resume_binding(sb))
        else:
            self._resume_binding(sb)

    def _resume_binding(self, sb: _SuspendedBinding) -> None:
        sb.dispatched = False
        b = sb.binding
        expired = self.clock.now >= sb.deadline
        if expired and self.informer_pod(b.assumed.namespace, b.assumed.name) is not None:
            self.expired_binding_waits.add(b.assumed.uid)  # kept while the pod exists (see delete_pod)
        s = b.fwk.run_pre_bind_plugins(b.state, b.assumed, b.host, sb.wait, expired)
        if s is sb.wait:
            if sb.timer is None:
                self._arm_poll(sb)
            return
        if sb.timer is not None:
            sb.timer.cancel()
        self.suspended_bindings.pop(b.assumed.uid, None)
        if isinstance(s, BindingWait):  # a later PreBind plugin waits in turn
            self._suspend_binding(b, s)
            return
        self._bind_after_pre_bind(b, s)

    def _bind_after_pre_bind(self, b: _Binding, s: Status | None) -> None:
        fwk, state, assumed, host = b.fwk, b.state, b.assumed, b.host
        if s is None or s.is_success():
            bound, s = self._extenders_binding(assumed, host)
            if not bound:
                s = fwk.run_bind_plugins(state, assumed, host)
        self.cache.finish_binding(assumed)
        if s is not None and not s.is_success():
            self._binding_failed(b, s)
            return
        self._record_k8s_event(assumed, "Normal", "Scheduled", f"Successfully assigned {assumed.key} to {host}")
        info(
            log,
            V(2),
            "Successfully bound pod to node",
            pod=assumed.key,
            node=host,
            evaluatedNodes=b.evaluated_nodes,
            feasibleNodes=b.feasible_nodes,
        )
        self._observe_attempt("scheduled", fwk.profile_name, b.qpi)
        self.report_event("Bound", assumed.key, host)
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
            try:
                self.client.apply_extender_binding(pod, host)
            except Exception as err:
                return True, Status(Code.ERROR, err=err)
            return True, None
        return False, None

    def _binding_failed(self, b: _Binding, status: Status) -> None:
        """handleBindingCycleError: undo the reservation; the freed room is an AssignedPod delete for others."""
        assumed = b.assumed
        info(log, V(1), "Failed to bind pod", pod=assumed.key)
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
        self.handle_failure(b.fwk, b.qpi, status, b.record, single_node_fit=True, clear_nomination=True)
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

    def handle_failure(
        self,
        fwk: Framework,
        qpi: QueuedPodInfo,
        status: Status,
        record: AttemptRecord | None,
        nominating: NominatingInfo | None = None,
        *,
        single_node_fit: bool = False,
        clear_nomination: bool = False,
        reasons: dict[str, int] | None = None,
    ) -> None:
        """handleSchedulingFailure: requeue, nominate, and tell the pod (condition) and the user (event).

        `reasons` are a FitError's; a single node's rejection counts its status's reasons once.
        """
        pod = qpi.pod_info
        rejected = status.is_rejected()
        message = status.message()
        if single_node_fit and rejected:
            message = f"0/1 nodes are available: {message}."
            qpi.unschedulable_plugins = {status.plugin} if status.plugin else set()
            qpi.pending_plugins = set()
            reasons = dict.fromkeys(status.reasons, 1)
        elif not rejected:
            qpi.unschedulable_plugins, qpi.pending_plugins = set(), set()
        if not rejected:
            log.error(Message("Error scheduling pod; retrying", pod=pod.key, err=message))
        if clear_nomination:
            nominating = NominatingInfo("", "Override")
        current = self.informer_pod(pod.namespace, pod.name)
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
        self.report_event(result, pod.key, None, message)
        if nominated:
            self.report_event("Nominated", pod.key, nominated)
        self._notify(Outcome(current, result, None, message, qpi.attempts, record, reasons))

    def _patch_pod_status(self, pod: PodInfo, reason: str, message: str, nominated: str | None) -> None:
        condition = {"type": "PodScheduled", "status": "False", "reason": reason, "message": message}
        info(
            log,
            V(3),
            "Updating pod condition and nominated node name",
            pod=pod.key,
            conditionType="PodScheduled",
            conditionStatus="False",
            conditionReason=reason,
            **({"nominatedNodeName": nominated} if nominated is not None else {}),
        )
        try:
            self.client.patch_pod_status(pod, condition, nominated)
        except Exception as err:  # the pod may be gone; the queue already holds what matters
            log.info("Error updating pod %s: %s", pod.key, err)

    def _record_k8s_event(self, pod: PodInfo, kind: str, reason: str, note: str) -> None:
        action = "Binding" if reason == "Scheduled" else "Scheduling"
        self.client.record_event(pod, kind, reason, action, note)


MIN_FEASIBLE_NODES_TO_FIND = 100
MIN_FEASIBLE_NODES_PERCENTAGE_TO_FIND = 5
ERR_NO_NODES_AVAILABLE = "no nodes available to schedule pods"


@dataclass(slots=True)
class ScheduleResult:
    suggested_host: str
    evaluated_nodes: int
    feasible_nodes: int


def num_feasible_nodes_to_find(percentage: int | None, global_percentage: int, num_all_nodes: int) -> int:
    if num_all_nodes < MIN_FEASIBLE_NODES_TO_FIND:
        return num_all_nodes
    pct = percentage if percentage is not None else global_percentage
    if pct == 0:
        pct = max(50 - num_all_nodes // 125, MIN_FEASIBLE_NODES_PERCENTAGE_TO_FIND)
    n = num_all_nodes * pct // 100
    return max(n, MIN_FEASIBLE_NODES_TO_FIND)


def schedule_pod(
    sched: ScheduleOne, fwk: Framework, state: CycleState, pod: PodInfo, record: AttemptRecord | None
) -> ScheduleResult:
    sched.cache.update_snapshot(sched.snapshot)
    snapshot = sched.snapshot  # the one every profile's handle holds, refreshed in place
    num_all_nodes = snapshot.num_nodes_in_placement()
    if num_all_nodes == 0:
        raise NoNodesAvailable(ERR_NO_NODES_AVAILABLE)
    batch = fwk.batch
    # Upstream signs a pod when it enters the queue or changes there; signing it here gives the same value.
    signature = fwk.sign_pod(pod) if batch is not None else None
    positions, diagnosis, hint = find_nodes_that_fit_pod(sched, fwk, state, pod, record, signature)
    if not len(positions):
        raise FitError(pod, num_all_nodes, diagnosis)
    examined = len(positions) + diagnosis.evaluated_rejected
    all_nodes = snapshot.node_info_list
    if len(positions) == 1:
        host = all_nodes[int(positions[0])].name
        if batch is not None:
            batch.store_schedule_results(signature, hint, host, None, sched.queue.scheduling_cycle)
        return ScheduleResult(host, examined, 1)
    feasible = snapshot.table.nodes_view(positions)  # gathered only if a per-node plugin or extender walks it
    totals = prioritize_nodes(sched, fwk, state, pod, feasible, positions, snapshot.table, record)
    host = select_host(sched, feasible, totals)
    if batch is not None:
        others = SortedScoredNodes.ranked(feasible, totals, host, sched.rng)
        batch.store_schedule_results(signature, hint, host, others, sched.queue.scheduling_cycle)
    return ScheduleResult(host, examined, len(positions))


_NONE = np.empty(0, dtype=np.int64)


def find_nodes_that_fit_pod(
    sched: ScheduleOne,
    fwk: Framework,
    state: CycleState,
    pod: PodInfo,
    record: AttemptRecord | None,
    signature: str | None = None,
) -> tuple[np.ndarray, Diagnosis, str]:
    """Snapshot positions of the feasible nodes, why the others were rejected, and the batch's hint ('' if none).

    PreFilter sees every node; only the nodes filtered and scored are narrowed to a pod group's placement.
    """
    snapshot = sched.snapshot
    all_nodes = snapshot.node_info_list
    placement = snapshot.placement_rows
    diagnosis = Diagnosis()
    pre_res, s, unsched_plugins = fwk.run_pre_filter_plugins(state, pod, all_nodes)
    if s is not None and not s.is_success():
        if not s.is_rejected():
            raise RuntimeError(s.message())
        diagnosis.absent_nodes_status = s
        diagnosis.pre_filter_msg = s.message()
        if s.plugin:
            diagnosis.unschedulable_plugins.add(s.plugin)
        diagnosis.unschedulable_plugins.update(unsched_plugins)
        if record is not None:
            for ni in snapshot.nodes_in_placement():
                record.filter[ni.name] = {s.plugin or "PreFilter": s.message()}
        return _NONE, diagnosis, ""
    candidates: np.ndarray | None = placement
    if pre_res is not None and not pre_res.all_nodes():
        wanted = pre_res.node_names or set()
        candidates = np.fromiter(sorted(snapshot.position[n] for n in wanted if n in snapshot.position), dtype=np.int64)
        if placement is not None:
            candidates = candidates[np.isin(candidates, placement)]
        diagnosis.absent_nodes_status = Status(
            Code.UNSCHEDULABLE_AND_UNRESOLVABLE,
            f"node(s) didn't satisfy plugin(s) [{' '.join(sorted(unsched_plugins))}]",
        )
        diagnosis.unschedulable_plugins.update(unsched_plugins)
    hint = ""
    if fwk.batch is not None:
        # Asked even for a nominated pod, as upstream does: the hint is spent either way.
        hint = fwk.batch.get_node_hint(state, pod, signature, sched.queue.scheduling_cycle)
    nominated = pod.nominated_node_name or hint
    if nominated and nominated in snapshot.position:
        # Likely the only node that fits after a preemption (or the next-best for a batched pod): try it alone first.
        ni = all_nodes[snapshot.position[nominated]]
        if (candidates is None or snapshot.position[nominated] in candidates) and (
            fwk.run_filter_plugins_with_nominated_pods(state, pod, ni) is None
        ):
            if record is not None:
                record.filter[ni.name] = dict.fromkeys((p.name for p in fwk.filter_plugins), "passed")
            passed = find_nodes_that_pass_extenders(sched, pod, [ni], diagnosis, record)
            if passed:
                return np.array([snapshot.position[nominated]], dtype=np.int64), diagnosis, hint
    feasible = find_nodes_that_pass_filters(sched, fwk, state, pod, diagnosis, candidates, record)
    if sched.extenders and len(feasible):
        infos = [all_nodes[p] for p in feasible.tolist()]
        kept = find_nodes_that_pass_extenders(sched, pod, infos, diagnosis, record)
        if len(kept) != len(infos):
            feasible = np.array([snapshot.position[ni.name] for ni in kept], dtype=np.int64)
    return feasible, diagnosis, hint


def has_extender_filters(sched: ScheduleOne) -> bool:
    return any(e.is_filter() for e in sched.extenders)


def has_scoring(sched: ScheduleOne, fwk: Framework) -> bool:
    return fwk.has_score_plugins() or any(e.is_prioritizer() for e in sched.extenders)


def find_nodes_that_pass_extenders(
    sched: ScheduleOne, pod: PodInfo, nodes: list[NodeInfo], diagnosis: Diagnosis, record: AttemptRecord | None
) -> list[NodeInfo]:
    """Extenders filter in turn; an ignorable one that fails is skipped, any other failure is the cycle's error."""
    for ext in sched.extenders:
        if not nodes:
            break
        if not ext.is_interested(pod):
            continue
        try:
            kept, failed, unresolvable = ext.filter(pod, nodes)
        except ExtenderError:
            if ext.ignorable:
                log.info("Skipping extender %s as it returned error and has ignorable flag set", ext.name)
                continue
            raise
        for name, msg in unresolvable.items():
            diagnosis.node_to_status[name] = Status(Code.UNSCHEDULABLE_AND_UNRESOLVABLE, msg)
        for name, msg in failed.items():
            if name not in unresolvable:
                diagnosis.node_to_status[name] = Status(Code.UNSCHEDULABLE, msg)
        if record is not None and ext.is_filter():
            key = ext.record_key
            kept_names = {ni.name for ni in kept}
            for ni in nodes:
                record.filter.setdefault(ni.name, {})[key] = (
                    "passed" if ni.name in kept_names else unresolvable.get(ni.name) or failed.get(ni.name, "rejected")
                )
        if len(kept) != len(nodes):
            diagnosis.unschedulable_plugins.add(EXTENDER_NAME)
            diagnosis.evaluated_rejected += len(nodes) - len(kept)
        nodes = kept
    return nodes


def find_nodes_that_pass_filters(
    sched: ScheduleOne,
    fwk: Framework,
    state: CycleState,
    pod: PodInfo,
    diagnosis: Diagnosis,
    candidates: np.ndarray | None,
    record: AttemptRecord | None,
) -> np.ndarray:
    """Up to numFeasibleNodesToFind nodes that pass the filters, from the rotating start index."""
    snapshot = sched.snapshot
    num_nodes = len(snapshot) if candidates is None else len(candidates)
    if num_nodes == 0:
        return _NONE
    k = num_feasible_nodes_to_find(fwk.percentage_of_nodes_to_score, sched.percentage_of_nodes_to_score, num_nodes)
    if not has_extender_filters(sched) and not has_scoring(sched, fwk):
        k = 1
    start = sched.next_start_node_index % num_nodes
    rotated = rotation(num_nodes, start)
    order = rotated if candidates is None else candidates[rotated]  # snapshot positions, in examination order
    filtered = fwk.run_filter_plugins_over_nodes(state, pod, snapshot, order, k, start if candidates is None else None)
    diagnosis.evaluated_rejected = filtered.rejected_count
    sched.next_start_node_index = (sched.next_start_node_index + filtered.examined) % snapshot.num_nodes_in_placement()
    full = record is not None and not record.scores_only
    if full or not len(filtered.feasible):
        # Reasons are wanted: a FitError, or the simulator's record.
        statuses = fwk.rejection_statuses(
            state, pod, snapshot, filtered, order, record.filter if full and record is not None else None
        )
        for name, st in statuses.items():
            diagnosis.node_to_status[name] = st
            (diagnosis.pending_plugins if st.code == Code.PENDING else diagnosis.unschedulable_plugins).add(st.plugin)
    return filtered.feasible


def rotation(n: int, start: int) -> np.ndarray:
    """start, start+1, ..., n-1, 0, ..., start-1: the examination order from the rotating start index.
    A read-only view into 0..n-1 twice over, kept per node count: building the order afresh (a modulo, or
    two ranges joined) cost a pass over every node on every cycle."""
    return _twice_over(n)[start : start + n]


@functools.lru_cache(maxsize=4)
def _twice_over(n: int) -> np.ndarray:
    """0, 1, ..., n-1, 0, 1, ..., n-1, not writeable, as it is shared by every cycle at this node count."""
    twice = np.tile(np.arange(n, dtype=np.int64), 2)
    twice.flags.writeable = False
    return twice


def prioritize_nodes(
    sched: ScheduleOne,
    fwk: Framework,
    state: CycleState,
    pod: PodInfo,
    nodes: Sequence[NodeInfo],
    positions: np.ndarray,
    table: NodeTable,
    record: AttemptRecord | None,
) -> np.ndarray:
    if not has_scoring(sched, fwk):
        return np.ones(len(nodes), dtype=np.int64)
    totals = _plugin_scores(fwk, state, pod, nodes, positions, table, record)
    if sched.extenders:
        totals = totals + _extender_scores(sched, pod, nodes, record)
    return totals


def _extender_scores(
    sched: ScheduleOne, pod: PodInfo, nodes: Sequence[NodeInfo], record: AttemptRecord | None
) -> np.ndarray:
    """Each interested extender's 0-10 priorities, scaled to 0-100 and weighted; an erroring one adds nothing."""
    index = {ni.name: i for i, ni in enumerate(nodes)}
    out = np.zeros(len(nodes), dtype=np.int64)
    for ext in sched.extenders:
        if not ext.is_interested(pod):
            continue
        try:
            priorities, weight = ext.prioritize(pod, nodes)
        except ExtenderError as err:
            log.info("Extender %s prioritize failed, ignored: %s", ext.name, err)
            continue
        key = ext.record_key
        for host, score in priorities:
            i = index.get(host)
            if i is None:
                continue
            final = extender_score(score, weight)
            out[i] += final
            if record is not None:
                record.score.setdefault(host, {})[key] = score
                record.normalized_score.setdefault(host, {})[key] = score
                record.final_score.setdefault(host, {})[key] = final
    return out


def _plugin_scores(
    fwk: Framework,
    state: CycleState,
    pod: PodInfo,
    nodes: Sequence[NodeInfo],
    positions: np.ndarray,
    table: NodeTable,
    record: AttemptRecord | None,
) -> np.ndarray:
    if not fwk.has_score_plugins():
        return np.zeros(len(nodes), dtype=np.int64)
    s = fwk.run_pre_score_plugins(state, pod, nodes, table, positions)
    if s is not None and not s.is_success():
        raise RuntimeError(s.message())
    rows, totals, s = fwk.run_score_plugins(state, pod, nodes, table, positions)
    if s is not None and not s.is_success():
        raise RuntimeError(s.message())
    if record is not None and rows:
        _record_scores(fwk, nodes, rows, record)
    return totals


def _record_scores(
    fwk: Framework, nodes: Sequence[NodeInfo], rows: list[tuple[str, np.ndarray, np.ndarray]], record: AttemptRecord
) -> None:
    """Each node's raw, normalized and weighted score per plugin: one dict a node, filled a plugin's column at a
    time from plain ints (indexing a numpy array per node and plugin took most of a recorded run's time)."""
    if record.scores_only:
        record.scored_nodes = list(nodes)  # a list, not a view that would keep the snapshot's table alive
        for name, _, norm in rows:
            record.final_columns[name] = np.asarray(norm).astype(np.int64) * fwk.score_weights[name]
        return
    names = [ni.name for ni in nodes]
    raw_rows = [record.score.setdefault(n, {}) for n in names]
    norm_rows = [record.normalized_score.setdefault(n, {}) for n in names]
    final_rows = [record.final_score.setdefault(n, {}) for n in names]
    for name, raw, norm in rows:
        w = fwk.score_weights[name]
        norms: list[int] = np.asarray(norm).astype(np.int64).tolist()
        for row, v in zip(raw_rows, np.asarray(raw).astype(np.int64).tolist(), strict=True):
            row[name] = v
        for row, v in zip(norm_rows, norms, strict=True):
            row[name] = v
        for row, v in zip(final_rows, norms, strict=True):
            row[name] = v * w


def select_host(sched: ScheduleOne, nodes: Sequence[NodeInfo], totals: np.ndarray) -> str:
    """Highest total score; ties broken uniformly at random (seedable), as upstream's reservoir sampling."""
    return nodes[best_index(sched.rng, totals)].name


def best_index(rng: random.Random, totals: np.ndarray) -> int:
    """Where select_host's choice is in `totals`."""
    best = np.flatnonzero(totals == totals.max())
    return int(best[0]) if len(best) == 1 else int(best[rng.randrange(len(best))])
