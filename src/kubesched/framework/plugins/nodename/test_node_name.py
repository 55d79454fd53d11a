"""Cases from node_name_test.go (v1.36); case names unchanged."""

import pytest

from kubesched.framework import events
from kubesched.framework.plugins.nodename.node_name import ERR_REASON, new
from kubesched.framework.status import Code, Status
from kubesched_testing.framework import build_snapshot, filter_statuses, new_plugin
from kubesched_testing.wrappers import make_node, make_pod


@pytest.mark.parametrize(
    ("pod", "want"),
    [
        pytest.param(make_pod().obj(), None, id="no host specified"),
        pytest.param(make_pod().node("foo").obj(), None, id="host matches"),
        pytest.param(
            make_pod().node("bar").obj(),
            Status(Code.UNSCHEDULABLE_AND_UNRESOLVABLE, ERR_REASON),
            id="host doesn't match",
        ),
    ],
)
def test_node_name(pod, want, batch):
    snap = build_snapshot([make_node("foo").obj()])
    plugin = new_plugin(new, None, snap)
    assert filter_statuses(plugin, pod, snap, batch=batch) == [want]


def test_events_to_register_node_add_without_hint():
    """With queueing hints on, only Node/Add, and no hint function: every added node retries the pod."""
    plugin = new_plugin(new, None, build_snapshot([]))
    [registration] = plugin.events_to_register()
    assert (registration.event.resource, registration.event.action_type) == (events.NODE, events.ADD)
    assert registration.queueing_hint_fn is None
