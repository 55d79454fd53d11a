"""`kubesched run` against the stand-in API server: binding, writes and recovery."""

from __future__ import annotations

import threading
import time
from typing import Any

import pytest
from tests.cluster.conftest import fast_backoff
from tests.cluster.helpers import node, pod, wait_for

from kubesched.app import RunOptions, SchedulerApp
from kubesched.config.load import load_config
from kubesched_testing.apiserver import DROP_RESPONSE, FakeAPIServer


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


def condition(api: FakeAPIServer, name: str, type_: str) -> dict:
    obj = api.get("Pod", "default", name) or {}
    return next((c for c in (obj.get("status") or {}).get("conditions") or () if c["type"] == type_), {})


def test_unschedulable_pod_gets_condition_and_event(apiserver: FakeAPIServer, start_app) -> None:
    apiserver.create(node("small", cpu="1"))
    apiserver.create(pod("huge", cpu="8"))
    start_app()
    cond = wait_for(lambda: condition(apiserver, "huge", "PodScheduled"), what="PodScheduled condition")
    message = (
        "0/1 nodes are available: 1 Insufficient cpu. "
        "no new claims to deallocate, preemption: 0/1 nodes are available: 1 Preemption is not helpful for scheduling."
    )
    assert cond == {
        "type": "PodScheduled",
        "status": "False",
        "reason": "Unschedulable",
        "message": message,
        "lastTransitionTime": cond["lastTransitionTime"],
        "lastProbeTime": None,
    }
    event = wait_for(lambda: [e for e in apiserver.list("Event") if e["reason"] == "FailedScheduling"], what="event")[0]
    assert (event["type"], event["action"], event["note"]) == ("Warning", "Scheduling", message)
    assert event["regarding"]["name"] == "huge"


def test_pods_for_other_schedulers_are_left_alone(apiserver: FakeAPIServer, start_app) -> None:
    apiserver.create(node("n1"))
    apiserver.create(pod("theirs", schedulerName="other-scheduler"))
    apiserver.create(pod("ours"))
    start_app()
    wait_for(lambda: bound(apiserver, "ours"), what="our pod bound")
    assert bound(apiserver, "theirs") == ""
    assert condition(apiserver, "theirs", "PodScheduled") == {}


def test_binding_conflict_forgets_the_assumed_pod(apiserver: FakeAPIServer, start_app) -> None:
    apiserver.create(node("n1", cpu="1"))
    apiserver.fail("POST", r"/pods/p1/binding$", status=409)
    apiserver.create(pod("p1", cpu="600m"))
    running = start_app(
        {
            "apiVersion": "kubescheduler.config.k8s.io/v1",
            "kind": "KubeSchedulerConfiguration",
            "podInitialBackoffSeconds": 1,
            "podMaxBackoffSeconds": 1,
        }
    )
    wait_for(lambda: bound(apiserver, "p1"), timeout=15, what="bound on the retry")
    sched = running.app.scheduler
    wait_for(lambda: not sched.cache.assumed_pods, what="no assumed pod left")
    with running.app.lock:
        ni = sched.cache.nodes["n1"]
        assert ni.requested["cpu"] == 600  # counted once: the forgotten assumption did not linger
    failed = wait_for(
        lambda: [e for e in apiserver.list("Event") if e["reason"] == "FailedScheduling"], what="FailedScheduling"
    )
    assert "injected failure 409" in failed[0]["note"], failed[0]["note"]
    posts = [p for m, p in apiserver.requests if m == "POST" and p.endswith("/p1/binding")]
    assert len(posts) == 2  # a conflict is not retried by the client


def test_server_errors_on_binding_are_retried(apiserver: FakeAPIServer, start_app) -> None:
    apiserver.create(node("n1"))
    apiserver.fail("POST", r"/pods/p1/binding$", status=500, times=2)
    apiserver.create(pod("p1"))
    start_app()
    wait_for(lambda: bound(apiserver, "p1"), what="bound after 500s")
    posts = [p for m, p in apiserver.requests if m == "POST" and p.endswith("/p1/binding")]
    assert len(posts) == 3
    assert not [e for e in apiserver.list("Event") if e["reason"] == "FailedScheduling"]


