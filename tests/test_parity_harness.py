"""The parity harness's own rules for decisions it cannot compare."""

from __future__ import annotations

from types import SimpleNamespace

from kubesched.testing.parity.upstream import (
    Attempt,
    _before_preemption,
    _saw_unlisted_terminating_pod,
    _victims_deleted_since,
)

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


def test_other_preemptions_victims_gone_during_the_attempt_are_named() -> None:
    other = Attempt(pod="default/q", victims=["default/v1", "default/v2"])
    mine = Attempt(pod="default/p", victims=["default/own"])
    alog = SimpleNamespace(
        attempts={"default/q": [other], "default/p": [mine]},
        deleted_at={"default/v1": 5, "default/v2": 20, "default/own": 30, "default/bystander": 40},
    )
    assert _victims_deleted_since(alog, 10, {"default/own"}) == ["default/v2"]
    assert _victims_deleted_since(alog, 25, {"default/own"}) == []
