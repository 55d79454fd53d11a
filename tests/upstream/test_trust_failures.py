"""Failures of trust against a real v1.36 API server: one clear line each, never a traceback.

An untrusted certificate, a certificate for another name, a token the server does not
know and a user RBAC grants nothing: `kubesched snapshot` says which in one line and
exits 1; `kubesched run` says it once per backoff for all its informers, keeps
retrying and, once the user is granted its role, syncs and binds.
"""

from __future__ import annotations

import contextlib
import shutil
import signal
import ssl
import subprocess
import sys
import time
import urllib.error
import urllib.request
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml

from kubesched.backend.kube.api import APIError, KubeAPI
from kubesched.backend.kube.resources import WATCHED
from kubesched.serving import self_signed_certificate
from kubesched_testing.controlplane import NOBODY, NOBODY_TOKEN, TOKEN, ControlPlane, free_port

pytestmark = pytest.mark.filterwarnings("ignore::urllib3.exceptions.InsecureRequestWarning")
SCHEDULER = "trust-test-scheduler"
RBAC = "/apis/rbac.authorization.k8s.io/v1"
ROLE = "trust-test-kubesched"
UNTRUSTED = "the server's certificate is not trusted (self-signed certificate in certificate chain): check certificate-authority in the kubeconfig"  # noqa: E501
MISMATCH = "the server's certificate does not cover this address (Hostname mismatch, certificate is not valid for 'localhost'): check the server address in the kubeconfig"  # noqa: E501
UNAUTHORIZED = "401 Unauthorized, the server did not accept the credentials: check the token (or client certificate) of the kubeconfig's user; it may have expired"  # noqa: E501
FORBIDDEN = f'403 Forbidden, user "{NOBODY}" may not list '


def _kubeconfig(path: Path, server: str, ca: Path, token: str) -> Path:
    path.write_text(
        yaml.safe_dump(
            {
                "apiVersion": "v1",
                "kind": "Config",
                "clusters": [{"name": "c", "cluster": {"server": server, "certificate-authority": str(ca)}}],
                "users": [{"name": "u", "user": {"token": token}}],
                "contexts": [{"name": "c", "context": {"cluster": "c", "user": "u"}}],
                "current-context": "c",
            }
        )
    )
    return path


@pytest.fixture
def kubeconfigs(control_plane: ControlPlane, tmp_path: Path) -> dict[str, tuple[Path, str, str]]:
    """Per case: a kubeconfig, the server it names, and what the line must say."""
    ca = control_plane.workdir / "certs" / "apiserver.crt"  # the API server's own CA, verified in full
    wrong_ca, _ = self_signed_certificate(str(tmp_path / "wrong"))
    url, port = control_plane.url, control_plane.apiserver_port
    cases = {
        "untrusted": (url, Path(wrong_ca), TOKEN, UNTRUSTED),
        "other-name": (f"https://localhost:{port}", ca, TOKEN, MISMATCH),  # its certificate names 127.0.0.1
        "bogus-token": (url, ca, "no-such-token", UNAUTHORIZED),
        "no-rights": (url, ca, NOBODY_TOKEN, FORBIDDEN),
        "admin": (url, ca, TOKEN, ""),
    }
    return {
        name: (_kubeconfig(tmp_path / f"{name}.kubeconfig", server, cafile, token), server, said)
        for name, (server, cafile, token, said) in cases.items()
    }


def _kubesched(*args: str, stdout: Any = subprocess.PIPE, stderr: Any = subprocess.PIPE) -> subprocess.Popen[str]:
    return subprocess.Popen([sys.executable, "-m", "kubesched", *args], stdout=stdout, stderr=stderr, text=True)


def test_the_admin_kubeconfig_verifies_the_server_in_full(kubeconfigs: dict[str, tuple[Path, str, str]]) -> None:
    """The other cases differ from this one in one thing each: so it is that thing that fails them."""
    proc = _kubesched("snapshot", "--kubeconfig", str(kubeconfigs["admin"][0]))
    out, err = proc.communicate(timeout=60)
    assert proc.returncode == 0, err
    assert "kind: Namespace" in out


