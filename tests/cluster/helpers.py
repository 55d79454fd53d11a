"""Objects and waits for the tests against the stand-in API server."""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any


def wait_for(cond: Callable[[], Any], timeout: float = 10.0, what: str = "condition") -> Any:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        value = cond()
        if value:
            return value
        time.sleep(0.02)
    raise AssertionError(f"timed out waiting for {what}")


def node(name: str, cpu: str = "4", memory: str = "8Gi", pods: str = "110", **labels: str) -> dict[str, Any]:
    return {
        "kind": "Node",
        "apiVersion": "v1",
        "metadata": {"name": name, "labels": {"kubernetes.io/hostname": name, **labels}},
        "status": {"allocatable": {"cpu": cpu, "memory": memory, "pods": pods}},
    }


def pod(name: str, cpu: str = "100m", memory: str = "128Mi", **spec: Any) -> dict[str, Any]:
    return {
        "kind": "Pod",
        "apiVersion": "v1",
        "metadata": {"name": name, "namespace": "default"},
        "spec": {
            "schedulerName": "default-scheduler",
            "containers": [
                {"name": "c", "image": "busybox", "resources": {"requests": {"cpu": cpu, "memory": memory}}}
            ],
            **spec,
        },
        "status": {"phase": "Pending"},
    }
