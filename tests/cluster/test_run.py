"""`kubesched run` against the stand-in API server: binding, writes and recovery."""

from __future__ import annotations

from tests.cluster.helpers import node, pod, wait_for

from kubesched.testing.apiserver import FakeAPIServer


def bound(api: FakeAPIServer, name: str) -> str:
    obj = api.get("Pod", "default", name)
    return ((obj or {}).get("spec") or {}).get("nodeName") or ""


def test_pending_pods_get_bound(apiserver: FakeAPIServer, start_app) -> None:
    apiserver.create(node("n1"))
    apiserver.create(node("n2"))
    apiserver.create(pod("before"))
    start_app()
    wait_for(lambda: bound(apiserver, "before"), what="pod created before start bound")
    apiserver.create(pod("after"))
    wait_for(lambda: bound(apiserver, "after"), what="pod created while running bound")
    events = [e for e in apiserver.list("Event") if e["reason"] == "Scheduled"]
    wait_for(lambda: len([e for e in apiserver.list("Event") if e["reason"] == "Scheduled"]) == 2, what="events")
    events = [e for e in apiserver.list("Event") if e["reason"] == "Scheduled"]
    notes = sorted(e["note"] for e in events)
    assert notes == sorted(f"Successfully assigned default/{p} to {bound(apiserver, p)}" for p in ("before", "after"))
    assert {e["reportingController"] for e in events} == {"default-scheduler"}
    assert all(e["action"] == "Binding" and e["type"] == "Normal" for e in events)
