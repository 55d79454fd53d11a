"""The node declared features the scheduler knows (component-helpers nodedeclaredfeatures, v1.36).

Kubelets publish what they support in `status.declaredFeatures` (a sorted list of names);
the scheduler infers from a pod's spec which of the registered features the pod needs.
Only the registered features take part: a node's unknown names are ignored, and a
feature a pod needs is never unknown.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Final

Version = tuple[int, int, int]
PodSpec = Mapping[str, Any]

RESTART_ALL_CONTAINERS: Final = "RestartAllContainers"


@dataclass(frozen=True, slots=True)
class Feature:
    """One declared feature: its name, whether scheduling a pod needs it, and the last version it matters in.

    Past `max_version` every node is assumed to have the feature, so pods stop requiring it.
    """

    name: str
    infer_for_scheduling: Callable[[PodSpec], bool]
    max_version: Version | None = None


def _never(spec: PodSpec) -> bool:
    """Features that matter only for updates of running pods (resizes) or not for pods at all."""
    return False


def _restarts_all_containers(spec: PodSpec) -> bool:
    """A container or init container with a restartPolicyRules action RestartAllContainers."""
    for group in ("containers", "initContainers"):
        for c in spec.get(group) or ():
            if any(r.get("action") == RESTART_ALL_CONTAINERS for r in c.get("restartPolicyRules") or ()):
                return True
    return False


def _user_namespace_with_host_network(spec: PodSpec) -> bool:
    """hostNetwork together with an explicit hostUsers: false."""
    return bool(spec.get("hostNetwork")) and spec.get("hostUsers") is False


ALL_FEATURES: Final = (
    Feature("RestartAllContainersOnContainerExits", _restarts_all_containers),
    Feature("InPlacePodLevelResourcesVerticalScaling", _never),
    Feature("ExtendWebSocketsToKubelet", _never),
    Feature("InPlacePodVerticalScalingInitContainers", _never),
    Feature("UserNamespacesHostNetworkSupport", _user_namespace_with_host_network),
)


class FeatureRegistry:
    """The registered features in name order, with the two mappings the plugin needs."""

    def __init__(self, features: Sequence[Feature]) -> None:
        self.features: tuple[Feature, ...] = tuple(sorted(features, key=lambda f: f.name))
        self.names: tuple[str, ...] = tuple(f.name for f in self.features)
        self._node_sets: dict[tuple[str, ...], frozenset[str]] = {}

    def infer_for_pod_scheduling(self, spec: PodSpec, target: Version) -> frozenset[str]:
        """The registered features scheduling this pod needs, for a control plane at version `target`."""
        return frozenset(
            f.name
            for f in self.features
            if (f.max_version is None or target <= f.max_version) and f.infer_for_scheduling(spec)
        )

    def node_features(self, declared: tuple[str, ...]) -> frozenset[str]:
        """The registered features among a node's declared ones, read as a sorted list.

        The API server keeps the list sorted; read in one merged pass, as upstream does, a
        name out of order is passed over.
        """
        known = self._node_sets.get(declared)
        if known is None:
            found: list[str] = []
            i = j = 0
            while i < len(declared) and j < len(self.names):
                if declared[i] == self.names[j]:
                    found.append(declared[i])
                    i += 1
                    j += 1
                elif declared[i] < self.names[j]:
                    i += 1
                else:
                    j += 1
            known = self._node_sets[declared] = frozenset(found)
        return known


DEFAULT_REGISTRY: Final = FeatureRegistry(ALL_FEATURES)
