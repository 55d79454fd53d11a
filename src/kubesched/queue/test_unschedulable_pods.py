"""The unschedulable pool's index by rejecting plugin finds what a pass over the pool finds, in the same order."""

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from kubesched.framework.types import new_pod_info
from kubesched.queue.queued_pod_info import QueuedPodInfo
from kubesched.queue.unschedulable_pods import UnschedulablePods
from kubesched_testing.wrappers import make_pod

PLUGINS = ("NodeResourcesFit", "NodeAffinity", "TaintToleration", "InterPodAffinity", "SchedulingGates")
PODS = [new_pod_info(make_pod(f"p{i}").obj()) for i in range(8)]

_plugins = st.frozensets(st.sampled_from(PLUGINS), max_size=2)
_op = st.one_of(
    st.tuples(st.just("add"), st.integers(0, 7), _plugins, _plugins, st.booleans()),
    st.tuples(st.just("remove"), st.integers(0, 7)),
    st.tuples(st.just("take"), st.integers(0, 7)),
    st.tuples(st.just("delete"), st.integers(0, 7)),
    st.tuples(st.just("gate"), st.integers(0, 7)),
    st.tuples(st.just("release"), st.integers(0, 7)),
    st.tuples(st.just("leftover"), st.floats(0, 1000)),
)


def _scan(pool: UnschedulablePods, interested: frozenset[str]) -> list[QueuedPodInfo]:
    """What candidates() gave before the index: a pass over the pool."""
    return [
        q
        for q in pool.pods.values()
        if not (q.unschedulable_plugins or q.pending_plugins)
        or not interested.isdisjoint(q.unschedulable_plugins)
        or not interested.isdisjoint(q.pending_plugins)
    ]


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(_op, max_size=40), st.lists(st.frozensets(st.sampled_from(PLUGINS)), min_size=1, max_size=4))
def test_candidates_are_the_pool_pass(ops: list[tuple], events: list[frozenset[str]]) -> None:
    pool = UnschedulablePods(300.0)
    held: dict[int, QueuedPodInfo] = {}
    for step, op in enumerate(ops):
        kind, *args = op
        if kind == "add":
            i, unschedulable, pending, gated = args
            qpi = QueuedPodInfo(PODS[i], float(step), step, unschedulable_plugins=set(unschedulable))
            qpi.pending_plugins, qpi.gated, qpi.gating_plugin = set(pending), gated, "SchedulingGates" if gated else ""
            held[i] = qpi
            pool.add(qpi)
        elif kind == "leftover":
            pool.pop_leftover(args[0])
        elif args[0] in held:
            qpi = held[args[0]]
            if kind == "remove":
                pool.remove(qpi)
            elif kind == "take":
                pool.take(qpi.pod_info.uid)
            elif kind == "delete":
                pool.delete(qpi.pod_info.uid)
            elif kind == "gate":
                pool.gate(qpi, "SchedulingGates")
            else:
                pool.release(qpi)
        for interested in events:
            seen = not interested.isdisjoint(pool._gating_seen)
            gated = [q for q in pool.gated.values() if q.gating_plugin in interested] if seen else []
            assert pool.candidates(interested) == _scan(pool, interested) + gated