def _one_slot_cluster(apiserver: FakeAPIServer) -> None:
    """One node with room for one pod, and two pods that each want it."""
    apiserver.create(node("n1", pods="1"))
    apiserver.create(pod("p1"))


def _settled(apiserver: FakeAPIServer, running) -> None:
    sched = running.app.scheduler
    wait_for(lambda: bound(apiserver, "p1") == "n1", what="p1 bound")
    apiserver.create(pod("p2"))
    wait_for(lambda: condition(apiserver, "p2", "PodScheduled").get("reason") == "Unschedulable", what="p2 refused")
    wait_for(lambda: not sched.cache.assumed_pods, what="no assumed pod left")
    assert bound(apiserver, "p2") == ""  # the node's one slot was not handed out twice
    assert [b[0] for b in apiserver.bindings] == ["default/p1"]
    assert condition(apiserver, "p1", "PodScheduled")["status"] == "True"
    assert not [e for e in apiserver.list("Event") if e["reason"] == "FailedScheduling" and "p1" in e["note"]]


def test_a_binding_whose_answer_was_lost_is_read_back(apiserver: FakeAPIServer, start_app) -> None:
    """The server applied the binding and the connection closed: the pod is read back, not posted again."""
    apiserver.fail("POST", r"/pods/p1/binding$", status=DROP_RESPONSE)
    _one_slot_cluster(apiserver)
    running = start_app()
    _settled(apiserver, running)
    wait_for(lambda: ("GET", "/api/v1/namespaces/default/pods/p1") in apiserver.requests, what="the read-back")
    wait_for(lambda: [e for e in apiserver.list("Event") if e["reason"] == "Scheduled"], what="Scheduled event")
    assert running.app.dispatcher.flush(5)
    posts = [p for m, p in apiserver.requests if m == "POST" and p.endswith("/p1/binding")]
    assert len(posts) == 1


def test_a_second_binding_refused_with_our_own_node_is_a_success(apiserver: FakeAPIServer, start_app) -> None:
    """Lost answer, then the read-back fails too: the binding goes again and its 409 names the node we chose."""
    apiserver.fail("POST", r"/pods/p1/binding$", status=DROP_RESPONSE)
    apiserver.fail("GET", r"/pods/p1$", status=503)
    _one_slot_cluster(apiserver)
    running = start_app()
    _settled(apiserver, running)
    wait_for(
        lambda: len([p for m, p in apiserver.requests if m == "POST" and p.endswith("/p1/binding")]) == 2,
        what="the second binding",
    )
    scheduled = wait_for(
        lambda: [e["note"] for e in apiserver.list("Event") if e["reason"] == "Scheduled"], what="Scheduled event"
    )
    assert scheduled == ["Successfully assigned default/p1 to n1"]


def test_writes_whose_answer_was_lost_are_not_sent_again(apiserver: FakeAPIServer, start_app) -> None:
    """An event is a create: sent once, as client-go would, even when its answer never came."""
    apiserver.fail("POST", r"/events$", status=DROP_RESPONSE)
    apiserver.create(node("n1"))
    apiserver.create(pod("p1"))
    start_app()
    wait_for(lambda: [e for e in apiserver.list("Event") if e["reason"] == "Scheduled"], what="the event")
    time.sleep(0.5)
    assert len([p for m, p in apiserver.requests if m == "POST" and p.endswith("/events")]) == 1
    assert len(apiserver.list("Event")) == 1


