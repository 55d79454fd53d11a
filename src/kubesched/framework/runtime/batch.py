"""OpportunisticBatching (framework/runtime/batch.go, KEP-5598, beta and on in v1.36).

After a pod is scheduled, the nodes it scored (best first, its own node taken off) are
kept with its signature. The next pod, if it is the very next scheduling cycle, has the
same signature, comes within half a second, and no longer fits on the node the last pod
took, gets the head of that list as a hint: the scheduler filters that one node and, if it
passes, takes it without filtering or scoring the others. When the last pod's node could
still host the new one, the cached order says nothing about where that node now ranks,
so the cache is dropped. Each way the cache is dropped is counted by reason.
"""

from __future__ import annotations

import logging
import random
import time
from collections import deque
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from typing import Final, Protocol, runtime_checkable

import numpy as np
import numpy.typing as npt

from kubesched.framework.cycle_state import CycleState
from kubesched.framework.node_info import NodeInfo
from kubesched.framework.status import Status
from kubesched.framework.types import PodInfo
from kubesched.klog import V, info

log = logging.getLogger(__name__)

MAX_BATCH_AGE: Final = 0.5  # seconds a cached list may be reused for

# scheduler_batch_attempts_total{result}
ATTEMPT_NO_HINT: Final = "no_hint"
ATTEMPT_HINT_USED: Final = "hint_used"
ATTEMPT_HINT_NOT_USED: Final = "hint_not_used"
# scheduler_batch_cache_flushed_total{reason}
FLUSH_POD_FAILED: Final = "pod_failed"
FLUSH_POD_SKIPPED: Final = "pod_skipped"
FLUSH_NODE_MISSING: Final = "node_missing"
FLUSH_NODE_NOT_FULL: Final = "node_not_full"
FLUSH_EMPTY_LIST: Final = "empty_list"
FLUSH_EXPIRED: Final = "expired"
FLUSH_POD_INCOMPATIBLE: Final = "pod_incompatible"
FLUSH_POD_NOT_BATCHABLE: Final = "pod_not_batchable"


@runtime_checkable
class BatchRecorder(Protocol):
    """The batching metrics; `kubesched run`'s SchedulerMetrics records them, simulations count in `stats`."""

    def observe_batch_attempt(self, profile: str, result: str) -> None: ...

    def observe_batch_flush(self, profile: str, reason: str) -> None: ...

    def observe_node_hint(self, hinted: str, profile: str, seconds: float) -> None: ...

    def observe_store_schedule_results(self, profile: str, seconds: float) -> None: ...


class SortedScoredNodes:
    """The scored nodes a cycle did not choose, best first, equal totals in random order.

    Ranked on first use: most cycles store a list that no pod ever reads.
    """

    def __init__(self, rank: Callable[[], Iterable[str]], size: int) -> None:
        self._rank = rank
        self._size = size
        self._names: deque[str] | None = None

    @classmethod
    def of(cls, names: Sequence[str]) -> SortedScoredNodes:
        """Nodes already in order."""
        return cls(lambda: names, len(names))

    @classmethod
    def ranked(
        cls, nodes: Sequence[NodeInfo], totals: npt.NDArray[np.int64], chosen: str, rng: random.Random
    ) -> SortedScoredNodes:
        """`nodes` but `chosen` by descending total; ties drawn from `rng` when first read."""

        def rank() -> list[str]:
            keyed = [(-t, rng.random(), ni.name) for ni, t in zip(nodes, totals.tolist(), strict=True)]
            return [name for _, _, name in sorted(keyed) if name != chosen]

        return cls(rank, len(nodes) - 1)

    def pop(self) -> str:
        if self._names is None:
            self._names = deque(self._rank())
        return self._names.popleft()

    def __len__(self) -> int:
        return self._size if self._names is None else len(self._names)


@dataclass(slots=True)
class _State:
    signature: str
    sorted_nodes: SortedScoredNodes
    created: float


@dataclass(slots=True)
class _LastCycle:
    cycle: int = 0
    chosen_node: str = ""
    succeeded: bool = False


RejectsFn = Callable[[CycleState, PodInfo, NodeInfo], Status | None]


