"""A real Kubernetes control plane on loopback (etcd, kube-apiserver, optionally kube-scheduler).

Tests, the parity harness and the fault suite use it to ask upstream itself. The
binaries come from `KUBESCHED_K8S_ASSETS` (a folder holding `etcd`,
`kube-apiserver` and `kube-scheduler`, as `../shared/k8s/install.sh` prints it).
Everything runs as child processes with a private data folder; `stop()` ends them.
"""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import signal
import socket
import subprocess
import tempfile
import time
import urllib.request
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

from kubesched.backend.kube.api import KubeAPI
from kubesched.backend.kube.resources import BY_KIND, Resource

ASSETS_ENV = "KUBESCHED_K8S_ASSETS"
TOKEN = "kubesched-admin-token"
# A user the API server knows but RBAC grants nothing: for what a scheduler without its role does.
NOBODY_TOKEN, NOBODY = "kubesched-nobody-token", "nobody"
BINARIES = ("etcd", "kube-apiserver", "kube-scheduler")
# Read by kube-controller-manager's resourceclaim controller, never by the scheduler: not among BY_KIND.
RESOURCE_CLAIM_TEMPLATE = Resource("ResourceClaimTemplate", "resource.k8s.io/v1", "resourceclaimtemplates", True)


def kubeconfig_text(server: str, token: str) -> str:
    """A kubeconfig for `server` with a bearer token, its certificate unchecked (a loopback test server's)."""
    return yaml.safe_dump(
        {
            "apiVersion": "v1",
            "kind": "Config",
            "clusters": [{"name": "local", "cluster": {"server": server, "insecure-skip-tls-verify": True}}],
            "users": [{"name": "admin", "user": {"token": token}}],
            "contexts": [{"name": "local", "context": {"cluster": "local", "user": "admin"}}],
            "current-context": "local",
        }
    )


class ControlPlaneError(RuntimeError):
    """A binary is missing or a component did not come up; the message says which and shows its log tail."""


def assets_dir() -> Path | None:
    """The folder named by KUBESCHED_K8S_ASSETS when it holds all three binaries, else None."""
    raw = os.environ.get(ASSETS_ENV, "")
    if not raw:
        return None
    path = Path(raw)
    if all((path / b).is_file() and os.access(path / b, os.X_OK) for b in BINARIES):
        return path
    return None


def missing_assets_reason() -> str:
    raw = os.environ.get(ASSETS_ENV, "")
    if not raw:
        return f"{ASSETS_ENV} is not set (export {ASSETS_ENV}=$(../shared/k8s/install.sh) to run against real v1.36)"
    return f"{ASSETS_ENV}={raw} does not hold executable {', '.join(BINARIES)}"


def scheduler_binary(minor: str = "1.36") -> Path | None:
    """kube-scheduler of release `minor`: v1.36's among the assets; an older one from $KUBESCHED_K8S_SCHEDULER_V1_35
    (for 1.35) or beside the assets where `install.sh 1.35` unpacks it (the v1.35 folder next to v1.36's)."""
    assets = assets_dir()
    if minor == "1.36":
        return assets / "kube-scheduler" if assets is not None else None
    raw = os.environ.get(f"KUBESCHED_K8S_SCHEDULER_V{minor.replace('.', '_')}", "")
    candidates = [Path(raw) / "kube-scheduler"] if raw else []
    if assets is not None:
        candidates.append(assets.parent / f"v{minor}" / "kube-scheduler")
    return next((c for c in candidates if c.is_file() and os.access(c, os.X_OK)), None)


def missing_scheduler_reason(minor: str) -> str:
    if assets_dir() is None:
        return missing_assets_reason()
    return f"no kube-scheduler v{minor} (run ../shared/k8s/install.sh {minor}; it unpacks beside {ASSETS_ENV})"


def free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def on_free_ports(start: Callable[[], None], attempts: int = 3) -> None:
    """Runs `start` again when its process lost the port `free_port` chose to another process
    (the port is free when chosen, not when bound: parallel test workers race for ports)."""
    for attempt in range(attempts):
        try:
            start()
            return
        except ControlPlaneError as e:
            if "address already in use" not in str(e) or attempt == attempts - 1:
                raise


def _tail(path: Path, lines: int = 15) -> str:
    try:
        return "\n".join(path.read_text(errors="replace").splitlines()[-lines:])
    except OSError:
        return ""


