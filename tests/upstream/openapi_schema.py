"""Build kubesched's compact field schema (apiserver/openapi_v1_36.py) from a real API server's OpenAPI v3.

    python -m tests.upstream.openapi_schema https://127.0.0.1:PORT TOKEN > src/kubesched/apiserver/openapi_v1_36.py

test_openapi_schema.py regenerates it from the v1.36 control plane and checks the
committed file is the same, so the strict decoding the simulator does stays the
API server's.
"""

from __future__ import annotations

import json
import ssl
import sys
import urllib.request
from typing import Any

# The kinds the simulator reads, by the group-version that serves them.
KINDS = {
    "v1": ["Pod", "Node", "Namespace", "PersistentVolume", "PersistentVolumeClaim", "Service", "ReplicationController"],
    "apps/v1": ["ReplicaSet", "StatefulSet", "Deployment", "DaemonSet"],
    "batch/v1": ["Job", "CronJob"],
    "policy/v1": ["PodDisruptionBudget"],
    "storage.k8s.io/v1": ["StorageClass", "CSINode", "CSIDriver", "CSIStorageCapacity"],
    "scheduling.k8s.io/v1": ["PriorityClass"],
    "resource.k8s.io/v1": ["DeviceClass", "ResourceClaim", "ResourceClaimTemplate", "ResourceSlice"],
}
_SPECIAL = {
    "io.k8s.apimachinery.pkg.api.resource.Quantity": "quantity",
    "io.k8s.apimachinery.pkg.util.intstr.IntOrString": "int-or-string",
    "io.k8s.apimachinery.pkg.apis.meta.v1.Time": "time",
    "io.k8s.apimachinery.pkg.apis.meta.v1.MicroTime": "time",
    "io.k8s.apimachinery.pkg.runtime.RawExtension": "any",
    "io.k8s.apimachinery.pkg.apis.meta.v1.FieldsV1": "any",
}
_PREFIXES = ("io.k8s.api.", "io.k8s.apimachinery.pkg.apis.", "io.k8s.apimachinery.pkg.")


def _short(ref: str) -> str:
    for p in _PREFIXES:
        if ref.startswith(p):
            return ref[len(p) :]
    return ref


def _props(node: dict[str, Any]) -> dict[str, Any]:
    """The schema fields of a node, in either of the shapes the server serves."""
    return node.get("SchemaProps", node)


def _ref(node: dict[str, Any]) -> str | None:
    if "$ref" in node:
        return str(node["$ref"]).rsplit("/", 1)[-1]
    for sub in _props(node).get("allOf") or ():
        r = _ref(sub)
        if r:
            return r
    return None


def compact(schemas: dict[str, dict[str, Any]]) -> dict[str, Any]:
    """{"kinds": {Kind: [apiVersion, struct]}, "structs": {struct: {field: type}}} for the kinds above."""
    structs: dict[str, dict[str, str]] = {}

    def type_of(node: dict[str, Any]) -> str:
        ext = node.get("ArbitraryKeys") or {}
        if ext.get("x-kubernetes-preserve-unknown-fields"):
            return "any"
        ref = _ref(node)
        if ref:
            return struct(ref)
        p = _props(node)
        t = p.get("type")
        if t == "string":
            return "time" if p.get("format") == "date-time" else "string"
        if t == "boolean":
            return "bool"
        if t == "integer":
            return "int32" if p.get("format") == "int32" else "int64"
        if t == "number":
            return "double"
        if t == "array":
            return "[]" + type_of(p["items"])
        if t == "object" and p.get("additionalProperties"):
            return "map[string]" + type_of(p["additionalProperties"])
        return "any"

    def struct(ref: str) -> str:
        if ref in _SPECIAL:
            return _SPECIAL[ref]
        name = _short(ref)
        if name not in structs:
            structs[name] = {}
            props = _props(schemas[ref]).get("properties")
            if not props:
                del structs[name]
                return "any"
            structs[name] = {f: type_of(sub) for f, sub in sorted(props.items())}
        return "&" + name

    kinds: dict[str, list[str]] = {}
    for gv, names in KINDS.items():
        group, _, version = gv.rpartition("/")
        for kind in names:
            ref = next(
                r
                for r, d in schemas.items()
                if any(
                    g.get("kind") == kind and g.get("group", "") == group and g.get("version") == version
                    for g in (d.get("ArbitraryKeys") or d).get("x-kubernetes-group-version-kind") or ()
                )
            )
            kinds[kind] = [gv, struct(ref)[1:]]
    return {"kinds": kinds, "structs": dict(sorted(structs.items()))}


def fetch(url: str, token: str) -> dict[str, dict[str, Any]]:
    ctx = ssl.create_default_context()
    ctx.check_hostname = False
    ctx.verify_mode = ssl.CERT_NONE
    schemas: dict[str, dict[str, Any]] = {}
    for gv in KINDS:
        path = "/openapi/v3/" + ("api/v1" if gv == "v1" else f"apis/{gv}")
        req = urllib.request.Request(url + path, headers={"Authorization": f"Bearer {token}"})
        with urllib.request.urlopen(req, context=ctx, timeout=30) as resp:
            schemas.update(json.loads(resp.read())["components"]["schemas"])
    return schemas


def render(data: dict[str, Any]) -> str:
    body = json.dumps(data, indent=4)  # only strings and containers: a Python literal too
    return (
        '"""Field types of the kinds the simulator reads, from kube-apiserver v1.36\'s OpenAPI v3 (generated:\n'
        "tests/upstream/openapi_schema.py). Types: string, bool, int32, int64, double, quantity, int-or-string,\n"
        'time, any, []T, map[string]T, &struct."""\n\n'
        "from typing import Any\n\n"
        f"SCHEMA: dict[str, Any] = {body}\n"
    )


if __name__ == "__main__":
    sys.stdout.write(render(compact(fetch(sys.argv[1], sys.argv[2]))))
