"""Metrics go through the recorder the runtime and the queue are given, and only when one is given."""

from __future__ import annotations

import pytest
from prometheus_client import CollectorRegistry

from kubesched import metrics as metrics_module
from kubesched.metrics import SchedulerMetrics
from kubesched_testing.cluster import Harness, new_test_cluster
from kubesched_testing.wrappers import make_node, make_pod


def _sample(registry: CollectorRegistry, name: str, **labels: str) -> float:
    return registry.get_sample_value(name, labels) or 0.0


def _cluster_with_metrics(monkeypatch: pytest.MonkeyPatch) -> tuple[CollectorRegistry, Harness]:
    monkeypatch.setattr(metrics_module, "PLUGIN_METRICS_SAMPLE_PERCENT", 100)
    registry = CollectorRegistry()
    metrics = SchedulerMetrics(registry)
    tc = new_test_cluster([make_node("n1").capacity({"cpu": "1", "pods": "10"}).obj()], metrics=metrics)
    metrics.watch(tc.sched.queue, tc.sched.cache)
    return registry, tc


def test_extension_points_plugins_and_queue_arrivals_are_recorded(monkeypatch: pytest.MonkeyPatch) -> None:
    registry, tc = _cluster_with_metrics(monkeypatch)
    tc.create(make_pod("fits").req({"cpu": "500m"}).obj(), make_pod("too-big").req({"cpu": "2"}).obj())
    tc.sched.run()
    point = "scheduler_framework_extension_point_duration_seconds_count"
    profile = {"profile": "default-scheduler"}
    assert _sample(registry, point, extension_point="Bind", status="Success", **profile) == 1
    assert _sample(registry, point, extension_point="PreFilter", status="Success", **profile) == 2
    assert _sample(registry, point, extension_point="PostFilter", status="Unschedulable", **profile) == 1
    plugin = "scheduler_plugin_execution_duration_seconds_count"
    assert _sample(registry, plugin, plugin="DefaultBinder", extension_point="Bind", status="Success") == 1
    assert _sample(registry, plugin, plugin="NodeResourcesFit", extension_point="PreFilter", status="Success") == 2
    incoming = "scheduler_queue_incoming_pods_total"
    assert _sample(registry, incoming, queue="active", event="PodAdd") == 2
    assert _sample(registry, incoming, queue="unschedulable", event="ScheduleAttemptFailure") == 1


def test_pods_moved_by_a_cluster_event_count_under_its_label(monkeypatch: pytest.MonkeyPatch) -> None:
    registry, tc = _cluster_with_metrics(monkeypatch)
    tc.create(make_pod("too-big").req({"cpu": "2"}).obj())
    tc.sched.run()
    tc.create(make_node("n2").capacity({"cpu": "4", "pods": "10"}).obj())
    tc.sched.run()
    moved = sum(
        _sample(registry, "scheduler_queue_incoming_pods_total", queue=q, event="NodeAdd")
        for q in ("active", "backoff")
    )
    assert moved == 1
    assert [o.result for o in tc.recorder.outcomes] == ["Unschedulable", "Scheduled"]


def test_repeated_observations_land_in_one_series_per_label_set() -> None:
    registry = CollectorRegistry()
    metrics = SchedulerMetrics(registry)
    for status in ("Success", "Success", "Error"):
        metrics.observe_extension_point("Bind", status, "p", 0.001)
        metrics.observe_api_call("event", status.lower(), 0.002)
    point = "scheduler_framework_extension_point_duration_seconds_count"
    assert _sample(registry, point, extension_point="Bind", status="Success", profile="p") == 2
    assert _sample(registry, point, extension_point="Bind", status="Error", profile="p") == 1
    calls = "scheduler_async_api_call_execution_total"
    assert _sample(registry, calls, call_type="event", result="success") == 2
    assert _sample(registry, calls, call_type="event", result="error") == 1
