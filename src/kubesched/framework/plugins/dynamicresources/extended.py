"""Extended resources backed by DRA (dynamicresources/extendeddynamicresources.go, DRAExtendedResource, beta and
on in v1.36).

A pod may ask for `example.com/gpu: 1` in a container's requests. When a DeviceClass names
that resource in `spec.extendedResourceName` (or the pod asks for the class's implicit name,
`deviceclass.resource.kubernetes.io/<class>`), a node without a device plugin for it (its
allocatable of that resource is zero) serves it through DRA: the plugin makes one claim for
all such requests of the pod, with one request per container and resource
(`container-<i>-request-<j>`), allocates it like any claim, and creates it in PreBind.
NodeResourcesFit then leaves these resources to DRA.
"""

from __future__ import annotations

import threading
import uuid
from collections.abc import Callable, Mapping, Sequence
from fractions import Fraction
from typing import Any, Final

from kubesched.api.object import Obj
from kubesched.api.quantity import QuantityError, parse_quantity
from kubesched.api.resources import is_extended_resource_name
from kubesched.framework.types import PodInfo

EXTENDED_CLAIM_ANNOTATION: Final = "resource.kubernetes.io/extended-resource-claim"
SPECIAL_NAME: Final = "<extended-resources>"  # the claim's name until PreBind creates it (not a valid name)
DEVICE_CLASS_PREFIX: Final = "deviceclass.resource.kubernetes.io/"


def is_dra_extended_resource_name(name: str) -> bool:
    """IsDRAExtendedResourceName: an extended resource, or a DeviceClass's implicit name."""
    return is_extended_resource_name(name) or name.startswith(DEVICE_CLASS_PREFIX)


def _meta(obj: Mapping[str, Any]) -> Mapping[str, Any]:
    return obj.get("metadata") or {}


def _created_ns(obj: Mapping[str, Any]) -> str:
    return str(_meta(obj).get("creationTimestamp") or "")


class ExtendedResourceCache:
    """extendedresourcecache: which DeviceClass serves an extended resource name, kept from class events.

    A class maps its `extendedResourceName` and its implicit name. When two classes name the
    same resource, the one created later wins, and at equal times the one with the lower name;
    the quirks of upstream's event handling (a class that loses keeps no implicit mapping either;
    deleting a class drops its names even where another class had them) are kept.
    """

    def __init__(self) -> None:
        self._by_resource: dict[str, Obj] = {}
        self._lock = threading.Lock()

    def get(self, resource_name: str) -> Obj | None:
        return self._by_resource.get(resource_name)

    def on_event(self, event: str, old: Obj | None, new: Obj | None) -> None:
        with self._lock:
            if event == "DELETED":
                assert old is not None
                self._remove(old)
            else:
                assert new is not None
                self._update(new, old if event == "MODIFIED" else None)

    def _update(self, new: Obj, old: Obj | None) -> None:
        name = _explicit(new)
        if name is not None:
            current = self._by_resource.get(name)
            if current is not None:
                a, b = _created_ns(new), _created_ns(current)
                if a < b or (a == b and str(_meta(new).get("name")) >= str(_meta(current).get("name"))):
                    return
        if old is not None:
            self._by_resource.pop(DEVICE_CLASS_PREFIX + str(_meta(old).get("name") or ""), None)
            old_name = _explicit(old)
            if old_name is not None:
                self._by_resource.pop(old_name, None)
        if name is not None:
            self._by_resource[name] = new
        self._by_resource[DEVICE_CLASS_PREFIX + str(_meta(new).get("name") or "")] = new

    def _remove(self, cls: Obj) -> None:
        self._by_resource.pop(DEVICE_CLASS_PREFIX + str(_meta(cls).get("name") or ""), None)
        name = _explicit(cls)
        if name is not None:
            self._by_resource.pop(name, None)


def _explicit(cls: Mapping[str, Any]) -> str | None:
    name = (cls.get("spec") or {}).get("extendedResourceName")
    return None if name is None else str(name)


def mapped_resources(pod: PodInfo, resolver: Callable[[str], Obj | None]) -> bool:
    """hasDeviceClassMappedExtendedResource: the pod asks for some extended resource a DeviceClass serves."""
    return any(v and is_dra_extended_resource_name(n) and resolver(n) is not None for n, v in pod.requests.items())


