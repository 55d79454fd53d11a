"""PrioritySort: higher priority first, then earlier enqueue time (queuesort/priority_sort.go)."""

from __future__ import annotations

from typing import Any, Final

from kubesched.config import names
from kubesched.framework.interface import Handle, QueueSortPlugin

NAME: Final = names.PRIORITY_SORT


class PrioritySort(QueueSortPlugin):
    NAME = NAME

    def less(self, a: Any, b: Any) -> bool:
        p1, p2 = a.pod_info.priority, b.pod_info.priority
        return p1 > p2 or (p1 == p2 and a.timestamp < b.timestamp)

    @staticmethod
    def sort_key(qp: Any) -> tuple[int, float, int]:
        """The same order as `less`, as a key for heapq; `seq` breaks exact timestamp ties by arrival."""
        return (-qp.pod_info.priority, qp.timestamp, qp.seq)


def new(args: Any, handle: Handle) -> PrioritySort:
    return PrioritySort()
