"""Extension points: the contracts plugins implement (framework/interface.go).

Return `None` for Success. Each base class states what the runtime may receive and
what it guarantees; a plugin class lists the points it implements by inheritance.
Hot plugins may add `filter_batch` / `score_batch`, vectorised twins of `filter` /
`score` over the snapshot's NodeTable; the runtime prefers them, and they must agree
with the per-node methods on every input (property tests check this).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from enum import IntEnum
from typing import Any, ClassVar

import numpy as np
import numpy.typing as npt

from kubesched.framework.cycle_state import CycleState
from kubesched.framework.node_info import NodeInfo
from kubesched.framework.status import Code, Status
from kubesched.framework.types import PodInfo

MAX_NODE_SCORE = 100
MIN_NODE_SCORE = 0
MAX_EXTENDER_PRIORITY = 10
MAX_TOTAL_SCORE = 2**63 - 1

BoolArray = npt.NDArray[np.bool_]
IntArray = npt.NDArray[np.int64]


class Plugin:
    NAME: ClassVar[str] = ""

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


class NodeToStatus(dict[str, "Status"]):
    """Statuses of the nodes a cycle rejected; nodes not listed share `absent_nodes_status`.

    The default for absent nodes is UnschedulableAndUnresolvable (preemption cannot help
    there); a PreFilter rejection sets it to its own status for every node.
    """

    def __init__(self, statuses: Mapping[str, Status] | None = None, absent: Status | None = None) -> None:
        super().__init__(statuses or {})
        self.absent_nodes_status = absent if absent is not None else Status(Code.UNSCHEDULABLE_AND_UNRESOLVABLE)

    def get_status(self, node: str) -> Status:
        return self.get(node, self.absent_nodes_status)


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


class PreBindPlugin(Plugin):
    def pre_bind_pre_flight(self, state: CycleState, pod: PodInfo, node_name: str) -> Status | None:
        """Whether PreBind will have work for this pod: Success (the default), Skip (PreBind is not run) or Error.

        Work in PreBind (or a wait at Permit) makes the scheduler write the chosen node as the
        pod's nominatedNodeName first (NominatedNodeNameForExpectation, on in v1.36).
        """
        return None

    def pre_bind(self, state: CycleState, pod: PodInfo, node_name: str) -> Status | None:
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


@dataclass
class Handle:
    """What plugins may reach outside their arguments: listers, the snapshot, the profile."""

    lister: Any = None
    client: Any = None  # where bindings go (backend)
    snapshot: Any = None
    parallelism: int = 16
    profile_name: str = ""
    framework: Any = None  # the profile's Framework: waiting pods, filters with nominated pods
    nominator: Any = None  # the queue's Nominator
    clock: Any = None
    activate: Any = None  # callable(pods): move pods to activeQ, as Handle.Activate
    rng: Any = None  # the scheduler's seeded random source
    report: Any = None  # callable(type, pod key, node, message): a step of a pod's life for observers
    extenders: list[Any] = field(default_factory=list)  # HTTP extenders, for preemption to consult
    metrics: Any = None  # SchedulerMetrics when running against a cluster; None in simulations
