"""A scheduler wired to an embedded cluster on a virtual clock, for tests that drive whole cycles."""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field
from typing import Any

from kubesched.backend.embedded.cluster import EmbeddedCluster
from kubesched.clock import VirtualClock
from kubesched.config.load import SchedulerConfig, load_config
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

    def get(self, kind: str, namespace: str, name: str) -> dict[str, Any]:
        return stored(self.cluster, kind, namespace, name)


def stored(cluster: EmbeddedCluster, kind: str, namespace: str, name: str) -> dict[str, Any]:
    """The stored object, which the test expects to exist: a missing one fails the test by its name."""
    obj = cluster.get(kind, namespace, name)
    assert obj is not None, f"{kind} {namespace}/{name} is not in the cluster"
    return obj


def with_feature_gates(config: SchedulerConfig, gates: dict[str, bool]) -> SchedulerConfig:
    """The configuration following its release with `gates` on top, as --feature-gates would give it."""
    text = ",".join(f"{name}={str(on).lower()}" for name, on in gates.items())
    return dataclasses.replace(config, release=config.release.with_feature_gates(text))


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
        cfg = with_feature_gates(cfg, feature_gates)
    sched = embedded_scheduler(cfg, cluster, clock, seed=kw.pop("seed", 1), observer=recorder, **kw)
    tc = Harness(clock, cluster, sched, recorder)
    tc.create(*nodes, *pods)
    return tc
