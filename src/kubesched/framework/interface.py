"""Extension points: the contracts plugins implement (framework/interface.go).

Return `None` for Success. Each base class states what the runtime may receive and
what it guarantees; a plugin class lists the points it implements by inheritance.
Hot plugins may add `filter_batch` / `score_batch`, vectorised twins of `filter` /
`score` over the snapshot's NodeTable; the runtime prefers them, and they must agree
with the per-node methods on every input (property tests check this).
"""

from __future__ import annotations

import random
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from enum import IntEnum
from typing import Any, Protocol, TypeVar, runtime_checkable

import numpy as np
import numpy.typing as npt

from kubesched.api.object import Obj
from kubesched.api.selectors import LabelSelector
from kubesched.clock import VirtualClock
from kubesched.framework.cycle_state import CycleState
from kubesched.framework.extender import Extender
from kubesched.framework.node_info import NodeInfo
from kubesched.framework.node_table import NodeTable
from kubesched.framework.status import Code, Status
from kubesched.framework.types import NodeToStatus, PodInfo
from kubesched.release import DEFAULT, Release

MAX_NODE_SCORE = 100
MIN_NODE_SCORE = 0
MAX_EXTENDER_PRIORITY = 10
MAX_TOTAL_SCORE = 2**63 - 1

BoolArray = npt.NDArray[np.bool_]
IntArray = npt.NDArray[np.int64]


class Plugin:
    NAME: str = ""  # a plugin named per instance (legacy scorers, import paths) sets its own

    @property
    def name(self) -> str:
        return self.NAME


@dataclass(slots=True)
class PreFilterResult:
    """Nodes a PreFilter plugin narrows the cycle to; None means all nodes."""

    node_names: set[str] | None = None

    def all_nodes(self) -> bool:
        return self.node_names is None

    def merge(self, other: PreFilterResult | None) -> PreFilterResult:
        if other is None or other.all_nodes():
            return self
        if self.all_nodes():
            return PreFilterResult(set(other.node_names or ()))
        return PreFilterResult(self.node_names & (other.node_names or set()))  # type: ignore[operator]


class NodeScoreList:
    """Scores of one plugin for the feasible nodes; `names` (aligned with `scores`) is built on first use."""

    __slots__ = ("_names", "_source", "scores")

    def __init__(self, names: Sequence[str] | Callable[[], list[str]], scores: IntArray) -> None:
        self._names: list[str] | None = None if callable(names) else list(names)
        self._source = names if callable(names) else None
        self.scores = scores

    @property
    def names(self) -> list[str]:
        if self._names is None:
            assert self._source is not None
            self._names = self._source()
        return self._names


@dataclass(slots=True)
class NominatingInfo:
    nominated_node_name: str = ""
    mode: str = "Noop"  # Noop | Override


@dataclass(slots=True)
class PostFilterResult:
    nominating_info: NominatingInfo | None = None


class PreEnqueuePlugin(Plugin):
    """Must be cheap: runs before a pod enters activeQ. Non-success keeps the pod gated."""

    def pre_enqueue(self, pod: PodInfo) -> Status | None:
        raise NotImplementedError


class QueueSortPlugin(Plugin):
    def less(self, a: Any, b: Any) -> bool:
        raise NotImplementedError


class PreFilterExtensions:
    """Incremental updates of PreFilter state for nominated pods and preemption dry runs."""

    def add_pod(self, state: CycleState, pod: PodInfo, to_add: PodInfo, node_info: NodeInfo) -> Status | None:
        raise NotImplementedError

    def remove_pod(self, state: CycleState, pod: PodInfo, to_remove: PodInfo, node_info: NodeInfo) -> Status | None:
        raise NotImplementedError


class PreFilterPlugin(Plugin):
    """Runs once per cycle. Skip: the plugin's Filter is not run this cycle."""

    def pre_filter(
        self, state: CycleState, pod: PodInfo, nodes: Sequence[NodeInfo]
    ) -> tuple[PreFilterResult | None, Status | None]:
        raise NotImplementedError

    def pre_filter_extensions(self) -> PreFilterExtensions | None:
        return None


