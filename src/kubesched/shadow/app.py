"""`kubesched shadow`: follow a real cluster's scheduler and decide every pod it decides, read-only.

Informers fill a cache as `kubesched run`'s do, through a client that can only GET.
The watch shows each decision of the cluster's scheduler: a pod gets spec.nodeName,
or its PodScheduled condition turns False with reason Unschedulable. Before that
event is applied, the shadow decides the same pod on its cache (decide.py); then the
event is applied as any other, so the cache follows what the cluster really did, not
what the shadow would have done.
"""

from __future__ import annotations

import collections
import gc
import heapq
import itertools
import json
import logging
import queue
import re
import signal
import sys
import threading
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Any, TextIO

from kubesched.api.object import Obj
from kubesched.api.resources import CPU
from kubesched.backend.kube.api import load_configuration
from kubesched.backend.kube.cluster import ClusterStore
from kubesched.clock import WallClock
from kubesched.config.load import SchedulerConfig
from kubesched.event_handlers import informed_scheduler
from kubesched.scheduler import Scheduler
from kubesched.shadow.decide import decide, score_every_node
from kubesched.shadow.readonly import ReadOnlyAPI, ReadOnlyClient
from kubesched.shadow.tally import Decision, Tally, workload_of
from kubesched.startup import few_full_collections

log = logging.getLogger(__name__)

KUBERNETES_VERSION = "v1.36"
IDLE_WAIT = 0.5
VICTIMS_WAIT = 1.0  # how long a preemption's line waits for the watch to show the cluster's victims

Event = tuple[str, str, Obj | None, Obj | None, float]  # kind, type, old, new, arrival (monotonic)
Rank = tuple[int, int]  # a decision's place in the cluster's queue: minus the priority, then the arrival
Waiting = tuple[Event, Rank | None, int]  # an arrived event, its rank if a decision, its arrival number


def _node_name(pod: Obj | None) -> str:
    return str(((pod or {}).get("spec") or {}).get("nodeName") or "")


def _unschedulable(pod: Obj | None) -> bool:
    for c in ((pod or {}).get("status") or {}).get("conditions") or ():
        if c.get("type") == "PodScheduled":
            return c.get("status") == "False" and c.get("reason") == "Unschedulable"
    return False


def nominated_node(pod: Obj | None) -> str | None:
    """status.nominatedNodeName: where the cluster's preemption made room for the pod."""
    return str(((pod or {}).get("status") or {}).get("nominatedNodeName") or "") or None


def _preempted(pod: Obj | None) -> bool:
    """The pod carries the DisruptionTarget condition a scheduler's preemption writes before deleting it."""
    for c in ((pod or {}).get("status") or {}).get("conditions") or ():
        if c.get("type") == "DisruptionTarget":
            return c.get("status") == "True" and c.get("reason") == "PreemptionByScheduler"
    return False


def preemption_victim(old: Obj | None, new: Obj | None) -> str | None:
    """The node of a pod this event shows being preempted (its DisruptionTarget condition just added), or None."""
    if old is None or new is None or _preempted(old) or not _preempted(new):
        return None
    return _node_name(new) or None


def observed_decision(old: Obj | None, new: Obj | None) -> tuple[bool, str | None]:
    """(is it a decision of the cluster's scheduler, the node it chose or None for Unschedulable)."""
    if old is None or new is None or _node_name(old):
        return False, None
    node = _node_name(new)
    if node:
        return True, node
    return (_unschedulable(new) and not _unschedulable(old)), None


def _priority(pod: Obj | None) -> int:
    return int(((pod or {}).get("spec") or {}).get("priority") or 0)


def _uid(pod: Obj | None) -> str:
    return str(((pod or {}).get("metadata") or {}).get("uid") or "")


_VERSION_TAG = re.compile(r":v?1\.(\d+)(?:[.\-+@]|$)")


def scheduler_image(pods: Iterable[Obj]) -> str:
    """The image of a kube-scheduler pod in kube-system (kubeadm's static pod has label component), or ''."""
    for pod in pods:
        meta = pod.get("metadata") or {}
        if meta.get("namespace") != "kube-system":
            continue
        if (meta.get("labels") or {}).get("component") == "kube-scheduler" or str(meta.get("name")).startswith(
            "kube-scheduler"
        ):
            containers = (pod.get("spec") or {}).get("containers") or ()
            if containers:
                return str(containers[0].get("image") or "")
    return ""


def _minor(image: str) -> int | None:
    m = _VERSION_TAG.search(image)
    return int(m.group(1)) if m else None


