"""KubeSchedulerConfiguration documents that tests and benchmarks share."""

from __future__ import annotations

from typing import Any


def most_allocated(resources: list[dict[str, Any]] | None = None) -> dict[str, Any]:
    """The default profile with NodeResourcesFit scoring by MostAllocated (bin packing) instead of LeastAllocated."""
    strategy: dict[str, Any] = {"type": "MostAllocated"}
    if resources is not None:
        strategy["resources"] = resources
    return {
        "apiVersion": "kubescheduler.config.k8s.io/v1",
        "kind": "KubeSchedulerConfiguration",
        "profiles": [
            {
                "schedulerName": "default-scheduler",
                "pluginConfig": [{"name": "NodeResourcesFit", "args": {"scoringStrategy": strategy}}],
            }
        ],
    }