class FilterPlugin(Plugin):
    """Per node; must read only the NodeInfo given (it may carry nominated pods)."""

    def filter(self, state: CycleState, pod: PodInfo, node_info: NodeInfo) -> Status | None:
        raise NotImplementedError


class BatchFilterPlugin(Protocol):
    """A Filter plugin's vectorised twin: one verdict per NodeTable row of `rows`, equal to `filter` on that node.

    `rows` is a slice with its start and stop given: the runtime asks for the window of nodes it
    examines, not the whole table, since the pass stops once enough nodes are feasible.
    """

    @property
    def name(self) -> str: ...

    def filter_batch(self, state: CycleState, pod: PodInfo, table: NodeTable, rows: slice) -> BoolArray: ...


class BatchPreScorePlugin(Protocol):
    """A PreScore plugin's twin that takes the scored nodes as NodeTable rows, sparing a lookup per node."""

    def pre_score_batch(
        self, state: CycleState, pod: PodInfo, nodes: Sequence[NodeInfo], table: NodeTable, positions: IntArray
    ) -> Status | None: ...


class BatchScorePlugin(Protocol):
    """A Score plugin's vectorised twin: raw scores for the rows at `positions`, equal to `score` per node."""

    def score_batch(self, state: CycleState, pod: PodInfo, table: NodeTable, positions: IntArray) -> IntArray: ...


SignFragment = tuple[str, Any]
"""One piece of a pod's scheduling signature: a signer's name and a JSON-able value (fwk.SignFragment)."""


@runtime_checkable
class SignPlugin(Protocol):
    """A plugin that can say which parts of a pod its PreFilter/Filter/PreScore/Score depend on (KEP-5598).

    Two pods with equal signatures must be judged and scored alike on the same nodes. A
    rejecting status means the pod cannot be signed (no batching for it); fragments with
    the same key from several plugins carry the same value. A profile with any such plugin
    that does not sign turns OpportunisticBatching off.
    """

    @property
    def name(self) -> str: ...

    def sign_pod(self, pod: PodInfo) -> tuple[list[SignFragment], Status | None]: ...


class PostFilterPlugin(Plugin):
    def post_filter(
        self, state: CycleState, pod: PodInfo, filtered_node_status_map: NodeToStatus
    ) -> tuple[PostFilterResult | None, Status | None]:
        raise NotImplementedError


class PreScorePlugin(Plugin):
    """Runs once with the feasible nodes. Skip: the plugin's Score is not run this cycle."""

    def pre_score(self, state: CycleState, pod: PodInfo, nodes: Sequence[NodeInfo]) -> Status | None:
        raise NotImplementedError


class ScorePlugin(Plugin):
    """Per node. Scores of a plugin without NormalizeScore must already lie in [0, 100]."""

    def score(self, state: CycleState, pod: PodInfo, node_info: NodeInfo) -> tuple[int, Status | None]:
        raise NotImplementedError

    def has_normalize(self) -> bool:
        return type(self).normalize_score is not ScorePlugin.normalize_score

    def normalize_score(self, state: CycleState, pod: PodInfo, scores: NodeScoreList) -> Status | None:
        return None


class ReservePlugin(Plugin):
    """Unreserve must be idempotent: it may run for a pod whose Reserve never ran."""

    def reserve(self, state: CycleState, pod: PodInfo, node_name: str) -> Status | None:
        raise NotImplementedError

    def unreserve(self, state: CycleState, pod: PodInfo, node_name: str) -> None:
        raise NotImplementedError


class PermitPlugin(Plugin):
    """Success, Wait (with a timeout in seconds), or a rejection."""

    def permit(self, state: CycleState, pod: PodInfo, node_name: str) -> tuple[Status | None, float]:
        raise NotImplementedError


@dataclass(slots=True)
class Placement:
    """A set of nodes a pod group's cycle is tried on as a whole (fwk.Placement): e.g. one topology domain."""

    name: str
    nodes: list[NodeInfo]


