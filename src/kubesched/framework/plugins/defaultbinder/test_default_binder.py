"""Cases from default_binder_test.go (v1.36); case names unchanged."""

from typing import cast

import pytest

from kubesched.framework.cycle_state import CycleState
from kubesched.framework.interface import APIClient, Handle
from kubesched.framework.plugins.defaultbinder.default_binder import new
from kubesched.framework.status import Code
from kubesched.framework.types import new_pod_info
from kubesched_testing.wrappers import make_pod

NODE = "foohost.kubernetes.mydomain.com"


class FakeClient:
    def __init__(self, inject_err=None):
        self.inject_err = inject_err
        self.bindings = []

    def bind(self, pod, node_name):
        if self.inject_err is not None:
            raise self.inject_err
        self.bindings.append((pod.namespace, pod.name, node_name))


@pytest.mark.parametrize(
    ("inject_err", "want_bindings"),
    [
        pytest.param(None, [("ns", "foo", NODE)], id="successful"),
        pytest.param(RuntimeError("binding error"), [], id="binding error"),
    ],
)
def test_default_binder(inject_err, want_bindings):
    client = FakeClient(inject_err)
    binder = new(None, Handle(client=cast(APIClient, client)))  # the one method binding uses
    status = binder.bind(CycleState(), new_pod_info(make_pod("foo", "ns").obj()), NODE)
    if inject_err is None:
        assert status is None
    else:
        assert status is not None and status.code == Code.ERROR and "binding error" in status.message()
    assert client.bindings == want_bindings
