"""Clients that cannot write: what `kubesched shadow` and `kubesched record` hold.

The promise "read-only" is kept by construction, not by care: the commands hold
only a ReadOnlyAPI, a KubeAPI whose single way out sends GET (list, get, watch) and
refuses any other method before a byte leaves; and the scheduler they build gets a
ReadOnlyClient, whose every write raises. A bug that tries to bind, patch or
delete fails loudly instead of changing the cluster being watched.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from kubesched.api.object import Obj
from kubesched.backend.kube.api import KubeAPI, rfc3339
from kubesched.framework.types import PodInfo

READ_METHODS = frozenset({"GET"})


class WriteRefused(RuntimeError):
    """A write was attempted through a read-only client."""


class ReadOnlyAPI(KubeAPI):
    """A KubeAPI whose one way out, `_send`, lets GET through and refuses every other method unsent."""

    def _send(
        self, method: str, path: str, query: list[tuple[str, str]], body: Any, content_type: str, timeout: Any
    ) -> Any:
        if method.upper() not in READ_METHODS:
            raise WriteRefused(f"read-only client: {method} {path} refused")
        return super()._send(method, path, query, body, content_type, timeout)


class ReadOnlyClient:
    """The scheduler's APIClient, refusing every write: the shadow decides pods, it never binds them."""

    DELETES_REPORT_DONE = False

    def _refuse(self, what: str) -> WriteRefused:
        return WriteRefused(f"read-only client: {what} refused")

    def bind(self, pod: PodInfo, node_name: str) -> None:
        raise self._refuse(f"binding {pod.key} to {node_name}")

    def update(self, obj: Obj) -> Obj:
        raise self._refuse(f"update of {obj.get('kind')}")

    def update_status(self, obj: Obj) -> Obj:
        raise self._refuse(f"status update of {obj.get('kind')}")

    def get(self, kind: str, namespace: str, name: str) -> Obj | None:
        return None  # only asked after a conflict of a write, which never happens here

    def timestamp(self) -> str:
        return rfc3339()

    def create(self, obj: Obj) -> Obj:
        raise self._refuse(f"creation of {obj.get('kind')}")

    def delete(self, kind: str, namespace: str, name: str) -> Obj:
        raise self._refuse(f"deletion of {kind} {namespace}/{name}")

    def merge_status(self, kind: str, namespace: str, name: str, fields: Obj) -> Obj:
        raise self._refuse(f"status patch of {kind} {namespace}/{name}")

    def delete_pod(
        self, pod: PodInfo, condition: Obj | None = None, done: Callable[[bool], None] | None = None
    ) -> None:
        raise self._refuse(f"deletion of pod {pod.key}")

    def patch_pod_status(self, pod: PodInfo, condition: Obj | None, nominated_node_name: str | None) -> None:
        raise self._refuse(f"status patch of pod {pod.key}")

    def record_event(self, pod: PodInfo, kind: str, reason: str, action: str, note: str) -> None:
        raise self._refuse(f"event for pod {pod.key}")

    def apply_extender_binding(self, pod: PodInfo, node_name: str) -> None:
        raise self._refuse(f"extender binding of {pod.key}")
