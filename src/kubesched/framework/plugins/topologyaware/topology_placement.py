"""TopologyPlacementGenerator (topologyaware/topology_placement.go, v1.36): a PlacementGenerate plugin.

A PodGroup with a topology constraint is tried on each domain of its key (all nodes with
one value of the label) as a whole; once some of its pods are placed, only their domain.
A group without constraints gets the parent placement back unchanged.
"""

from __future__ import annotations

from typing import Any, Final

from kubesched.config import names
from kubesched.framework.cycle_state import CycleState
from kubesched.framework.interface import Handle, Placement, PlacementGeneratePlugin
from kubesched.framework.node_info import NodeInfo
from kubesched.framework.plugins.helper.pod_group import topology_key
from kubesched.framework.status import Code, Status

NAME: Final = names.TOPOLOGY_PLACEMENT_GENERATOR
POD_GROUP: Final = "PodGroup"


class TopologyPlacementGenerator(PlacementGeneratePlugin):
    NAME = NAME

    def __init__(self, handle: Handle) -> None:
        self.handle = handle

    def generate_placements(
        self, state: CycleState, namespace: str, group: str, parent: Placement
    ) -> tuple[list[Placement], Status | None]:
        pod_group = self.handle.listers().get(POD_GROUP, namespace, group)
        if pod_group is None:
            return [], Status(Code.ERROR, f'podgroup.scheduling.k8s.io "{group}" not found')
        key = topology_key(pod_group)
        if key is None:
            return [parent], None
        required, problem = self._scheduled_domain(namespace, group, key)
        if problem:
            return [], Status(Code.ERROR, f"cannot determine domain for already scheduled pods: {problem}")
        domains: dict[str, list[NodeInfo]] = {}
        for ni in parent.nodes:
            domain = ni.labels.get(key)
            if domain is not None and (required is None or domain == required):
                domains.setdefault(domain, []).append(ni)
        return [Placement(domain, nodes) for domain, nodes in domains.items()], None

    def _scheduled_domain(self, namespace: str, group: str, key: str) -> tuple[str | None, str]:
        """The one domain of the group's placed pods (None when none is placed), or why there is none."""
        states = self.handle.pod_groups
        members = states.get(namespace, group) if states is not None else None
        if members is None:
            return None, f"pod group state not found for pod group {namespace}/{group}"
        found: str | None = None
        snapshot = self.handle.shared_lister()
        for pod in members.scheduled_pods():
            ni = snapshot.get(pod.node_name)
            if ni is None:
                return None, f'getting node for pod {pod.key}: nodeinfo not found for node name "{pod.node_name}"'
            domain = ni.labels.get(key)
            if domain is None:
                return None, f"no topology domain found for pod {pod.key}"
            if found is not None and found != domain:
                return None, f"more than 1 domain found for pod group: {found}, {domain}"
            found = domain
        return found, ""


def new(args: Any, handle: Handle) -> TopologyPlacementGenerator:
    return TopologyPlacementGenerator(handle)