@pytest.mark.parametrize("case", ["untrusted", "other-name", "bogus-token", "no-rights"])
def test_snapshot_says_what_failed_in_one_line_and_exits_1(
    kubeconfigs: dict[str, tuple[Path, str, str]], case: str
) -> None:
    path, server, said = kubeconfigs[case]
    proc = _kubesched("snapshot", "--kubeconfig", str(path))
    out, err = proc.communicate(timeout=60)
    assert (proc.returncode, out) == (1, "")
    assert err.count("\n") == 1, err
    assert err.startswith(f"kubesched: snapshot: {server}: {said}")
    if case == "no-rights":
        assert err.endswith(f'list namespaces: check the RBAC role bound to user "{NOBODY}"\n')


def _lines(path: Path) -> list[str]:
    return path.read_text().splitlines()


def _wait(cond: Callable[[], Any], what: str, timeout: float = 60.0) -> Any:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        value = cond()
        if value:
            return value
        time.sleep(0.1)
    raise AssertionError(f"timed out waiting for {what}")


def _config(tmp_path: Path) -> Path:
    path = tmp_path / "config.yaml"
    path.write_text(
        yaml.safe_dump(
            {
                "apiVersion": "kubescheduler.config.k8s.io/v1",
                "kind": "KubeSchedulerConfiguration",
                "leaderElection": {"leaderElect": False},
                "profiles": [{"schedulerName": SCHEDULER}],
            }
        )
    )
    return path


@pytest.fixture
def run(tmp_path: Path) -> Iterator[Callable[[Path], tuple[subprocess.Popen[str], Path]]]:
    """`kubesched run` with a kubeconfig, its standard error going to a file; stopped at the end if still running."""
    started: list[subprocess.Popen[str]] = []

    def start(kubeconfig: Path, *flags: str) -> tuple[subprocess.Popen[str], Path]:
        log = tmp_path / f"run-{len(started)}.log"
        with log.open("w") as stderr:
            proc = _kubesched(
                "run",
                "--kubeconfig",
                str(kubeconfig),
                f"--config={_config(tmp_path)}",
                "--secure-port=0",
                *flags,
                stdout=subprocess.DEVNULL,
                stderr=stderr,
            )
        started.append(proc)
        return proc, log

    yield start
    for proc in started:
        if proc.poll() is None:
            proc.kill()
            proc.wait(10)


@pytest.mark.parametrize("case", ["untrusted", "bogus-token", "no-rights"])
def test_run_says_it_once_per_backoff_keeps_trying_and_stops_on_sigterm(
    kubeconfigs: dict[str, tuple[Path, str, str]], run: Any, case: str
) -> None:
    path, server, said = kubeconfigs[case]
    proc, log = run(path)
    _wait(lambda: len([x for x in _lines(log) if "Failed to watch" in x]) >= 2, "a second try's line", timeout=30)
    time.sleep(2.0)
    assert proc.poll() is None  # still trying, never given up
    proc.send_signal(signal.SIGTERM)
    assert proc.wait(15) == 1  # as kube-scheduler: stopped before its informers synced
    lines = _lines(log)
    assert not [x for x in lines if "Traceback" in x or x.startswith(" ")], lines
    failed = [x for x in lines if "Failed to watch" in x]
    # kube-scheduler logs a line per informer per try (tries 0.8 s, 1.6 s, 3.2 s... apart).
    assert 2 <= len(failed) <= 6, lines
    first = failed[0]
    assert first.startswith(f'ERROR kubesched.backend.kube.reflector: "Failed to watch" err="{server}: ')
    assert said.replace('"', '\\"') in first
    assert f"informers={len(WATCHED)} " in first  # one line for all: every informer failed, and none died
    assert lines[-1] == "ERROR kubesched.app: informers did not sync before stopping"


def _grant_kubesched_role(api: KubeAPI, user: str) -> None:
    """deploy/rbac.yaml's ClusterRole, under a name of this test's, bound to `user`."""
    docs = yaml.safe_load_all((Path(__file__).parents[2] / "deploy" / "rbac.yaml").read_text())
    role = next(d for d in docs if d and d.get("kind") == "ClusterRole")
    role["metadata"] = {"name": ROLE}
    api.request("POST", f"{RBAC}/clusterroles", body=role)
    api.request(
        "POST",
        f"{RBAC}/clusterrolebindings",
        body={
            "apiVersion": "rbac.authorization.k8s.io/v1",
            "kind": "ClusterRoleBinding",
            "metadata": {"name": ROLE},
            "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole", "name": ROLE},
            "subjects": [{"apiGroup": "rbac.authorization.k8s.io", "kind": "User", "name": user}],
        },
    )


