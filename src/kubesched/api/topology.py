"""A node's zone key from its labels (component-helpers' GetZoneKey): shared by the cache's node tree and plugins."""

from __future__ import annotations

from collections.abc import Mapping

# The deprecated beta labels first, as upstream reads them.
REGION_LABELS = ("failure-domain.beta.kubernetes.io/region", "topology.kubernetes.io/region")
ZONE_LABELS = ("failure-domain.beta.kubernetes.io/zone", "topology.kubernetes.io/zone")


def get_zone_key(labels: Mapping[str, str]) -> str:
    """Region and zone of a node, or "" when it has neither."""
    region = labels.get(REGION_LABELS[0]) or labels.get(REGION_LABELS[1]) or ""
    zone = labels.get(ZONE_LABELS[0]) or labels.get(ZONE_LABELS[1]) or ""
    if not region and not zone:
        return ""
    return f"{region}:\x00:{zone}"


def zone_of(labels: Mapping[str, str]) -> str:
    """A node's zone as people name it: the GA label, else the deprecated beta one; "" with neither."""
    return labels.get(ZONE_LABELS[1]) or labels.get(ZONE_LABELS[0]) or ""
