"""Event series as client-go's events broadcaster: repeats of one event become one object with a count."""

from __future__ import annotations

from typing import Any

from tests.cluster.helpers import pod

from kubesched.backend.kube.api import KubeAPI, load_configuration
from kubesched.backend.kube.cluster import KubeClient
from kubesched.backend.kube.dispatcher import APIDispatcher
from kubesched.backend.kube.events import FINISH_AFTER, REFRESH_EVERY, EventSeries
from kubesched.framework.types import new_pod_info
from kubesched_testing.apiserver import FakeAPIServer


class Clock:
    def __init__(self) -> None:
        self.t = 0.0

    def __call__(self) -> float:
        return self.t


def event(note: str = "0/1 nodes are available", rv: str = "7", reason: str = "FailedScheduling") -> dict[str, Any]:
    return {
        "metadata": {"name": f"p.{note}", "namespace": "default"},
        "type": "Warning",
        "reason": reason,
        "action": "Scheduling",
        "note": note,
        "reportingController": "default-scheduler",
        "reportingInstance": "default-scheduler-host",
        "regarding": {"kind": "Pod", "namespace": "default", "name": "p", "uid": "u1", "resourceVersion": rv},
    }


def test_repeats_make_one_series_written_once() -> None:
    clock = Clock()
    series = EventSeries(clock, lambda: f"t{clock.t}")
    assert series.record(event()) == ("create", event())
    clock.t = 1
    what, first_repeat = series.record(event(note="another note, same series"))  # type: ignore[misc]
    assert what == "series"
    assert first_repeat["note"] == "0/1 nodes are available"  # the first occurrence's note stays
    assert first_repeat["series"] == {"count": 2, "lastObservedTime": "t1"}
    clock.t = 2
    assert series.record(event()) is None
    assert series.sweep() == []


def test_other_reason_or_resource_version_is_another_series() -> None:
    clock = Clock()
    series = EventSeries(clock, lambda: "t")
    series.record(event())
    assert series.record(event(rv="8"))[0] == "create"  # type: ignore[index]
    assert series.record(event(reason="Scheduled"))[0] == "create"  # type: ignore[index]


def test_a_quiet_series_ends_with_its_final_count_and_a_live_one_is_refreshed() -> None:
    clock = Clock()
    series = EventSeries(clock, lambda: f"t{clock.t}")
    series.record(event())
    series.record(event())
    series.record(event())
    series.record(event(rv="9"))  # a singleton: forgotten quietly
    clock.t = FINISH_AFTER
    ended = series.sweep()
    assert [e["series"]["count"] for e in ended] == [3]
    assert series.record(event())[0] == "create"  # type: ignore[index]
    for _ in range(2):
        series.record(event())
    for step in range(1, int(REFRESH_EVERY // 60) + 1):
        clock.t = FINISH_AFTER + 60 * step
        series.record(event())
    refreshed = series.sweep()
    assert [e["series"]["count"] for e in refreshed] == [3 + int(REFRESH_EVERY // 60)]


def test_the_client_writes_a_series_onto_the_first_event(apiserver: FakeAPIServer) -> None:
    api = KubeAPI(load_configuration(master=apiserver.url), qps=0)
    dispatcher = APIDispatcher()
    client = KubeClient(api, dispatcher, instance="host")
    created = apiserver.create(pod("huge", cpu="8"))
    info = new_pod_info(created)
    for note in ("first", "second", "third"):
        client.record_event(info, "Warning", "FailedScheduling", "Scheduling", note)
    assert dispatcher.flush(5)
    events = apiserver.list("Event")
    assert [(e["note"], e.get("series", {}).get("count")) for e in events] == [("first", 2)]
    assert [m for m, p in apiserver.requests if "/events" in p] == ["POST", "PATCH"]

    other = new_pod_info(apiserver.create(pod("other", cpu="8")))
    client.record_event(other, "Warning", "FailedScheduling", "Scheduling", "once")
    assert dispatcher.flush(5)
    apiserver.delete(
        "Event", "default", next(e for e in apiserver.list("Event") if e["note"] == "once")["metadata"]["name"]
    )
    client.record_event(other, "Warning", "FailedScheduling", "Scheduling", "twice")  # patch: 404, so create
    assert dispatcher.flush(5)
    client.stop.set()
    again = [e for e in apiserver.list("Event") if e["regarding"]["name"] == "other"]
    assert [(e["note"], e["series"]["count"]) for e in again] == [("once", 2)]


def test_a_repeat_leaves_the_first_event_as_it_was_sent() -> None:
    """The series keeps a shallow copy of the first event: marking the repeat must not reach the event that the
    dispatcher may still be sending."""
    clock = Clock()
    series = EventSeries(clock, lambda: "t")
    first = event()
    assert series.record(first) == ("create", first)
    what, repeat = series.record(event())  # type: ignore[misc]
    assert what == "series" and repeat["series"]["count"] == 2
    assert first == event()
    repeat["regarding"]["name"] = "changed by the caller"
    series.record(event())
    assert series.sweep() == [] and first == event()
