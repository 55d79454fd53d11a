"""Cases from scheduling_gates_test.go (v1.36); case names unchanged."""

import pytest

from kubesched.framework.interface import Handle
from kubesched.framework.plugins.schedulinggates.scheduling_gates import new
from kubesched.framework.status import Code, Status
from kubesched.framework.types import new_pod_info
from kubesched_testing.wrappers import make_pod


@pytest.mark.parametrize(
    ("pod", "want"),
    [
        pytest.param(make_pod("p").obj(), None, id="pod does not carry scheduling gates"),
        pytest.param(
            make_pod("p").scheduling_gates(["foo", "bar"]).obj(),
            Status(Code.UNSCHEDULABLE_AND_UNRESOLVABLE, "waiting for scheduling gates: [foo bar]"),
            id="pod carries scheduling gates",
        ),
    ],
)
def test_pre_enqueue(pod, want):
    plugin = new(None, Handle())
    assert plugin.pre_enqueue(new_pod_info(pod)) == want