class ShadowStore(ClusterStore):
    """The informers' store, with a look at every pod event before it is applied: where decisions are seen.

    The watch shows bindings in the order they completed, not the order the cluster's
    scheduler decided them: it assumes a pod, starts its binding and goes on to the
    next pod, and a later binding can finish first. Each pod that decides counts the
    pods assumed before it. So a decision is taken only after any decision waiting
    with it that the cluster's queue would have popped first (higher priority, then
    earlier into the queue, as its PrioritySort orders them): the shadow then sees what
    the cluster's scheduler saw. A decision waits (up to `settle` seconds) only while a
    pod the cluster's queue would have popped before it is still undecided: that pod's
    decision may be on its way. Other events never wait, but one: a victim of
    preemption (its DisruptionTarget condition added) is evicted while the preemptor's
    status is written, and may show first. So it waits like a decision, for any
    undecided pod of a higher priority, and is applied after the waiting decision that
    nominated its node.
    """

    def __init__(
        self,
        *args: Any,
        before: Callable[[str, str, Obj | None, Obj | None, float], None],
        is_decision: Callable[[Obj | None, Obj | None], bool],
        awaits: Callable[[Obj], bool] = lambda pod: False,
        settle: float = 0.0,
        **kw: Any,
    ):
        super().__init__(*args, **kw)
        self.before = before
        self.is_decision = is_decision
        self.awaits = awaits  # a pod in the cluster's active queue whose decision the shadow takes
        self.settle = settle
        self.arrivals: queue.SimpleQueue[Event] = queue.SimpleQueue()
        self.waiting: collections.deque[Waiting] = collections.deque()  # ranked as they came
        self._decisions: list[tuple[Rank, int]] = []  # the waiting decisions by rank, smallest first; stale skipped
        self._waiting_decisions: dict[int, Waiting] = {}  # those still waiting, by arrival number
        self._arrival = itertools.count()
        self._queued_at: dict[str, int] = {}  # pod uid -> when it (last) went into the cluster's queue
        self._sequence = itertools.count()
        self.undecided: dict[str, Rank] = {}  # pod uid -> rank, for the awaited pods with no decision arrived
        self._undecided_heap: list[tuple[Rank, str]] = []  # the same, smallest first; stale entries skipped

    def _enqueue(self, kind: str, event: str, old: Obj | None, new: Obj | None) -> None:
        if kind == "Pod" and event == "ADDED":
            self._queued_at[_uid(new)] = next(self._sequence)
        self.arrivals.put((kind, event, old, new, time.monotonic()))
        self.wake.set()

    def _rank(self, e: Event) -> Rank | None:
        """Where the cluster's queue had the pod of a decision event; None for any other event."""
        kind, event, old, new, _ = e
        if kind != "Pod" or event != "MODIFIED" or not self.is_decision(old, new):
            return None
        return -_priority(old), self._queued_at.get(_uid(old), -1)

    def drain(self, limit: int = 100_000, *, flush: bool = True) -> int:
        """Apply the events that need not wait any longer (all of them with `flush`)."""
        while True:
            try:
                e = self.arrivals.get_nowait()
            except queue.Empty:
                break
            entry = (e, self._rank(e), next(self._arrival))
            self.waiting.append(entry)
            if entry[1] is not None:
                heapq.heappush(self._decisions, (entry[1], entry[2]))
                self._waiting_decisions[entry[2]] = entry
            self._track(e)
        ripe = time.monotonic() - self.settle
        n = 0
        while self.waiting and n < limit:
            entry = self.waiting[0]
            if entry[1] is not None and entry[2] not in self._waiting_decisions:
                self.waiting.popleft()  # a decision already taken, ahead of its place
                continue
            if not (flush or self._ready(entry, ripe)):
                break
            self.waiting.popleft()
            self._waiting_decisions.pop(entry[2], None)
            n += self._in_order(entry)
        self.events_applied += n
        return n

    def _track(self, e: Event) -> None:
        """Keep `undecided` up to date with an arrived event (before it is applied: its decision has arrived)."""
        kind, event, old, new, _ = e
        if kind != "Pod":
            return
        uid = _uid(old if new is None else new)
        if new is not None and event != "DELETED" and self.awaits(new):
            rank = (-_priority(new), self._queued_at.get(uid, -1))
            if self.undecided.get(uid) != rank:
                self.undecided[uid] = rank
                heapq.heappush(self._undecided_heap, (rank, uid))
        elif self.undecided.pop(uid, None) is not None and len(self._undecided_heap) > 2 * len(self.undecided) + 64:
            self._undecided_heap = [(r, u) for u, r in self.undecided.items()]
            heapq.heapify(self._undecided_heap)

    def earliest_undecided(self) -> Rank | None:
        """The smallest rank among the awaited pods whose decision has not arrived."""
        heap = self._undecided_heap
        while heap and self.undecided.get(heap[0][1]) != heap[0][0]:
            heapq.heappop(heap)
        return heap[0][0] if heap else None

    def _ready(self, entry: Waiting, ripe: float) -> bool:
        """May `entry` be applied now: nothing the cluster would have decided before it is missing."""
        e, rank, _ = entry
        if e[4] <= ripe:
            return True
        if rank is None:
            if preemption_victim(e[2], e[3]) is None:
                return True
            rank = (-_priority(e[2]), -1)  # its preemptor has a higher priority: any of them may be it
        earliest = self.earliest_undecided()
        return earliest is None or earliest > rank

    def _preemptor_of(self, e: Event) -> Waiting | None:
        """The waiting decision that nominated the node of the victim `e`, if any."""
        node = preemption_victim(e[2], e[3])
        if node is None:
            return None
        for entry in self._waiting_decisions.values():
            _, _, old, new, _ = entry[0]
            if not _node_name(new) and nominated_node(new) == node and _priority(old) > _priority(e[2]):
                return entry
        return None

    def _in_order(self, entry: Waiting) -> int:
        """Apply `entry`'s event, after the waiting decisions the cluster took before it; the events applied."""
        e, rank, _ = entry
        n = 0
        if rank is None:
            preemptor = self._preemptor_of(e)
            if preemptor is not None:  # after it, and whatever the cluster decided before it
                del self._waiting_decisions[preemptor[2]]
                n += self._in_order(preemptor)
        while rank is not None:
            heap = self._decisions
            while heap and heap[0][1] not in self._waiting_decisions:
                heapq.heappop(heap)
            if not heap or heap[0][0] >= rank:
                break
            n += self._in_order(self._waiting_decisions.pop(heapq.heappop(heap)[1]))  # its entry stays, as taken
        self._apply(e)
        return n + 1

    def _apply(self, e: Event) -> None:
        kind, event, old, new, arrived = e
        self.before(kind, event, old, new, arrived)
        if kind == "Pod":
            if event == "MODIFIED" and _unschedulable(new) and not _node_name(new):
                self._queued_at[_uid(new)] = next(self._sequence)  # back into the queue, behind the others
            elif event == "DELETED" or _node_name(new):
                self._queued_at.pop(_uid(old if new is None else new), None)  # out of the queue for good
        self.apply_event(kind, event, old, new)


