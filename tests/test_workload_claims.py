"""Claims shared by a workload (DRAWorkloadResourceClaims, v1.36 alpha): the helpers of
k8s.io/dynamic-resource-allocation/resourceclaim (upstream's table cases), and gangs sharing a
claim through `simulate` with the gate on and off."""

from __future__ import annotations

import copy
import json
import random
from pathlib import Path
from typing import Any

import pytest
import yaml
from hypothesis import given
from hypothesis import strategies as st

from kubesched.apiserver.workload_api import apply_gates, validate_pod_group
from kubesched.backend.embedded.cluster import EmbeddedCluster
from kubesched.backend.embedded.controllers.controller_utils import NameGenerator
from kubesched.backend.embedded.controllers.resource_claim import FINALIZER, ResourceClaimController
from kubesched.cli import main
from kubesched.framework.plugins.dynamicresources.resourceclaim import (
    ClaimError,
    bind_to,
    check_is_for_pod,
    is_reserved_for_pod,
    pod_group_claim_name,
)
from kubesched.framework.types import new_pod_info
from kubesched.release import release
from kubesched.simulator.load import LoadedInput, add_document, finish_loading
from kubesched.simulator.run import SimulationResult, build_config, simulate

Obj = dict[str, Any]
NS = "my-namespace"
GROUP = "my-podgroup"
POD_RESERVATION = {"resource": "pods", "name": "my-pod", "uid": "pod-uid"}
GROUP_RESERVATION = {"apiGroup": "scheduling.k8s.io", "resource": "podgroups", "name": GROUP, "uid": "podgroup-uid"}
GATES = "GenericWorkload=true,GangScheduling=true,DRAWorkloadResourceClaims=true"


def pod(group: str | None = GROUP) -> Any:
    spec: Obj = {"containers": [{"name": "c", "image": "i"}]}
    if group is not None:
        spec["schedulingGroup"] = {"podGroupName": group}
    return new_pod_info(
        {"kind": "Pod", "metadata": {"name": "my-pod", "namespace": NS, "uid": "pod-uid"}, "spec": spec}
    )


def pod_group(*claims: Obj, namespace: str = NS, name: str = GROUP) -> Obj:
    return {
        "kind": "PodGroup",
        "metadata": {"name": name, "namespace": namespace, "uid": "podgroup-uid"},
        "spec": {"resourceClaims": list(claims)},
    }


def claim_owned_by(*refs: Obj, namespace: str = NS, reserved: tuple[Obj, ...] = ()) -> Obj:
    return {
        "kind": "ResourceClaim",
        "metadata": {"name": "my-claim", "namespace": namespace, "ownerReferences": list(refs)},
        "status": {"reservedFor": list(reserved)},
    }


def owner(kind: str, name: str, uid: str, api_version: str, controller: bool = True) -> Obj:
    return {"apiVersion": api_version, "kind": kind, "name": name, "uid": uid, "controller": controller}


NAMED = {"name": "my-claim", "resourceClaimName": "my-resource-claim"}
TEMPLATED = {"name": "my-claim", "resourceClaimTemplateName": "my-resource-claim"}


