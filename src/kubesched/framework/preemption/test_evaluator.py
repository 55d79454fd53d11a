"""The victims' sort key against the comparison it stands for (more_important_pod)."""

from __future__ import annotations

import functools

from hypothesis import given
from hypothesis import strategies as st

from kubesched.framework.preemption.evaluator import importance, more_important_pod
from kubesched.framework.types import PodInfo, new_pod_info
from kubesched_testing.wrappers import make_pod

STARTS = [None, "2026-01-01T00:00:00Z", "2026-01-01T00:00:01Z", "2026-06-01T12:00:00Z"]


def pod(i: int, priority: int, start: str | None) -> PodInfo:
    obj = make_pod(f"p{i}").priority(priority).obj()
    if start is not None:
        obj.setdefault("status", {})["startTime"] = start
    return new_pod_info(obj)


def by_comparison(pods: list[PodInfo]) -> list[PodInfo]:
    """A stable sort by more_important_pod itself: ties (neither more important) keep their order."""
    cmp = lambda a, b: -1 if more_important_pod(a, b) else (1 if more_important_pod(b, a) else 0)  # noqa: E731
    return sorted(pods, key=functools.cmp_to_key(cmp))


@given(st.lists(st.tuples(st.integers(-2, 2), st.sampled_from(STARTS)), max_size=12))
def test_the_sort_key_orders_pods_as_more_important_pod_does(specs: list[tuple[int, str | None]]) -> None:
    pods = [pod(i, prio, start) for i, (prio, start) in enumerate(specs)]
    assert [p.name for p in sorted(pods, key=importance)] == [p.name for p in by_comparison(pods)]


def test_higher_priority_then_earlier_start_comes_first() -> None:
    pods = [pod(0, 1, None), pod(1, 1, STARTS[2]), pod(2, 5, STARTS[3]), pod(3, 1, STARTS[1])]
    assert [p.name for p in sorted(pods, key=importance)] == ["p2", "p3", "p1", "p0"]