@dataclass
class ShadowOptions:
    kubeconfig: str = ""
    master: str = ""
    scheduler_name: str = ""  # "" : the pods of every profile of the configuration
    output: str = "jsonl"  # or "table"
    duration: float | None = None  # stop after this many seconds (None: at SIGINT/SIGTERM)
    settle: float = 0.25  # seconds events wait for bindings that finished out of the order they were decided
    sync_timeout: float | None = 60.0
    qps: float = 50.0
    burst: int = 100


class Shadow:
    """The informers, a scheduler that is never run, and the decisions compared as they are observed."""

    def __init__(self, config: SchedulerConfig, opts: ShadowOptions, out: TextIO | None = None) -> None:
        self.config = config
        self.opts = opts
        self.out = out if out is not None else sys.stdout
        self.stop = threading.Event()
        self.tally = Tally()
        self.listeners: list[Callable[[Decision], None]] = []  # the report, the metrics
        self.assumed = ""  # what the shadow said it assumes, once its informers listed
        self.held: list[tuple[float, Decision]] = []  # preemptions waiting for their victims, oldest first
        cfg = load_configuration(opts.kubeconfig, opts.master, kubectl_defaults=True)
        self.api = ReadOnlyAPI(cfg, qps=opts.qps, burst=opts.burst, user_agent="kubesched-shadow")
        self.store = ShadowStore(
            self.api,
            self.stop,
            before=self._before,
            is_decision=self._is_decision,
            awaits=self._awaits,
            settle=opts.settle,
        )
        self.scheduler: Scheduler = informed_scheduler(
            config, self.store, client=ReadOnlyClient(), clock=WallClock(), record=False
        )
        self.names = {opts.scheduler_name} if opts.scheduler_name else set(self.scheduler.profiles)
        self.own_percentages = score_every_node(self.scheduler)
        self.global_percentage = int(config.raw.percentageOfNodesToScore or 0)
        self.scheduler.cycles.percentage_of_nodes_to_score = 100

    def assumption(self) -> str:
        """The one line saying what the shadow assumes the cluster's scheduler is, with what it could find out
        about the real one: the API server's version, and the image of a kube-scheduler pod (kubeadm's static
        pod, say) when its informers have seen one."""
        profiles = ", ".join(sorted(self.scheduler.profiles))
        source = self.config.source or "upstream's defaults"
        found = ""
        try:
            version = self.api.request("GET", "/version", retries=0)
            found = f"; the API server is {version.get('gitVersion') or 'of unknown version'}"
        except Exception as err:  # /version is a nicety: its absence changes nothing
            log.debug("no /version: %s", err)
        image = scheduler_image(self.store.objects["Pod"].values())
        if image:
            found += f"; kube-scheduler runs {image}"
            minor = _minor(image)
            if minor is not None and minor != int(KUBERNETES_VERSION.split(".")[1]):
                found += f" (v1.{minor} may decide differently where the releases differ)"
        pods = ", ".join(sorted(self.names))
        return (
            f"shadow: assuming the cluster's scheduler is kube-scheduler {KUBERNETES_VERSION} "
            f"with profile {profiles} ({source}), for pods of scheduler {pods}{found}"
        )

    def _is_decision(self, old: Obj | None, new: Obj | None) -> bool:
        """A decision of the cluster's scheduler for a pod of the shadowed scheduler names."""
        spec = (old or {}).get("spec") or {}
        return observed_decision(old, new)[0] and str(spec.get("schedulerName") or "default-scheduler") in self.names

    def _awaits(self, pod: Obj) -> bool:
        """A pod of the shadowed scheduler names that the cluster's scheduler has yet to try: its decision is
        awaited. Gated pods, pods being deleted and pods already found Unschedulable (waiting for the cluster to
        change, in the cluster's unschedulable pool) are not: awaiting them would hold every later decision."""
        spec = pod.get("spec") or {}
        if spec.get("nodeName") or spec.get("schedulingGates") or (pod.get("metadata") or {}).get("deletionTimestamp"):
            return False
        return str(spec.get("schedulerName") or "default-scheduler") in self.names and not _unschedulable(pod)

    def _before(self, kind: str, event: str, old: Obj | None, new: Obj | None, arrived: float) -> None:
        if kind != "Pod" or event != "MODIFIED" or not self.store.synced():
            return
        victim_of = preemption_victim(old, new)
        if victim_of is not None:
            self._victim(victim_of, new)
        if old is None or not self._is_decision(old, new):
            return
        actual = observed_decision(old, new)[1]
        meta = old.get("metadata") or {}
        ns, name = str(meta.get("namespace") or "default"), str(meta.get("name") or "")
        for i, (_, held) in enumerate(self.held):
            if held.pod == f"{ns}/{name}":  # decided again: its victims are in, and its lines stay in order
                self._emit(self.held.pop(i)[1])
                break
        pod = self.scheduler.informer_pod(ns, name)
        if pod is None:
            return
        own = self.own_percentages.get(pod.scheduler_name)
        try:
            verdict = decide(self.scheduler, pod, actual, own, self.global_percentage)
        except Exception as err:  # one pod the shadow cannot decide must not end the shadowing
            log.error("shadow: cannot decide pod %s/%s: %s", ns, name, err, exc_info=log.isEnabledFor(logging.DEBUG))
            return
        d = Decision(
            f"{ns}/{name}",
            ns,
            workload_of(old),
            actual,
            verdict,
            time.monotonic() - arrived,
            self._cpu_share(actual),
            self._cpu_share(verdict.node),
            nominated_node(new) if actual is None else None,
        )
        if d.actual_nominated is not None:
            self.held.append((time.monotonic() + VICTIMS_WAIT, d))  # the cluster's victims show after it
        else:
            self._emit(d)

    def _victim(self, node: str, pod: Obj | None) -> None:
        """A pod the cluster preempted on `node`: a victim of the latest held preemption that nominated it."""
        meta = (pod or {}).get("metadata") or {}
        for _, d in reversed(self.held):
            if d.actual_nominated == node:
                d.actual_victims.append(f"{meta.get('namespace') or 'default'}/{meta.get('name')}")
                return

    def release(self, *, every: bool = False) -> None:
        """Emit the held preemptions whose victims had time to show (all of them with `every`)."""
        now = time.monotonic()
        while self.held and (every or self.held[0][0] <= now):
            self._emit(self.held.pop(0)[1])

    def _emit(self, d: Decision) -> None:
        self.tally.add(d)
        self._print(d)
        for listener in self.listeners:
            listener(d)

    def _cpu_share(self, node: str | None) -> float | None:
        """Requested over allocatable cpu of a node in the cache, in percent (the decided pod not counted)."""
        ni = self.scheduler.cache.nodes.get(node or "")
        alloc = ni.allocatable.get(CPU, 0) if ni is not None else 0
        return 100 * ni.requested.get(CPU, 0) / alloc if ni is not None and alloc else None

    def _print(self, d: Decision) -> None:
        if self.opts.output == "table":
            mark = {"agree": "=", "tie": "~", "sampled": "?", "differ": "!"}[d.outcome]
            print(
                f"{mark} {d.pod:<40} {d.actual or '(unschedulable)':<24} {d.verdict.node or '(unschedulable)'}",
                file=self.out,
                flush=True,
            )
        else:
            print(json.dumps(d.line(), separators=(",", ":")), file=self.out, flush=True)

    def run(self) -> int:
        """Shadow until stopped (or --duration); the summary line last. 1 when the informers never synced."""
        self.store.start()
        if not self.store.wait_for_cache_sync(self.stop, self.opts.sync_timeout):
            if self.stop.is_set():
                return 0
            log.error("shadow: the informers did not sync within %ss", self.opts.sync_timeout)
            return 1
        self.store.drain()  # the starting state: no decisions in it
        objects = self.store.objects
        self.assumed = self.assumption()
        print(f"kubesched: {self.assumed}", file=sys.stderr, flush=True)
        print(
            f"kubesched: shadow: watching {len(objects['Node'])} nodes and {len(objects['Pod'])} pods",
            file=sys.stderr,
            flush=True,
        )
        self.follow()
        return 0

    def follow(self) -> None:
        """Take decisions as their events settle, until stopped or --duration; then the rest, and the summary."""
        # The starting state lives as long as the shadow and makes no garbage: frozen out of collections, which
        # walked it all (a quarter of a decision's CPU on 5,000 nodes); full ones made rare, as simulate does.
        gc.freeze()
        try:
            with few_full_collections():
                self._follow()
        finally:
            gc.unfreeze()

    def _follow(self) -> None:
        deadline = None if self.opts.duration is None else time.monotonic() + self.opts.duration
        while not self.stop.is_set():
            if deadline is not None and time.monotonic() >= deadline:
                break
            self.store.drain(flush=False)
            self.release()
            waiting = self.store.waiting
            ripe = waiting[0][0][4] + self.opts.settle - time.monotonic() if waiting else IDLE_WAIT
            if self.held:
                ripe = min(ripe, self.held[0][0] - time.monotonic())
            self.store.wake.wait(min(IDLE_WAIT, max(0.001, ripe)))
            self.store.wake.clear()
        self.store.drain()
        self.release(every=True)
        self.stop.set()
        self._print_summary()

    def _print_summary(self) -> None:
        summary = self.tally.summary()
        if self.opts.output == "table":
            print(_summary_table(summary), file=self.out, flush=True)
        else:
            print(json.dumps(summary, separators=(",", ":")), file=self.out, flush=True)

    def install_signal_handlers(self) -> None:
        def stop(signum: int, frame: Any) -> None:
            self.stop.set()
            self.store.wake.set()

        signal.signal(signal.SIGTERM, stop)
        signal.signal(signal.SIGINT, stop)


def _summary_table(s: dict[str, Any]) -> str:
    lines = [
        f"observed {s['observed']}, agree {s['agree']}, ties {s['ties']}, "
        f"sampled {s['outcomes']['sampled']}, differ {s['outcomes']['differ']}",
        f"{'NAMESPACE':<30} {'OBSERVED':>8} {'AGREE':>8} {'TIES':>8}",
    ]
    for ns, c in s["byNamespace"].items():
        lines.append(f"{ns:<30} {c['observed']:>8} {c['agree']:>8} {c['ties']:>8}")
    change = s["wouldChange"]
    lines.append(
        f"unschedulable: actual {change['unschedulable']['actual']}, shadow {change['unschedulable']['shadow']}; "
        f"nodes used: actual {change['nodesUsed']['actual']}, shadow {change['nodesUsed']['shadow']}; "
        f"cpu of the chosen node: actual {change['cpuOfChosenNode']['actual']}%, "
        f"shadow {change['cpuOfChosenNode']['shadow']}%"
    )
    return "\n".join(lines)
