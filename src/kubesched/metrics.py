"""Prometheus metrics with upstream's names, labels and buckets (pkg/scheduler/metrics/metrics.go).

Only `kubesched run` pays for them: `instrument` wraps one framework's extension
points and plugins in timers, and queue sizes, cache sizes and pending API calls
are read when /metrics is scraped, so the simulator's hot path is untouched.
"""

from __future__ import annotations

import random
import time
from collections.abc import Callable, Iterator
from functools import wraps
from typing import TYPE_CHECKING, Any

from prometheus_client import CollectorRegistry, Counter, Histogram
from prometheus_client.core import GaugeMetricFamily
from prometheus_client.registry import Collector

from kubesched.framework import events
from kubesched.framework.interface import ClusterEvent

if TYPE_CHECKING:
    from kubesched.framework.runtime.framework import Framework
    from kubesched.queue.scheduling_queue import PriorityQueue
    from kubesched.scheduler import Scheduler

PLUGIN_METRICS_SAMPLE_PERCENT = 10

# Framework method -> the extension point label upstream uses.
_POINT_METHODS = {
    "run_pre_filter_plugins": "PreFilter",
    "run_post_filter_plugins": "PostFilter",
    "run_pre_score_plugins": "PreScore",
    "run_score_plugins": "Score",
    "run_reserve_plugins_reserve": "Reserve",
    "run_reserve_plugins_unreserve": "Unreserve",
    "run_permit_plugins": "Permit",
    "run_pre_bind_plugins": "PreBind",
    "run_bind_plugins": "Bind",
    "run_post_bind_plugins": "PostBind",
}
# Plugin method -> extension point, for the sampled per-plugin durations.
_PLUGIN_METHODS = {
    "pre_filter": "PreFilter",
    "post_filter": "PostFilter",
    "pre_score": "PreScore",
    "reserve": "Reserve",
    "permit": "Permit",
    "pre_bind": "PreBind",
    "bind": "Bind",
    "post_bind": "PostBind",
}


def exponential_buckets(start: float, factor: float, count: int) -> list[float]:
    return [start * factor**i for i in range(count)]


def _status_label(result: Any) -> str:
    """Upstream labels durations with the status code's name; success when there is no status."""
    status = result[1] if isinstance(result, tuple) and len(result) > 1 else result
    code = getattr(status, "code", None)
    if code is None:
        return "Success"
    name = getattr(code, "name", str(code))
    return "".join(part.capitalize() for part in name.lower().split("_"))


class SchedulerMetrics:
    def __init__(self, registry: CollectorRegistry | None = None) -> None:
        self.registry = registry if registry is not None else CollectorRegistry()
        r = self.registry
        self.schedule_attempts = Counter(
            "scheduler_schedule_attempts",
            "Number of attempts to schedule pods, by the result.",
            ["result", "profile"],
            registry=r,
        )
        self.attempt_duration = Histogram(
            "scheduler_scheduling_attempt_duration_seconds",
            "Scheduling attempt latency in seconds (scheduling algorithm + binding)",
            ["result", "profile"],
            buckets=exponential_buckets(0.001, 2, 15),
            registry=r,
        )
        self.algorithm_duration = Histogram(
            "scheduler_scheduling_algorithm_duration_seconds",
            "Scheduling algorithm latency in seconds",
            buckets=exponential_buckets(0.001, 2, 15),
            registry=r,
        )
        self.sli_duration = Histogram(
            "scheduler_pod_scheduling_sli_duration_seconds",
            "E2e latency for a pod being scheduled, from the time the pod enters the scheduling queue.",
            ["attempts"],
            buckets=exponential_buckets(0.01, 2, 20),
            registry=r,
        )
        self.pod_attempts = Histogram(
            "scheduler_pod_scheduling_attempts",
            "Number of attempts to successfully schedule a pod.",
            buckets=exponential_buckets(1, 2, 5),
            registry=r,
        )
        self.extension_point_duration = Histogram(
            "scheduler_framework_extension_point_duration_seconds",
            "Latency for running all plugins of a specific extension point.",
            ["extension_point", "status", "profile"],
            buckets=exponential_buckets(0.0001, 2, 12),
            registry=r,
        )
        self.plugin_duration = Histogram(
            "scheduler_plugin_execution_duration_seconds",
            "Duration for running a plugin at a specific extension point.",
            ["plugin", "extension_point", "status"],
            buckets=exponential_buckets(0.00001, 1.5, 20),
            registry=r,
        )
        self.preemption_attempts = Counter(
            "scheduler_preemption_attempts", "Total preemption attempts in the cluster till now", registry=r
        )
        self.preemption_victims = Histogram(
            "scheduler_preemption_victims",
            "Number of selected preemption victims",
            buckets=exponential_buckets(1, 2, 7),
            registry=r,
        )
        self.queue_incoming_pods = Counter(
            "scheduler_queue_incoming_pods",
            "Number of pods added to scheduling queues by event and queue type.",
            ["queue", "event"],
            registry=r,
        )
        self.async_api_calls = Counter(
            "scheduler_async_api_call_execution",
            "Total number of API calls executed by the async dispatcher.",
            ["call_type", "result"],
            registry=r,
        )
        self.async_api_call_duration = Histogram(
            "scheduler_async_api_call_duration_seconds",
            "Duration in seconds for executing API call in the async dispatcher.",
            ["call_type", "result"],
            buckets=exponential_buckets(0.001, 2, 15),
            registry=r,
        )
        self.sample = False  # per cycle: record per-plugin durations this time (10 % of cycles)

    def new_cycle(self) -> None:
        self.sample = random.randrange(100) < PLUGIN_METRICS_SAMPLE_PERCENT

    def observe_api_call(self, call_type: str, result: str, seconds: float) -> None:
        self.async_api_calls.labels(call_type, result).inc()
        self.async_api_call_duration.labels(call_type, result).observe(seconds)

    def watch(self, sched: Scheduler, pending_api_calls: Callable[[], int] = lambda: 0) -> None:
        """Read queue and cache sizes at scrape time, and count pods entering each queue."""
        self.registry.register(_StateCollector(sched, pending_api_calls))
        _count_incoming(sched.queue, self)
        for name, fwk in sched.profiles.items():
            instrument(fwk, name, self)


