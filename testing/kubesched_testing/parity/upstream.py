"""Play a Case on a real control plane with upstream kube-scheduler and record each decision.

The harness stands in for the components a bare control plane lacks: the kubelet
(bound pods become Running with distinct start times), the disruption controller
(PodDisruptionBudget status), the PV controller (static binding of claims) and the
resourceclaim controller (a ResourceClaim from each template a pod names).
Pods are created one at a time; before each one the cluster is listed, so that
the state upstream decided on can be replayed exactly by kubesched. Per-plugin
scores come from kube-scheduler's `--v=10` lines of schedule_one.go.
"""

from __future__ import annotations

import copy
import functools
import logging
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

from kubesched.api import volumes as vol
from kubesched.api.object import Obj
from kubesched.api.selectors import parse_label_selector
from kubesched.backend.embedded.controllers.resource_claim import POD_CLAIM_ANNOTATION, generate_name
from kubesched.backend.kube.api import APIError, KubeAPI, load_configuration
from kubesched.backend.kube.resources import BY_KIND, WATCHED, Resource
from kubesched.backend.kube.snapshot import clean, take_snapshot
from kubesched_testing.controlplane import RESOURCE_CLAIM_TEMPLATE, ControlPlane, Process, namespaces, reset_cluster
from kubesched_testing.parity.allocations import allocation_record, claim_names
from kubesched_testing.parity.families import Case
from kubesched_testing.parity.klog import Line, LogFollower

log = logging.getLogger(__name__)

START = datetime(2026, 1, 1, tzinfo=UTC)
# Verbosity: attempts, bindings and preemption at 3; scores (schedule_one.go) at 10; cache events at 4;
# ResourceClaims entering the scheduler's assume cache at 10.
VMODULE = "schedule_one=10,eventhandlers=4,assume_cache=10"
# A victim deleted now, or one already terminating (no API call, but a victim all the same).
_VICTIM_LINES = (
    "Preemptor Pod preempted victim Pod",
    "Victim Pod is already being deleted, skipping the API call for it",
)


@dataclass
class Attempt:
    """One scheduling attempt of a pod as upstream's log and the API server tell it."""

    pod: str
    scores: dict[str, dict[str, int]] = field(default_factory=dict)  # node -> plugin -> weighted score
    totals: dict[str, int] = field(default_factory=dict)
    node: str | None = None
    evaluated: int | None = None
    feasible: int | None = None
    message: str | None = None  # the FitError text (or error) when not scheduled
    error: bool = False
    nominated: str | None = None
    victims: list[str] = field(default_factory=list)
    batch_hint: bool = False  # OpportunisticBatching handed this attempt a node
    allocations: dict[str, Obj | None] = field(default_factory=dict)  # claim -> its allocation, once bound
    done: bool = False
    start_seq: int = 0  # the log line that started it, to order it against other events
    preemption_started: bool = False  # the asynchronous victim deletion began
    preemption_done: bool = False


@dataclass
class Decision:
    family: str
    seed: int
    pod: str
    label: str  # "first attempt" | "after preemption"
    state: list[Obj]  # the cluster as upstream saw it, the pod pending in it
    upstream: Attempt
    ambiguous: str = ""  # why this decision cannot be compared, if it cannot
    nominations: int = 0  # other pods waiting with a nomination when it was decided