class OpportunisticBatch:
    """One profile's batch cache; the Framework owns it and schedule_one asks it for hints."""

    def __init__(
        self,
        profile: str,
        now: Callable[[], float],
        run_filters: RejectsFn,
        node: Callable[[str], NodeInfo | None],
        metrics: object | None = None,
    ) -> None:
        self.profile = profile
        self.now = now  # the scheduler's clock, read when needed (virtual in simulations)
        self._run_filters = run_filters
        self._node = node
        self._metrics = metrics if isinstance(metrics, BatchRecorder) else None
        self.state: _State | None = None
        self.last = _LastCycle()
        self.batched_pods = 0  # pods that took their hint
        self.stats: dict[str, int] = {}  # attempt results and flush reasons, counted as the metrics count them

    def _count(self, key: str) -> None:
        self.stats[key] = self.stats.get(key, 0) + 1

    def _attempt(self, result: str) -> None:
        self._count(result)
        if self._metrics is not None:
            self._metrics.observe_batch_attempt(self.profile, result)

    def _flush(self, cycle: int, reason: str) -> None:
        self._count(f"flushed:{reason}")
        if self._metrics is not None:
            self._metrics.observe_batch_flush(self.profile, reason)
        info(
            log, V(4), "OpportunisticBatch found unusable state", profile=self.profile, cycleCount=cycle, reason=reason
        )

    def get_node_hint(self, state: CycleState, pod: PodInfo, signature: str | None, cycle: int) -> str:
        """The cached next-best node for this pod, or '' when the cache cannot be used for it."""
        start = time.perf_counter()
        hint = ""
        if not self._compatible(state, pod, signature, cycle):
            self._attempt(ATTEMPT_NO_HINT)
            info(
                log,
                V(4),
                "OpportunisticBatch no node hint available for pod",
                profile=self.profile,
                pod=pod.key,
                cycleCount=cycle,
            )
        else:
            assert self.state is not None
            hint = self.state.sorted_nodes.pop()
            info(
                log,
                V(3),
                "OpportunisticBatch provided node hint",
                profile=self.profile,
                pod=pod.key,
                cycleCount=cycle,
                hint=hint,
                remainingNodes=len(self.state.sorted_nodes),
            )
        if self._metrics is not None:
            self._metrics.observe_node_hint("hint" if hint else "no_hint", self.profile, time.perf_counter() - start)
        return hint

    def store_schedule_results(
        self,
        signature: str | None,
        hinted: str,
        chosen: str,
        others: SortedScoredNodes | None,
        cycle: int,
    ) -> None:
        """After a pod found its node: keep the other scored nodes for the next pod like it, unless it took its hint."""
        start = time.perf_counter()
        self.last = _LastCycle(cycle, chosen, True)
        if hinted and hinted == chosen:
            self._attempt(ATTEMPT_HINT_USED)
            self.batched_pods += 1
        else:
            if hinted:
                self._attempt(ATTEMPT_HINT_NOT_USED)
                info(log, V(4), "OpportunisticBatch hint not used", profile=self.profile, hint=hinted, chosen=chosen)
            if signature is not None and others is not None and len(others):
                self.state = _State(signature, others, self.now())
                info(log, V(4), "OpportunisticBatch set batch information", profile=self.profile, nodes=len(others))
            else:
                self._flush(cycle, FLUSH_EMPTY_LIST if others is None or not len(others) else FLUSH_POD_NOT_BATCHABLE)
                self.state = None
        if self._metrics is not None:
            self._metrics.observe_store_schedule_results(self.profile, time.perf_counter() - start)

    def _compatible(self, state: CycleState, pod: PodInfo, signature: str | None, cycle: int) -> bool:
        """Whether the cache speaks for this pod; each reason it does not is counted (the cache is kept)."""
        cached = self.state
        if cached is None or not len(cached.sorted_nodes):
            return False
        if cycle != self.last.cycle + 1:
            self._flush(cycle, FLUSH_POD_SKIPPED)  # another profile's pod, or a failed one, came in between
            return False
        if not self.last.succeeded:
            self._flush(cycle, FLUSH_POD_FAILED)
            return False
        if signature is None or signature != cached.signature:
            self._flush(cycle, FLUSH_POD_INCOMPATIBLE)
            return False
        if self.now() > cached.created + MAX_BATCH_AGE:
            self._flush(cycle, FLUSH_EXPIRED)
            return False
        last = self._node(self.last.chosen_node)
        if last is None:
            self._flush(cycle, FLUSH_NODE_MISSING)
            return False
        s = self._run_filters(state, pod, last)
        if s is None or not s.is_rejected():
            self._flush(cycle, FLUSH_NODE_NOT_FULL)
            return False
        return True