@pytest.mark.parametrize(
    ("group", "entry", "want"),
    [  # TestBindTo
        (None, {"name": "my-claim"}, "Pod my-namespace/my-pod claim my-claim: none of the supported fields are set"),
        (None, NAMED, POD_RESERVATION),
        (None, TEMPLATED, POD_RESERVATION),
        (pod_group(NAMED), NAMED, GROUP_RESERVATION),
        (pod_group(TEMPLATED), TEMPLATED, GROUP_RESERVATION),
        (
            pod_group(NAMED, namespace="not-" + NS),
            NAMED,
            "Pod my-namespace/my-pod belongs to PodGroup my-namespace/my-podgroup, "
            "not PodGroup not-my-namespace/my-podgroup",
        ),
        (
            pod_group(NAMED, name="not-" + GROUP),
            NAMED,
            "Pod my-namespace/my-pod belongs to PodGroup my-namespace/my-podgroup, "
            "not PodGroup my-namespace/not-my-podgroup",
        ),
        (
            pod_group({**NAMED, "name": "not-my-claim"}, {**NAMED, "name": "nor-my-claim"}),
            NAMED,
            POD_RESERVATION,
        ),
        (pod_group({**NAMED, "name": "not-my-claim"}, NAMED), NAMED, GROUP_RESERVATION),
        (pod_group({**NAMED, "name": "other"}), NAMED, POD_RESERVATION),  # claim name mismatch
        (pod_group({**NAMED, "resourceClaimName": "other"}), NAMED, POD_RESERVATION),
        (pod_group(TEMPLATED), NAMED, POD_RESERVATION),  # a claim against a template of the same name
        (
            pod_group({"name": "broken"}),
            NAMED,
            "PodGroup my-namespace/my-podgroup claim broken: none of the supported fields are set",
        ),
    ],
)
def test_bind_to(group: Obj | None, entry: Obj, want: Obj | str) -> None:
    if isinstance(want, str):
        with pytest.raises(ClaimError) as err:
            bind_to(pod(), group, entry)
        assert str(err.value) == want
    else:
        assert bind_to(pod(), group, entry) == want


def test_bind_to_a_pod_without_group() -> None:
    with pytest.raises(ClaimError, match="^Pod my-namespace/my-pod does not belong to a PodGroup$"):
        bind_to(pod(None), pod_group(NAMED), NAMED)


SCHED = "scheduling.k8s.io/v1alpha2"


@pytest.mark.parametrize(
    ("claim", "accept", "problem"),
    [  # TestResourceClaimIsFor, with and without PodGroup owners accepted
        (claim_owned_by(owner("Pod", "my-pod", "pod-uid", "v1")), True, ""),
        (claim_owned_by(owner("Pod", "other", "other-uid", "v1")), False, "(Pod is not owner)"),
        (claim_owned_by(), False, "(Pod is not owner)"),
        (claim_owned_by(namespace="other"), True, "is not in the same namespace"),
        (claim_owned_by(owner("PodGroup", GROUP, "podgroup-uid", SCHED)), True, ""),
        (claim_owned_by(owner("PodGroup", GROUP, "podgroup-uid", "scheduling.k8s.io/v1beta1")), True, ""),
        (claim_owned_by(owner("PodGroup", GROUP, "podgroup-uid", SCHED)), False, "(Pod is not owner)"),
        (
            claim_owned_by(owner("PodGroup", "other", "podgroup-uid", SCHED)),
            True,
            "(neither Pod nor PodGroup my-podgroup is the owner)",
        ),
        (
            claim_owned_by(owner("PodGroup", GROUP, "podgroup-uid", "example.com/v1")),
            True,
            "(neither Pod nor PodGroup my-podgroup is the owner)",
        ),
        (
            claim_owned_by(owner("PodGroup", GROUP, "podgroup-uid", SCHED, controller=False)),
            True,
            "(neither Pod nor PodGroup my-podgroup is the owner)",
        ),
    ],
)
def test_is_for_pod(claim: Obj, accept: bool, problem: str) -> None:
    if not problem:
        check_is_for_pod(pod(), claim, accept)
        return
    with pytest.raises(ClaimError) as err:
        check_is_for_pod(pod(), claim, accept)
    assert problem in str(err.value)


OTHER_GROUP = {**GROUP_RESERVATION, "name": "other", "uid": "other-uid"}


@pytest.mark.parametrize(
    ("reserved", "accept", "want"),
    [  # TestIsReservedForPod
        ((), True, False),
        ((POD_RESERVATION,), True, True),
        (({**POD_RESERVATION, "uid": "other"},), True, False),
        (({**POD_RESERVATION, "uid": "other"}, POD_RESERVATION), True, True),
        (({**POD_RESERVATION, "uid": "a"}, {**POD_RESERVATION, "uid": "b"}), True, False),
        ((GROUP_RESERVATION,), True, True),
        ((GROUP_RESERVATION,), False, False),
        ((POD_RESERVATION, GROUP_RESERVATION), False, True),
        ((OTHER_GROUP,), True, False),
        ((OTHER_GROUP, GROUP_RESERVATION), True, True),
        ((OTHER_GROUP, {**POD_RESERVATION, "uid": "a"}), True, False),
        (({**GROUP_RESERVATION, "apiGroup": "example.com"},), True, False),
    ],
)
def test_is_reserved_for_pod(reserved: tuple[Obj, ...], accept: bool, want: bool) -> None:
    assert is_reserved_for_pod(pod(), claim_owned_by(reserved=reserved), accept) is want