class AttemptLog:
    """kube-scheduler's attempts, per pod, from its log."""

    def __init__(self, proc: Process) -> None:
        self.follower = LogFollower(str(proc.log_path))
        self.attempts: dict[str, list[Attempt]] = {}
        self.synced = False
        self.cache_updates: dict[str, int] = {}  # pod -> scheduled-pod update events seen
        self.deleted_at: dict[str, int] = {}  # pod -> the log line where the scheduler saw it deleted
        self.nodes_added: set[str] = set()
        self.assigned_added: set[str] = set()
        self.claim_events: dict[str, int] = {}  # claim -> adds and updates its assume cache took in
        self.seq = 0

    def _current(self, pod: str) -> Attempt:
        lst = self.attempts.setdefault(pod, [])
        if not lst or lst[-1].done:
            lst.append(Attempt(pod, start_seq=self.seq))
        return lst[-1]

    def poll(self) -> None:
        for line in self.follower.read():
            self.seq += 1
            self._take(line)

    def _take(self, line: Line) -> None:
        v = line.values
        msg = line.msg
        if msg == "Handlers synced":
            self.synced = True
        elif msg == "Attempting to schedule pod":
            self.attempts.setdefault(v["pod"], []).append(Attempt(v["pod"], start_seq=self.seq))
        elif msg == "Plugin scored node for pod":
            self._current(v["pod"]).scores.setdefault(v["node"], {})[v["plugin"]] = int(v["score"])
        elif msg == "Calculated node's final score for pod":
            self._current(v["pod"]).totals[v["node"]] = int(v["score"])
        elif msg == "OpportunisticBatch provided node hint":
            self._current(v["pod"]).batch_hint = True
        elif msg == "Successfully bound pod to node":
            a = self._last(v["pod"])
            a.node, a.done = v["node"], True
            a.evaluated, a.feasible = int(v["evaluatedNodes"]), int(v["feasibleNodes"])
        elif msg in ("Unable to schedule pod; no fit; waiting", "Unable to schedule pod; no nodes are registered"):
            a = self._last(v["pod"])
            a.message, a.done = v.get("err", ""), True
        elif msg == "Error scheduling pod; retrying":
            a = self._last(v["pod"])
            a.message, a.error, a.done = v.get("err", ""), True, True
        elif msg in _VICTIM_LINES:
            self._preemption(v["preemptor"]).victims.append(v["victim"])
        elif msg == "the target node for the preemption is determined":
            self._last(v["pod"]).nominated = v["node"]
        elif msg == "Start the preemption asynchronously":
            self._preemption(v["preemptor"]).preemption_started = True
        elif msg == "Async Preemption finished completely":
            self._preemption(v["preemptor"]).preemption_done = True
        elif msg == "Add event for node":
            self.nodes_added.add(v["node"])
        elif msg == "Add event for scheduled pod":
            self.assigned_added.add(v["pod"])
        elif msg == "Adding object to assume cache" and v.get("description") == "ResourceClaim":
            self.claim_events[v["cacheKey"]] = self.claim_events.get(v["cacheKey"], 0) + 1
        elif msg == "Update event for scheduled pod":
            self.cache_updates[v["pod"]] = self.cache_updates.get(v["pod"], 0) + 1
        elif msg in ("Delete event for unscheduled pod", "Delete event for scheduled pod"):
            self.deleted_at[v["pod"]] = self.seq

    def _last(self, pod: str) -> Attempt:
        lst = self.attempts.setdefault(pod, [])
        if not lst:
            lst.append(Attempt(pod))
        return lst[-1]

    def _preemption(self, pod: str) -> Attempt:
        """The attempt whose preemption an asynchronous line reports: the latest one that nominated.

        Victim deletion goes on in the background, so its lines may arrive after the next attempt began.
        """
        for a in reversed(self.attempts.get(pod) or []):
            if a.nominated:
                return a
        return self._last(pod)


def wait(cond: Callable[[], Any], timeout: float, what: str, poll: Callable[[], None] | None = None) -> Any:
    deadline = time.monotonic() + timeout
    while True:
        if poll is not None:
            poll()
        value = cond()
        if value:
            return value
        if time.monotonic() > deadline:
            raise TimeoutError(f"timed out after {timeout:.0f}s waiting for {what}")
        time.sleep(0.01)