@dataclass
class Process:
    """A child process whose output goes to a log file."""

    name: str
    args: list[str]
    log_path: Path
    proc: subprocess.Popen[bytes] | None = None

    def start(self) -> Process:
        log = self.log_path.open("ab")
        self.proc = subprocess.Popen(self.args, stdout=log, stderr=subprocess.STDOUT, start_new_session=True)
        log.close()
        return self

    @property
    def running(self) -> bool:
        return self.proc is not None and self.proc.poll() is None

    def wait_for_log(self, fragment: str, timeout: float = 60.0) -> None:
        """Waits until the process has logged a line containing `fragment`; fails if it exits or time runs out."""
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if fragment in self.log_path.read_text(errors="replace"):
                return
            if not self.running:
                raise ControlPlaneError(f"{self.name} exited before logging {fragment!r}:\n{_tail(self.log_path)}")
            time.sleep(0.05)
        raise ControlPlaneError(f"{self.name} did not log {fragment!r} in {timeout:.0f}s:\n{_tail(self.log_path)}")

    def signal(self, sig: int) -> None:
        if self.running and self.proc is not None:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(self.proc.pid, sig)

    def stop(self, timeout: float = 10.0) -> None:
        if self.proc is None:
            return
        self.signal(signal.SIGTERM)
        try:
            self.proc.wait(timeout)
        except subprocess.TimeoutExpired:
            self.signal(signal.SIGKILL)
            self.proc.wait(timeout)

    def kill(self) -> None:
        if self.proc is None:
            return
        self.signal(signal.SIGKILL)
        self.proc.wait(10)