def find_extended_resource_claim(pod: PodInfo, claims: Sequence[Mapping[str, Any]]) -> Obj | None:
    """The claim made for the pod's extended resources in an earlier cycle (annotated, controlled by the pod)."""
    for claim in claims:
        if (_meta(claim).get("annotations") or {}).get(EXTENDED_CLAIM_ANNOTATION) != "true":
            continue
        for ref in _meta(claim).get("ownerReferences") or ():
            if ref.get("name") == pod.name and ref.get("controller") and ref.get("uid") == pod.uid:
                return dict(claim)
    return None


def in_memory_claim(pod: PodInfo) -> Obj:
    """The claim for the pod's extended resources until PreBind creates it: no requests yet, a temporary uid."""
    return {
        "apiVersion": "resource.k8s.io/v1",
        "kind": "ResourceClaim",
        "metadata": {
            "namespace": pod.namespace,
            "name": SPECIAL_NAME,
            "uid": str(uuid.uuid4()),
            "generateName": f"{pod.name}-extended-resources-",
            "ownerReferences": [
                {"apiVersion": "v1", "kind": "Pod", "name": pod.name, "uid": pod.uid, "controller": True}
            ],
            "annotations": {EXTENDED_CLAIM_ANNOTATION: "true"},
        },
        "spec": {},
    }


def _as_int64(raw: Any) -> int | None:
    """Quantity.AsInt64: the value when it is a whole number, else None."""
    try:
        q: Fraction = parse_quantity(raw)
    except QuantityError:
        return None
    return int(q) if q.denominator == 1 else None


def _container_request(
    index: int, container: Mapping[str, Any], resource: str, class_name: str, reusable: Sequence[Obj | None]
) -> tuple[Obj | None, list[dict[str, str]]]:
    """createResourceRequestAndMappings: the container's request for the resource beyond what it may reuse."""
    requests = (container.get("resources") or {}).get("requests")
    if not requests or resource not in requests:
        return None, []
    want = _as_int64(requests[resource])
    if not want:
        return None, []
    mappings: list[dict[str, str]] = []
    have = 0
    name = str(container.get("name") or "")
    for r in reusable:
        if r is None:
            continue
        have += int(r["exactly"]["count"])
        mappings.append({"containerName": name, "resourceName": resource, "requestName": r["name"]})
        if have >= want:
            return None, mappings
    position = sorted(requests).index(resource)
    request_name = f"container-{index}-request-{position}"
    request: Obj = {
        "name": request_name,
        "exactly": {"deviceClassName": class_name, "allocationMode": "ExactCount", "count": want - have},
    }
    mappings.append({"containerName": name, "resourceName": resource, "requestName": request_name})
    return request, mappings


def requests_and_mappings(
    pod: Mapping[str, Any], extended: Mapping[str, int], resolver: Callable[[str], Obj | None]
) -> tuple[list[Obj], list[dict[str, str]]]:
    """createRequestsAndMappings: the node's claim requests for these resources, and which container uses which.

    Regular and sidecar containers each get their own devices; init containers that run
    before them may reuse the devices of those after them, and otherwise share the largest
    init request.
    """
    spec = pod.get("spec") or {}
    inits = list(spec.get("initContainers") or ())
    containers = inits + list(spec.get("containers") or ())
    long_lived = [i for i, c in enumerate(containers) if i >= len(inits) or c.get("restartPolicy") == "Always"]
    short_lived = [i for i in range(len(inits)) if containers[i].get("restartPolicy") != "Always"]
    requests: list[Obj] = []
    mappings: list[dict[str, str]] = []
    for resource in sorted(extended):
        cls = resolver(resource)
        if cls is None:
            continue
        class_name = str(_meta(cls).get("name") or "")
        long_requests: list[Obj | None] = [None] * len(containers)
        long_mappings: list[dict[str, str]] = []
        for i in long_lived:
            req, maps = _container_request(i, containers[i], resource, class_name, ())
            long_requests[i] = req
            long_mappings += maps
        biggest: Obj | None = None
        short_names: set[str] = set()
        short_mappings: list[dict[str, str]] = []
        for i in short_lived:
            req, maps = _container_request(i, containers[i], resource, class_name, long_requests[i:])
            if req is not None:
                short_names.add(req["name"])
                if biggest is None or biggest["exactly"]["count"] < req["exactly"]["count"]:
                    biggest = req
            short_mappings += maps
        if biggest is not None and len(short_names) > 1:
            short_names.discard(biggest["name"])
            for m in short_mappings:
                if m["requestName"] in short_names:
                    m["requestName"] = biggest["name"]
        if biggest is not None:
            requests.append(biggest)
        requests += [r for r in long_requests if r is not None]
        mappings += long_mappings + short_mappings
    requests.sort(key=lambda r: r["name"])
    return requests, mappings
