"""A node like this one (`node_copy`): the shape kept, the machine's own fields dropped, names that stay host names.

The UI's "Add node like this one" and whatif's template nodes are made by the same function;
these tests pin what both get.
"""

from __future__ import annotations

import copy
import ipaddress
from typing import Any

from hypothesis import given
from hypothesis import strategies as st

from kubesched.api.names import is_dns1123_subdomain, is_valid_label_value
from kubesched.simulator.inputs import NodeTemplate
from kubesched.simulator.node_copy import HOSTNAME_LABEL, node_like, nodes_like

EKS_NAME = "ip-10-0-0-10.eu-west-1.compute.internal"


def eks_node(name: str = EKS_NAME, hostname: str | None = None) -> dict[str, Any]:
    """An EKS node as `kubectl get node -o yaml` dumps it, with the fields that belong to its machine."""
    return {
        "apiVersion": "v1",
        "kind": "Node",
        "metadata": {
            "name": name,
            "uid": "4a1c1a7e-0000-0000-0000-000000000010",
            "resourceVersion": "123",
            "creationTimestamp": "2026-01-01T00:00:00Z",
            "labels": {HOSTNAME_LABEL: hostname or name, "topology.kubernetes.io/zone": "eu-west-1a"},
            "annotations": {"node.alpha.kubernetes.io/ttl": "0"},
        },
        "spec": {
            "providerID": "aws:///eu-west-1a/i-0123456789abcdef0",
            "podCIDR": "10.244.1.0/24",
            "podCIDRs": ["10.244.1.0/24"],
            "taints": [{"key": "dedicated", "value": "gpu", "effect": "NoSchedule"}],
        },
        "status": {
            "addresses": [{"type": "InternalIP", "address": "10.0.0.10"}, {"type": "Hostname", "address": name}],
            "allocatable": {"cpu": "7910m", "memory": "31386148Ki", "pods": "58"},
            "capacity": {"cpu": "8", "memory": "32408356Ki", "pods": "58"},
            "nodeInfo": {"machineID": "ec2abc", "systemUUID": "ec2abc", "bootID": "b-1", "kubeletVersion": "v1.36.0"},
            "volumesAttached": [{"name": "kubernetes.io/csi/ebs.csi.aws.com^vol-1", "devicePath": ""}],
        },
    }


def test_a_copy_keeps_the_shape_and_drops_the_machine() -> None:
    source = eks_node()
    before = copy.deepcopy(source)
    new = node_like(source, "ip-10-0-0-10-2.eu-west-1.compute.internal")
    assert new["metadata"] == {
        "name": "ip-10-0-0-10-2.eu-west-1.compute.internal",
        "labels": {
            HOSTNAME_LABEL: "ip-10-0-0-10-2.eu-west-1.compute.internal",
            "topology.kubernetes.io/zone": "eu-west-1a",
        },
        "annotations": {"node.alpha.kubernetes.io/ttl": "0"},
    }
    assert new["spec"] == {"taints": source["spec"]["taints"]}  # no providerID, podCIDR, podCIDRs
    assert "addresses" not in new["status"] and "volumesAttached" not in new["status"]
    assert new["status"]["nodeInfo"] == {"kubeletVersion": "v1.36.0"}
    assert new["status"]["allocatable"] == source["status"]["allocatable"]
    assert source == before  # the original is left alone


def test_a_dns_name_is_numbered_in_its_first_label() -> None:
    made = nodes_like(eks_node(), 3, taken={EKS_NAME, "ip-10-0-0-10-3.eu-west-1.compute.internal"})
    names = [n["metadata"]["name"] for n in made]
    assert names == [
        "ip-10-0-0-10-2.eu-west-1.compute.internal",
        "ip-10-0-0-10-4.eu-west-1.compute.internal",  # -3 is taken
        "ip-10-0-0-10-5.eu-west-1.compute.internal",
    ]
    assert [n["metadata"]["labels"][HOSTNAME_LABEL] for n in made] == names


def test_a_short_hostname_label_follows_the_first_label() -> None:
    (made,) = nodes_like(eks_node(hostname="ip-10-0-0-10"), 1)
    assert made["metadata"]["name"] == "ip-10-0-0-10-2.eu-west-1.compute.internal"
    assert made["metadata"]["labels"][HOSTNAME_LABEL] == "ip-10-0-0-10-2"


def test_a_taken_hostname_is_skipped_too() -> None:
    made = nodes_like(eks_node(hostname="ip-10-0-0-10"), 1, taken={"ip-10-0-0-10-2"})
    assert made[0]["metadata"]["name"] == "ip-10-0-0-10-3.eu-west-1.compute.internal"


def test_plain_names_count_on_and_addresses_are_not_renumbered() -> None:
    def names(name: str, taken: set[str] | None = None) -> list[str]:
        return [n["metadata"]["name"] for n in nodes_like(eks_node(name), 2, taken or {name})]

    assert names("node-a1") == ["node-a2", "node-a3"]
    assert names("worker") == ["worker-2", "worker-3"]
    assert names("node-a1", {"node-a1", "node-a2"}) == ["node-a3", "node-a4"]
    assert names("10.0.0.10") == ["10.0.0.10-2", "10.0.0.10-3"]  # not 10.0.0.11, another machine's address


def test_whatif_template_nodes_are_made_the_same_way() -> None:
    source = eks_node()
    (added,) = NodeTemplate("t.yaml", source).nodes(1, taken={EKS_NAME})
    assert added["metadata"]["name"] == "ip-10-0-0-10-whatif-1.eu-west-1.compute.internal"
    assert added == node_like(source, "ip-10-0-0-10-whatif-1.eu-west-1.compute.internal")
    assert "providerID" not in added["spec"] and "addresses" not in added["status"]


def _is_address(name: str) -> bool:
    try:
        ipaddress.ip_address(name)
    except ValueError:
        return False
    return True


_LABEL = st.from_regex(r"[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?", fullmatch=True)
_DNS_NAME = st.lists(_LABEL, min_size=1, max_size=5).map(".".join).filter(lambda n: len(n) <= 253)
_IP = st.ip_addresses(v=4).map(str)


@given(
    name=st.one_of(_DNS_NAME, _IP),
    hostname=st.one_of(st.none(), _LABEL, st.just("same")),
    count=st.integers(min_value=1, max_value=12),
    tag=st.sampled_from(["", "whatif"]),
    data=st.data(),
)
def test_copies_always_have_valid_fresh_names(
    name: str, hostname: str | None, count: int, tag: str, data: st.DataObject
) -> None:
    """Any valid node name, hostname label and taken names: `count` copies, names and hostnames new and valid."""
    source = eks_node(name, hostname=name if hostname == "same" else hostname)
    if hostname is None:
        del source["metadata"]["labels"][HOSTNAME_LABEL]
    taken = {name, *data.draw(st.lists(st.one_of(_DNS_NAME, _LABEL), max_size=5))}
    made = nodes_like(source, count, taken, tag=tag)
    names = [n["metadata"]["name"] for n in made]
    hosts = [n["metadata"]["labels"][HOSTNAME_LABEL] for n in made]
    assert len(names) == count and len(set(names)) == count and len(set(hosts)) == count
    assert not (set(names) | set(hosts)) & taken
    for new, host in zip(names, hosts, strict=True):
        assert is_dns1123_subdomain(new) == (), new
        assert is_valid_label_value(host) == (), host
        if _is_address(name):  # the number goes after it
            assert new.startswith(f"{name}-"), new
        else:  # the same domain
            assert new.partition(".")[2] == name.partition(".")[2], new
