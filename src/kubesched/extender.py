"""HTTP scheduler extenders (pkg/scheduler/extender.go, kube-scheduler/extender/v1).

An extender is a web service called after the plugins: it may filter the feasible
nodes, add priorities, bind, and prune preemption victims. The JSON on the wire is
Go's encoding of upstream's structs, which carry no json tags: keys are the Go field
names (`Pod`, `Nodes`, `NodeNames`, `FailedNodes`, ...), and replies are read
case-insensitively, as Go decodes them.
"""

from __future__ import annotations

import base64
import binascii
import json
import os
import ssl
import tempfile
import urllib.error
import urllib.request
from collections.abc import Mapping, Sequence
from typing import Any

from kubesched.api.duration import parse_duration
from kubesched.config.types import Extender as ExtenderConfig
from kubesched.framework.extender import EXTENDER_NAME, ExtenderError, Victims
from kubesched.framework.interface import MAX_EXTENDER_PRIORITY, MAX_NODE_SCORE
from kubesched.framework.node_info import NodeInfo
from kubesched.framework.types import PodInfo


def _get(obj: Mapping[str, Any] | None, key: str) -> Any:
    """A reply field, matched case-insensitively like Go's json decoder."""
    if not obj:
        return None
    if key in obj:
        return obj[key]
    low = key.lower()
    for k, v in obj.items():
        if k.lower() == low:
            return v
    return None


class HTTPExtender:
    def __init__(self, cfg: ExtenderConfig) -> None:
        self.url = cfg.urlPrefix.rstrip("/")
        self.filter_verb = cfg.filterVerb
        self.prioritize_verb = cfg.prioritizeVerb
        self.preempt_verb = cfg.preemptVerb
        self.bind_verb = cfg.bindVerb
        self.weight = cfg.weight
        self.node_cache_capable = cfg.nodeCacheCapable
        self.ignorable = cfg.ignorable
        self.managed_resources = {r.name for r in cfg.managedResources}
        self.timeout = parse_duration(cfg.httpTimeout) if cfg.httpTimeout else 5.0
        self._ssl = _ssl_context(cfg) if cfg.enableHTTPS else None
        if cfg.enableHTTPS and self.url.startswith("http://"):
            self.url = "https://" + self.url[len("http://") :]

    @property
    def name(self) -> str:
        return self.url

    @property
    def record_key(self) -> str:
        """How the extender appears among the plugins of a per-pod record."""
        return f"{EXTENDER_NAME}({self.url})"

    def is_binder(self) -> bool:
        return bool(self.bind_verb)

    def is_prioritizer(self) -> bool:
        return bool(self.prioritize_verb)

    def is_filter(self) -> bool:
        return bool(self.filter_verb)

    def supports_preemption(self) -> bool:
        return bool(self.preempt_verb)

    def is_interested(self, pod: PodInfo) -> bool:
        """With managedResources, only pods requesting or limiting one of them (init containers too)."""
        if not self.managed_resources:
            return True
        spec = pod.obj.get("spec") or {}
        for group in ("containers", "initContainers"):
            for c in spec.get(group) or ():
                res = c.get("resources") or {}
                names = [n for kind in ("requests", "limits") for n in res.get(kind) or ()]
                if any(n in self.managed_resources for n in names):
                    return True
        return False

    def _args(self, pod: PodInfo, nodes: Sequence[NodeInfo]) -> dict[str, Any]:
        if self.node_cache_capable:
            return {"Pod": pod.obj, "Nodes": None, "NodeNames": [ni.name for ni in nodes]}
        items = [ni.node.obj for ni in nodes if ni.node is not None]
        return {"Pod": pod.obj, "Nodes": {"metadata": {}, "items": items}, "NodeNames": None}

    def filter(self, pod: PodInfo, nodes: Sequence[NodeInfo]) -> tuple[list[NodeInfo], dict[str, str], dict[str, str]]:
        """(feasible nodes, failed node -> message, failed-and-unresolvable node -> message)."""
        if not self.filter_verb:
            return list(nodes), {}, {}
        result = self.send(self.filter_verb, self._args(pod, nodes))
        if _get(result, "Error"):
            raise ExtenderError(str(_get(result, "Error")))
        by_name = {ni.name: ni for ni in nodes}
        names: list[str] | None = None
        if self.node_cache_capable and _get(result, "NodeNames") is not None:
            names = [str(n) for n in _get(result, "NodeNames")]
        elif _get(result, "Nodes") is not None:
            names = [str((i.get("metadata") or {}).get("name", "")) for i in _get(_get(result, "Nodes"), "Items") or ()]
        out: list[NodeInfo] = []
        for n in names or ():
            if n not in by_name:
                raise ExtenderError(
                    f'extender "{self.url}" claims a filtered node "{n}" which is not found in the input node list'
                )
            out.append(by_name[n])
        failed = {str(k): str(v) for k, v in (_get(result, "FailedNodes") or {}).items()}
        unresolvable = {str(k): str(v) for k, v in (_get(result, "FailedAndUnresolvableNodes") or {}).items()}
        return out, failed, unresolvable

    def prioritize(self, pod: PodInfo, nodes: Sequence[NodeInfo]) -> tuple[list[tuple[str, int]], int]:
        """(host, score 0-10) pairs and this extender's weight."""
        if not self.prioritize_verb:
            return [(ni.name, 0) for ni in nodes], 0
        result = self.send(self.prioritize_verb, self._args(pod, nodes))
        return [(str(_get(h, "Host")), int(_get(h, "Score") or 0)) for h in result or ()], self.weight

    def bind(self, pod: PodInfo, node: str) -> None:
        if not self.bind_verb:
            raise ExtenderError("unexpected empty bindVerb in extender")
        args = {"PodName": pod.name, "PodNamespace": pod.namespace, "PodUID": pod.uid, "Node": node}
        result = self.send(self.bind_verb, args)
        if _get(result, "Error"):
            raise ExtenderError(str(_get(result, "Error")))

    def process_preemption(
        self, pod: PodInfo, victims: dict[str, Victims], node_infos: Mapping[str, NodeInfo]
    ) -> dict[str, Victims]:
        """Send the candidates; the extender answers with the (possibly fewer) nodes and victims it accepts."""
        if not self.preempt_verb:
            raise ExtenderError(f"preempt verb is not defined for extender {self.url} but run into ProcessPreemption")
        if self.node_cache_capable:
            meta = {
                n: {"Pods": [{"UID": p.uid} for p in v.pods], "NumPDBViolations": v.num_pdb_violations}
                for n, v in victims.items()
            }
            args: dict[str, Any] = {"Pod": pod.obj, "NodeNameToVictims": None, "NodeNameToMetaVictims": meta}
        else:
            full = {
                n: {"Pods": [p.obj for p in v.pods], "NumPDBViolations": v.num_pdb_violations}
                for n, v in victims.items()
            }
            args = {"Pod": pod.obj, "NodeNameToVictims": full, "NodeNameToMetaVictims": None}
        result = self.send(self.preempt_verb, args)
        out: dict[str, Victims] = {}
        for node, mv in (_get(result, "NodeNameToMetaVictims") or {}).items():
            ni = node_infos.get(node)
            if ni is None:
                raise ExtenderError(f'nodeinfo not found for node "{node}"')
            pods = []
            for meta_pod in _get(mv, "Pods") or ():
                uid = str(_get(meta_pod, "UID"))
                found = next((p for p in ni.pods if p.uid == uid), None)
                if found is None:
                    raise ExtenderError(
                        f"extender: {self.url} claims to preempt pod (UID: {uid}) on node: {node}, "
                        "but the pod is not found on that node"
                    )
                pods.append(found)
            out[node] = Victims(pods, int(_get(mv, "NumPDBViolations") or 0))
        return out

    def send(self, verb: str, args: Any) -> Any:
        """POST <urlPrefix>/<verb> with JSON; anything but 200 is an error."""
        url = f"{self.url}/{verb}"
        body = json.dumps(args).encode()
        req = urllib.request.Request(url, data=body, headers={"Content-Type": "application/json"}, method="POST")
        try:
            with urllib.request.urlopen(req, timeout=self.timeout, context=self._ssl) as resp:
                if resp.status != 200:
                    raise ExtenderError(f"failed {verb} with extender at URL {url}, code {resp.status}")
                return json.loads(resp.read() or b"null")
        except urllib.error.HTTPError as err:
            err.close()
            raise ExtenderError(f"failed {verb} with extender at URL {url}, code {err.code}") from err
        except (urllib.error.URLError, OSError, ValueError) as err:
            raise ExtenderError(f'Post "{url}": {err}') from err