@dataclass(slots=True)
class PodGroupAssignments:
    """What a placement's trial proposed: the placement and (pod, node) for each pod it placed."""

    placement: Placement
    proposed: list[tuple[PodInfo, str]]


class PlacementGeneratePlugin(Plugin):
    """Splits the parent placement (all nodes) into the placements a pod group is tried on."""

    def generate_placements(
        self, state: CycleState, namespace: str, group: str, parent: Placement
    ) -> tuple[list[Placement], Status | None]:
        raise NotImplementedError


class PlacementScorePlugin(Plugin):
    """Scores a feasible placement of a pod group; may normalize the scores of all of them (in place)."""

    def score_placement(
        self, state: CycleState, namespace: str, group: str, assignments: PodGroupAssignments
    ) -> tuple[int, Status | None]:
        raise NotImplementedError

    def normalize_placement_scores(
        self, state: CycleState, namespace: str, group: str, scores: list[int]
    ) -> Status | None:
        return None


class PodGroupStateView(Protocol):
    """One PodGroup's members as the cache counts them (cache/pod_groups.py)."""

    assumed: dict[str, PodInfo]

    def all_count(self) -> int: ...

    def scheduled_count(self) -> int: ...

    def scheduled_pods(self) -> list[PodInfo]: ...

    def unscheduled_pods(self) -> list[PodInfo]: ...


class PodGroupStateLister(Protocol):
    def get(self, namespace: str, name: str) -> PodGroupStateView | None: ...


DEFAULT_BINDING_POLL = 5.0


class BindingWait(Status):
    """PreBind's "not yet": the pod's binding is suspended, not failed, while every other pod goes on.

    Upstream's PreBind blocks its binding goroutine (DynamicResources polls its claims); here
    the binding cycle is a continuation that the scheduler resumes, on the clock in both modes:
    `check` runs again every `poll` seconds, and as soon as an informer event passes `wake`
    (kind, object), until `timeout` seconds after the wait began. `check` answers as PreBind
    does (None when ready, a failure to end the binding), or a Wait status to keep waiting;
    once the time is up, `expired()` is PreBind's answer, without another check.
    """

    __slots__ = ("check", "timeout", "expired", "poll", "wake", "index")

    def __init__(
        self,
        check: Callable[[], Status | None],
        timeout: float,
        expired: Callable[[], Status],
        *,
        poll: float = DEFAULT_BINDING_POLL,
        wake: Callable[[str, Any], bool] = lambda kind, obj: False,
    ) -> None:
        super().__init__(Code.WAIT)
        self.check = check
        self.timeout = timeout
        self.expired = expired
        self.poll = poll
        self.wake = wake
        self.index = 0  # the PreBind plugin's place, set by the runtime: the ones after it run once it is ready


class PreBindPlugin(Plugin):
    def pre_bind_pre_flight(self, state: CycleState, pod: PodInfo, node_name: str) -> Status | None:
        """Whether PreBind will have work for this pod: Success (the default), Skip (PreBind is not run) or Error.

        Work in PreBind (or a wait at Permit) makes the scheduler write the chosen node as the
        pod's nominatedNodeName first (NominatedNodeNameForExpectation, on in v1.36).
        """
        return None

    def pre_bind(self, state: CycleState, pod: PodInfo, node_name: str) -> Status | None:
        """Success, a failure, or a BindingWait when the pod must wait for something outside the scheduler."""
        raise NotImplementedError


class BindPlugin(Plugin):
    """Skip hands the pod to the next binder."""

    def bind(self, state: CycleState, pod: PodInfo, node_name: str) -> Status | None:
        raise NotImplementedError


class PostBindPlugin(Plugin):
    def post_bind(self, state: CycleState, pod: PodInfo, node_name: str) -> None:
        raise NotImplementedError


@dataclass(frozen=True, slots=True)
class ClusterEvent:
    resource: str
    action_type: int
    label: str = ""