def test_a_pod_bound_after_failing_keeps_podscheduled_true(apiserver: FakeAPIServer, start_app) -> None:
    """Its Unschedulable patch, stuck behind a failing server, never lands after the binding."""
    apiserver.create(node("n1", cpu="1"))
    apiserver.create(pod("p1", cpu="2"))
    apiserver.fail("PATCH", r"/pods/p1/status$", status=503, times=3)  # lands on the fourth try, 1.4 s on
    running = start_app(
        {
            "apiVersion": "kubescheduler.config.k8s.io/v1",
            "kind": "KubeSchedulerConfiguration",
            "podInitialBackoffSeconds": 1,
            "podMaxBackoffSeconds": 1,
        }
    )
    wait_for(lambda: any(m == "PATCH" for m, p in apiserver.requests if p.endswith("/p1/status")), what="patch tried")
    apiserver.update(node("n1", cpu="4"))  # room now: the pod is bound while its patch is still being retried
    wait_for(lambda: bound(apiserver, "p1") == "n1", what="p1 bound")
    apiserver.clear_faults()
    assert running.app.dispatcher.flush(10)
    time.sleep(0.3)
    assert condition(apiserver, "p1", "PodScheduled")["status"] == "True"


def test_a_pod_bound_by_another_binder_keeps_podscheduled_true(apiserver: FakeAPIServer, start_app) -> None:
    """Our Unschedulable patch names the version we decided on: after a rival's binding it is not written."""
    apiserver.create(node("n1", cpu="1"))
    apiserver.create(pod("p1", cpu="2"))
    apiserver.fail("PATCH", r"/pods/p1/status$", status=503, times=2)
    running = start_app()
    wait_for(lambda: any(m == "PATCH" for m, p in apiserver.requests if p.endswith("/p1/status")), what="patch tried")
    apiserver.bind("default", "p1", {"target": {"name": "n1"}})  # another binder, while our patch is retried
    assert running.app.dispatcher.flush(10)
    time.sleep(0.3)
    assert condition(apiserver, "p1", "PodScheduled")["status"] == "True"
    assert [m for m, p in apiserver.requests if p == "/api/v1/namespaces/default/pods/p1"] == ["GET"]


def test_bad_objects_are_skipped_and_the_rest_scheduled(apiserver: FakeAPIServer, start_app, caplog) -> None:
    bad_node = node("bad-node")
    bad_node["status"]["allocatable"]["cpu"] = "lots"
    apiserver.create(bad_node)
    apiserver.create(node("good"))
    bad_pod = pod("bad-pod")
    bad_pod["spec"]["containers"][0]["resources"]["requests"]["memory"] = "12 parsecs"
    apiserver.create(bad_pod)
    odd = pod("unknown-fields")
    odd["spec"]["someFutureField"] = {"x": 1}
    odd["metadata"]["futureMeta"] = "y"
    apiserver.create(odd)
    apiserver.create(pod("fine"))
    start_app()
    wait_for(lambda: bound(apiserver, "fine") and bound(apiserver, "unknown-fields"), what="good pods bound")
    assert bound(apiserver, "fine") == "good"
    assert bound(apiserver, "bad-pod") == ""
    skipped = [r.getMessage() for r in caplog.records if "cannot be read" in r.getMessage()]
    assert any("Node bad-node" in m for m in skipped) and any("Pod default/bad-pod" in m for m in skipped)


def test_preemption_deletes_the_victim_with_a_disruption_target(apiserver: FakeAPIServer, start_app) -> None:
    apiserver.create(node("n1", cpu="1"))
    victim = pod("low", cpu="800m", priority=0, nodeName="n1")
    victim["status"] = {"phase": "Running"}
    apiserver.create(victim)
    apiserver.create(pod("high", cpu="800m", priority=1000))
    seen: list[dict] = []

    def watch_victim() -> bool:
        c = condition(apiserver, "low", "DisruptionTarget")
        if c:
            seen.append(c)
        return apiserver.get("Pod", "default", "low") is None

    start_app()
    wait_for(watch_victim, what="victim deleted")
    wait_for(lambda: bound(apiserver, "high") == "n1", timeout=15, what="preemptor bound")
    preempted = [e for e in apiserver.list("Event") if e["reason"] == "Preempted"]
    assert preempted and preempted[0]["regarding"]["name"] == "low"
    patches = [p for m, p in apiserver.requests if m == "PATCH" and p.endswith("/low/status")]
    assert patches  # DisruptionTarget written before the delete


