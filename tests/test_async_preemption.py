"""Async preemption (v1.36): a preemptor waits at DefaultPreemption's PreEnqueue until its victims are gone.

Whatever event moves it meanwhile, on its way to activeQ or to backoffQ (which Pop may
take pods from), it is held back; the deletion of its last victim lets it through.
"""

from __future__ import annotations

from typing import Any

from kubesched_testing.cluster import Harness, new_test_cluster
from kubesched_testing.wrappers import make_node, make_pod


def cluster() -> Harness:
    """Node a holds the victim, node b (which the preemptor's selector rules out) a bystander."""
    nodes = [make_node(n).label("side", n).capacity({"cpu": "1"}).obj() for n in ("a", "b")]
    pods = [
        make_pod(p).node(n).priority(0).req({"cpu": "800m"}).obj() for p, n in (("victim", "a"), ("bystander", "b"))
    ]
    tc = new_test_cluster(nodes, pods)
    tc.sched.run(until=1)
    tc.create(make_pod("preemptor").priority(1000).req({"cpu": "800m"}).node_selector({"side": "a"}).obj())
    return tc


def test_a_deletion_elsewhere_leaves_the_preemptor_waiting_for_its_victim() -> None:
    tc = cluster()
    queue = tc.sched.queue
    first = queue.pop()
    assert first is not None
    tc.sched.schedule_one(first)  # PostFilter nominates a; the victim's eviction is yet to run
    # NodeResourcesFit says any assigned pod's deletion may make room: the preemptor, backing off, is
    # sent towards backoffQ, but PreEnqueue holds it, or Pop would take it out of backoffQ at once.
    tc.cluster.delete("Pod", "default", "bystander")
    assert queue.pop() is None
    assert [q.key for q in queue.pending_pods()["gated"]] == ["default/preemptor"]
    tc.sched.run(until=60)
    assert tc.cluster.get("Pod", "default", "victim") is None
    outcomes = [(o.result, o.node) for o in tc.recorder.outcomes if o.pod.name == "preemptor"]
    assert outcomes == [("Unschedulable", None), ("Scheduled", "a")]


def test_the_victims_update_leaves_the_preemptor_waiting_its_deletion_lets_it_through() -> None:
    tc = cluster()
    queue = tc.sched.queue
    seen: list[tuple[str, str]] = []

    def where_the_preemptor_is(kind: str, event: str, old: Any, new: Any) -> None:
        if kind == "Pod" and (new or old)["metadata"]["name"] == "victim":
            pending = queue.pending_pods()
            seen.append((event, next(k for k, qs in pending.items() for q in qs if q.key == "default/preemptor")))

    tc.cluster.subscribe(where_the_preemptor_is)  # after the scheduler's own handlers
    tc.sched.run(until=60)
    # The DisruptionTarget patch is an assigned pod's update no rejecting plugin cares for; the
    # deletion of the last victim makes room, and PreEnqueue no longer holds the preemptor back.
    assert seen == [("MODIFIED", "unschedulable"), ("DELETED", "backoff")]
    outcomes = [(o.result, o.node) for o in tc.recorder.outcomes if o.pod.name == "preemptor"]
    assert outcomes == [("Unschedulable", None), ("Scheduled", "a")]
