"""The parity harness's own rules for decisions it cannot compare."""

from __future__ import annotations

from kubesched.testing.parity.upstream import Attempt, _before_preemption, _saw_unlisted_terminating_pod

BLAMED = "0/4 nodes are available: preemption: not eligible due to a terminating pod on the nominated node."


def _pod(node: str, terminating: bool) -> dict:
    meta = {"name": "v", "namespace": "default"}
    if terminating:
        meta["deletionTimestamp"] = "2026-01-01T00:00:00Z"
    return {"kind": "Pod", "metadata": meta, "spec": {"nodeName": node}}


def test_a_terminating_pod_missing_from_the_listing_makes_the_decision_ambiguous() -> None:
    attempt = Attempt(pod="default/p", message=BLAMED)
    assert _saw_unlisted_terminating_pod(attempt, "n1", [_pod("n1", terminating=False)])
    assert not _saw_unlisted_terminating_pod(attempt, "n1", [_pod("n1", terminating=True)])
    assert not _saw_unlisted_terminating_pod(Attempt(pod="default/p", message="0/4 nodes are available."), "n1", [])
    assert not _saw_unlisted_terminating_pod(attempt, None, [])


def test_a_victim_is_listed_as_it_was_before_the_attempt_that_chose_it() -> None:
    victim = _pod("n1", terminating=True)
    victim["status"] = {"conditions": [{"type": "DisruptionTarget", "status": "True"}, {"type": "Ready"}]}
    restored = _before_preemption(victim)
    assert "deletionTimestamp" not in restored["metadata"]
    assert [c["type"] for c in restored["status"]["conditions"]] == ["Ready"]
    assert "deletionTimestamp" in victim["metadata"]  # the listing itself is left alone
