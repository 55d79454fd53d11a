"""Where each pod of a simulation ended: the one classification the JSON, the summary and the explanations share."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass

from kubesched.framework.outcome import Outcome
from kubesched.framework.types import PodInfo
from kubesched.scheduler import Scheduler
from kubesched.simulator.run import SimulationResult

SCHEDULED = "Scheduled"


@dataclass(slots=True)
class PodState:
    """A pod pending at the start (or created later) and how its last attempt ended; outcome is None if never tried."""

    pod: PodInfo
    outcome: Outcome | None
    result: str  # Scheduled | Unschedulable | Gated | Error
    message: str

    @property
    def key(self) -> str:
        return self.pod.key

    @property
    def node(self) -> str | None:
        return self.outcome.node if self.outcome is not None else None

    @property
    def attempts(self) -> int:
        return self.outcome.attempts if self.outcome is not None else 0


def pod_states(result: SimulationResult) -> Iterator[PodState]:
    """Every pod of the contract's `pods`, in its order: by final attempt, then the pods never tried."""
    sched = _scheduler(result)
    for outcome in result.outcomes.values():
        yield outcome_state(sched, outcome)
    attempted = result.outcomes
    for pod in result.pending:
        if pod.uid in attempted:
            continue
        if sched.responsible_for(pod):
            message = gate_message(sched, pod)
            yield PodState(pod, None, "Gated" if message else "Unschedulable", message)
        else:
            yield PodState(pod, None, "Unschedulable", f'no profile for schedulerName "{pod.scheduler_name}"')


def outcome_state(sched: Scheduler, outcome: Outcome) -> PodState:
    """A tried pod's state; a Scheduled outcome is final (a bound pod is never tried again)."""
    if outcome.result != SCHEDULED:
        gated = sched.queue.gated_pods.get(outcome.pod.uid)
        if gated is not None:
            return PodState(outcome.pod, outcome, "Gated", gate_message(sched, gated.pod_info))
    return PodState(outcome.pod, outcome, outcome.result, outcome.message)


def gate_message(sched: Scheduler, pod: PodInfo) -> str:
    """Why PreEnqueue holds the pod back, or "" when nothing does."""
    gate = sched.profiles[pod.scheduler_name].run_pre_enqueue_plugins(pod)
    return gate.message() if gate is not None else ""


def _scheduler(result: SimulationResult) -> Scheduler:
    assert result.scheduler is not None
    return result.scheduler
