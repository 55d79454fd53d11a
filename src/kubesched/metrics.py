"""Prometheus metrics with upstream's names, labels and buckets (pkg/scheduler/metrics/metrics.go).

SchedulerMetrics is the MetricsRecorder that `kubesched run` hands to the runtime,
preemption and the queue, which report durations and arrivals as they happen;
queue sizes, cache sizes and pending API calls are read when /metrics is scraped.
Simulations pass no recorder, and the runners then skip the timing.
"""

from __future__ import annotations

import random
from collections.abc import Callable, Iterator, Sized
from typing import Generic, Protocol, TypeVar

from prometheus_client import CollectorRegistry, Counter, Histogram
from prometheus_client.core import GaugeMetricFamily
from prometheus_client.registry import Collector

PLUGIN_METRICS_SAMPLE_PERCENT = 10


class QueueSizes(Protocol):
    """What a scrape reads of the scheduling queue; a protocol, so metrics needs nothing above the bottom layer."""

    def sizes(self) -> dict[str, int]: ...


class CacheSizes(Protocol):
    """What a scrape reads of the scheduler's cache."""

    @property
    def nodes(self) -> Sized: ...
    @property
    def pod_states(self) -> Sized: ...
    @property
    def assumed_pods(self) -> Sized: ...


M = TypeVar("M", Counter, Histogram)


class _Children(Generic[M]):
    """A labelled metric's children, kept by label values: prometheus_client validates and locks on every
    labels() call (several microseconds), and every pod is observed at a dozen extension points."""

    __slots__ = ("_children", "_metric")

    def __init__(self, metric: M) -> None:
        self._metric: M = metric
        self._children: dict[tuple[str, ...], M] = {}

    def __call__(self, *values: str) -> M:
        child = self._children.get(values)
        if child is None:  # two threads may both ask: labels() hands both the same child
            child = self._children[values] = self._metric.labels(*values)
        return child


def exponential_buckets(start: float, factor: float, count: int) -> list[float]:
    return [start * factor**i for i in range(count)]


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
        self.batch_attempts = Counter(
            "scheduler_batch_attempts",
            "Counts of results when we attempt to use batching.",
            ["profile", "result"],
            registry=r,
        )
        self.batch_cache_flushed = Counter(
            "scheduler_batch_cache_flushed",
            "Counts of cache flushes by reason.",
            ["profile", "reason"],
            registry=r,
        )
        self.get_node_hint_duration = Histogram(
            "scheduler_get_node_hint_duration_seconds",
            "Latency for getting a node hint.",
            ["hinted", "profile"],
            buckets=exponential_buckets(0.00001, 2, 12),
            registry=r,
        )
        self.store_schedule_results_duration = Histogram(
            "scheduler_store_schedule_results_duration_seconds",
            "Latency for getting a no.",  # sic: upstream's help text
            ["profile"],
            buckets=exponential_buckets(0.00001, 2, 12),
            registry=r,
        )
        self.sample = False  # per cycle: record per-plugin durations this time (10 % of cycles)
        self._extension_point = _Children(self.extension_point_duration)
        self._plugin = _Children(self.plugin_duration)
        self._incoming = _Children(self.queue_incoming_pods)
        self._api_calls = _Children(self.async_api_calls)
        self._api_call_duration = _Children(self.async_api_call_duration)

    def new_cycle(self) -> None:
        self.sample = random.randrange(100) < PLUGIN_METRICS_SAMPLE_PERCENT

    # MetricsRecorder: what the runtime, preemption and the queue report as it happens.

    def plugin_sampled(self) -> bool:
        return self.sample

    def observe_extension_point(self, point: str, status: str, profile: str, seconds: float) -> None:
        self._extension_point(point, status, profile).observe(seconds)

    def observe_plugin(self, plugin: str, point: str, status: str, seconds: float) -> None:
        self._plugin(plugin, point, status).observe(seconds)

    def observe_preemption_victims(self, count: int) -> None:
        self.preemption_victims.observe(count)

    def observe_queue_incoming(self, queue: str, event: str, count: int) -> None:
        self._incoming(queue, event).inc(count)

    def observe_api_call(self, call_type: str, result: str, seconds: float) -> None:
        self._api_calls(call_type, result).inc()
        self._api_call_duration(call_type, result).observe(seconds)

    # OpportunisticBatching (framework/runtime/batch.py's BatchRecorder)

    def observe_batch_attempt(self, profile: str, result: str) -> None:
        self.batch_attempts.labels(profile, result).inc()

    def observe_batch_flush(self, profile: str, reason: str) -> None:
        self.batch_cache_flushed.labels(profile, reason).inc()

    def observe_node_hint(self, hinted: str, profile: str, seconds: float) -> None:
        self.get_node_hint_duration.labels(hinted, profile).observe(seconds)

    def observe_store_schedule_results(self, profile: str, seconds: float) -> None:
        self.store_schedule_results_duration.labels(profile).observe(seconds)

    def watch(self, queue: QueueSizes, cache: CacheSizes, pending_api_calls: Callable[[], int] = lambda: 0) -> None:
        """Read queue and cache sizes at scrape time (the queue counts arrivals itself, given these metrics)."""
        self.registry.register(_StateCollector(queue, cache, pending_api_calls))


class _StateCollector(Collector):
    def __init__(self, queue: QueueSizes, cache: CacheSizes, pending_api_calls: Callable[[], int]) -> None:
        self.queue = queue
        self.cache = cache
        self.pending_api_calls = pending_api_calls

    def collect(self) -> Iterator[GaugeMetricFamily]:
        pending = GaugeMetricFamily(
            "scheduler_pending_pods", "Number of pending pods, by the queue type.", labels=["queue"]
        )
        for name, n in self.queue.sizes().items():
            pending.add_metric([name], n)
        yield pending
        cache = self.cache
        size = GaugeMetricFamily("scheduler_cache_size", "Number of nodes, pods, and assumed pods.", labels=["type"])
        size.add_metric(["nodes"], len(cache.nodes))
        size.add_metric(["pods"], len(cache.pod_states))
        size.add_metric(["assumed_pods"], len(cache.assumed_pods))
        yield size
        calls = GaugeMetricFamily("scheduler_pending_async_api_calls", "Number of API calls waiting to be executed.")
        calls.add_metric([], self.pending_api_calls())
        yield calls
