"""Two `kubesched run` processes with leader election against one stand-in API server."""

from __future__ import annotations

import collections
import signal
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from tests.cluster.helpers import node, pod, wait_for

from kubesched_testing.apiserver import FakeAPIServer

LEASE_FLAGS = [
    "--leader-elect=true",
    "--leader-elect-lease-duration=2s",
    "--leader-elect-renew-deadline=1500ms",
    "--leader-elect-retry-period=250ms",
    "--secure-port=0",
]


@pytest.fixture
def launch(apiserver: FakeAPIServer, tmp_path: Path) -> Iterator:
    procs: list[subprocess.Popen] = []

    def start(token: str) -> subprocess.Popen:
        cfg = tmp_path / f"kubeconfig-{token}"
        cfg.write_text(apiserver.kubeconfig(token))
        proc = subprocess.Popen(
            [sys.executable, "-m", "kubesched", "run", "--kubeconfig", str(cfg), *LEASE_FLAGS],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE,
            text=True,
        )
        procs.append(proc)
        return proc

    yield start
    for p in procs:
        if p.poll() is None:
            p.kill()
        p.wait(10)
        if p.stderr is not None:
            p.stderr.close()


def holder(api: FakeAPIServer) -> str:
    lease = api.get("Lease", "kube-system", "kube-scheduler") or {}
    return (lease.get("spec") or {}).get("holderIdentity") or ""


def all_bound(api: FakeAPIServer, names: list[str]) -> bool:
    bound = {key for key, _, _ in api.bindings}
    return all(f"default/{n}" in bound for n in names)


def test_only_the_leader_binds_and_the_other_takes_over(apiserver: FakeAPIServer, launch) -> None:
    for i in range(3):
        apiserver.create(node(f"n{i}"))
    first = launch("a")
    wait_for(lambda: holder(apiserver), timeout=30, what="a leader")
    second = launch("b")
    batch1 = [f"p{i}" for i in range(20)]
    for name in batch1:
        apiserver.create(pod(name))
    wait_for(lambda: all_bound(apiserver, batch1), timeout=30, what="first batch bound")
    assert {token for _, _, token in apiserver.bindings} == {"a"}
    first.send_signal(signal.SIGKILL)
    first.wait(10)
    batch2 = [f"q{i}" for i in range(10)]
    for name in batch2:
        apiserver.create(pod(name))
    wait_for(lambda: all_bound(apiserver, batch2), timeout=30, what="second batch bound by the new leader")
    tokens = {key: token for key, _, token in apiserver.bindings}
    assert {tokens[f"default/{n}"] for n in batch2} == {"b"}
    counts = collections.Counter(key for key, _, _ in apiserver.bindings)
    assert max(counts.values()) == 1  # no pod was bound twice
    assert second.poll() is None


def test_a_leader_that_cannot_renew_stops_and_exits(apiserver: FakeAPIServer, launch) -> None:
    apiserver.create(node("n0"))
    first = launch("a")
    wait_for(lambda: holder(apiserver), timeout=30, what="a leader")
    apiserver.fail("PUT", r"/leases/kube-scheduler$", status=500, times=10**6, token="a")
    apiserver.fail("GET", r"/leases/kube-scheduler$", status=500, times=10**6, token="a")
    assert first.wait(15) == 1
    assert first.stderr is not None and "leaderelection lost" in first.stderr.read()
    apiserver.create(pod("after"))
    second = launch("b")
    wait_for(lambda: all_bound(apiserver, ["after"]), timeout=30, what="the next leader binds")
    assert [token for key, _, token in apiserver.bindings if key == "default/after"] == ["b"]
    assert second.poll() is None
