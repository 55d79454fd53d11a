"""A PodGroup's scheduling cycle (schedule_one_podgroup.go, v1.36 alpha: GenericWorkload).

When a pod that names a PodGroup is popped, its group's other unplaced members are
popped with it and the group is tried as one: each member in turn (priority, then first
attempt) is filtered, scored and assumed so that the next sees it placed; Permit says
whether the group as a whole would pass (a gang's quorum). Everything assumed is then
undone, and only if the group passed are its feasible members assumed again for real and
sent to binding, where GangScheduling's Permit holds them until the quorum is there.
Otherwise every member is requeued with its own verdict. With
TopologyAwareWorkloadScheduling the trial runs once per placement (topology domain) the
PlacementGenerate plugins propose, and the PlacementScore plugins pick among those
that passed.

kubesched runs the trial on the scheduler's cache and snapshot themselves (assume,
then forget), where upstream assumes into the cycle's snapshot alone: one cycle runs
at a time here, so nothing else can see the difference. A placement narrows the
snapshot to some of its rows (Snapshot.assume_placement): nothing is copied per placement.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, Final

from kubesched.cache.cache import CacheError
from kubesched.cache.pod_groups import pod_group_name
from kubesched.cache.snapshot import PlacementError
from kubesched.config.names import DEFAULT_PREEMPTION
from kubesched.framework.cycle_state import CycleState
from kubesched.framework.interface import NominatingInfo, Placement, PodGroupAssignments
from kubesched.framework.preemption.evaluator import REASON_PREEMPTION_BY_SCHEDULER, list_pdbs
from kubesched.framework.preemption.pod_group import Victim, domain_victims, pod_group_priority, select_victims
from kubesched.framework.runtime.framework import Framework
from kubesched.framework.status import Code, Status
from kubesched.framework.types import AttemptRecord, FitError, NoNodesAvailable, PodInfo
from kubesched.klog import V, info
from kubesched.queue.scheduling_queue import QueuedPodInfo
from kubesched.release import TOPOLOGY_AWARE_WORKLOAD_SCHEDULING, WORKLOAD_AWARE_PREEMPTION, Release
from kubesched.schedule_one import ScheduleOne, ScheduleResult, schedule_pod

log = logging.getLogger(__name__)

ERR_POD_GROUP_UNSCHEDULABLE: Final = "pod group is unschedulable"


class PodGroupUnschedulable(Exception):
    """errPodGroupUnschedulable: a member's status carries it ahead of its own reasons."""

    def __str__(self) -> str:
        return ERR_POD_GROUP_UNSCHEDULABLE


def _group_unschedulable(*reasons: str) -> Status:
    return Status(Code.UNSCHEDULABLE, *reasons, err=PodGroupUnschedulable())


WAITING_FOR_PREEMPTION: Final = "pod group is waiting for preemption to complete"


@dataclass(slots=True)
class PodResult:
    """One member's trial: where it would go, its verdict, and how to undo its assumption."""

    qpi: QueuedPodInfo
    record: AttemptRecord | None
    state: CycleState = field(default_factory=CycleState)  # the trial's: the binding cycle goes on with it
    status: Status | None = None  # None: a host was found (result)
    result: ScheduleResult | None = None
    reasons: dict[str, int] | None = None  # a FitError's reasons, for the pod's outcome
    nominating: NominatingInfo | None = None
    requires_preemption: bool = False
    permit: Status | None = None  # Permit's verdict when a host was found (None: Success)
    revert: Callable[[], None] | None = None

    @property
    def host(self) -> str:
        return self.result.suggested_host if self.result is not None else ""


@dataclass(slots=True)
class GroupResult:
    pods: list[PodResult] = field(default_factory=list)
    status: Status | None = field(default_factory=_group_unschedulable)
    waiting_on_preemption: bool = False


def _succeeded(s: Status | None) -> bool:
    return s is None or s.is_success()