def test_pod_group_claim_name() -> None:
    group = pod_group(NAMED, TEMPLATED)
    assert pod_group_claim_name(group, NAMED) == ("my-resource-claim", False)
    with pytest.raises(ClaimError, match="^PodGroup my-namespace/my-podgroup: ResourceClaim not created yet$"):
        pod_group_claim_name(group, TEMPLATED)
    group["status"] = {"resourceClaimStatuses": [{"name": "my-claim", "resourceClaimName": "made"}]}
    assert pod_group_claim_name(group, TEMPLATED) == ("made", True)
    group["status"] = {"resourceClaimStatuses": [{"name": "my-claim"}]}
    assert pod_group_claim_name(group, TEMPLATED) == (None, True)
    with pytest.raises(ClaimError, match="spec.resourceClaim broken: none of the supported fields are set$"):
        pod_group_claim_name(group, {"name": "broken"})


entries = st.fixed_dictionaries(
    {"name": st.sampled_from(["a", "b"])},
    optional={"resourceClaimName": st.sampled_from(["x", "y"]), "resourceClaimTemplateName": st.sampled_from(["x"])},
).filter(lambda e: "resourceClaimName" in e or "resourceClaimTemplateName" in e)


@given(entry=entries, group_claims=st.lists(entries, max_size=3))
def test_the_group_is_the_consumer_exactly_when_its_claims_list_the_entry(entry: Obj, group_claims: list[Obj]) -> None:
    got = bind_to(pod(), pod_group(*group_claims), entry)
    assert (got == GROUP_RESERVATION) is (entry in group_claims)
    assert got in (GROUP_RESERVATION, POD_RESERVATION)


SUBDOMAIN = (
    "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start "
    "and end with an alphanumeric character (e.g. 'example.com', regex used for validation is "
    "'[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')"
)


@pytest.mark.parametrize(
    ("claims", "status", "want"),
    [  # the v1.36 API server's words (tests/upstream/test_live_workload_claims.py compares them live)
        (
            [{"name": "a", "resourceClaimName": "Bad_Name"}],
            None,
            [f'spec.resourceClaims[0].resourceClaimName: Invalid value: "Bad_Name": {SUBDOMAIN}'],
        ),
        (
            [{"name": "a", "resourceClaimTemplateName": ""}],
            None,
            [f'spec.resourceClaims[0].resourceClaimTemplateName: Invalid value: "": {SUBDOMAIN}'],
        ),
        (
            [{"name": "a", "resourceClaimName": "x"}],
            [{"name": "a", "resourceClaimName": "Bad_"}, {"name": "zz"}],
            [
                'status.resourceClaimStatuses[1].name: Invalid value: "zz": must match the name of an entry in '
                "`spec.resourceClaims`",
                f'status.resourceClaimStatuses[0].resourceClaimName: Invalid value: "Bad_": {SUBDOMAIN}',
            ],
        ),
        ([{"name": "a", "resourceClaimName": "x"}], [{"name": "a", "resourceClaimName": "made"}], []),
    ],
)
def test_pod_group_claims_are_validated_as_the_server_does(
    claims: list[Obj], status: list[Obj] | None, want: list[str]
) -> None:
    group: Obj = {"spec": {"schedulingPolicy": {"gang": {"minCount": 1}}, "resourceClaims": claims}}
    if status is not None:
        group["status"] = {"resourceClaimStatuses": status}
    assert validate_pod_group(group) == want