@dataclass
class ControlPlane:
    """etcd and kube-apiserver on free loopback ports, admin by bearer token, RBAC on."""

    assets: Path
    workdir: Path
    extra_apiserver_args: list[str] = field(default_factory=list)
    etcd: Process | None = None
    apiserver: Process | None = None
    apiserver_port: int = 0
    etcd_port: int = 0
    schedulers: list[Process] = field(default_factory=list)
    started_schedulers: int = 0  # numbers each scheduler's config and log file

    @property
    def url(self) -> str:
        return f"https://127.0.0.1:{self.apiserver_port}"

    @property
    def etcd_url(self) -> str:
        return f"http://127.0.0.1:{self.etcd_port}"

    @property
    def kubeconfig_path(self) -> Path:
        return self.workdir / "kubeconfig"

    @property
    def audit_log_path(self) -> Path:
        return self.workdir / "audit.log"

    def start(self, timeout: float = 60.0) -> ControlPlane:
        self.workdir.mkdir(parents=True, exist_ok=True)
        self._write_credentials()
        on_free_ports(lambda: self._start_etcd(timeout))
        on_free_ports(lambda: self._start_apiserver_on_free_port(timeout))
        return self

    def _start_etcd(self, timeout: float) -> None:
        self.etcd_port = free_port()
        peer = free_port()
        self.etcd = Process(
            "etcd",
            [
                str(self.assets / "etcd"),
                "--data-dir",
                str(self.workdir / "etcd"),
                "--listen-client-urls",
                self.etcd_url,
                "--advertise-client-urls",
                self.etcd_url,
                "--listen-peer-urls",
                f"http://127.0.0.1:{peer}",
                "--quota-backend-bytes",
                str(2 * 1024**3),
                "--log-level",
                "warn",
            ],
            self.workdir / "etcd.log",
        ).start()
        self._wait(lambda: self._etcd_ready(), timeout, "etcd", self.etcd)

    def _start_apiserver_on_free_port(self, timeout: float) -> None:
        self.apiserver_port = free_port()
        self.start_apiserver(timeout)

    def _write_credentials(self) -> None:
        key, pub = self.workdir / "sa.key", self.workdir / "sa.pub"
        if not key.exists():
            from cryptography.hazmat.primitives import serialization
            from cryptography.hazmat.primitives.asymmetric import rsa

            private = rsa.generate_private_key(public_exponent=65537, key_size=2048)
            key.write_bytes(
                private.private_bytes(
                    serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption()
                )
            )
            pub.write_bytes(
                private.public_key().public_bytes(
                    serialization.Encoding.PEM, serialization.PublicFormat.SubjectPublicKeyInfo
                )
            )
        (self.workdir / "tokens.csv").write_text(
            f'{TOKEN},admin,admin,"system:masters"\n{NOBODY_TOKEN},{NOBODY},{NOBODY}\n'
        )
        (self.workdir / "audit-policy.yaml").write_text(
            yaml.safe_dump(
                {
                    "apiVersion": "audit.k8s.io/v1",
                    "kind": "Policy",
                    "omitStages": ["RequestReceived"],
                    "rules": [
                        {"level": "Metadata", "resources": [{"group": "", "resources": ["pods/binding"]}]},
                        {"level": "None"},
                    ],
                }
            )
        )

    def start_apiserver(self, timeout: float = 60.0) -> None:
        """(Re)start kube-apiserver on the same port and etcd; returns once /readyz says ok."""
        w = self.workdir
        self.apiserver = Process(
            "kube-apiserver",
            [
                str(self.assets / "kube-apiserver"),
                f"--etcd-servers={self.etcd_url}",
                f"--secure-port={self.apiserver_port}",
                "--bind-address=127.0.0.1",
                "--advertise-address=127.0.0.1",
                f"--cert-dir={w / 'certs'}",
                f"--token-auth-file={w / 'tokens.csv'}",
                "--authorization-mode=RBAC",
                "--service-account-issuer=https://kubernetes.default.svc",
                f"--service-account-key-file={w / 'sa.pub'}",
                f"--service-account-signing-key-file={w / 'sa.key'}",
                "--service-cluster-ip-range=10.0.0.0/24",
                "--disable-admission-plugins=ServiceAccount,TaintNodesByCondition",
                f"--audit-policy-file={w / 'audit-policy.yaml'}",
                f"--audit-log-path={self.audit_log_path}",
                *self.extra_apiserver_args,
            ],
            w / "apiserver.log",
        ).start()
        self._wait(self._apiserver_ready, timeout, "kube-apiserver", self.apiserver)
        self.write_kubeconfig(self.kubeconfig_path)

    def stop_apiserver(self, kill: bool = False) -> None:
        if self.apiserver is not None:
            if kill:
                self.apiserver.kill()
            else:
                self.apiserver.stop()

    def restart_apiserver(self, down_for: float = 0.0) -> None:
        self.stop_apiserver()
        time.sleep(down_for)
        self.start_apiserver()

    def kubeconfig(self, token: str = TOKEN) -> str:
        return kubeconfig_text(self.url, token)

    def write_kubeconfig(self, path: Path, token: str = TOKEN) -> Path:
        path.write_text(self.kubeconfig(token))
        return path

    def _wait(self, ready: Any, timeout: float, what: str, proc: Process) -> None:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if not proc.running:
                raise ControlPlaneError(f"{what} exited at start:\n{_tail(proc.log_path)}")
            with contextlib.suppress(OSError, ValueError):
                if ready():
                    return
            time.sleep(0.1)
        raise ControlPlaneError(f"{what} not ready after {timeout:.0f}s:\n{_tail(proc.log_path)}")

    def _etcd_ready(self) -> bool:
        with urllib.request.urlopen(f"{self.etcd_url}/health", timeout=2) as resp:
            return bool(json.loads(resp.read()).get("health") == "true")

    def _apiserver_ready(self) -> bool:
        import ssl

        ctx = ssl.create_default_context()
        ctx.check_hostname = False
        ctx.verify_mode = ssl.CERT_NONE
        req = urllib.request.Request(f"{self.url}/readyz", headers={"Authorization": f"Bearer {TOKEN}"})
        try:
            with urllib.request.urlopen(req, timeout=2, context=ctx) as resp:
                return resp.read().strip() == b"ok"
        except urllib.error.HTTPError:
            return False

    def etcd_call(self, path: str, body: dict[str, Any]) -> dict[str, Any]:
        """etcd's JSON gateway (v3 API): used to compact history and force 410s."""
        req = urllib.request.Request(
            f"{self.etcd_url}{path}", data=json.dumps(body).encode(), headers={"Content-Type": "application/json"}
        )
        with urllib.request.urlopen(req, timeout=10) as resp:
            out: dict[str, Any] = json.loads(resp.read())
            return out

    def compact(self) -> int:
        """Compact etcd up to its current revision; watches from older resourceVersions then get 410."""
        rev = int(self.etcd_call("/v3/kv/range", {"key": "AA=="})["header"]["revision"])
        self.etcd_call("/v3/kv/compaction", {"revision": rev, "physical": True})
        return rev

    def start_scheduler(
        self,
        config: dict[str, Any],
        *,
        verbosity: int = 2,
        name: str = "kube-scheduler",
        args: tuple[str, ...] = (),
        binary: Path | None = None,
    ) -> Process:
        """Upstream kube-scheduler (`binary`, default v1.36's) against this API server with `config`."""
        cfg = dict(config)
        cfg.setdefault("apiVersion", "kubescheduler.config.k8s.io/v1")
        cfg.setdefault("kind", "KubeSchedulerConfiguration")
        cfg["clientConnection"] = {**(cfg.get("clientConnection") or {}), "kubeconfig": str(self.kubeconfig_path)}
        cfg.setdefault("leaderElection", {"leaderElect": False})
        n = self.started_schedulers
        self.started_schedulers += 1
        path = self.workdir / f"{name}-{n}.yaml"
        path.write_text(yaml.safe_dump(cfg))
        proc = Process(
            name,
            [
                str(binary or self.assets / "kube-scheduler"),
                f"--config={path}",
                "--secure-port=0",
                f"--v={verbosity}",
                *args,
            ],
            self.workdir / f"{name}-{n}.log",
        ).start()
        self.schedulers.append(proc)
        return proc

    def stop(self) -> None:
        for s in self.schedulers:
            s.stop()
        self.schedulers.clear()
        if self.apiserver is not None:
            self.apiserver.stop()
        if self.etcd is not None:
            self.etcd.stop()


