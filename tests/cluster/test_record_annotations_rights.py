"""--record-annotations without the right to patch pods: one clear line, never a line per attempt."""

from __future__ import annotations

import logging

import pytest
from tests.cluster.helpers import node, pod, wait_for

from kubesched.backend.kube import annotations as ann
from kubesched.cli import main
from kubesched_testing.apiserver import FakeAPIServer

LINE = (
    '"command failed" err="--record-annotations needs the right to patch pods in all namespaces, which fake lacks: '
    "bind ClusterRole kubesched:record-annotations (deploy/optional/record-annotations.yaml) or drop "
    '--record-annotations"'
)


def _errors(caplog: pytest.LogCaptureFixture) -> list[str]:
    return [r.getMessage() for r in caplog.records if r.levelno >= logging.WARNING]


def test_run_refuses_to_start_without_the_right(
    apiserver: FakeAPIServer, kubeconfig: str, caplog: pytest.LogCaptureFixture
) -> None:
    apiserver.deny("patch", "pods")
    apiserver.create(node("a"))
    apiserver.create(pod("web"))
    args = ["run", "--kubeconfig", kubeconfig, "--leader-elect=false", "--secure-port", "0", "--record-annotations"]
    with caplog.at_level(logging.INFO):
        assert main(args) == 1
    assert _errors(caplog) == [LINE]
    assert apiserver.bindings == []  # it stopped before scheduling anything
    assert not any(m == "PATCH" for m, _ in apiserver.requests)


def test_run_starts_with_the_right_and_without_the_flag(apiserver: FakeAPIServer, start_app) -> None:
    """The check asks only when the flag is given, and a grant lets it through."""
    apiserver.create(node("a"))
    apiserver.create(pod("web"))
    start_app(record_annotations=True)
    wait_for(lambda: apiserver.bindings, what="web bound")
    assert ("POST", "/apis/authorization.k8s.io/v1/selfsubjectaccessreviews") in apiserver.requests
    apiserver.deny("patch", "pods")
    apiserver.create(pod("db"))
    start_app(record_annotations=False)
    wait_for(lambda: len(apiserver.bindings) == 2, what="db bound by the app without the flag")


def test_a_right_lost_while_running_stops_recording_with_one_line(
    apiserver: FakeAPIServer, start_app, caplog: pytest.LogCaptureFixture
) -> None:
    apiserver.create(node("a", cpu="100"))
    apiserver.create(pod("first"))
    with caplog.at_level(logging.INFO):
        start_app(record_annotations=True)
        wait_for(lambda: ann.RESULT_HISTORY in _annotations(apiserver, "first"), what="first annotated")
        apiserver.deny("patch", "pods")
        for i in range(8):
            apiserver.create(pod(f"p{i}"))
        wait_for(lambda: len(apiserver.bindings) == 9, what="every pod bound")
        wait_for(lambda: _errors(caplog), what="the error line")
        for i in range(8, 16):
            apiserver.create(pod(f"p{i}"))
        wait_for(lambda: len(apiserver.bindings) == 17, what="the later pods bound")
    [line] = _errors(caplog)
    assert line.startswith(
        '"--record-annotations stopped: bind ClusterRole kubesched:record-annotations '
        '(deploy/optional/record-annotations.yaml) or drop --record-annotations" err="pods \\"p'
    )
    assert line.endswith(
        'is forbidden: User \\"fake\\" cannot patch resource \\"pods\\" in API group \\"\\" '
        'in the namespace \\"default\\""'
    )
    # Calls already under way at the first 403 may still go out; none for an attempt made after it.
    assert _pod_patches(apiserver, [f"p{i}" for i in range(8, 16)]) == 0
    assert all(ann.RESULT_HISTORY not in _annotations(apiserver, f"p{i}") for i in range(16))


def _annotations(apiserver: FakeAPIServer, name: str) -> dict[str, str]:
    obj = apiserver.get("Pod", "default", name) or {}
    return dict((obj.get("metadata") or {}).get("annotations") or {})


def _pod_patches(apiserver: FakeAPIServer, names: list[str]) -> int:
    """PATCHes of these pods themselves (annotations), not of their status."""
    paths = {f"/api/v1/namespaces/default/pods/{n}" for n in names}
    return sum(1 for m, p in apiserver.requests if m == "PATCH" and p in paths)