class UpstreamRunner:
    """Runs Cases on one control plane, one kube-scheduler per Case."""

    def __init__(self, cp: ControlPlane, *, verbosity: int = 3, binary: Path | None = None) -> None:
        self.cp = cp
        self.binary = binary  # an older release's kube-scheduler; None: v1.36's
        self.api = KubeAPI(load_configuration(str(cp.kubeconfig_path)), qps=0, retries=5)
        self.verbosity = verbosity
        self._clock = 0
        self.scheduler: Process | None = None
        self._last_seen: dict[str, Obj] = {}

    # Cluster set-up

    def _start_time(self) -> str:
        self._clock += 1
        return (START + timedelta(seconds=self._clock)).strftime("%Y-%m-%dT%H:%M:%SZ")

    def reset(self) -> None:
        reset_cluster(self.api)

    def _ensure_namespaces(self, labels: dict[str, dict[str, str]]) -> None:
        existing = set(namespaces(self.api))
        for ns, lab in labels.items():
            full = {"kubernetes.io/metadata.name": ns, **lab}
            if ns in existing:
                current = self.api.request("GET", f"/api/v1/namespaces/{ns}")
                current["metadata"]["labels"] = full
                self.api.request("PUT", f"/api/v1/namespaces/{ns}", body=current)
            else:
                self.api.request(
                    "POST",
                    "/api/v1/namespaces",
                    body={"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": ns, "labels": full}},
                )

    def create(self, obj: Obj) -> Obj:
        r = RESOURCE_CLAIM_TEMPLATE if obj["kind"] == RESOURCE_CLAIM_TEMPLATE.kind else BY_KIND[obj["kind"]]
        ns = obj["metadata"].get("namespace", "default") if r.namespaced else ""
        out = self.api.request("POST", r.path(ns), body=obj)
        if obj["kind"] == "Pod" and obj["spec"].get("nodeName"):
            out = self.kubelet_start(out)
        elif obj["kind"] == "PersistentVolume":
            out = self._set_status("PersistentVolume", out, {"phase": "Available"})
        return out

    def _set_status(self, kind: str, obj: Obj, status: Obj) -> Obj:
        """A merge patch of the status subresource (list items carry no kind, hence the argument)."""
        r = BY_KIND[kind]
        meta = obj["metadata"]
        return self.api.request(
            "PATCH",
            r.path(meta.get("namespace", ""), meta["name"], "status"),
            body={"status": status},
            content_type="application/merge-patch+json",
        )

    def _create_all(self, objects: list[Obj]) -> None:
        """In order of kind, each kind's objects concurrently (large clusters have thousands), nodes one by one.

        Nodes go in the order the state lists them, so that the scheduler's node tree (filled
        from watch events, in arrival order) holds them in the order a replay adds them.
        """
        from concurrent.futures import ThreadPoolExecutor

        groups: list[list[Obj]] = []
        for obj in objects:
            if groups and groups[-1][0]["kind"] == obj["kind"]:
                groups[-1].append(obj)
            else:
                groups.append([obj])
        with ThreadPoolExecutor(16) as pool:
            for group in groups:
                if group[0]["kind"] == "Node":
                    for node in sorted(group, key=lambda n: n["metadata"]["name"]):
                        self.create(copy.deepcopy(node))
                    continue
                list(pool.map(lambda o: self.create(copy.deepcopy(o)), group))

    def claim_controller(self, pod: Obj) -> tuple[Obj, list[Obj]]:
        """The resourceclaim controller's part: a claim from each template the pod names, recorded in its status.

        Named, labelled and owned as kube-controller-manager makes them; until the pod's status
        names them, the scheduler's DynamicResources PreEnqueue keeps the pod out of the queue.
        """
        entries = [e for e in pod["spec"].get("resourceClaims") or () if e.get("resourceClaimTemplateName")]
        if not entries:
            return pod, []
        meta = pod["metadata"]
        ns = meta["namespace"]
        owner = {
            "apiVersion": "v1",
            "kind": "Pod",
            "name": meta["name"],
            "uid": meta["uid"],
            "controller": True,
            "blockOwnerDeletion": True,
        }
        made, statuses = [], []
        for entry in entries:
            template = self.api.request("GET", RESOURCE_CLAIM_TEMPLATE.path(ns, entry["resourceClaimTemplateName"]))
            tmeta = template["spec"].get("metadata") or {}
            claim: Obj = {
                "apiVersion": "resource.k8s.io/v1",
                "kind": "ResourceClaim",
                "metadata": {
                    "generateName": generate_name(meta["name"], entry["name"]),
                    "namespace": ns,
                    "annotations": {**(tmeta.get("annotations") or {}), POD_CLAIM_ANNOTATION: entry["name"]},
                    "ownerReferences": [owner],
                },
                "spec": template["spec"]["spec"],
            }
            if tmeta.get("labels"):
                claim["metadata"]["labels"] = tmeta["labels"]
            out = self.api.request("POST", BY_KIND["ResourceClaim"].path(ns), body=claim)
            made.append(out)
            statuses.append({"name": entry["name"], "resourceClaimName": out["metadata"]["name"]})
        return self._set_status("Pod", pod, {"resourceClaimStatuses": statuses}), made

    def kubelet_start(self, pod: Obj) -> Obj:
        """What the kubelet would write once the pod runs: phase Running and a start time."""
        r = BY_KIND["Pod"]
        meta = pod["metadata"]
        patch = {"status": {"phase": "Running", "startTime": self._start_time()}}
        return self.api.request(
            "PATCH",
            r.path(meta["namespace"], meta["name"], "status"),
            body=patch,
            content_type="application/merge-patch+json",
        )

    def update_pdbs(self) -> None:
        """The disruption controller's part: healthy counts and allowed disruptions from running pods."""
        pdb_r, pod_r = BY_KIND["PodDisruptionBudget"], BY_KIND["Pod"]
        pdbs = self.api.request("GET", pdb_r.path()).get("items") or ()
        if not pdbs:
            return
        pods = self.api.request("GET", pod_r.path()).get("items") or ()
        for pdb in pdbs:
            ns = pdb["metadata"]["namespace"]
            sel = parse_label_selector(pdb["spec"].get("selector"))
            matching = [
                p for p in pods if p["metadata"]["namespace"] == ns and sel.matches(p["metadata"].get("labels") or {})
            ]
            healthy = sum(
                1
                for p in matching
                if (p.get("status") or {}).get("phase") == "Running" and not p["metadata"].get("deletionTimestamp")
            )
            desired = int(pdb["spec"].get("minAvailable") or 0)
            status = {
                "observedGeneration": pdb["metadata"].get("generation", 1),
                "currentHealthy": healthy,
                "desiredHealthy": desired,
                "expectedPods": len(matching),
                "disruptionsAllowed": max(0, healthy - desired),
            }
            if (
                pdb.get("status", {}).get("disruptionsAllowed") == status["disruptionsAllowed"]
                and pdb.get("status", {}).get("currentHealthy") == healthy
            ):
                continue
            pdb["status"] = {**(pdb.get("status") or {}), **status}
            self.api.request("PUT", pdb_r.path(ns, pdb["metadata"]["name"], "status"), body=pdb)

    def setup(self, case: Case, alog: AttemptLog) -> None:
        """Objects created while the scheduler watches, then a wait until it has seen every node and bound pod.

        Started on an empty cluster, the scheduler adds nodes to its node tree in creation
        order; nodes it finds at start-up arrive in an order of Go's map iteration instead.
        """
        self._create_all(case.objects)
        allocated = self._claim_statuses(case)
        self.update_pdbs()
        self.pv_controller()
        nodes = {o["metadata"]["name"] for o in case.objects if o["kind"] == "Node"}
        bound = {
            f"{o['metadata'].get('namespace', 'default')}/{o['metadata']['name']}"
            for o in case.objects
            if o["kind"] == "Pod" and o["spec"].get("nodeName")
        }
        # Each claim created, and updated again where the case starts with it allocated.
        claims = {_key(o): 2 if _key(o) in allocated else 1 for o in case.objects if o["kind"] == "ResourceClaim"}
        wait(
            lambda: (
                nodes <= alog.nodes_added
                and bound <= alog.assigned_added
                and all(alog.claim_events.get(k, 0) >= n for k, n in claims.items())
            ),
            120,
            "the scheduler to see the cluster",
            alog.poll,
        )
        self._settle(alog)

    def _claim_statuses(self, case: Case) -> set[str]:
        """Allocations the case starts with, as an earlier scheduler wrote them, reserved for pods now created."""
        r = BY_KIND["ResourceClaim"]
        written = set()
        for o in case.objects:
            if o["kind"] != "ResourceClaim" or not o.get("status"):
                continue
            ns, name = o["metadata"]["namespace"], o["metadata"]["name"]
            status = copy.deepcopy(o["status"])
            for ref in status.get("reservedFor") or ():
                pod = self._pod(f"{ns}/{ref['name']}")
                ref["uid"] = pod["metadata"]["uid"] if pod else ""
            claim = self.api.request("GET", r.path(ns, name))
            claim["status"] = status
            self.api.request("PUT", r.path(ns, name, "status"), body=claim)
            written.add(f"{ns}/{name}")
        return written

    # The PV controller's part (and an external provisioner's), run between and during decisions

    def pv_controller(self) -> None:
        """Bind Immediate claims; finish bindings the scheduler started; provision selected claims."""
        pv_r, pvc_r, sc_r = BY_KIND["PersistentVolume"], BY_KIND["PersistentVolumeClaim"], BY_KIND["StorageClass"]
        pvcs = self.api.request("GET", pvc_r.path()).get("items") or []
        if not pvcs:
            return
        pvs = self.api.request("GET", pv_r.path()).get("items") or []
        classes = {c["metadata"]["name"]: c for c in self.api.request("GET", sc_r.path()).get("items") or ()}
        for pv in pvs:
            ref = pv["spec"].get("claimRef")
            if not ref or (pv.get("status") or {}).get("phase") == "Bound":
                continue
            pvc = next((c for c in pvcs if c["metadata"]["name"] == ref.get("name")), None)
            if pvc is not None:
                self._bind(pv, pvc)
        for pvc in pvcs:
            if vol.is_claim_fully_bound(pvc) or pvc["spec"].get("volumeName"):
                continue
            sc = classes.get(vol.claim_class(pvc))
            if sc is None:
                continue
            selected = vol.object_annotations(pvc).get(vol.ANN_SELECTED_NODE)
            if sc.get("volumeBindingMode", "Immediate") == "Immediate":
                free = [
                    pv
                    for pv in pvs
                    if not pv["spec"].get("claimRef")
                    and set(pvc["spec"].get("accessModes") or ()) <= set(pv["spec"].get("accessModes") or ())
                ]
                match = vol.find_matching_volume(pvc, free, None, {}, False)
                if match is not None:
                    self._bind(dict(match), pvc)
                    pvs = [p for p in pvs if p["metadata"]["name"] != match["metadata"]["name"]]
            elif selected and sc.get("provisioner") != "kubernetes.io/no-provisioner":
                self._provision(pvc, sc, selected)

    def _bind(self, pv: Obj, pvc: Obj) -> None:
        pv_r, pvc_r = BY_KIND["PersistentVolume"], BY_KIND["PersistentVolumeClaim"]
        ns, name = pvc["metadata"]["namespace"], pvc["metadata"]["name"]
        if not pv["spec"].get("claimRef"):
            pv["spec"]["claimRef"] = {
                "apiVersion": "v1",
                "kind": "PersistentVolumeClaim",
                "namespace": ns,
                "name": name,
                "uid": pvc["metadata"]["uid"],
            }
            pv = self.api.request("PUT", pv_r.path(name=pv["metadata"]["name"]), body=pv)
        pvc["spec"]["volumeName"] = pv["metadata"]["name"]
        pvc["metadata"].setdefault("annotations", {}).update(
            {vol.ANN_BIND_COMPLETED: "yes", vol.ANN_BOUND_BY_CONTROLLER: "yes"}
        )
        pvc = self.api.request("PUT", pvc_r.path(ns, name), body=pvc)
        self._set_status("PersistentVolume", pv, {"phase": "Bound"})
        self._set_status(
            "PersistentVolumeClaim",
            pvc,
            {"phase": "Bound", "accessModes": pv["spec"]["accessModes"], "capacity": pv["spec"]["capacity"]},
        )

    def _provision(self, pvc: Obj, sc: Obj, node_name: str) -> None:
        node = self.api.request("GET", BY_KIND["Node"].path(name=node_name))
        zone = (node["metadata"].get("labels") or {}).get("topology.kubernetes.io/zone")
        size = pvc["spec"]["resources"]["requests"]["storage"]
        name = f"pvc-{pvc['metadata']['uid']}"
        affinity = (
            {"key": "topology.kubernetes.io/zone", "operator": "In", "values": [zone]}
            if zone
            else {"key": "kubernetes.io/hostname", "operator": "In", "values": [node_name]}
        )
        pv: Obj = {
            "apiVersion": "v1",
            "kind": "PersistentVolume",
            "metadata": {"name": name},
            "spec": {
                "capacity": {"storage": size},
                "accessModes": pvc["spec"]["accessModes"],
                "persistentVolumeReclaimPolicy": "Delete",
                "storageClassName": sc["metadata"]["name"],
                "csi": {"driver": sc["provisioner"], "volumeHandle": name},
                "nodeAffinity": {"required": {"nodeSelectorTerms": [{"matchExpressions": [affinity]}]}},
                "claimRef": {
                    "apiVersion": "v1",
                    "kind": "PersistentVolumeClaim",
                    "namespace": pvc["metadata"]["namespace"],
                    "name": pvc["metadata"]["name"],
                    "uid": pvc["metadata"]["uid"],
                },
            },
        }
        try:
            created = self.api.request("POST", BY_KIND["PersistentVolume"].path(), body=pv)
        except APIError as err:
            if err.status != 409:
                raise
            return
        self._bind(created, pvc)

    def start_scheduler(self, case: Case) -> AttemptLog:
        if self.scheduler is not None:
            self.scheduler.stop()
        proc = self.cp.start_scheduler(
            case.config,
            verbosity=self.verbosity,
            name=f"sched-{case.family}-{case.seed}",
            args=(f"--vmodule={VMODULE}",),
            binary=self.binary,
        )
        self.scheduler = proc
        attempts = AttemptLog(proc)
        wait(lambda: attempts.synced, 60, "kube-scheduler to sync", attempts.poll)
        return attempts

    def stop_scheduler(self) -> None:
        if self.scheduler is not None:
            self.scheduler.stop()
            self.cp.schedulers.remove(self.scheduler)
            self.scheduler = None

    def snapshot(self) -> list[Obj]:
        """The cluster as manifests; every pod seen is remembered, to put back victims deleted since."""
        objects = take_snapshot(self.api)
        for o in objects:
            if o["kind"] == "Pod":
                self._last_seen[_key(o)] = o
        return objects

    # Playing a case

    def run(self, case: Case) -> list[Decision]:
        self.reset()
        self._ensure_namespaces(case.namespace_labels)
        log_ = self.start_scheduler(case)
        self.setup(case, log_)
        stop = threading.Event()
        controller = threading.Thread(target=self._controllers, args=(stop,), daemon=True)
        controller.start()
        try:
            return self._play(case, log_)
        finally:
            stop.set()
            controller.join()
            self.stop_scheduler()

    def _controllers(self, stop: threading.Event) -> None:
        """The PV controller keeps working while a pod waits in VolumeBinding's PreBind."""
        while not stop.wait(0.1):
            try:
                self.pv_controller()
            except (APIError, OSError) as err:  # a conflict with the scheduler's own write: next round
                log.debug("pv controller: %s", err)

    def _play(self, case: Case, alog: AttemptLog) -> list[Decision]:
        """Each pending pod in turn; a preemptor whose victims are still terminating waits nominated.

        While it waits, the next pod is decided with the nomination standing (upstream counts
        nominated pods on their node), and only then are the victims finished and the
        preemptor's own next attempt recorded.
        """
        decisions: list[Decision] = []
        waiting: list[tuple[str, Attempt]] = []
        for raw in case.pending:
            pod = copy.deepcopy(raw)
            key = f"{pod['metadata']['namespace']}/{pod['metadata']['name']}"
            self.update_pdbs()
            self._settle(alog)
            state = self.snapshot()
            created, generated = self.claim_controller(self.create(pod))
            began = alog.seq
            state.extend(clean(c, WATCHED["ResourceClaim"]) for c in generated)
            state.append(clean(created, WATCHED["Pod"]))
            first = wait(functools.partial(self._ended, alog, key, 0), 60, f"{key}'s first attempt", alog.poll)
            decision = Decision(case.family, case.seed, key, "first attempt", state, first)
            decision.nominations = len(waiting)
            for other, _ in waiting:
                if any(began < a.start_seq for a in alog.attempts.get(other) or ()):
                    decision.ambiguous = f"{other}, nominated, was tried again meanwhile"
            decisions.append(decision)
            for other, its_first in waiting:
                decisions.extend(self._finish_preemption(case, other, its_first, alog))
            waiting.clear()
            if first.node is not None:
                first.allocations = self.allocations(created)
                self._kubelet(key, alog)
            elif DEALLOCATED in (first.message or ""):
                decisions.extend(self._after_deallocation(case, created, state, alog))
            elif self._nominated(key, first, alog):
                if any(self._pod(v) is not None for v in first.victims):
                    waiting.append((key, first))
                else:
                    decisions.extend(self._finish_preemption(case, key, first, alog))
            else:
                self._delete_pod(key, alog)
        for other, its_first in waiting:
            decisions.extend(self._finish_preemption(case, other, its_first, alog))
        return decisions

    def _after_deallocation(self, case: Case, pod: Obj, state: list[Obj], alog: AttemptLog) -> list[Decision]:
        """PostFilter deallocated a claim of the pod's (allocated, reserved for no pod, on a node unfit for it).

        That write requeues the pod at once. Each next attempt saw the listed state with the claim
        deallocated (PostFilter clears allocation, reservations and device status); when several of
        the pod's claims could have been the one (upstream picks at random), the decision is not compared.
        """
        key = _key(pod)
        ns = pod["metadata"]["namespace"]
        names = set(claim_names(pod))
        out: list[Decision] = []
        index = 1
        while True:
            candidates = [
                o
                for o in state
                if o["kind"] == "ResourceClaim"
                and o["metadata"]["namespace"] == ns
                and o["metadata"]["name"] in names
                and (o.get("status") or {}).get("allocation")
                and all(ref.get("uid") == pod["metadata"]["uid"] for ref in o["status"].get("reservedFor") or ())
            ]
            if candidates:
                freed = copy.deepcopy(candidates[0])
                freed.pop("status", None)
                state = [freed if o is candidates[0] else o for o in state]
            attempt = wait(
                functools.partial(self._ended, alog, key, index), 30, f"{key}'s attempt after deallocation", alog.poll
            )
            decision = Decision(case.family, case.seed, key, "after deallocation", list(state), attempt)
            if len(candidates) != 1:
                decision.ambiguous = f"{len(candidates)} claims PostFilter could have deallocated"
            out.append(decision)
            if attempt.node is not None:
                attempt.allocations = self.allocations(pod)
                self._kubelet(key, alog)
                return out
            if DEALLOCATED not in (attempt.message or ""):
                self._delete_pod(key, alog)
                return out
            index += 1

    def _finish_preemption(self, case: Case, key: str, first: Attempt, alog: AttemptLog) -> list[Decision]:
        after = self._after_preemption(case, key, first, alog)
        return [after] if after is not None else []

    def _ended(self, alog: AttemptLog, key: str, index: int) -> Attempt | None:
        lst = alog.attempts.get(key) or []
        if len(lst) > index and lst[index].done:
            return lst[index]
        return None

    def _pod(self, key: str) -> Obj | None:
        ns, name = key.split("/", 1)
        try:
            return self.api.request("GET", BY_KIND["Pod"].path(ns, name))
        except APIError as err:
            if err.status == 404:
                return None
            raise

    def _kubelet(self, key: str, alog: AttemptLog) -> None:
        before = alog.cache_updates.get(key, 0)
        pod = wait(lambda: (p := self._pod(key)) and p["spec"].get("nodeName") and p, 30, f"{key} bound")
        self.kubelet_start(pod)
        wait(lambda: alog.cache_updates.get(key, 0) > before, 30, f"the scheduler to see {key} running", alog.poll)

    def allocations(self, pod: Obj) -> dict[str, Obj | None]:
        """The allocation of each ResourceClaim the pod names, as the scheduler's PreBind wrote it before binding."""
        out: dict[str, Obj | None] = {}
        ns = pod["metadata"]["namespace"]
        for name in claim_names(pod):
            try:
                claim = self.api.request("GET", BY_KIND["ResourceClaim"].path(ns, name))
            except APIError as err:
                if err.status != 404:
                    raise
                claim = None
            out[f"{ns}/{name}"] = allocation_record(claim)
        return out

    def _settle(self, alog: AttemptLog) -> None:
        """Give informers a moment for writes the log does not show (PodDisruptionBudget status)."""
        time.sleep(0.15)
        alog.poll()

    def _nominated(self, key: str, attempt: Attempt, alog: AttemptLog) -> bool:
        """Whether preemption chose a node; waits for its asynchronous victim deletion, if one starts.

        Victims that were already terminating get no API call and no goroutine: when none has
        started a moment after the attempt, there is nothing to wait for.
        """
        if attempt.error or not attempt.nominated:
            return False
        deadline = time.monotonic() + 1.0
        while time.monotonic() < deadline and not attempt.preemption_started:
            alog.poll()
            time.sleep(0.02)
        if attempt.preemption_started:
            wait(lambda: attempt.preemption_done, 30, f"{key}'s preemption to finish", alog.poll)
        return True

    def _after_preemption(self, case: Case, key: str, first: Attempt, alog: AttemptLog) -> Decision | None:
        """Finish the victims (no kubelet will), then record the first attempt after the scheduler saw them go.

        Attempts in between (the victims still terminating) are upstream retrying on their
        update events; the one compared starts after the last victim's deletion was seen, when
        the cluster is the one listed here with the pod put back as pending and nominated.
        """
        for v in first.victims:
            self._force_delete(v)
        wait(
            lambda: all(v in alog.deleted_at for v in first.victims),
            30,
            f"the scheduler to see {key}'s victims deleted",
            alog.poll,
        )
        gone_at = max((alog.deleted_at[v] for v in first.victims), default=0)

        def settled() -> Attempt | None:
            for a in alog.attempts.get(key) or ():
                if a.done and (a.start_seq > gone_at or a.node is not None) and a is not first:
                    return a
            return None

        try:
            last = wait(settled, 20, f"{key}'s attempt after preemption", alog.poll)
        except TimeoutError:
            self._delete_pod(key, alog)
            return None
        if last.nominated:
            self._nominated(key, last, alog)
        own_victims = set(last.victims)
        # Victims of this very attempt were marked and deleted after it: the state it saw had them running.
        after = [_before_preemption(o) if _key(o) in own_victims else o for o in self.snapshot()]
        gone = [_before_preemption(self._last_seen[v]) for v in last.victims if v in self._last_seen]
        after.extend(v for v in gone if not any(_same(v, o) for o in after))
        current = self._pod(key)
        if current is None:
            return None
        pending_form = clean(current, WATCHED["Pod"])
        pending_form["spec"].pop("nodeName", None)
        status = pending_form.setdefault("status", {})
        status["nominatedNodeName"] = first.nominated
        status.pop("startTime", None)
        status["phase"] = "Pending"
        state = [o for o in after if not _same(o, pending_form)] + [pending_form]
        decision = Decision(case.family, case.seed, key, "after preemption", state, last)
        if last.start_seq <= gone_at:
            decision.ambiguous = "bound before the harness finished the victims"
        elif others := _victims_deleted_since(alog, last.start_seq, own_victims):
            decision.ambiguous = f"other preemptions' victims ({', '.join(others)}) went while the attempt ran"
        elif _saw_unlisted_terminating_pod(last, first.nominated, state):
            decision.ambiguous = "upstream saw a terminating pod on the nominated node that the listing no longer has"
        if last.node is not None:
            last.allocations = self.allocations(current)
            self._kubelet(key, alog)
        else:
            self._delete_pod(key, alog)
        return decision

    def _force_delete(self, key: str) -> None:
        ns, name = key.split("/", 1)
        try:
            self.api.request("DELETE", BY_KIND["Pod"].path(ns, name), query={"gracePeriodSeconds": "0"})
        except APIError as err:
            if err.status != 404:
                raise

    def _delete_pod(self, key: str, alog: AttemptLog) -> None:
        self._force_delete(key)
        wait(lambda: key in alog.deleted_at, 30, f"the scheduler to see {key} deleted", alog.poll)


