"""Cases from priority_sort_test.go (v1.36); case names unchanged."""

import pytest

from kubesched.framework.interface import Handle
from kubesched.framework.plugins.queuesort.priority_sort import new
from kubesched.framework.types import new_pod_info
from kubesched.queue.scheduling_queue import QueuedPodInfo
from kubesched_testing.wrappers import make_pod

LOW, HIGH = 10, 100
T1, T2 = 1000.0, 1001.0


def queued(priority, timestamp=0.0, seq=0):
    return QueuedPodInfo(new_pod_info(make_pod().priority(priority).obj()), timestamp, seq)


@pytest.mark.parametrize(
    ("p1", "p2", "expected"),
    [
        pytest.param(queued(LOW), queued(HIGH), False, id="p1.priority less than p2.priority"),
        pytest.param(queued(HIGH), queued(LOW), True, id="p1.priority greater than p2.priority"),
        pytest.param(
            queued(HIGH, T1), queued(HIGH, T2), True, id="equal priority. p1 is added to schedulingQ earlier than p2"
        ),
        pytest.param(
            queued(HIGH, T2), queued(HIGH, T1), False, id="equal priority. p2 is added to schedulingQ earlier than p1"
        ),
    ],
)
def test_less(p1, p2, expected):
    plugin = new(None, Handle())
    assert plugin.less(p1, p2) is expected
    # The heap key orders the same way; it breaks exact ties by arrival, which `less` leaves open.
    assert (plugin.sort_key(p1) < plugin.sort_key(p2)) is expected
