"""HTTP/1.1 pipelining against the real kube-apiserver v1.36: answers come back whole and in order.

Go's net/http server reads a pipelined request only after answering the one before, so
a mix of creates, a duplicate, a missing object and a series patch sent in one write must
come back as if sent one by one; `EventSink` relies on it for the Scheduled events.
"""

from __future__ import annotations

import threading
import uuid
from typing import Any

import pytest

from kubesched.backend.kube.api import STRATEGIC_MERGE_PATCH, APIError, Call, KubeAPI
from kubesched.backend.kube.events import EventSink
from kubesched.backend.kube.transport import PIPELINE_DEPTH

pytestmark = pytest.mark.filterwarnings("ignore::urllib3.exceptions.InsecureRequestWarning")
EVENTS = "/apis/events.k8s.io/v1/namespaces/default/events"


def _event(name: str) -> dict[str, Any]:
    return {
        "apiVersion": "events.k8s.io/v1",
        "kind": "Event",
        "metadata": {"name": name, "namespace": "default"},
        "eventTime": "2026-11-28T10:00:00.000000Z",
        "reportingController": "default-scheduler",
        "reportingInstance": "default-scheduler-test",
        "action": "Binding",
        "reason": "Scheduled",
        "type": "Normal",
        "note": f"Successfully assigned default/{name} to node-1",
        "regarding": {"apiVersion": "v1", "kind": "Pod", "namespace": "default", "name": name, "uid": "u"},
    }


def test_a_pipelined_mix_is_answered_in_order(admin_api: KubeAPI) -> None:
    tag = uuid.uuid4().hex[:8]
    names = [f"p{tag}-{i}" for i in range(PIPELINE_DEPTH + 8)]  # two writes on one connection
    calls = [Call("POST", EVENTS, _event(n)) for n in names]
    calls.insert(5, Call("POST", EVENTS, _event(names[0])))  # a duplicate of the first: AlreadyExists
    calls.insert(9, Call("GET", f"{EVENTS}/missing-{tag}"))
    calls.append(
        Call(
            "PATCH",
            f"{EVENTS}/{names[1]}",
            {"series": {"count": 2, "lastObservedTime": "2026-11-28T10:00:01.000000Z"}},
            STRATEGIC_MERGE_PATCH,
        )
    )
    answers = admin_api.pipeline(calls)
    dup, missing, patched = answers.pop(5), answers.pop(8), answers.pop()
    assert [a["metadata"]["name"] for a in answers if isinstance(a, dict)] == names
    assert isinstance(dup, APIError) and (dup.status, dup.reason) == (409, "AlreadyExists")
    assert isinstance(missing, APIError) and missing.status == 404
    assert isinstance(patched, dict) and patched["series"]["count"] == 2
    listed = admin_api.request("GET", EVENTS)["items"]
    assert sorted(e["metadata"]["name"] for e in listed if tag in e["metadata"]["name"]) == sorted(names)
    admin_api.request("DELETE", EVENTS)


def test_the_sink_writes_events_and_series_in_one_go(admin_api: KubeAPI) -> None:
    tag = uuid.uuid4().hex[:8]
    first = _event(f"s{tag}-0")
    admin_api.request("POST", EVENTS, body=first)
    series = {"count": 3, "lastObservedTime": "2026-11-28T10:00:02.000000Z"}
    batch = [_event(f"s{tag}-{i}") for i in range(1, 20)]
    batch += [{**first, "series": series}, {**_event(f"s{tag}-gone"), "series": series}]
    assert EventSink(admin_api, threading.Event()).write(batch) == [True] * len(batch)
    listed = {
        e["metadata"]["name"]: e for e in admin_api.request("GET", EVENTS)["items"] if tag in e["metadata"]["name"]
    }
    assert len(listed) == 21
    assert listed[f"s{tag}-0"]["series"]["count"] == 3 and listed[f"s{tag}-gone"]["series"]["count"] == 3
    admin_api.request("DELETE", EVENTS)