def test_a_preemptor_waits_for_its_victims_deletion_whatever_else_is_deleted(
    apiserver: FakeAPIServer, start_app
) -> None:
    """Upstream v1.36's async preemption: while the victim's deletion is under way, another pod's deletion
    (which NodeResourcesFit says may make room) finds the preemptor held at PreEnqueue, on its way to
    backoffQ as to activeQ; it is retried once its victim is gone, with one FailedScheduling in all."""
    apiserver.create(node("a", cpu="1", side="a"))
    apiserver.create(node("b", cpu="1", side="b"))
    for name, where in (("victim", "a"), ("bystander", "b")):
        apiserver.create(pod(name, cpu="800m", priority=0, nodeName=where))
    apiserver.create(pod("preemptor", cpu="800m", priority=1000, nodeSelector={"side": "a"}))
    deletion = apiserver.hold("DELETE", "/pods/victim$")
    try:
        running = start_app()
        wait_for(lambda: condition(apiserver, "victim", "DisruptionTarget"), what="victim marked")
        apiserver.delete("Pod", "default", "bystander")
        store = running.app.store
        wait_for(lambda: store.get("Pod", "default", "bystander") is None, what="bystander's deletion seen")
        with running.app.lock:
            queued = {
                q.key: (queue, q.attempts)
                for queue, qs in running.app.scheduler.queue.pending_pods().items()
                for q in qs
            }
        assert queued["default/preemptor"] == ("gated", 1)
    finally:
        deletion.set()
    wait_for(lambda: bound(apiserver, "preemptor") == "a", what="preemptor bound")

    def reasons() -> list[str]:
        return sorted(e["reason"] for e in apiserver.list("Event") if e["regarding"]["name"] == "preemptor")

    wait_for(lambda: "Scheduled" in reasons(), what="Scheduled event")
    assert reasons() == ["FailedScheduling", "Scheduled"]


def test_shutdown_finishes_bindings_and_releases_the_lease(apiserver: FakeAPIServer, start_app) -> None:
    apiserver.create(node("n1"))
    for i in range(5):
        apiserver.create(pod(f"p{i}"))
    running = start_app(leader_elect=True, lease_duration=2.0, renew_deadline=1.5, retry_period=0.2)

    def holder() -> str:
        lease = apiserver.get("Lease", "kube-system", "kube-scheduler") or {}
        return (lease.get("spec") or {}).get("holderIdentity") or ""

    assert wait_for(holder, what="leader") == running.app.opts.identity
    wait_for(lambda: all(bound(apiserver, f"p{i}") for i in range(5)), what="bound")
    assert running.stop() == 0
    assert holder() == ""  # released: the next candidate need not wait out the lease
    assert running.app.dispatcher.pending() == 0  # queued events and patches went out before exit
    scheduled = [e for e in apiserver.list("Event") if e["reason"] == "Scheduled"]
    assert len(scheduled) == 5


def test_informers_list_while_the_scheduler_is_built_and_stop_when_it_cannot_be(
    apiserver: FakeAPIServer, kubeconfig: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The informers start before the scheduler (and its modules) are built, so the API server answers the lists
    meanwhile; an app that then fails to build leaves no informer running."""
    import kubesched.event_handlers as handlers

    def pods_listed() -> bool:
        return any(m == "GET" and p.startswith("/api/v1/pods") for m, p in list(apiserver.requests))

    seen_before_build: list[bool] = []

    def unbuildable(*args: Any, **kwargs: Any) -> Any:
        seen_before_build.append(wait_for(pods_listed, timeout=5.0))
        raise RuntimeError("no scheduler today")

    monkeypatch.setattr(handlers, "informed_scheduler", unbuildable)
    opts = RunOptions(kubeconfig=kubeconfig, secure_port=-1, leader_elect=False, qps=0, informer_backoff=fast_backoff)
    with pytest.raises(RuntimeError, match="no scheduler today"):
        SchedulerApp(load_config(None), opts)
    assert seen_before_build == [True]

    def informers_alive() -> list[str]:
        return [t.name for t in threading.enumerate() if t.name.startswith("reflector-")]

    assert wait_for(lambda: not informers_alive(), timeout=10.0), informers_alive()
