"""What the scheduler reports about each pod: an attempt's outcome and the steps of the pod's life.

They sit in the framework, below the scheduler that produces them, so that whoever listens
(the simulator's records and report, the annotation observer of a real cluster) depends on
these types rather than on the scheduler.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Protocol

from kubesched.framework.types import AttemptRecord, PodInfo


@dataclass(slots=True)
class Outcome:
    """How one scheduling attempt ended for a pod: what observers hear after each cycle."""

    pod: PodInfo
    result: str  # Scheduled | Unschedulable | Error
    node: str | None
    message: str
    attempts: int
    record: AttemptRecord | None
    reasons: dict[str, int] | None = None  # Unschedulable: nodes per plugin reason (the FitError's histogram)


@dataclass(slots=True)
class SchedulerEvent:
    """One step of a pod's life, for the simulator's timeline."""

    time: float
    pod: str
    type: str  # Gated | Scheduled | Bound | Unschedulable | Error | Nominated | Preempted | Deleted
    node: str | None = None
    message: str | None = None
    preemptor: str | None = None  # for Preempted: the pod the victim made room for


class SchedulerObserver(Protocol):
    """Who listens to a scheduler: the simulator records outcomes and events, `kubesched run` annotates pods."""

    def on_outcome(self, outcome: Outcome) -> None: ...
    def on_event(self, event: SchedulerEvent) -> None: ...
