"""Event series as client-go's events broadcaster: repeats of one event become one object with a count."""

from __future__ import annotations

import threading
from typing import Any

from tests.cluster.helpers import pod

from kubesched.backend.kube.api import KubeAPI, load_configuration
from kubesched.backend.kube.cluster import KubeClient
from kubesched.backend.kube.dispatcher import (
    EVENT,
    EVENT_SERIES,
    MAX_BATCH,
    STATUS_PATCH,
    APICall,
    APIDispatcher,
    Batch,
)
from kubesched.backend.kube.events import FINISH_AFTER, MAX_TRIES, REFRESH_EVERY, EventSeries, EventSink
from kubesched.framework.types import new_pod_info
from kubesched_testing.apiserver import DROP_RESPONSE, FakeAPIServer


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


# EventSink: many events in one pipelined exchange, with the broadcaster's verdicts on failures.


def _scheduled(name: str, namespace: str = "default") -> dict[str, Any]:
    return {**event(note=name, reason="Scheduled"), "metadata": {"name": name, "namespace": namespace}}


def _event_posts(apiserver: FakeAPIServer) -> list[str]:
    return [p for m, p in apiserver.requests if m == "POST" and "/events" in p]


def test_a_batch_cut_mid_way_is_written_once_each(apiserver: FakeAPIServer) -> None:
    """The server applies the second create and hangs up: that one meets AlreadyExists when tried again (written),
    the two it never read are created on the next try."""
    api = KubeAPI(load_configuration(master=apiserver.url), qps=0)
    sink = EventSink(api, threading.Event(), retry_after=0.01)
    apiserver.fail("POST", "/namespaces/b/events$", DROP_RESPONSE)
    events = [_scheduled("e", ns) for ns in "abcd"]
    assert sink.write(events) == [True] * 4
    assert sorted(e["metadata"]["namespace"] for e in apiserver.list("Event")) == list("abcd")
    # The server read two of the first four (c and d never reached it), then the three without an answer came again.
    assert [p.split("/")[-2] for p in _event_posts(apiserver)] == ["a", "b", "b", "c", "d"]


def test_each_answer_has_its_own_verdict(apiserver: FakeAPIServer) -> None:
    api = KubeAPI(load_configuration(master=apiserver.url), qps=0)
    sink = EventSink(api, threading.Event(), retry_after=0.01)
    apiserver.fail("POST", "/namespaces/busy/events$", 503)  # a busy server: tried again
    apiserver.fail("POST", "/namespaces/bad/events$", 422)  # malformed: given up at once
    apiserver.create({**_scheduled("dup", "dup"), "kind": "Event"})
    written = sink.write([_scheduled("e1"), _scheduled("e", "busy"), _scheduled("e", "bad"), _scheduled("dup", "dup")])
    assert written == [True, True, False, True]  # the existing one counts as written, as the broadcaster's V(5)
    assert [p for p in _event_posts(apiserver) if "/bad/" in p] == ["/apis/events.k8s.io/v1/namespaces/bad/events"]


def test_series_in_a_batch_patch_or_create(apiserver: FakeAPIServer) -> None:
    api = KubeAPI(load_configuration(master=apiserver.url), qps=0)
    sink = EventSink(api, threading.Event(), retry_after=0.01)
    apiserver.create({**_scheduled("there"), "kind": "Event"})
    series = {"count": 2, "lastObservedTime": "t"}
    assert sink.write([{**_scheduled("there"), "series": series}, {**_scheduled("gone"), "series": series}]) == [
        True,
        True,
    ]
    assert {e["metadata"]["name"]: e["series"]["count"] for e in apiserver.list("Event")} == {"there": 2, "gone": 2}
    assert [m for m, p in apiserver.requests if "/events" in p] == ["PATCH", "PATCH", "POST"]


def test_tries_end_when_stopping_and_after_the_limit(apiserver: FakeAPIServer) -> None:
    api = KubeAPI(load_configuration(master=apiserver.url), qps=0)
    stop = threading.Event()
    apiserver.fail("POST", "/events$", 503, times=100)
    assert EventSink(api, stop, retry_after=0.001).write([_scheduled("e")]) == [False]
    assert len(_event_posts(apiserver)) == MAX_TRIES
    stop.set()
    assert EventSink(api, stop, retry_after=60).write([_scheduled("f")]) == [False]  # no pause once stopping
    assert len(_event_posts(apiserver)) == MAX_TRIES + 1


def test_queued_events_go_out_together(apiserver: FakeAPIServer) -> None:
    api = KubeAPI(load_configuration(master=apiserver.url), qps=0)
    dispatcher = APIDispatcher(workers=1)
    gate = threading.Event()

    def busy(_: dict[str, Any]) -> None:
        gate.wait(5)

    dispatcher.add(APICall(STATUS_PATCH, "busy", busy))
    sizes: list[int] = []
    sink = EventSink(api, threading.Event())

    def send(payloads: list[dict[str, Any]]) -> list[bool]:
        sizes.append(len(payloads))
        return sink.write(payloads)

    batch = Batch(send)
    done: list[bool] = []
    for i in range(MAX_BATCH + 5):
        dispatcher.add(APICall(EVENT, f"e{i}", batch, _scheduled(f"e{i}"), on_done=done.append))
    dispatcher.add(APICall(EVENT_SERIES, "e0", batch, {**_scheduled("e0"), "series": {"count": 2}}))
    gate.set()
    assert dispatcher.flush(10)
    assert sizes == [MAX_BATCH, 6]  # the series of e0 joins the second: one call per object in flight
    assert done == [True] * (MAX_BATCH + 5)
    assert apiserver.get("Event", "default", "e0")["series"]["count"] == 2  # type: ignore[index]
