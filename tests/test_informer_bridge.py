"""The informer bridge reuses a pod's parsed constraints across a binding, and only then."""

from __future__ import annotations

import copy
from typing import Any

from kubesched.event_handlers import _reparse_pod
from kubesched.framework.types import new_pod_info

POD: dict[str, Any] = {
    "kind": "Pod",
    "metadata": {"name": "p", "namespace": "default", "uid": "u1", "labels": {"app": "web"}},
    "spec": {"containers": [{"name": "c", "resources": {"requests": {"cpu": "1"}}}], "tolerations": []},
}


def test_a_binding_from_the_api_reuses_the_parse() -> None:
    prev = new_pod_info(POD)
    bound = copy.deepcopy(POD)  # a real API server sends a fresh object
    bound["spec"]["nodeName"] = "n1"
    bound["status"] = {"conditions": [{"type": "PodScheduled", "status": "True"}]}
    info = _reparse_pod(prev, bound)
    assert info.node_name == "n1" and info.obj is bound
    assert info.requests is prev.requests  # not parsed again


def test_metadata_the_parse_holds_forces_a_new_parse() -> None:
    prev = new_pod_info({**POD, "spec": {**POD["spec"], "nodeName": "n1"}})
    deleting = copy.deepcopy(prev.obj)
    deleting["metadata"]["deletionTimestamp"] = "2026-01-01T00:00:00Z"
    assert _reparse_pod(prev, deleting).deleting
    recreated = copy.deepcopy(prev.obj)
    recreated["metadata"]["uid"] = "u2"
    assert _reparse_pod(prev, recreated).uid == "u2"
    relabelled = copy.deepcopy(prev.obj)
    relabelled["metadata"]["labels"] = {"app": "db"}
    assert _reparse_pod(prev, relabelled).labels == {"app": "db"}