def test_without_the_gate_a_pod_groups_claims_and_their_status_are_dropped() -> None:
    group: Obj = {
        "kind": "PodGroup",
        "metadata": {"name": "g", "namespace": "default"},
        "spec": {"resourceClaims": [NAMED]},
        "status": {"resourceClaimStatuses": [{"name": "my-claim", "resourceClaimName": "x"}]},
    }
    kept = copy.deepcopy(group)
    apply_gates([group], release("1.36", "GenericWorkload=true"))
    assert "resourceClaims" not in group["spec"] and "resourceClaimStatuses" not in group["status"]
    apply_gates([kept], release("1.36", GATES))
    assert kept["spec"]["resourceClaims"] == [NAMED]
    assert kept["status"]["resourceClaimStatuses"] == [{"name": "my-claim", "resourceClaimName": "x"}]


# Through the simulator.


def node(name: str, cpu: str) -> Obj:
    alloc = {"cpu": cpu, "memory": "8Gi", "pods": "110"}
    return {
        "apiVersion": "v1",
        "kind": "Node",
        "metadata": {"name": name, "labels": {"kubernetes.io/hostname": name}},
        "status": {"capacity": alloc, "allocatable": alloc},
    }


def gpu_slice(node_name: str) -> Obj:
    return {
        "apiVersion": "resource.k8s.io/v1",
        "kind": "ResourceSlice",
        "metadata": {"name": f"gpu-{node_name}"},
        "spec": {
            "driver": "gpu.example.com",
            "pool": {"name": node_name, "generation": 1, "resourceSliceCount": 1},
            "nodeName": node_name,
            "devices": [{"name": "gpu-0"}],
        },
    }


CLASS = {
    "apiVersion": "resource.k8s.io/v1",
    "kind": "DeviceClass",
    "metadata": {"name": "gpu"},
    "spec": {"selectors": [{"cel": {"expression": 'device.driver == "gpu.example.com"'}}]},
}
DEVICES = {"requests": [{"name": "r", "exactly": {"deviceClassName": "gpu"}}]}


def cluster(entry: Obj, members: int = 3) -> list[Obj]:
    """Four nodes, a GPU on n1 only (the smallest but one), and a gang whose PodGroup and members name `entry`."""
    docs: list[Obj] = [node(n, c) for n, c in (("n1", "4"), ("n2", "8"), ("n3", "16"), ("n4", "2"))]
    docs += [gpu_slice("n1"), CLASS]
    docs.append(
        {
            "apiVersion": "scheduling.k8s.io/v1alpha2",
            "kind": "PodGroup",
            "metadata": {"name": "g", "namespace": "default"},
            "spec": {"schedulingPolicy": {"gang": {"minCount": members}}, "resourceClaims": [dict(entry)]},
        }
    )
    for i in range(members):
        container = {"name": "c", "image": "i", "resources": {"requests": {"cpu": "500m"}, "claims": [{"name": "gpu"}]}}
        docs.append(
            {
                "apiVersion": "v1",
                "kind": "Pod",
                "metadata": {"name": f"p{i}", "namespace": "default"},
                "spec": {
                    "schedulingGroup": {"podGroupName": "g"},
                    "resourceClaims": [dict(entry)],
                    "containers": [container],
                },
            }
        )
    return docs


def simulated(docs: list[Obj], gates: str) -> SimulationResult:
    loaded = LoadedInput()
    for i, doc in enumerate(copy.deepcopy(docs)):
        add_document(loaded, doc, "test", i)
    finish_loading(loaded)
    return simulate(loaded, build_config(loaded, None, "", release=release("1.36", gates)), seed=1, record=False)


def placements(result: SimulationResult) -> dict[str, str | None]:
    """Each pending pod's node at the end (None: not placed)."""
    by_uid = {o.pod.uid: o for o in result.outcomes.values()}
    out: dict[str, str | None] = {}
    for p in result.pending:
        o = by_uid.get(p.uid)
        out[p.name] = o.node if o is not None and o.result == "Scheduled" else None
    return out


def claims_of(result: SimulationResult) -> list[Obj]:
    assert result.scheduler is not None
    return sorted(result.scheduler.lister.list("ResourceClaim"), key=lambda c: c["metadata"]["name"])