def instrument(fwk: Framework, profile: str, metrics: SchedulerMetrics) -> None:
    """Time every extension point of a framework, and (sampled) every plugin in it."""
    for method, point in _POINT_METHODS.items():
        setattr(fwk, method, _timed_point(getattr(fwk, method), point, profile, metrics))
    seen: set[int] = set()
    for plugins in fwk.points.values():
        for pl in plugins:
            if id(pl) in seen:
                continue
            seen.add(id(pl))
            for method, point in _PLUGIN_METHODS.items():
                fn = getattr(pl, method, None)
                if fn is not None and callable(fn):
                    setattr(pl, method, _timed_plugin(fn, pl.name, point, metrics))


def _timed_point(fn: Callable[..., Any], point: str, profile: str, metrics: SchedulerMetrics) -> Callable[..., Any]:
    hist = metrics.extension_point_duration

    @wraps(fn)
    def timed(*args: Any, **kwargs: Any) -> Any:
        start = time.perf_counter()
        result = fn(*args, **kwargs)
        hist.labels(point, _status_label(result), profile).observe(time.perf_counter() - start)
        return result

    return timed


def _timed_plugin(fn: Callable[..., Any], plugin: str, point: str, metrics: SchedulerMetrics) -> Callable[..., Any]:
    hist = metrics.plugin_duration

    @wraps(fn)
    def timed(*args: Any, **kwargs: Any) -> Any:
        if not metrics.sample:
            return fn(*args, **kwargs)
        start = time.perf_counter()
        result = fn(*args, **kwargs)
        hist.labels(plugin, point, _status_label(result)).observe(time.perf_counter() - start)
        return result

    return timed


# Queue method -> the event its arrivals are counted under; None: the ClusterEvent it was given.
_QUEUE_OPS: dict[str, str | None] = {
    "add": "PodAdd",
    "update": "PodUpdate",
    "add_unschedulable_if_not_present": "ScheduleAttemptFailure",
    "activate": "ForceActivate",
    "flush_backoff_q_completed": "BackoffComplete",
    "flush_unschedulable_pods_leftover": "UnschedulableTimeout",
    "move_all_to_active_or_backoff_queue": None,
}


def event_label(event: ClusterEvent) -> str:
    """The event's label as upstream builds it: resource and action (NodeAdd, AssignedPodDelete, ...)."""
    if event.label:
        return event.label
    action = {events.ADD: "Add", events.DELETE: "Delete"}.get(event.action_type, "Update")
    return f"{event.resource}{action}"


def _count_incoming(q: PriorityQueue, metrics: SchedulerMetrics) -> None:
    """Pods that arrive in a sub-queue during a queue operation are counted under that operation's event."""
    counter = metrics.queue_incoming_pods

    def wrap(fn: Callable[..., Any], label: str | None) -> Callable[..., Any]:
        @wraps(fn)
        def counted(*args: Any, **kwargs: Any) -> Any:
            before = q.sizes()
            result = fn(*args, **kwargs)
            event = label if label is not None else event_label(args[0])
            for name, n in q.sizes().items():
                if n > before[name]:
                    counter.labels(name, event).inc(n - before[name])
            return result

        return counted

    for method, label in _QUEUE_OPS.items():
        setattr(q, method, wrap(getattr(q, method), label))


class _StateCollector(Collector):
    def __init__(self, sched: Scheduler, pending_api_calls: Callable[[], int]) -> None:
        self.sched = sched
        self.pending_api_calls = pending_api_calls

    def collect(self) -> Iterator[GaugeMetricFamily]:
        pending = GaugeMetricFamily(
            "scheduler_pending_pods", "Number of pending pods, by the queue type.", labels=["queue"]
        )
        for name, n in self.sched.queue.sizes().items():
            pending.add_metric([name], n)
        yield pending
        cache = self.sched.cache
        size = GaugeMetricFamily("scheduler_cache_size", "Number of nodes, pods, and assumed pods.", labels=["type"])
        size.add_metric(["nodes"], len(cache.nodes))
        size.add_metric(["pods"], len(cache.pod_states))
        size.add_metric(["assumed_pods"], len(cache.assumed_pods))
        yield size
        calls = GaugeMetricFamily("scheduler_pending_async_api_calls", "Number of API calls waiting to be executed.")
        calls.add_metric([], self.pending_api_calls())
        yield calls
