"""A scheduler wired to an embedded cluster on a virtual clock, for tests that drive whole cycles."""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field
from typing import Any

from kubesched.backend.embedded import EmbeddedCluster
from kubesched.clock import VirtualClock
from kubesched.config.load import load_config
from kubesched.config.trust import TRUSTED
from kubesched.framework.outcome import Outcome, SchedulerEvent
from kubesched.scheduler import Scheduler
from kubesched.simulator.run import embedded_scheduler


@dataclass
class Recorder:
    outcomes: list[Outcome] = field(default_factory=list)
    events: list[SchedulerEvent] = field(default_factory=list)

    def on_outcome(self, outcome: Outcome) -> None:
        self.outcomes.append(outcome)

    def on_event(self, event: SchedulerEvent) -> None:
        self.events.append(event)


@dataclass
class Harness:
    clock: VirtualClock
    cluster: EmbeddedCluster
    sched: Scheduler
    recorder: Recorder

    def create(self, *objs: dict[str, Any]) -> None:
        for o in objs:
            self.cluster.create(o)


def new_test_cluster(
    nodes: list[dict[str, Any]] = (),  # type: ignore[assignment]
    pods: list[dict[str, Any]] = (),  # type: ignore[assignment]
    *,
    config: dict[str, Any] | None = None,
    feature_gates: dict[str, bool] | None = None,
    **kw: Any,
) -> Harness:
    clock = VirtualClock()
    cluster = EmbeddedCluster(clock)
    recorder = Recorder()
    cfg = load_config(config, trust=TRUSTED)
    if feature_gates is not None:
        cfg = dataclasses.replace(cfg, feature_gates=feature_gates)
    sched = embedded_scheduler(cfg, cluster, clock, seed=kw.pop("seed", 1), observer=recorder, **kw)
    tc = Harness(clock, cluster, sched, recorder)
    tc.create(*nodes, *pods)
    return tc