class PodGroupCycle:
    """Schedules a popped group member together with the rest of its group, on the ScheduleOne it serves."""

    def __init__(self, cycles: ScheduleOne, release: Release) -> None:
        self.cycles = cycles
        self.placement_algorithm = release.enabled(TOPOLOGY_AWARE_WORKLOAD_SCHEDULING)
        self.workload_preemption = release.enabled(WORKLOAD_AWARE_PREEMPTION)
        # Group cycles failed in a row, by (namespace, name): members that passed their own trial come back as
        # errors (no plugin rejected them) and are retried on backoff forever, as upstream retries them.
        self.failed_in_a_row: dict[tuple[str, str], int] = {}

    def stuck(self, pod: PodInfo, limit: int) -> bool:
        """Whether the pod's group failed `limit` cycles in a row: with nothing else to happen, it fails again."""
        name = pod_group_name(pod.obj)
        return name is not None and self.failed_in_a_row.get((pod.namespace, name), 0) >= limit

    def schedule(self, qpi: QueuedPodInfo) -> None:
        """scheduleOnePodGroup, from the member the queue popped."""
        c = self.cycles
        pod = qpi.pod_info
        name = pod_group_name(pod.obj) or ""
        states = c.cache.pod_groups
        state = states.get(pod.namespace, name) if states is not None else None
        fwk = c.profiles.get(pod.scheduler_name)
        if fwk is None:
            c.queue.done(pod.uid)
            return
        if state is None:
            missing = f"pod group state not found for pod group {pod.namespace}/{name}"
            err = f"error while retrieving pod group state: {missing}"
            c.handle_failure(fwk, qpi, Status(Code.ERROR, err), None)
            return
        members = [qpi]
        for other in state.unscheduled_pods():
            if other.uid == pod.uid:
                continue
            popped = c.queue.pop_specific_pod(other)
            if popped is not None:
                members.append(popped)
        members.sort(key=lambda q: (-q.pod_info.priority, q.initial_attempt_timestamp or 0.0))
        names = {m.pod_info.scheduler_name for m in members}
        if len(names) > 1:
            first, second = (
                members[0].pod_info.scheduler_name,
                next(n for n in names if n != members[0].pod_info.scheduler_name),
            )
            err = (
                "all pods in a single pod group should have the same .spec.schedulerName set, "
                f'got: "{second}" and "{first}"'
            )
            for m in members:
                mf = c.profiles.get(m.pod_info.scheduler_name)
                if mf is not None:
                    c.handle_failure(mf, m, Status(Code.ERROR, err), None)
            return
        kept = []
        for m in members:
            if c.skip_pod_schedule(m.pod_info):
                c.queue.done(m.pod_info.uid)
            else:
                kept.append(m)
        if not kept:
            return
        info(log, V(3), "Attempting to schedule pod group", podGroup=f"{pod.namespace}/{name}")
        group_state = CycleState()  # the pod-group cycle's own state, shared by its trials and preemption's
        result = self._algorithm(fwk, group_state, pod.namespace, name, kept)
        if self.workload_preemption and result.status is not None and result.status.code == Code.UNSCHEDULABLE:
            s = self._workload_preemption(fwk, group_state, pod.namespace, name, kept)
            if s is None:
                result.waiting_on_preemption = True
            elif s.code == Code.ERROR:
                result.status = s
            else:
                result.status = Status(result.status.code, *result.status.reasons, s.message(), err=result.status.err)
        self._submit(fwk, pod.namespace, name, kept, result)

    # The algorithms

    def _algorithm(
        self,
        fwk: Framework,
        group_state: CycleState,
        namespace: str,
        name: str,
        members: list[QueuedPodInfo],
        post_filters: bool = True,
    ) -> GroupResult:
        if self.placement_algorithm:
            return self._placement_algorithm(fwk, group_state, namespace, name, members, post_filters)
        return self._default_algorithm(fwk, group_state, members, post_filters)

    def _default_algorithm(
        self, fwk: Framework, group_state: CycleState, members: list[QueuedPodInfo], post_filters: bool = True
    ) -> GroupResult:
        """Each member in order, seeing those before it placed; every assumption undone at the end."""
        group = GroupResult()
        requires_preemption = False
        reverts: list[Callable[[], None]] = []
        try:
            for qpi in members:
                r = self._pod_algorithm(fwk, group_state, qpi, post_filters)
                group.pods.append(r)
                if r.status is not None and not r.requires_preemption:
                    if r.status.is_rejected():
                        continue
                    group.status = Status(
                        Code.ERROR, f"failed to schedule other pod from a pod group: {r.status.message()}"
                    )
                    group.waiting_on_preemption = False
                    break
                if r.revert is not None:
                    reverts.append(r.revert)
                requires_preemption = requires_preemption or r.requires_preemption
                if _succeeded(r.permit):
                    if requires_preemption:
                        group.status = _group_unschedulable(WAITING_FOR_PREEMPTION)
                        group.waiting_on_preemption = True
                    else:
                        group.status = None
        finally:
            for revert in reversed(reverts):
                revert()
        return group

    def _pod_algorithm(
        self, fwk: Framework, group_state: CycleState, qpi: QueuedPodInfo, post_filters: bool = True
    ) -> PodResult:
        """One member: filter and score; on a fit (or a nomination by preemption) assume, reserve and permit."""
        c = self.cycles
        pod = qpi.pod_info
        wanted = c.record
        record = AttemptRecord() if (wanted(pod) if callable(wanted) else wanted) else None
        r = PodResult(qpi, record)
        state = r.state
        state.pod_group_cycle = group_state
        try:
            r.result = schedule_pod(c, fwk, state, pod, record)
        except FitError as fit_err:
            nominating = c.run_post_filter(fwk, state, pod, fit_err) if post_filters else None
            qpi.unschedulable_plugins = set(fit_err.diagnosis.unschedulable_plugins)
            qpi.pending_plugins = set(fit_err.diagnosis.pending_plugins)
            r.reasons = fit_err.reason_counts()
            r.status = Status(Code.UNSCHEDULABLE, fit_err.message(r.reasons))
            r.nominating = nominating
            if nominating is None or not nominating.nominated_node_name:
                return r
            r.requires_preemption = True
            r.result = ScheduleResult(nominating.nominated_node_name, 0, 0)
        except NoNodesAvailable as err:
            qpi.unschedulable_plugins, qpi.pending_plugins = set(), set()
            r.status = Status(Code.UNSCHEDULABLE_AND_UNRESOLVABLE, str(err))
            return r
        except Exception as err:  # a plugin's bug must not take other pods down
            log.error("Error scheduling pod pod=%s err=%s", pod.key, err, exc_info=log.isEnabledFor(V(4)))
            r.status = Status(Code.ERROR, err=err)
            return r
        host = r.host
        assumed = pod.rebound(host)
        try:
            c.cache.assume_pod(assumed)
        except CacheError as err:
            r.status = Status(Code.ERROR, err=err)
            r.requires_preemption = False
            return r
        c.queue.nominator.delete_nominated_pod_if_exists(pod)

        def revert() -> None:
            fwk.run_reserve_plugins_unreserve(state, assumed, host)
            if c.cache.is_assumed_pod(assumed):
                c.cache.forget_pod(assumed)
            if pod.nominated_node_name:  # assuming dropped the nomination: the trial gives it back
                c.queue.nominator.add_nominated_pod(pod, NominatingInfo(pod.nominated_node_name, "Override"))

        s = fwk.run_reserve_plugins_reserve(state, assumed, host)
        if not _succeeded(s):
            revert()
            r.status, r.requires_preemption = s, False
            return r
        permit, _ = fwk.run_permit_plugins(state, assumed, host)
        if permit is not None and not permit.is_success() and not permit.is_wait():
            revert()
            r.status, r.requires_preemption = permit, False
            if permit.is_rejected():
                r.reasons = dict.fromkeys(permit.reasons, 1)
            return r
        r.permit = permit
        r.revert = revert
        return r

    def _placement_algorithm(
        self,
        fwk: Framework,
        state: CycleState,
        namespace: str,
        name: str,
        members: list[QueuedPodInfo],
        post_filters: bool = True,
    ) -> GroupResult:
        """The default algorithm once per placement the generators propose; the best-scored passing one wins."""
        c = self.cycles
        c.cache.update_snapshot(c.snapshot)
        snapshot = c.snapshot
        placements = [Placement("", list(snapshot.node_info_list))]
        for plugin in fwk.placement_generate_plugins:
            next_placements: list[Placement] = []
            for parent in placements:
                generated, s = plugin.generate_placements(state, namespace, name, parent)
                if not _succeeded(s):
                    assert s is not None
                    return GroupResult(status=s)
                next_placements.extend(generated)
            placements = next_placements
        first: GroupResult | None = None
        passed: list[tuple[Placement, GroupResult]] = []
        for placement in placements:
            info(log, V(4), "Assuming placement in snapshot", placement=placement.name)
            try:
                snapshot.assume_placement(ni.name for ni in placement.nodes)
            except PlacementError as bad:
                return GroupResult(status=Status(Code.ERROR, f"failed to assume pod group placement: {bad}"))
            try:
                result = self._default_algorithm(fwk, state, members, post_filters)
            finally:
                snapshot.forget_placement()
                c.cache.update_snapshot(snapshot)
            if result.status is not None and result.status.code == Code.ERROR:
                return result
            if first is None:
                first = result
            if result.status is None or result.waiting_on_preemption:
                passed.append((placement, result))
        if not passed:
            if first is None:
                return GroupResult(status=Status(Code.UNSCHEDULABLE, "0/0 placements are available"))
            err = first.status.err if first.status is not None else None
            detail = str(err) if err is not None else (first.status.message() if first.status is not None else "")
            first.status = Status(
                Code.UNSCHEDULABLE, f"0/{len(placements)} placements are available, first placement status: {detail}"
            )
            return first
        if len(passed) == 1:
            return passed[0][1]
        best, s = self._best_placement(fwk, state, namespace, name, passed)
        if not _succeeded(s):
            assert s is not None
            return GroupResult(status=s)
        return passed[best][1]

    def _best_placement(
        self, fwk: Framework, state: CycleState, namespace: str, name: str, passed: list[tuple[Placement, GroupResult]]
    ) -> tuple[int, Status | None]:
        """RunPlacementScorePlugins: weighted, normalized totals; ties go to a random draw."""
        totals = [0] * len(passed)
        for plugin in fwk.placement_score_plugins:
            scores: list[int] = []
            for placement, result in passed:
                proposed = [(r.qpi.pod_info, r.host) for r in result.pods if r.host]
                score, s = plugin.score_placement(state, namespace, name, PodGroupAssignments(placement, proposed))
                if not _succeeded(s):
                    return 0, s
                scores.append(score)
            s = plugin.normalize_placement_scores(state, namespace, name, scores)
            if not _succeeded(s):
                return 0, s
            weight = fwk.placement_weights.get(plugin.name, 1)
            for i, score in enumerate(scores):
                totals[i] += score * weight
        draws = [self.cycles.rng.getrandbits(63) for _ in passed]
        best = 0
        for i in range(1, len(passed)):
            if totals[i] > totals[best] or (totals[i] == totals[best] and draws[i] > draws[best]):
                best = i
        return best, None

    # Workload-aware preemption

    def _workload_preemption(
        self, fwk: Framework, group_state: CycleState, namespace: str, name: str, members: list[QueuedPodInfo]
    ) -> Status | None:
        """runWorkloadAwarePreemption: victims for the whole group, evicted; None when it should now fit."""
        c = self.cycles
        if not any(p.name == DEFAULT_PREEMPTION for p in fwk.post_filter_plugins):
            return Status(
                Code.UNSCHEDULABLE, "default preemption plugin is not registered, workload aware preemption is disabled"
            )
        lister = fwk.handle.listers()
        pg = lister.get("PodGroup", namespace, name)
        if pg is None:
            return Status(Code.ERROR, f'failed to get pod group object: podgroup.scheduling.k8s.io "{name}" not found')
        if ((pg.get("spec") or {}).get("schedulingConstraints") or {}).get("topology"):
            return Status(
                Code.UNSCHEDULABLE,
                "workload aware preemption is not supported for pod groups with scheduling constraints",
            )
        c.cache.update_snapshot(c.snapshot)

        def group_of(p: PodInfo) -> dict[str, Any] | None:
            group = pod_group_name(p.obj)
            return lister.get("PodGroup", p.namespace, group) if group else None

        nodes = list(c.snapshot.node_info_list)
        victims = [v for v in domain_victims(nodes, group_of) if not any(c.cache.is_assumed_pod(p) for p in v.pods)]

        def remove(v: Victim) -> None:
            for p in v.pods:
                c.cache.remove_pod(p)

        def restore(v: Victim) -> None:
            for p in v.pods:
                c.cache.add_pod(p)

        def fits() -> Status | None:
            return self._algorithm(fwk, group_state, namespace, name, members, post_filters=False).status

        never = any(m.pod_info.preemption_policy == "Never" for m in members)
        chosen, s = select_victims(pod_group_priority(pg), never, victims, list_pdbs(lister), remove, restore, fits)
        c.cache.update_snapshot(c.snapshot)
        if s is not None:
            return s
        self._evict(fwk, namespace, name, chosen)
        return None

    def _evict(self, fwk: Framework, namespace: str, name: str, victims: list[PodInfo]) -> None:
        """The victims marked DisruptionTarget and deleted (a victim waiting at Permit is rejected instead)."""
        c = self.cycles
        condition = {
            "type": "DisruptionTarget",
            "status": "True",
            "reason": REASON_PREEMPTION_BY_SCHEDULER,
            "message": f"{fwk.profile_name}: preempting to accommodate a higher priority pod group",
        }
        key = f"{namespace}/{name}"
        for victim in victims:
            waiting = fwk.get_waiting_pod(victim.uid)
            if waiting is not None:
                waiting.reject(DEFAULT_PREEMPTION, "preempted")
            else:
                try:
                    c.client.delete_pod(victim, condition, None)
                except Exception as err:  # already gone: nothing left to evict
                    log.info("Preemption victim %s is gone: %s", victim.key, err)
                    continue
            c.client.record_event(
                victim, "Normal", "Preempted", "Preempting", f"Preempted by pod group {key} on node cluster"
            )
            c.report_event("Preempted", victim.key, victim.node_name, f"Preempted by pod group {key}", key)

    # The verdicts

    def _submit(
        self, fwk: Framework, namespace: str, name: str, members: list[QueuedPodInfo], group: GroupResult
    ) -> None:
        """submitPodGroupAlgorithmResult: to binding if the group passed, else each member back to the queue."""
        c = self.cycles
        scheduled = unschedulable = 0
        for i, qpi in enumerate(members):
            r = group.pods[i] if i < len(group.pods) else PodResult(qpi, None, status=group.status)
            gs = group.status
            if gs is not None and gs.code == Code.ERROR:
                own = r.status if r.status is not None and r.status.code == Code.ERROR else gs
                c.handle_failure(fwk, qpi, own, r.record, clear_nomination=True)
                continue
            if r.status is None and r.result is not None:
                if gs is None:
                    r.state.pod_group_cycle = None  # binding is no part of the group cycle
                    cycle = c.place(fwk, r.state, qpi, r.record, r.result)
                    if cycle is None:
                        unschedulable += 1
                        continue
                    c.start_binding(*cycle)
                    scheduled += 1
                    continue
                unschedulable += 1
                qpi.unschedulable_plugins, qpi.pending_plugins = set(), set()
                if group.waiting_on_preemption:
                    c.handle_failure(fwk, qpi, gs, r.record, NominatingInfo(r.host, "Override"))
                else:
                    message = r.permit.message() if r.permit is not None else ""
                    c.handle_failure(fwk, qpi, _group_unschedulable(message), r.record, clear_nomination=True)
                continue
            unschedulable += 1
            status = r.status if r.status is not None else _group_unschedulable()
            if r.requires_preemption and not group.waiting_on_preemption:
                qpi.unschedulable_plugins, qpi.pending_plugins = set(), set()
                message = r.permit.message() if r.permit is not None else ""
                c.handle_failure(fwk, qpi, _group_unschedulable(message), r.record, clear_nomination=True)
            else:
                c.handle_failure(fwk, qpi, status, r.record, r.nominating, reasons=r.reasons)
        if group.status is None:
            info(
                log,
                V(2),
                "Successfully scheduled a pod group",
                podGroup=f"{namespace}/{name}",
                scheduledPods=scheduled,
                unschedulablePods=unschedulable,
            )
        else:
            info(
                log,
                V(2),
                "Unable to schedule a pod group",
                podGroup=f"{namespace}/{name}",
                unschedulablePods=unschedulable,
            )
        key = (namespace, name)
        if group.status is None:
            self.failed_in_a_row.pop(key, None)
        else:
            self.failed_in_a_row[key] = self.failed_in_a_row.get(key, 0) + 1
        c.pod_group_verdict(namespace, name, group.status, group.waiting_on_preemption)


def is_group_member(pod: PodInfo) -> bool:
    return pod_group_name(pod.obj) is not None
