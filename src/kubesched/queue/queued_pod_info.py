"""QueuedPodInfo, the record of a pending pod that every sub-queue holds; its own module so none of them owns it."""

from __future__ import annotations

from dataclasses import dataclass, field

from kubesched.framework.types import PodInfo


@dataclass(slots=True, eq=False)
class QueuedPodInfo:
    pod_info: PodInfo
    timestamp: float
    seq: int
    attempts: int = 0
    unschedulable_count: int = 0
    consecutive_errors_count: int = 0
    initial_attempt_timestamp: float | None = None
    unschedulable_plugins: set[str] = field(default_factory=set)
    pending_plugins: set[str] = field(default_factory=set)
    gated: bool = False
    gating_plugin: str = ""
    backoff_expiration: float | None = None
    cycle_start: float = 0.0  # perf_counter() when its latest scheduling cycle began, for attempt metrics

    @property
    def key(self) -> str:
        return self.pod_info.key

    def __repr__(self) -> str:
        return f"QueuedPodInfo(pod={self.key!r}, attempts={self.attempts}, gated={self.gated})"


class PodsByUid:
    """A sub-queue's membership: its pods by uid, beside whatever order it keeps them in."""

    pods: dict[str, QueuedPodInfo]

    def __len__(self) -> int:
        return len(self.pods)

    def __contains__(self, uid: str) -> bool:
        return uid in self.pods

    def get(self, uid: str) -> QueuedPodInfo | None:
        return self.pods.get(uid)