class QueueingHint(IntEnum):
    """A plugin's verdict on whether an event may make a pod it rejected schedulable."""

    QUEUE_SKIP = 0
    QUEUE = 1


# (pod the plugin rejected, old object, new object) -> hint; objects are None for add/delete.
QueueingHintFn = Callable[[PodInfo, Any, Any], QueueingHint]


@dataclass(frozen=True, slots=True)
class ClusterEventWithHint:
    """No hint function means Queue for every matching event, as upstream treats a nil hint."""

    event: ClusterEvent
    queueing_hint_fn: QueueingHintFn | None = None


class EnqueueExtensions:
    """Events that may make a pod this plugin rejected schedulable; read once at start-up."""

    def events_to_register(self) -> list[ClusterEventWithHint]:
        raise NotImplementedError


class Lister(Protocol):
    """The informers' view of the cluster that plugins read, as upstream's listers."""

    def get(self, kind: str, namespace: str, name: str) -> Obj | None: ...

    def services(self, namespace: str) -> list[Obj]: ...

    def namespace_labels(self, namespace: str) -> dict[str, str] | None: ...

    def namespaces_matching(self, selector: LabelSelector) -> list[str]: ...

    def kind_version(self, kind: str) -> int: ...

    def list(self, kind: str) -> Iterable[Obj]: ...  # last: inside the class, `list` is this method


class APIClient(Protocol):
    """Where the scheduler's writes go: the embedded cluster, or the API server in live mode."""

    DELETES_REPORT_DONE: bool  # delete_pod calls `done` when the deletion is known, for async preemption

    def bind(self, pod: PodInfo, node_name: str) -> None: ...

    def update(self, obj: Obj) -> Obj: ...

    def update_status(self, obj: Obj) -> Obj: ...  # PUT the status subresource (DRA's PreBind writes claims)

    def get(self, kind: str, namespace: str, name: str) -> Obj | None: ...  # read from the API, after a conflict

    def timestamp(self) -> str: ...  # now, as RFC 3339 text on the cluster's clock

    def create(self, obj: Obj) -> Obj: ...  # POST (metadata.generateName honoured): DRA's claims for extended resources

    def delete(self, kind: str, namespace: str, name: str) -> Obj: ...

    def merge_status(self, kind: str, namespace: str, name: str, fields: Obj) -> Obj: ...  # merge-patch status fields

    def delete_pod(
        self, pod: PodInfo, condition: Obj | None = None, done: Callable[[bool], None] | None = None
    ) -> None: ...

    def patch_pod_status(self, pod: PodInfo, condition: Obj | None, nominated_node_name: str | None) -> None: ...

    def record_event(self, pod: PodInfo, kind: str, reason: str, action: str, note: str) -> None: ...

    def apply_extender_binding(self, pod: PodInfo, node_name: str) -> None: ...


class SharedLister(Protocol):
    """The cycle's snapshot of nodes, as plugins see it (NodeInfoLister and StorageInfoLister)."""

    node_info_list: list[NodeInfo]
    node_info_map: dict[str, NodeInfo]
    position: dict[str, int]
    table: NodeTable

    @property
    def have_pods_with_affinity_list(self) -> list[NodeInfo]: ...

    @property
    def have_pods_with_required_anti_affinity_list(self) -> list[NodeInfo]: ...

    def get(self, name: str) -> NodeInfo | None: ...

    def is_pvc_used_by_pods(self, key: str) -> bool: ...

    def __len__(self) -> int: ...


class PodNominator(Protocol):
    """Pods nominated to nodes by preemption, which filters must leave room for."""

    nominated_pods: dict[str, list[PodInfo]]

    def nominated_pods_for_node(self, node: str) -> list[PodInfo]: ...


class WaitingPodHandle(Protocol):
    def reject(self, plugin: str, message: str) -> None: ...

    def allow(self, plugin: str) -> None: ...


