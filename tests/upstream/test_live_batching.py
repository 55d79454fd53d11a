"""OpportunisticBatching in `kubesched run` beside kube-scheduler v1.36 on one real cluster.

Each scheduler has its own name and nodes of distinct sizes (so the ranking has no ties);
a burst of identical one-to-a-node pods (a host port) goes to each. Both must place them
on the same nodes, and both must have taken hints: upstream says so in its log, kubesched
in its batch metrics. With `--feature-gates OpportunisticBatching=false` kubesched takes none.
"""

from __future__ import annotations

import time
from collections.abc import Iterator
from typing import Any

import pytest
from prometheus_client import generate_latest

from kubesched.app import RunOptions, SchedulerApp
from kubesched.backend.kube.api import KubeAPI
from kubesched.config.load import load_config
from kubesched.config.trust import TRUSTED
from kubesched_testing.app_thread import AppThread
from kubesched_testing.cluster import with_feature_gates
from kubesched_testing.controlplane import ControlPlane, reset_cluster

pytestmark = pytest.mark.filterwarnings("ignore::urllib3.exceptions.InsecureRequestWarning")
OURS, THEIRS = "kubesched", "upstream"
PODS = "/api/v1/namespaces/default/pods"
CPUS = (2, 3, 4, 5, 6)
HINT = "OpportunisticBatch provided node hint"


def _config(name: str) -> dict[str, Any]:
    return {
        "apiVersion": "kubescheduler.config.k8s.io/v1",
        "kind": "KubeSchedulerConfiguration",
        "leaderElection": {"leaderElect": False},
        "profiles": [
            {
                "schedulerName": name,
                "pluginConfig": [{"name": "PodTopologySpread", "args": {"defaultingType": "List"}}],
            }
        ],
    }


def _nodes(api: KubeAPI, side: str) -> None:
    for i, cpu in enumerate(CPUS):
        name = f"{side}-n{i}"
        alloc = {"cpu": str(cpu), "memory": "8Gi", "pods": "110"}
        api.request(
            "POST",
            "/api/v1/nodes",
            body={"apiVersion": "v1", "kind": "Node", "metadata": {"name": name, "labels": {"side": side}}},
        )
        api.request(
            "PATCH",
            f"/api/v1/nodes/{name}/status",
            body={"status": {"allocatable": alloc, "capacity": alloc}},
            content_type="application/merge-patch+json",
        )


def _pods(api: KubeAPI, side: str) -> None:
    for i in range(len(CPUS)):
        container = {
            "name": "c",
            "image": "busybox",
            "resources": {"requests": {"cpu": "500m"}},
            "ports": [{"containerPort": 8080, "hostPort": 8080}],
        }
        spec = {"schedulerName": side, "nodeSelector": {"side": side}, "containers": [container]}
        meta = {"name": f"{side}-p{i}", "namespace": "default"}
        api.request("POST", PODS, body={"apiVersion": "v1", "kind": "Pod", "metadata": meta, "spec": spec})


def _placements(api: KubeAPI, side: str) -> dict[str, str]:
    out = {}
    for p in api.request("GET", PODS).get("items") or ():
        name = p["metadata"]["name"]
        if name.startswith(f"{side}-") and p["spec"].get("nodeName"):
            out[name.removeprefix(f"{side}-")] = p["spec"]["nodeName"].removeprefix(f"{side}-")
    return out


def _wait_all_bound(api: KubeAPI, side: str) -> dict[str, str]:
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        got = _placements(api, side)
        if len(got) == len(CPUS):
            return got
        time.sleep(0.1)
    raise AssertionError(f"{side}'s pods not all bound: {_placements(api, side)}")


@pytest.fixture
def cluster(control_plane: ControlPlane, admin_api: KubeAPI) -> Iterator[KubeAPI]:
    reset_cluster(admin_api)
    yield admin_api
    reset_cluster(admin_api)


@pytest.mark.parametrize("batching", [True, False])
def test_run_batches_identical_pods_where_upstream_does(
    control_plane: ControlPlane, cluster: KubeAPI, batching: bool
) -> None:
    for side in (OURS, THEIRS):
        _nodes(cluster, side)
    config = with_feature_gates(load_config(_config(OURS), trust=TRUSTED), {"OpportunisticBatching": batching})
    app = SchedulerApp(config, RunOptions(kubeconfig=str(control_plane.kubeconfig_path), secure_port=-1))
    ours = AppThread(app)
    theirs = control_plane.start_scheduler(_config(THEIRS), verbosity=3)
    try:
        time.sleep(1.0)  # both schedulers' node informers have the nodes before any pod comes
        for side in (OURS, THEIRS):
            _pods(cluster, side)
        mine, upstream = _wait_all_bound(cluster, OURS), _wait_all_bound(cluster, THEIRS)
        # Largest node first, then the next: LeastAllocated on nodes of distinct sizes, one pod each.
        assert mine == upstream == {f"p{i}": f"n{len(CPUS) - 1 - i}" for i in range(len(CPUS))}
        theirs_hints = theirs.log_path.read_text().count(HINT)
        text = generate_latest(app.metrics.registry).decode()
        used = [
            float(line.rsplit(" ", 1)[1])
            for line in text.splitlines()
            if line.startswith("scheduler_batch_attempts_total{") and 'result="hint_used"' in line
        ]
        assert theirs_hints > 0
        if batching:
            assert used and used[0] > 0, text
        else:
            assert not used and "scheduler_batch_attempts_total{" not in text
    finally:
        assert ours.stop() == 0
        theirs.stop()