def test_a_claim_named_by_a_gang_is_allocated_once_and_reserved_for_its_podgroup() -> None:
    shared = {
        "apiVersion": "resource.k8s.io/v1",
        "kind": "ResourceClaim",
        "metadata": {"name": "shared", "namespace": "default"},
    }
    result = simulated(
        [*cluster({"name": "gpu", "resourceClaimName": "shared"}), {**shared, "spec": {"devices": DEVICES}}], GATES
    )
    # The members after the first reuse its pending allocation wherever they fit; only the first to bind writes it,
    # the others fail PreBind and come back to the node the allocation names.
    assert placements(result) == {"p0": "n1", "p1": "n1", "p2": "n1"}
    (claim,) = claims_of(result)
    assert claim["status"]["reservedFor"] == [
        {"apiGroup": "scheduling.k8s.io", "resource": "podgroups", "name": "g", "uid": "default/g"}
    ]
    assert [r["device"] for r in claim["status"]["allocation"]["devices"]["results"]] == ["gpu-0"]
    errors = [e for e in result.events if e.type == "Error"]
    assert errors and all(
        "claim default/shared got allocated elsewhere in the meantime" in (e.message or "") for e in errors
    )


def test_without_the_gate_each_member_reserves_the_claim_for_itself() -> None:
    shared = {
        "apiVersion": "resource.k8s.io/v1",
        "kind": "ResourceClaim",
        "metadata": {"name": "shared", "namespace": "default"},
    }
    gates = "GenericWorkload=true,GangScheduling=true"
    result = simulated(
        [*cluster({"name": "gpu", "resourceClaimName": "shared"}), {**shared, "spec": {"devices": DEVICES}}], gates
    )
    assert set(placements(result).values()) == {"n1"}
    (claim,) = claims_of(result)
    assert sorted(r["name"] for r in claim["status"]["reservedFor"]) == ["p0", "p1", "p2"]


def test_a_podgroup_template_claim_is_made_once_for_the_group() -> None:
    template = {
        "apiVersion": "resource.k8s.io/v1",
        "kind": "ResourceClaimTemplate",
        "metadata": {"name": "one-gpu", "namespace": "default"},
        "spec": {"spec": {"devices": DEVICES}},
    }
    result = simulated([*cluster({"name": "gpu", "resourceClaimTemplateName": "one-gpu"}), template], GATES)
    (claim,) = claims_of(result)
    name = claim["metadata"]["name"]
    assert name.startswith("g-gpu-")
    assert claim["metadata"]["ownerReferences"] == [
        {
            "apiVersion": "scheduling.k8s.io/v1alpha2",
            "kind": "PodGroup",
            "name": "g",
            "uid": "default/g",
            "controller": True,
        }
    ]
    assert claim["status"]["reservedFor"][0]["resource"] == "podgroups"
    assert set(placements(result).values()) == {"n1"}
    assert result.scheduler is not None
    group = result.scheduler.lister.get("PodGroup", "default", "g")
    assert group is not None and group["status"]["resourceClaimStatuses"] == [
        {"name": "gpu", "resourceClaimName": name}
    ]
    for member in placements(result):
        pod = result.scheduler.lister.get("Pod", "default", member)
        assert pod is not None and pod["status"]["resourceClaimStatuses"] == [
            {"name": "gpu", "resourceClaimName": name}
        ]


def test_two_gangs_for_one_device_the_second_waits_for_it() -> None:
    docs = cluster({"name": "gpu", "resourceClaimName": "shared"}, members=2)
    second = copy.deepcopy(docs)
    for doc in second:
        if doc["kind"] in ("Pod", "PodGroup"):
            doc["metadata"]["name"] = "h" + doc["metadata"]["name"][1:] if doc["kind"] == "Pod" else "h"
            if doc["kind"] == "Pod":
                doc["spec"]["schedulingGroup"] = {"podGroupName": "h"}
                doc["spec"]["resourceClaims"] = [{"name": "gpu", "resourceClaimName": "other"}]
            else:
                doc["spec"]["resourceClaims"] = [{"name": "gpu", "resourceClaimName": "other"}]
    extra = [d for d in second if d["kind"] in ("Pod", "PodGroup")]
    claims = [
        {
            "apiVersion": "resource.k8s.io/v1",
            "kind": "ResourceClaim",
            "metadata": {"name": n, "namespace": "default"},
            "spec": {"devices": DEVICES},
        }
        for n in ("shared", "other")
    ]
    result = simulated([*docs, *extra, *claims], GATES)
    placed = placements(result)
    waiting = [name for name, where in placed.items() if where is None]
    assert len(waiting) == 2 and len({n[0] for n in waiting}) == 1  # one whole gang waits for the only GPU
    assert {where for where in placed.values() if where} == {"n1"}