DEALLOCATED = "deallocation of ResourceClaim completed"  # DynamicResources PostFilter's status


def _key(obj: Obj) -> str:
    meta = obj.get("metadata") or {}
    return f"{meta.get('namespace', 'default')}/{meta.get('name')}"


def _victims_deleted_since(alog: AttemptLog, seq: int, own: set[str]) -> list[str]:
    """Victims of other pods' preemptions that the scheduler saw deleted after `seq`: the listing lacks them."""
    victims = {v for attempts in alog.attempts.values() for a in attempts for v in a.victims}
    return sorted(v for v in victims - own if alog.deleted_at.get(v, 0) > seq)


def _before_preemption(obj: Obj) -> Obj:
    """A victim as it was before the preemption marked it: no deletion timestamp, no DisruptionTarget."""
    if obj.get("kind") != "Pod":
        return obj
    out = copy.deepcopy(obj)
    meta = out.get("metadata") or {}
    meta.pop("deletionTimestamp", None)
    meta.pop("deletionGracePeriodSeconds", None)
    status = out.get("status") or {}
    if status.get("conditions"):
        status["conditions"] = [c for c in status["conditions"] if c.get("type") != "DisruptionTarget"]
    return out


def _saw_unlisted_terminating_pod(attempt: Attempt, node: str | None, state: list[Obj]) -> bool:
    """Upstream's message blames a terminating pod on the node, yet no listed pod there is terminating.

    Another pod's victim, deleted between upstream's attempt and the listing, is the usual cause.
    """
    if not node or "terminating pod on the nominated node" not in (attempt.message or ""):
        return False
    return not any(
        o.get("kind") == "Pod"
        and (o.get("spec") or {}).get("nodeName") == node
        and (o.get("metadata") or {}).get("deletionTimestamp")
        for o in state
    )


def _same(a: Obj, b: Obj) -> bool:
    ma, mb = a.get("metadata") or {}, b.get("metadata") or {}
    return bool(
        a.get("kind") == b.get("kind")
        and ma.get("name") == mb.get("name")
        and ma.get("namespace") == mb.get("namespace")
    )


def resources() -> list[Resource]:
    return list(WATCHED.values())