class FrameworkHandle(Protocol):
    """What preemption asks of its profile's framework: dry-run filters and waiting pods."""

    profile_name: str

    def run_filter_plugins_with_nominated_pods(
        self, state: CycleState, pod: PodInfo, node_info: NodeInfo, record: dict[str, str] | None = None
    ) -> Status | None: ...

    def run_pre_filter_extension_add_pod(
        self, state: CycleState, pod: PodInfo, to_add: PodInfo, node_info: NodeInfo
    ) -> Status | None: ...

    def run_pre_filter_extension_remove_pod(
        self, state: CycleState, pod: PodInfo, to_remove: PodInfo, node_info: NodeInfo
    ) -> Status | None: ...

    def get_waiting_pod(self, uid: str) -> WaitingPodHandle | None: ...


class MetricsRecorder(Protocol):
    """Upstream's scheduler metrics, recorded where they happen; None where nobody scrapes them (simulate)."""

    def plugin_sampled(self) -> bool: ...

    def observe_extension_point(self, point: str, status: str, profile: str, seconds: float) -> None: ...

    def observe_plugin(self, plugin: str, point: str, status: str, seconds: float) -> None: ...

    def observe_preemption_victims(self, count: int) -> None: ...

    def observe_queue_incoming(self, queue: str, event: str, count: int) -> None: ...


class ReportFn(Protocol):
    """A step of a pod's life for observers (the simulator's event log)."""

    def __call__(
        self, kind: str, pod: str, node: str | None = None, message: str | None = None, preemptor: str | None = None
    ) -> None: ...


class SharedDRAManager(Protocol):
    """What every profile's DRA-aware plugins share (upstream's SharedDRAManager); the scheduler makes one."""

    def device_class_for(self, resource_name: str) -> Obj | None: ...


@dataclass(frozen=True)
class Handle:
    """What plugins may reach outside their arguments: listers, the snapshot, the profile.

    Built whole before any plugin sees it and never changed after: the scheduler gives
    every service it has, and each Framework takes a copy naming its profile and itself.
    A field left None is a service this handle lacks (a plugin built alone, in a test).
    """

    lister: Lister | None = None
    client: APIClient | None = None  # where bindings go (backend)
    snapshot: SharedLister | None = None  # the scheduler's one snapshot, refreshed in place every cycle
    parallelism: int = 16
    profile_name: str = ""
    framework: FrameworkHandle | None = None  # the profile's Framework: waiting pods, filters with nominated pods
    nominator: PodNominator | None = None  # the queue's Nominator
    clock: VirtualClock | None = None
    activate: Callable[[Iterable[PodInfo]], None] | None = None  # move pods to activeQ, as Handle.Activate
    rng: random.Random | None = None  # the scheduler's seeded random source
    report: ReportFn | None = None
    extenders: list[Extender] = field(default_factory=list)  # HTTP extenders, for preemption to consult
    metrics: MetricsRecorder | None = None  # when running against a cluster; None in simulations
    dra_manager: SharedDRAManager | None = None  # claims, slices and classes the profiles share
    release: Release = DEFAULT  # the kube-scheduler release whose behaviour plugins follow (kubesched.release)
    pod_groups: PodGroupStateLister | None = None  # the cache's PodGroup members (GenericWorkload on)

    # The getters plugins use: a scheduler gives every field, so a missing one is a wiring
    # bug (or a plugin built alone), reported as such rather than as an AttributeError.

    def shared_lister(self) -> SharedLister:
        """The cycle's snapshot (SnapshotSharedLister); on the hot path, so checked inline."""
        snapshot = self.snapshot
        if snapshot is None:
            raise RuntimeError("the framework handle has no snapshot: plugins run only inside a scheduler")
        return snapshot

    def listers(self) -> Lister:
        return _required(self.lister, "lister")

    def api_client(self) -> APIClient:
        return _required(self.client, "client")

    def scheduler_clock(self) -> VirtualClock:
        return _required(self.clock, "clock")


T = TypeVar("T")


def _required(value: T | None, what: str) -> T:
    if value is None:
        raise RuntimeError(f"the framework handle has no {what}: plugins run only inside a scheduler")
    return value