def test_simulate_on_the_command_line_shows_the_groups_claim_on_every_member(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    template = {
        "apiVersion": "resource.k8s.io/v1",
        "kind": "ResourceClaimTemplate",
        "metadata": {"name": "one-gpu", "namespace": "default"},
        "spec": {"spec": {"devices": DEVICES}},
    }
    path = tmp_path / "train.yaml"
    path.write_text(yaml.safe_dump_all([*cluster({"name": "gpu", "resourceClaimTemplateName": "one-gpu"}), template]))
    assert main(["simulate", str(path), "--output", "json", "-q", "--feature-gates", GATES]) == 0
    pods = json.loads(capsys.readouterr().out)["pods"]
    claims = {p["name"]: p["resourceClaims"] for p in pods}
    assert len(claims) == 3
    (shared,) = {c[0]["claim"] for c in claims.values()}
    assert shared.startswith("default/g-gpu-")
    assert all(
        c[0]["devices"] == [{"request": "r", "driver": "gpu.example.com", "pool": "n1", "device": "gpu-0"}]
        for c in claims.values()
    )


@pytest.mark.parametrize(
    "entry", [{"name": "gpu", "resourceClaimName": "shared"}, {"name": "gpu", "resourceClaimTemplateName": "one-gpu"}]
)
def test_a_deleted_podgroup_gives_back_its_claims(entry: Obj) -> None:
    objects: list[Obj] = [
        {
            "apiVersion": "resource.k8s.io/v1",
            "kind": "ResourceClaim",
            "metadata": {"name": "shared", "namespace": "default"},
            "spec": {"devices": DEVICES},
        },
        {
            "apiVersion": "resource.k8s.io/v1",
            "kind": "ResourceClaimTemplate",
            "metadata": {"name": "one-gpu", "namespace": "default"},
            "spec": {"spec": {"devices": DEVICES}},
        },
        {
            "apiVersion": "kubesched.io/v1alpha1",
            "kind": "Scenario",
            "metadata": {"name": "gone"},
            "steps": [{"at": "60s", "delete": [{"kind": "PodGroup", "name": "g"}]}],
        },
    ]
    result = simulated([*cluster(entry), *objects], GATES)
    assert set(placements(result).values()) == {"n1"}
    left = {c["metadata"]["name"]: c for c in claims_of(result)}
    if "resourceClaimTemplateName" in entry:
        assert list(left) == ["shared"]  # the group's own claim went with it (the garbage collector)
    else:
        status = left["shared"]["status"]
        assert not status.get("reservedFor") and "allocation" not in status  # unreserved, then deallocated


def test_the_controller_reserves_an_allocated_shared_claim_for_the_group_of_a_bound_member() -> None:
    """syncPod: a member already on a node whose claim is allocated but not reserved gets it reserved for its
    PodGroup (resourceclaim.BindTo), not for itself."""
    entry = {"name": "gpu", "resourceClaimName": "shared"}
    docs = cluster(entry, members=1)
    for doc in docs:
        if doc["kind"] == "Pod":
            doc["spec"]["nodeName"] = "n1"
    allocation = {
        "devices": {"results": [{"request": "r", "driver": "gpu.example.com", "pool": "n1", "device": "gpu-0"}]},
        "nodeSelector": {
            "nodeSelectorTerms": [{"matchFields": [{"key": "metadata.name", "operator": "In", "values": ["n1"]}]}]
        },
    }
    shared: Obj = {
        "apiVersion": "resource.k8s.io/v1",
        "kind": "ResourceClaim",
        "metadata": {"name": "shared", "namespace": "default"},
        "spec": {"devices": DEVICES},
        "status": {"allocation": allocation},
    }
    for gates, want in ((GATES, "podgroups"), ("GenericWorkload=true,GangScheduling=true", "pods")):
        (claim,) = claims_of(simulated([*docs, shared], gates))
        assert [r["resource"] for r in claim["status"]["reservedFor"]] == [want]


def test_members_created_before_their_podgroup_wait_for_its_claim() -> None:
    """With the gate, the controller does nothing for a pod whose PodGroup is not there yet (upstream's syncPod
    fails on it), so members that arrive first get the group's claim, not one each."""
    template = {
        "apiVersion": "resource.k8s.io/v1",
        "kind": "ResourceClaimTemplate",
        "metadata": {"name": "one-gpu", "namespace": "default"},
        "spec": {"spec": {"devices": DEVICES}},
    }
    docs = cluster({"name": "gpu", "resourceClaimTemplateName": "one-gpu"})
    (group,) = [d for d in docs if d["kind"] == "PodGroup"]
    later = {
        "apiVersion": "kubesched.io/v1alpha1",
        "kind": "Scenario",
        "metadata": {"name": "later"},
        "steps": [{"at": "60s", "create": [group]}],
    }
    result = simulated([*(d for d in docs if d is not group), template, later], GATES)
    (claim,) = claims_of(result)
    assert claim["metadata"]["ownerReferences"][0]["kind"] == "PodGroup"
    assert set(placements(result).values()) == {"n1"}


# The embedded resourceclaim controller alone: upstream's PodGroup cases of pkg/controller/resourceclaim.

TEMPLATE_ENTRY = {"name": "gpu", "resourceClaimTemplateName": "one-gpu"}
ONE_GPU: Obj = {
    "apiVersion": "resource.k8s.io/v1",
    "kind": "ResourceClaimTemplate",
    "metadata": {"name": "one-gpu", "namespace": "default"},
    "spec": {"spec": {"devices": DEVICES}},
}


def group_with_template(status: list[Obj] | None = None) -> Obj:
    group: Obj = {
        "apiVersion": "scheduling.k8s.io/v1alpha2",
        "kind": "PodGroup",
        "metadata": {"name": "g", "namespace": "default", "uid": "g-uid"},
        "spec": {"schedulingPolicy": {"gang": {"minCount": 1}}, "resourceClaims": [dict(TEMPLATE_ENTRY)]},
    }
    if status is not None:
        group["status"] = {"resourceClaimStatuses": status}
    return group


def member() -> Obj:
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": "web", "namespace": "default", "uid": "web-uid"},
        "spec": {
            "schedulingGroup": {"podGroupName": "g"},
            "resourceClaims": [dict(TEMPLATE_ENTRY)],
            "containers": [{"name": "c", "image": "i"}],
        },
    }


