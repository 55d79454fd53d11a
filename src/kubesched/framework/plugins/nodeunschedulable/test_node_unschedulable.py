"""Cases from node_unschedulable_test.go (v1.36); case names unchanged."""

import pytest

from kubesched.framework.plugins.nodeunschedulable.node_unschedulable import (
    ERR_REASON_UNSCHEDULABLE,
    TAINT_NODE_UNSCHEDULABLE,
    new,
)
from kubesched.framework.status import Code, Status
from kubesched_testing.framework import build_snapshot, filter_statuses, new_plugin
from kubesched_testing.wrappers import make_node, make_pod


@pytest.mark.parametrize(
    ("pod", "unschedulable", "want"),
    [
        pytest.param(
            make_pod().obj(),
            True,
            Status(Code.UNSCHEDULABLE_AND_UNRESOLVABLE, ERR_REASON_UNSCHEDULABLE),
            id="Does not schedule pod to unschedulable node (node.Spec.Unschedulable==true)",
        ),
        pytest.param(make_pod().obj(), False, None, id="Schedule pod to normal node"),
        pytest.param(
            make_pod().toleration(TAINT_NODE_UNSCHEDULABLE, effect="NoSchedule", operator="").obj(),
            True,
            None,
            id="Schedule pod with toleration to unschedulable node (node.Spec.Unschedulable==true)",
        ),
        pytest.param(
            make_pod().toleration(TAINT_NODE_UNSCHEDULABLE, effect="NoExecute", operator="Exists").obj(),
            True,
            Status(Code.UNSCHEDULABLE_AND_UNRESOLVABLE, ERR_REASON_UNSCHEDULABLE),
            id="kubesched: a NoExecute toleration does not cover the NoSchedule taint",
        ),
    ],
)
def test_node_unschedulable(pod, unschedulable, want, batch):
    snap = build_snapshot([make_node("n").unschedulable(unschedulable).obj()])
    plugin = new_plugin(new, None, snap)
    assert filter_statuses(plugin, pod, snap, batch=batch) == [want]