def _ssl_context(cfg: ExtenderConfig) -> ssl.SSLContext:
    """enableHTTPS with tlsConfig: CA, client certificate, server name override, or insecure."""
    tls = cfg.tlsConfig
    ctx = ssl.create_default_context()
    if tls is None:
        return ctx
    if tls.insecure:
        ctx.check_hostname = False
        ctx.verify_mode = ssl.CERT_NONE
    if tls.caFile:
        ctx.load_verify_locations(cafile=tls.caFile)
    if tls.caData:
        ctx.load_verify_locations(cadata=_decode(tls.caData))
    if tls.certData:
        # ssl reads a client certificate only from files: write them, load, remove.
        with tempfile.TemporaryDirectory() as tmp:
            cert, key = os.path.join(tmp, "cert.pem"), os.path.join(tmp, "key.pem")
            with open(cert, "w", encoding="utf-8") as f:
                f.write(_decode(tls.certData))
            with open(key, "w", encoding="utf-8") as f:
                f.write(_decode(tls.keyData) if tls.keyData else "")
            ctx.load_cert_chain(cert, key if tls.keyData else None)
    elif tls.certFile:
        ctx.load_cert_chain(tls.certFile, tls.keyFile or None)
    if tls.serverName:
        server_name = tls.serverName
        wrap = ctx.wrap_socket

        def wrap_with_name(sock: Any, *a: Any, **kw: Any) -> Any:
            kw["server_hostname"] = server_name
            return wrap(sock, *a, **kw)

        ctx.wrap_socket = wrap_with_name  # type: ignore[method-assign]
    return ctx


def _decode(data: str) -> str:
    """certData/keyData/caData are base64 in the config file (Go []byte), PEM text once decoded."""
    try:
        return base64.b64decode(data, validate=True).decode()
    except (binascii.Error, UnicodeDecodeError):
        return data


def new_extenders(configs: Sequence[ExtenderConfig]) -> list[HTTPExtender]:
    return [HTTPExtender(c) for c in configs]


def extender_score(score: int, weight: int) -> int:
    """An extender's 0-10 priority scaled to the plugins' 0-100 range and weighted."""
    return score * weight * (MAX_NODE_SCORE // MAX_EXTENDER_PRIORITY)
