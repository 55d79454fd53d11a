"""`kubesched run --feature-gates GenericWorkload=true,GangScheduling=true` against kube-apiserver v1.36
serving scheduling.k8s.io/v1alpha2: a gang that fits binds whole and its PodGroup reads PodGroupScheduled;
one that does not fit binds nothing."""

from __future__ import annotations

import time
from collections.abc import Iterator
from typing import Any

import pytest

from kubesched.app import RunOptions, SchedulerApp
from kubesched.backend.kube.api import KubeAPI, load_configuration
from kubesched.config.load import load_config
from kubesched.config.trust import TRUSTED
from kubesched.release import release
from kubesched_testing.app_thread import AppThread
from kubesched_testing.controlplane import ControlPlane, assets_dir, control_plane, missing_assets_reason
from kubesched_testing.parity.gang import APISERVER_ARGS

pytestmark = [
    pytest.mark.skipif(assets_dir() is None, reason=missing_assets_reason()),
    pytest.mark.filterwarnings("ignore::urllib3.exceptions.InsecureRequestWarning"),
]
GROUPS = "/apis/scheduling.k8s.io/v1alpha2/namespaces/default/podgroups"


@pytest.fixture(scope="module")
def alpha_plane() -> Iterator[ControlPlane]:
    with control_plane(extra_apiserver_args=list(APISERVER_ARGS)) as cp:
        yield cp


def _pod(name: str, group: str, cpu: str) -> dict[str, Any]:
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": name},
        "spec": {
            "terminationGracePeriodSeconds": 0,
            "schedulingGroup": {"podGroupName": group},
            "containers": [{"name": "c", "image": "i", "resources": {"requests": {"cpu": cpu}}}],
        },
    }


def _wait(check: Any, timeout: float = 20.0) -> Any:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        got = check()
        if got:
            return got
        time.sleep(0.2)
    return check()


def test_run_places_a_gang_whole_or_not_at_all(alpha_plane: ControlPlane) -> None:
    api = KubeAPI(load_configuration(str(alpha_plane.kubeconfig_path)), qps=0)
    config = load_config(None, trust=TRUSTED, release=release("1.36", "GenericWorkload=true,GangScheduling=true"))
    app = AppThread(SchedulerApp(config, RunOptions(kubeconfig=str(alpha_plane.kubeconfig_path), secure_port=-1)))
    try:
        for i in range(2):
            node = {
                "apiVersion": "v1",
                "kind": "Node",
                "metadata": {"name": f"n{i}"},
                "status": {"capacity": {"cpu": "4", "pods": "110"}, "allocatable": {"cpu": "4", "pods": "110"}},
            }
            api.request("POST", "/api/v1/nodes", body=node)
        for name, cpu in (("fits", "2"), ("too-big", "3")):
            for i in range(3):
                api.request("POST", "/api/v1/namespaces/default/pods", body=_pod(f"{name}-{i}", name, cpu))
            group = {
                "apiVersion": "scheduling.k8s.io/v1alpha2",
                "kind": "PodGroup",
                "metadata": {"name": name},
                "spec": {"schedulingPolicy": {"gang": {"minCount": 3}}},
            }
            api.request("POST", GROUPS, body=group)

        def pods() -> dict[str, Any]:
            items = api.request("GET", "/api/v1/namespaces/default/pods").get("items") or ()
            return {p["metadata"]["name"]: p for p in items}

        _wait(lambda: all(pods()[f"fits-{i}"]["spec"].get("nodeName") for i in range(3)))
        _wait(
            lambda: all(
                any(c["type"] == "PodScheduled" for c in pods()[f"too-big-{i}"]["status"].get("conditions") or ())
                for i in range(3)
            )
        )
        now = pods()
        assert all(now[f"fits-{i}"]["spec"].get("nodeName") for i in range(3))
        assert not any(now[f"too-big-{i}"]["spec"].get("nodeName") for i in range(3))
        conditions = api.request("GET", f"{GROUPS}/fits")["status"]["conditions"]
        assert [(c["type"], c["status"]) for c in conditions] == [("PodGroupScheduled", "True")]
        failed = api.request("GET", f"{GROUPS}/too-big")["status"]["conditions"]
        assert [(c["type"], c["status"], c["reason"]) for c in failed] == [
            ("PodGroupScheduled", "False", "Unschedulable")
        ]
    finally:
        app.stop()
