"""A node like this one: new nodes of an existing node's shape, for `whatif`, `sweep` and the UI.

The copy keeps what makes the node's shape (labels, annotations, taints, `unschedulable`,
capacity, allocatable, images, conditions) and drops what belongs to one machine: its
cloud instance (`spec.providerID`, `externalID`), its pod address range (`podCIDR(s)`),
its addresses, attached volumes and machine ids, and the API server's metadata. Each copy
is its own host: its `kubernetes.io/hostname` label is set as its kubelet would.

Names change in the first DNS label only, so a copy of an EKS node
`ip-10-0-0-10.eu-west-1.compute.internal` is `ip-10-0-0-10-2.eu-west-1.compute.internal`,
still a host in the same domain, rather than `...compute.internal-2`. A name already taken,
as a node's name or as a hostname label, is skipped.
"""

from __future__ import annotations

import copy
import ipaddress
import itertools
import re
from collections.abc import Iterable, Iterator, Mapping
from typing import Any

__all__ = ["HOSTNAME_LABEL", "node_like", "nodes_like"]

HOSTNAME_LABEL = "kubernetes.io/hostname"
PER_NODE_SPEC = ("providerID", "externalID", "podCIDR", "podCIDRs")
PER_NODE_STATUS = ("addresses", "volumesAttached", "volumesInUse")
PER_NODE_INFO = ("machineID", "systemUUID", "bootID")
MAX_NAME = 253  # a node name is a DNS subdomain
MAX_LABEL = 63  # one DNS label; also the most a label value may hold
_TRAILING_NUMBER = re.compile(r"(.*?)(\d+)")


def nodes_like(
    node: Mapping[str, Any], count: int, taken: Iterable[str] = (), *, tag: str = ""
) -> list[dict[str, Any]]:
    """`count` new nodes of `node`'s shape with the next free names.

    With `tag`, the first label gets `-<tag>-1`, `-<tag>-2`, ... Without, a plain name counts on from its
    trailing number (`node-a1`: `node-a2`, `node-a3`) or gets `-2`, `-3`; a name with a domain, or an IP
    address, always gets `-2`, `-3` (its number is usually part of an address: `ip-10-0-0-10`). `taken`:
    node names and hostname labels already in use.
    """
    name = _name(node)
    used = set(taken)
    out: list[dict[str, Any]] = []
    first, rest = _split(name)
    for label in _labels(first, rest, name, tag):
        if len(out) == count:
            break
        new = label + rest
        host = _hostname(node, name, first, label, new)
        if new in used or host in used:
            continue
        used.update((new, host))
        out.append(node_like(node, new, host))
    return out


def node_like(node: Mapping[str, Any], name: str, hostname: str | None = None) -> dict[str, Any]:
    """A copy of `node`'s shape named `name`, with `hostname` (default: `name`) as its hostname label."""
    meta = node.get("metadata")
    meta = meta if isinstance(meta, dict) else {}
    out: dict[str, Any] = copy.deepcopy({k: v for k, v in node.items() if k != "metadata"})
    labels = meta.get("labels")
    new_meta: dict[str, Any] = {
        "name": name,
        "labels": {**(labels if isinstance(labels, dict) else {}), HOSTNAME_LABEL: hostname or name},
    }
    if isinstance(meta.get("annotations"), dict) and meta["annotations"]:
        new_meta["annotations"] = copy.deepcopy(meta["annotations"])
    out["metadata"] = new_meta
    _drop(out.get("spec"), PER_NODE_SPEC)
    status = out.get("status")
    _drop(status, PER_NODE_STATUS)
    if isinstance(status, dict):
        _drop(status.get("nodeInfo"), PER_NODE_INFO)
    return out


def _drop(obj: Any, fields: Iterable[str]) -> None:
    if isinstance(obj, dict):
        for f in fields:
            obj.pop(f, None)


def _name(node: Mapping[str, Any]) -> str:
    meta = node.get("metadata")
    name = meta.get("name") if isinstance(meta, dict) else None
    return name if isinstance(name, str) else ""


def _is_ip(name: str) -> bool:
    try:
        ipaddress.ip_address(name)
    except ValueError:
        return False
    return True


def _split(name: str) -> tuple[str, str]:
    """The first DNS label and the rest (with its dot); an IP address is all first label."""
    if _is_ip(name):
        return name, ""
    first, dot, rest = name.partition(".")
    return first, dot + rest


def _labels(first: str, rest: str, name: str, tag: str) -> Iterator[str]:
    """First labels for the copies, in order, each cut to fit a DNS label and the name to a subdomain."""
    match = None if tag or rest or _is_ip(name) else _TRAILING_NUMBER.fullmatch(first)
    if tag:
        stem, start = f"{first}-{tag}-", 1
    elif match is not None:
        stem, start = match[1], int(match[2]) + 1
    else:
        stem, start = f"{first}-", 2
    room = MAX_NAME - len(rest) if _is_ip(name) else min(MAX_LABEL, MAX_NAME - len(rest))
    for n in itertools.count(start):
        number = str(n)
        yield stem[: max(0, room - len(number))] + number


def _hostname(node: Mapping[str, Any], name: str, first: str, label: str, new: str) -> str:
    """The copy's hostname label: the original's with the same first label changed when it names the same host
    (`ip-10-0-0-10` for `ip-10-0-0-10.eu-west-1...`), else the new name; within a label value's 63 bytes."""
    meta = node.get("metadata")
    labels = meta.get("labels") if isinstance(meta, dict) else None
    old = labels.get(HOSTNAME_LABEL) if isinstance(labels, dict) else None
    host = new
    if isinstance(old, str) and old != name and not _is_ip(name) and old.partition(".")[0] == first:
        host = label + old[len(first) :]
    return host if len(host) <= MAX_LABEL else label[:MAX_LABEL]