def test_run_syncs_and_binds_once_rbac_grants_its_role(
    kubeconfigs: dict[str, tuple[Path, str, str]], admin_api: KubeAPI, run: Any
) -> None:
    proc, log = run(kubeconfigs["no-rights"][0])
    _wait(lambda: any(FORBIDDEN.replace('"', '\\"') in x for x in _lines(log)), "the 403 line", timeout=30)
    node, pod = "trust-test-node", "trust-test-pod"
    try:
        _grant_kubesched_role(admin_api, NOBODY)
        admin_api.request(
            "POST",
            "/api/v1/nodes",
            body={"apiVersion": "v1", "kind": "Node", "metadata": {"name": node, "labels": {"trust-test": "yes"}}},
        )
        alloc = {"cpu": "2", "memory": "4Gi", "pods": "110"}
        admin_api.request(
            "PATCH",
            f"/api/v1/nodes/{node}/status",
            body={"status": {"allocatable": alloc, "capacity": alloc}},
            content_type="application/merge-patch+json",
        )
        spec = {
            "schedulerName": SCHEDULER,
            "nodeSelector": {"trust-test": "yes"},  # not a node another test left in the shared control plane
            "containers": [{"name": "c", "image": "busybox", "resources": {"requests": {"cpu": "100m"}}}],
            "terminationGracePeriodSeconds": 0,
        }
        admin_api.request(
            "POST",
            "/api/v1/namespaces/default/pods",
            body={"apiVersion": "v1", "kind": "Pod", "metadata": {"name": pod}, "spec": spec},
        )
        # The informers back off at most 30 s; the last of them tried after 2 to 3 s of failures.
        bound = _wait(
            lambda: admin_api.request("GET", f"/api/v1/namespaces/default/pods/{pod}")["spec"].get("nodeName"),
            "the pod bound once the role is granted",
            timeout=60,
        )
        assert bound == node
        proc.send_signal(signal.SIGTERM)
        assert proc.wait(15) == 0
        lines = _lines(log)
        assert not [x for x in lines if "Traceback" in x], lines
    finally:
        for path in (
            f"/api/v1/namespaces/default/pods/{pod}",
            f"/api/v1/nodes/{node}",
            f"{RBAC}/clusterrolebindings/{ROLE}",
            f"{RBAC}/clusterroles/{ROLE}",
        ):
            with contextlib.suppress(APIError):
                admin_api.request("DELETE", path, query={"gracePeriodSeconds": "0"} if "/pods/" in path else None)


def _ready(port: int) -> bool:
    context = ssl.create_default_context()
    context.check_hostname, context.verify_mode = False, ssl.CERT_NONE
    try:
        with urllib.request.urlopen(f"https://127.0.0.1:{port}/readyz", timeout=2, context=context) as resp:
            return bool(resp.status == 200)
    except (OSError, urllib.error.HTTPError):
        return False


def test_run_trusts_the_server_once_the_ca_file_is_put_right(
    control_plane: ControlPlane, kubeconfigs: dict[str, tuple[Path, str, str]], run: Any, tmp_path: Path
) -> None:
    """The certificate-authority file is read again for each new connection: fixing it needs no restart."""
    ca = tmp_path / "ca.crt"
    wrong, _ = self_signed_certificate(str(tmp_path / "wrong"))
    shutil.copy(wrong, ca)
    path = _kubeconfig(tmp_path / "kubeconfig", control_plane.url, ca, TOKEN)
    port = free_port()
    proc, log = run(path, f"--secure-port={port}", "--bind-address=127.0.0.1")
    _wait(lambda: any(UNTRUSTED in x for x in _lines(log)), "the untrusted certificate's line", timeout=30)
    assert not _ready(port)
    shutil.copy(control_plane.workdir / "certs" / "apiserver.crt", ca)
    _wait(lambda: _ready(port), "informers synced once the CA file is right", timeout=60)
    proc.send_signal(signal.SIGTERM)
    assert proc.wait(15) == 0
    assert not [x for x in _lines(log) if "Traceback" in x]
