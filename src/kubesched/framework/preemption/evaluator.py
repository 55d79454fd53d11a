"""Preemption (framework/preemption/preemption.go): find nodes where evicting lower-priority pods makes room.

The steps, in upstream's order: check the preemptor may preempt; keep the nodes whose
rejection was Unschedulable (not UnschedulableAndUnresolvable); dry-run victim
selection on copies of those nodes from a random offset until enough candidates are
found; pick one node by upstream's criteria; evict its victims (asynchronously, as
v1.36 does, with the preemptor held at PreEnqueue until the evictions are done); and
nominate the node.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from kubesched.api.selectors import LabelSelector, SelectorError, parse_label_selector
from kubesched.framework.cycle_state import CycleState
from kubesched.framework.extender import ExtenderError, Victims
from kubesched.framework.interface import Handle, NominatingInfo, PostFilterResult
from kubesched.framework.node_info import NodeInfo
from kubesched.framework.status import Code, Status
from kubesched.framework.types import Diagnosis, FitError, NodeToStatus, PodInfo

MSG_NO_VICTIMS = "No preemption victims found for incoming pod"
MSG_NOT_HELPFUL = "Preemption is not helpful for scheduling"
MSG_POLICY_NEVER = "not eligible due to preemptionPolicy=Never."
MSG_TERMINATING = "not eligible due to a terminating pod on the nominated node."
REASON_PREEMPTION_BY_SCHEDULER = "PreemptionByScheduler"


@dataclass(slots=True)
class Candidate:
    name: str
    victims: list[PodInfo]
    num_pdb_violations: int


@dataclass(slots=True)
class PDB:
    namespace: str
    selector: LabelSelector | None  # None: selects nothing
    disruptions_allowed: int
    disrupted_pods: frozenset[str]


def more_important_pod(a: PodInfo, b: PodInfo) -> bool:
    """Higher priority first; equal priority: the one that started earlier."""
    if a.priority != b.priority:
        return a.priority > b.priority
    return a.start_time < b.start_time


def importance(p: PodInfo) -> tuple[int, str]:
    """A sort key, most important first, that orders pods as more_important_pod does (ties keep their order)."""
    return -p.priority, p.start_time


def _int_or_percent(value: Any, total: int, *, round_up: bool) -> int:
    if isinstance(value, str) and value.endswith("%"):
        pct = int(value[:-1])
        return math.ceil(total * pct / 100) if round_up else total * pct // 100
    return int(value)


def list_pdbs(lister: Any) -> list[PDB]:
    """PodDisruptionBudgets with their allowed disruptions.

    Nothing runs the disruption controller in the embedded cluster, so when a PDB carries
    no status, disruptionsAllowed is worked out from its spec and the bound pods it selects.
    """
    if lister is None or not hasattr(lister, "list"):
        return []
    out: list[PDB] = []
    pods = None
    for obj in lister.list("PodDisruptionBudget"):
        meta, spec, status = obj.get("metadata") or {}, obj.get("spec") or {}, obj.get("status") or {}
        ns = str(meta.get("namespace") or "default")
        raw_sel = spec.get("selector")
        try:
            selector = parse_label_selector(raw_sel) if raw_sel else None
        except SelectorError:
            selector = None
        if selector is not None and selector.is_everything:
            selector = None  # an empty selector matches no pods for a PDB
        if "disruptionsAllowed" in status:
            allowed = int(status.get("disruptionsAllowed") or 0)
        else:
            if pods is None:
                pods = list(lister.list("Pod"))
            matching = [
                p
                for p in pods
                if selector is not None
                and str((p.get("metadata") or {}).get("namespace") or "default") == ns
                and selector.matches((p.get("metadata") or {}).get("labels") or {})
            ]
            expected = len(matching)
            healthy = sum(1 for p in matching if (p.get("spec") or {}).get("nodeName"))
            if spec.get("maxUnavailable") is not None:
                desired = expected - _int_or_percent(spec["maxUnavailable"], expected, round_up=True)
            else:
                desired = _int_or_percent(spec.get("minAvailable", 0), expected, round_up=True)
            allowed = max(0, healthy - desired)
        out.append(PDB(ns, selector, allowed, frozenset(status.get("disruptedPods") or {})))
    return out


def filter_pods_with_pdb_violation(pods: Sequence[PodInfo], pdbs: list[PDB]) -> tuple[list[PodInfo], list[PodInfo]]:
    """Split pods (in order) into those whose eviction would break a PDB and the rest."""
    allowed = [p.disruptions_allowed for p in pdbs]
    violating: list[PodInfo] = []
    non_violating: list[PodInfo] = []
    for pod in pods:
        violated = False
        if pod.labels:
            for i, pdb in enumerate(pdbs):
                if pdb.namespace != pod.namespace or pdb.selector is None or not pdb.selector.matches(pod.labels):
                    continue
                if pod.name in pdb.disrupted_pods:
                    continue
                allowed[i] -= 1
                if allowed[i] < 0:
                    violated = True
        (violating if violated else non_violating).append(pod)
    return violating, non_violating


def pick_one_node_for_preemption(candidates: list[Candidate]) -> Candidate:
    """Fewest PDB violations, lowest top victim priority, smallest priority sum, fewest victims, latest start."""
    remaining = candidates

    def keep_min(score: Callable[[Candidate], Any]) -> None:
        nonlocal remaining
        best = min(score(c) for c in remaining)
        remaining = [c for c in remaining if score(c) == best]

    keep_min(lambda c: c.num_pdb_violations)
    if len(remaining) > 1:
        keep_min(lambda c: c.victims[0].priority)
    if len(remaining) > 1:
        keep_min(lambda c: sum(v.priority + 2**31 for v in c.victims))
    if len(remaining) > 1:
        keep_min(lambda c: len(c.victims))
    if len(remaining) > 1:
        latest = max(_earliest_start_of_most_important(c.victims) for c in remaining)
        remaining = [c for c in remaining if _earliest_start_of_most_important(c.victims) == latest]
    return remaining[0]


def _earliest_start_of_most_important(victims: list[PodInfo]) -> str:
    top = max(v.priority for v in victims)
    return min(v.start_time for v in victims if v.priority == top)


class Evaluator:
    def __init__(self, plugin_name: str, handle: Handle, min_pct: int, min_abs: int, *, run_async: bool) -> None:
        self.plugin_name = plugin_name
        self.handle = handle
        self.min_pct = min_pct
        self.min_abs = min_abs
        self.run_async = run_async
        self.preempting: set[str] = set()
        self._last_victim: dict[str, tuple[str, str]] = {}  # preemptor uid -> namespace, name of its last victim

    def preempt(
        self, state: CycleState, pod: PodInfo, m: NodeToStatus
    ) -> tuple[PostFilterResult | None, Status | None]:
        best, result, status = self.choose(state, pod, m)
        if best is None:
            return result, status
        self.prepare_candidate(best, pod)
        return PostFilterResult(NominatingInfo(best.name, "Override")), None

    def choose(
        self, state: CycleState, pod: PodInfo, m: NodeToStatus
    ) -> tuple[Candidate | None, PostFilterResult | None, Status | None]:
        """The node and victims preempt would pick, evicting nothing (the shadow's dry run stops here); without
        a candidate, preempt's answer instead."""
        ok, reason = self.pod_eligible_to_preempt_others(pod, m)
        if not ok:
            return None, None, Status(Code.UNSCHEDULABLE, reason)
        all_nodes = self.handle.shared_lister().node_info_list
        candidates, statuses, errors = self.find_candidates(state, pod, all_nodes, m)
        if errors and not candidates:
            return None, None, Status(Code.ERROR, _aggregate(errors))
        if not candidates:
            diag = Diagnosis(
                node_to_status=statuses,
                absent_nodes_status=Status(Code.UNSCHEDULABLE_AND_UNRESOLVABLE, MSG_NOT_HELPFUL),
            )
            fit = FitError(pod, len(all_nodes), diag)
            return None, PostFilterResult(NominatingInfo("", "Override")), Status(Code.UNSCHEDULABLE, str(fit))
        candidates, s = self.call_extenders(pod, candidates)
        if s is not None:
            return None, None, s
        if not candidates:
            return None, None, Status(Code.UNSCHEDULABLE, "no candidate node for preemption")
        return pick_one_node_for_preemption(candidates), None, None

    def call_extenders(self, pod: PodInfo, candidates: list[Candidate]) -> tuple[list[Candidate], Status | None]:
        """Preempting extenders may drop candidate nodes or change their victims, each seeing the last one's answer."""
        extenders = [e for e in self.handle.extenders if e.supports_preemption() and e.is_interested(pod)]
        if not extenders:
            return candidates, None
        victims = {c.name: Victims(list(c.victims), c.num_pdb_violations) for c in candidates}
        node_infos = self.handle.shared_lister().node_info_map
        for ext in extenders:
            try:
                result = ext.process_preemption(pod, victims, node_infos)
            except ExtenderError as err:
                if ext.ignorable:
                    continue
                return [], Status(Code.ERROR, err=err)
            for name in [n for n, v in result.items() if not v.pods]:
                if not ext.ignorable:
                    return [], Status(Code.ERROR, f'expected at least one victim pod on node "{name}"')
                del result[name]
            victims = result
            if not victims:
                break
        return [Candidate(n, v.pods, v.num_pdb_violations) for n, v in victims.items()], None

    def pod_eligible_to_preempt_others(self, pod: PodInfo, m: NodeToStatus) -> tuple[bool, str]:
        if pod.preemption_policy == "Never":
            return False, MSG_POLICY_NEVER
        nominated = pod.nominated_node_name
        if nominated and m.get_status(nominated).code != Code.UNSCHEDULABLE_AND_UNRESOLVABLE:
            snapshot = self.handle.shared_lister()
            pos = snapshot.position.get(nominated)
            if pos is not None:
                for p in snapshot.node_info_list[pos].pods:
                    if p.deleting and p.priority < pod.priority and _preempted_by_scheduler(p):
                        return False, MSG_TERMINATING
        return True, ""

    def find_candidates(
        self, state: CycleState, pod: PodInfo, all_nodes: Sequence[NodeInfo], m: NodeToStatus
    ) -> tuple[list[Candidate], dict[str, Status], list[str]]:
        """Dry-run preemption on the nodes where it might help, from a random offset."""
        potential = [ni for ni in all_nodes if m.get_status(ni.name).code != Code.UNSCHEDULABLE_AND_UNRESOLVABLE]
        if not potential:
            return [], {}, []
        offset, num_candidates = self.get_offset_and_num_candidates(len(potential))
        pdbs = list_pdbs(self.handle.lister)
        return self.dry_run_preemption(state, pod, potential, pdbs, offset, num_candidates)

    def get_offset_and_num_candidates(self, n: int) -> tuple[int, int]:
        """Where the dry run starts, and how many candidates are enough (min of pct/absolute, at most n)."""
        num_candidates = min(max(n * self.min_pct // 100, self.min_abs), n)
        offset = self.handle.rng.randrange(n) if self.handle.rng is not None else 0
        return offset, num_candidates

    def dry_run_preemption(
        self,
        state: CycleState,
        pod: PodInfo,
        potential: Sequence[NodeInfo],
        pdbs: list[PDB],
        offset: int,
        num_candidates: int,
    ) -> tuple[list[Candidate], dict[str, Status], list[str]]:
        """Select victims on copies of the nodes until enough candidates, one not violating a PDB among them."""
        fwk = self.handle.framework
        non_violating: list[Candidate] = []
        violating: list[Candidate] = []
        statuses: dict[str, Status] = {}
        errors: list[str] = []
        n = len(potential)
        for i in range(n):
            ni = potential[(offset + i) % n].clone()
            victims, num_violating, status = self.select_victims_on_node(fwk, state.clone(), pod, ni, pdbs)
            if status is None and not victims:
                status = Status(Code.ERROR, f'expected at least one victim pod on node "{ni.name}"')
            if status is None:
                bucket = violating if num_violating else non_violating
                if len(bucket) < num_candidates:  # upstream's candidate lists hold numCandidates each
                    bucket.append(Candidate(ni.name, victims, num_violating))
            else:
                if status.code == Code.ERROR:
                    errors.append(status.message())
                statuses[ni.name] = status
            if non_violating and len(non_violating) + len(violating) >= num_candidates:
                break
        return non_violating + violating, statuses, errors

    def select_victims_on_node(
        self, fwk: Any, state: CycleState, pod: PodInfo, ni: NodeInfo, pdbs: list[PDB]
    ) -> tuple[list[PodInfo], int, Status | None]:
        potential = [p for p in ni.pods if p.priority < pod.priority]
        for p in potential:
            ni.remove_pod(p)
            s = fwk.run_pre_filter_extension_remove_pod(state, pod, p, ni)
            if s is not None and not s.is_success():
                return [], 0, s
        if not potential:
            return [], 0, Status(Code.UNSCHEDULABLE_AND_UNRESOLVABLE, MSG_NO_VICTIMS)
        s = fwk.run_filter_plugins_with_nominated_pods(state, pod, ni)
        if s is not None and not s.is_success():
            return [], 0, s
        potential.sort(key=importance)
        violating, non_violating = filter_pods_with_pdb_violation(potential, pdbs)
        victims: list[PodInfo] = []
        num_violating = 0

        def reprieve(p: PodInfo) -> bool:
            """Put the pod back; True if the preemptor then no longer fits (so the pod stays a victim)."""
            ni.add_pod(p)
            fwk.run_pre_filter_extension_add_pod(state, pod, p, ni)
            st = fwk.run_filter_plugins_with_nominated_pods(state, pod, ni)
            if st is not None and not st.is_success():
                ni.remove_pod(p)
                fwk.run_pre_filter_extension_remove_pod(state, pod, p, ni)
                victims.append(p)
                return True
            return False

        for p in violating:
            if reprieve(p):
                num_violating += 1
        for p in non_violating:
            reprieve(p)
        victims.sort(key=importance)
        return victims, num_violating, None

    def is_pod_running_preemption(self, uid: str) -> bool:
        """IsPodRunningPreemption: the pod's evictions are under way, unless the victim deleted last already
        shows as terminating or gone (its deletion event may come before the call's answer does).
        """
        if uid not in self.preempting:
            return False
        last = self._last_victim.get(uid)
        lister = self.handle.lister
        if last is None or lister is None:
            return True
        victim = lister.get("Pod", *last)
        return victim is not None and not (victim.get("metadata") or {}).get("deletionTimestamp")

    def prepare_candidate(self, candidate: Candidate, pod: PodInfo) -> None:
        """Evict the victims and clear lower-priority nominations to the node; async as in v1.36."""
        if not self.run_async:
            self._evict(candidate, pod)
            return
        client = self.handle.client
        if client is not None and client.DELETES_REPORT_DONE:
            victims = [v for v in candidate.victims if not v.deleting]
            if not victims:
                return  # each victim is terminating already: no call to make, nothing to wait for
            self.preempting.add(pod.uid)
            self.handle.scheduler_clock().call_later(0, lambda: self._evict_reporting(candidate, victims, pod))
            return
        self.preempting.add(pod.uid)

        def run() -> None:
            try:
                self._evict(candidate, pod)
            finally:
                self.preempting.discard(pod.uid)
                self._last_victim.pop(pod.uid, None)
                if self.handle.activate is not None:
                    self.handle.activate([pod])

        self.handle.scheduler_clock().call_later(0, run)

    def _evict_reporting(self, candidate: Candidate, victims: list[PodInfo], pod: PodInfo) -> None:
        """Upstream's preemption goroutine, for a cluster whose deletions take time.

        Lower-priority nominations to the node are cleared first; then every victim but one is
        evicted, and the last one only once those calls are through, so that the last victim
        terminating means the evictions are done. The pod stays "preempting" until its last call
        is answered; PreEnqueue lets it go as soon as that victim shows as terminating or gone.
        It is activated only when a call failed (the last victim is then spared); otherwise the
        victims' deletion events move it, as upstream's.
        """
        if self.handle.metrics is not None:
            self.handle.metrics.observe_preemption_victims(len(candidate.victims))
        self._clear_nominations(candidate, pod)
        *first, last = victims
        pending = len(first) + 1  # one more until every first call is out, so an early answer cannot end it
        failed = False

        def finish(ok: bool) -> None:
            self.preempting.discard(pod.uid)
            self._last_victim.pop(pod.uid, None)
            if not ok and self.handle.activate is not None:
                self.handle.activate([pod])

        def one_done(ok: bool) -> None:
            nonlocal pending, failed
            pending -= 1
            failed = failed or not ok
            if pending:
                return
            if failed:
                finish(False)
                return
            self._last_victim[pod.uid] = (last.namespace, last.name)
            self._evict_one(candidate, pod, last, finish)

        for victim in first:
            self._evict_one(candidate, pod, victim, one_done)
        one_done(True)

    def _evict(self, candidate: Candidate, pod: PodInfo) -> None:
        """Evict the victims, each deletion done on return, then clear lower-priority nominations.

        A preemptor held back meanwhile has its last victim noted before that one goes, as in
        `_evict_reporting`: the deletion event that ends the evictions also lets it through PreEnqueue.
        """
        if self.handle.metrics is not None:
            self.handle.metrics.observe_preemption_victims(len(candidate.victims))
        for i, victim in enumerate(candidate.victims):
            if i == len(candidate.victims) - 1 and pod.uid in self.preempting:
                self._last_victim[pod.uid] = (victim.namespace, victim.name)
            self._evict_one(candidate, pod, victim, None)
        self._clear_nominations(candidate, pod)

    def _evict_one(
        self, candidate: Candidate, pod: PodInfo, victim: PodInfo, done: Callable[[bool], None] | None
    ) -> None:
        """PreemptPod: reject a victim waiting at Permit, or mark it DisruptionTarget and delete it.

        `done` hears once whether that went through (a victim already gone counts), at once or when
        the deletion is answered.
        """
        fwk, client = self.handle.framework, self.handle.client
        if client is None:
            raise RuntimeError("preemption needs an API client to evict victims")
        waiting = fwk.get_waiting_pod(victim.uid) if fwk is not None else None
        if waiting is not None:
            waiting.reject(self.plugin_name, "preempted")
            if done is not None:
                done(True)
        else:
            condition = {
                "type": "DisruptionTarget",
                "status": "True",
                "reason": REASON_PREEMPTION_BY_SCHEDULER,
                "message": f"{self.handle.profile_name}: preempting to accommodate a higher priority pod",
            }
            try:
                client.delete_pod(victim, condition, done)
            except Exception:  # already gone: nothing left to evict
                if done is not None:
                    done(True)
                return
        note = f"Preempted by pod {pod.uid} on node {candidate.name}"
        client.record_event(victim, "Normal", "Preempted", "Preempting", note)
        if self.handle.report is not None:
            self.handle.report(
                "Preempted", victim.key, candidate.name, f"Preempted by {pod.key} on node {candidate.name}", pod.key
            )

    def _clear_nominations(self, candidate: Candidate, pod: PodInfo) -> None:
        """Lower-priority pods nominated to the node may no longer fit there: their nominations go."""
        nominator, client = self.handle.nominator, self.handle.client
        if nominator is None or client is None:
            return
        for p in nominator.nominated_pods_for_node(candidate.name):
            if p.priority < pod.priority and p.uid != pod.uid:
                try:
                    client.patch_pod_status(p, None, "")
                except Exception:  # the pod went away meanwhile
                    continue


def _aggregate(errors: list[str]) -> str:
    """utilerrors.NewAggregate's text: one error as is, several in brackets."""
    return errors[0] if len(errors) == 1 else "[" + ", ".join(errors) + "]"


def _preempted_by_scheduler(pod: PodInfo) -> bool:
    for c in (pod.obj.get("status") or {}).get("conditions") or ():
        if c.get("type") == "DisruptionTarget" and c.get("status") == "True":
            return c.get("reason") == REASON_PREEMPTION_BY_SCHEDULER
    return False
