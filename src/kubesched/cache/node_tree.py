"""NodeTree: nodes grouped by zone, listed round-robin across zones (backend/cache/node_tree.go)."""

from __future__ import annotations

from collections.abc import Mapping

from kubesched.api.topology import get_zone_key


class NodeTree:
    def __init__(self) -> None:
        self.tree: dict[str, list[str]] = {}
        self.zones: list[str] = []
        self.num_nodes = 0
        self._members: set[tuple[str, str]] = set()  # (zone, name): a zone's list is not searched node by node

    def add_node(self, name: str, labels: Mapping[str, str]) -> None:
        zone = get_zone_key(labels)
        if (zone, name) in self._members:
            return
        self._members.add((zone, name))
        names = self.tree.get(zone)
        if names is None:
            self.tree[zone] = [name]
            self.zones.append(zone)
        else:
            names.append(name)
        self.num_nodes += 1

    def remove_node(self, name: str, labels: Mapping[str, str]) -> bool:
        zone = get_zone_key(labels)
        names = self.tree.get(zone)
        if names is None or (zone, name) not in self._members:
            return False
        self._members.discard((zone, name))
        names.remove(name)
        if not names:
            del self.tree[zone]
            self.zones.remove(zone)
        self.num_nodes -= 1
        return True

    def update_node(self, name: str, old: Mapping[str, str] | None, new: Mapping[str, str]) -> None:
        if old is not None and get_zone_key(old) == get_zone_key(new):
            return
        if old is not None:
            self.remove_node(name, old)
        self.add_node(name, new)

    def list(self) -> list[str]:
        """One node per zone per pass, zones in first-seen order, nodes in insertion order."""
        out: list[str] = []
        depth = 0
        while len(out) < self.num_nodes:
            for zone in self.zones:
                names = self.tree[zone]
                if depth < len(names):
                    out.append(names[depth])
            depth += 1
        return out