@contextlib.contextmanager
def control_plane(workdir: Path | None = None, **kw: Any) -> Iterator[ControlPlane]:
    """A started control plane for the duration of the block; raises ControlPlaneError without assets."""
    assets = assets_dir()
    if assets is None:
        raise ControlPlaneError(missing_assets_reason())
    tmp = None
    if workdir is None:
        tmp = tempfile.mkdtemp(prefix="kubesched-cp-")
        workdir = Path(tmp)
    cp = ControlPlane(assets, workdir, **kw)
    try:
        yield cp.start()
    finally:
        cp.stop()
        if tmp is not None:
            shutil.rmtree(tmp, ignore_errors=True)


def namespaces(api: KubeAPI) -> list[str]:
    return [n["metadata"]["name"] for n in api.request("GET", "/api/v1/namespaces").get("items") or ()]


def reset_cluster(api: KubeAPI, timeout: float = 30.0) -> None:
    """Delete what tests create, pods at once (no kubelet); namespaces stay, as nothing would finalise them.

    Finalizers that only kube-controller-manager removes (pv/pvc-protection, the delete-protection
    the scheduler puts on the ResourceClaims it allocates) are dropped first.
    """
    for kind in ("PersistentVolumeClaim", "PersistentVolume", "Pod", "ResourceClaim"):
        r = BY_KIND[kind]
        for obj in api.request("GET", r.path()).get("items") or ():
            meta = obj["metadata"]
            if meta.get("finalizers"):
                # An update, not a patch: v1.36's API server refuses any patch of a ResourceClaim whose spec
                # holds opaque config ("spec: field is immutable"), as the patched parameters re-encode differently.
                meta["finalizers"] = None
                body = {**obj, "apiVersion": r.group_version, "kind": r.kind}
                api.request("PUT", r.path(meta.get("namespace", ""), meta["name"]), body=body)
    # The API server's own default/kubernetes Service stays: deleted, it comes back at the server's next
    # reconcile, seconds later, in the middle of whatever the next test watches.
    queries = {"Pod": {"gracePeriodSeconds": "0"}, "Service": {"fieldSelector": "metadata.name!=kubernetes"}}
    for ns in namespaces(api):
        for kind in ("Pod", "Service", "PersistentVolumeClaim", "PodDisruptionBudget", "ReplicaSet", "ResourceClaim"):
            api.request("DELETE", BY_KIND[kind].path(ns), query=queries.get(kind))
        api.request("DELETE", RESOURCE_CLAIM_TEMPLATE.path(ns))
    for kind in ("Node", "PersistentVolume", "StorageClass", "CSINode", "CSIDriver", "ResourceSlice", "DeviceClass"):
        api.request("DELETE", BY_KIND[kind].path())
    pcs = BY_KIND["PriorityClass"]
    for pc in api.request("GET", pcs.path()).get("items") or ():
        name = pc["metadata"]["name"]
        if not name.startswith("system-"):
            api.request("DELETE", pcs.path(name=name))
    deadline = time.monotonic() + timeout
    while api.request("GET", BY_KIND["Pod"].path()).get("items"):
        if time.monotonic() > deadline:
            raise ControlPlaneError("pods still present after the reset")
        time.sleep(0.05)