def group_claim(name: str = "g-gpu-abcde", owner_uid: str = "g-uid") -> Obj:
    return {
        "apiVersion": "resource.k8s.io/v1",
        "kind": "ResourceClaim",
        "metadata": {
            "name": name,
            "namespace": "default",
            "uid": f"uid-{name}",
            "annotations": {"resource.kubernetes.io/pod-claim-name": "gpu"},
            "ownerReferences": [
                {
                    "apiVersion": "scheduling.k8s.io/v1alpha2",
                    "kind": "PodGroup",
                    "name": "g",
                    "uid": owner_uid,
                    "controller": True,
                }
            ],
        },
        "spec": {"devices": DEVICES},
    }


def controlled(objects: list[Obj], gate: bool) -> tuple[EmbeddedCluster, list[str]]:
    cluster = EmbeddedCluster()
    warnings: list[str] = []
    ctl = ResourceClaimController(
        cluster, NameGenerator(random.Random(1)), admit=lambda obj: "", warn=warnings.append, workload_claims=gate
    )
    for obj in objects:
        cluster.create(copy.deepcopy(obj))
    ctl.start()
    return cluster, warnings


def _owners(cluster: EmbeddedCluster) -> list[tuple[str, str]]:
    return sorted(
        (c["metadata"]["ownerReferences"][0]["kind"], c["metadata"]["name"]) for c in cluster.list("ResourceClaim")
    )


def _statuses(cluster: EmbeddedCluster, kind: str, name: str) -> Any:
    obj = cluster.get(kind, "default", name)
    return ((obj or {}).get("status") or {}).get("resourceClaimStatuses")


def test_create_for_podgroup() -> None:
    cluster, warnings = controlled([group_with_template(), ONE_GPU], gate=True)
    ((kind, name),) = _owners(cluster)
    assert kind == "PodGroup" and name.startswith("g-gpu-") and warnings == []
    assert _statuses(cluster, "PodGroup", "g") == [{"name": "gpu", "resourceClaimName": name}]


def test_skip_create_for_pod_with_podgroup_before_template_exists() -> None:
    cluster, warnings = controlled([group_with_template(), member()], gate=True)
    assert _owners(cluster) == [] and _statuses(cluster, "Pod", "web") is None
    assert warnings == [
        "podgroup default/g: PodGroupResourceClaim gpu: resource claim template 'one-gpu': "
        'resourceclaimtemplates.resource.k8s.io "one-gpu" not found'
    ]


def test_update_pod_status_with_podgroup_claim() -> None:
    cluster, _ = controlled([group_with_template(), group_claim(), ONE_GPU, member()], gate=True)
    assert _owners(cluster) == [("PodGroup", "g-gpu-abcde")]  # found by owner and annotation: none made
    assert _statuses(cluster, "Pod", "web") == [{"name": "gpu", "resourceClaimName": "g-gpu-abcde"}]


def test_create_resource_claim_for_pod_with_podgroup_claim_when_feature_is_disabled() -> None:
    cluster, _ = controlled([group_with_template(), group_claim(), ONE_GPU, member()], gate=False)
    owners = _owners(cluster)
    assert [k for k, _ in owners] == ["Pod", "PodGroup"]
    assert _statuses(cluster, "Pod", "web") == [{"name": "gpu", "resourceClaimName": owners[0][1]}]


def test_nop_and_recreate_for_podgroup() -> None:
    recorded = [{"name": "gpu", "resourceClaimName": "g-gpu-abcde"}]
    cluster, _ = controlled([group_with_template(recorded), group_claim(), ONE_GPU], gate=True)
    assert _owners(cluster) == [("PodGroup", "g-gpu-abcde")]
    cluster, _ = controlled([group_with_template(recorded), ONE_GPU], gate=True)  # the recorded claim is gone
    ((_, name),) = _owners(cluster)
    assert name != "g-gpu-abcde" and _statuses(cluster, "PodGroup", "g") == [{"name": "gpu", "resourceClaimName": name}]


def test_wrong_claim_owner_podgroup() -> None:
    """A claim for the entry owned by another PodGroup instance is not the group's: with no template, none is made
    and the status names none; the stranger goes as the garbage collector takes it (its owner is gone)."""
    cluster, warnings = controlled([group_with_template(), group_claim(owner_uid="other")], gate=True)
    assert _statuses(cluster, "PodGroup", "g") is None and len(warnings) == 1
    assert _owners(cluster) == []


def test_clear_reserved_podgroup_unless_the_gate_is_off() -> None:
    allocation = {
        "devices": {"results": [{"request": "r", "driver": "gpu.example.com", "pool": "n1", "device": "gpu-0"}]}
    }
    claim = {
        "apiVersion": "resource.k8s.io/v1",
        "kind": "ResourceClaim",
        "metadata": {"name": "shared", "namespace": "default", "finalizers": [FINALIZER]},
        "spec": {"devices": DEVICES},
        "status": {
            "allocation": allocation,
            "reservedFor": [{"apiGroup": "scheduling.k8s.io", "resource": "podgroups", "name": "g", "uid": "g-uid"}],
        },
    }
    cluster, _ = controlled([claim], gate=True)  # its PodGroup is gone: unreserved, then deallocated
    status = cluster.get("ResourceClaim", "default", "shared")["status"]  # type: ignore[index]
    assert "reservedFor" not in status and "allocation" not in status
    cluster, _ = controlled([claim], gate=False)
    assert cluster.get("ResourceClaim", "default", "shared")["status"] == claim["status"]  # type: ignore[index]
