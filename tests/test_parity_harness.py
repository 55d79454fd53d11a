"""The parity harness's own rules for decisions it cannot compare."""

from __future__ import annotations

import copy
from types import SimpleNamespace
from typing import cast

import pytest

from kubesched.backend.kube.resources import WATCHED
from kubesched.backend.kube.snapshot import clean
from kubesched.simulator.load import LoadedInput, SourcedObject, prepare_objects
from kubesched_testing.parity.allocations import allocation_record, claim_names
from kubesched_testing.parity.compare import _extra_victims_were_terminating, compare
from kubesched_testing.parity.families import generate
from kubesched_testing.parity.ours import OurAttempt
from kubesched_testing.parity.upstream import (
    Attempt,
    AttemptLog,
    Decision,
    _before_preemption,
    _saw_unlisted_terminating_pod,
    _victims_deleted_since,
)

BLAMED = "0/4 nodes are available: preemption: not eligible due to a terminating pod on the nominated node."


def _pod(node: str, terminating: bool) -> dict:
    meta = {"name": "v", "namespace": "default"}
    if terminating:
        meta["deletionTimestamp"] = "2026-01-01T00:00:00Z"
    return {"kind": "Pod", "metadata": meta, "spec": {"nodeName": node}}


def test_a_terminating_pod_missing_from_the_listing_makes_the_decision_ambiguous() -> None:
    attempt = Attempt(pod="default/p", message=BLAMED)
    assert _saw_unlisted_terminating_pod(attempt, "n1", [_pod("n1", terminating=False)])
    assert not _saw_unlisted_terminating_pod(attempt, "n1", [_pod("n1", terminating=True)])
    assert not _saw_unlisted_terminating_pod(Attempt(pod="default/p", message="0/4 nodes are available."), "n1", [])
    assert not _saw_unlisted_terminating_pod(attempt, None, [])


def test_a_victim_is_listed_as_it_was_before_the_attempt_that_chose_it() -> None:
    victim = _pod("n1", terminating=True)
    victim["status"] = {"conditions": [{"type": "DisruptionTarget", "status": "True"}, {"type": "Ready"}]}
    restored = _before_preemption(victim)
    assert "deletionTimestamp" not in restored["metadata"]
    assert [c["type"] for c in restored["status"]["conditions"]] == ["Ready"]
    assert "deletionTimestamp" in victim["metadata"]  # the listing itself is left alone


def test_other_preemptions_victims_gone_during_the_attempt_are_named() -> None:
    other = Attempt(pod="default/q", victims=["default/v1", "default/v2"])
    mine = Attempt(pod="default/p", victims=["default/own"])
    alog = cast(  # the two fields the function reads, without a kube-scheduler log to follow
        AttemptLog,
        SimpleNamespace(
            attempts={"default/q": [other], "default/p": [mine]},
            deleted_at={"default/v1": 5, "default/v2": 20, "default/own": 30, "default/bystander": 40},
        ),
    )
    assert _victims_deleted_since(alog, 10, {"default/own"}) == ["default/v2"]
    assert _victims_deleted_since(alog, 25, {"default/own"}) == []


def _namespaces(labels: dict[str, dict[str, str]]) -> list[dict]:
    return [
        {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": ns, "labels": {**lab}}}
        for ns, lab in labels.items()
    ]


@pytest.mark.parametrize("seed", range(1, 31))
def test_dra_cases_are_what_the_api_server_admits(seed: int) -> None:
    """Every object passes validation and admission (admin access only where the namespace allows it)."""
    case = generate("dra", seed)
    for o in case.objects:  # the uids the API server gives, which the harness writes into reservations
        if o["kind"] == "Pod":
            o["metadata"]["uid"] = f"uid-{o['metadata']['name']}"
        for ref in (o.get("status") or {}).get("reservedFor") or ():
            ref["uid"] = f"uid-{ref['name']}"
    everything = [*_namespaces(case.namespace_labels), *case.objects, *case.pending]
    loaded = LoadedInput(objects=[SourcedObject(copy.deepcopy(o), "case", i + 1) for i, o in enumerate(everything)])
    prepare_objects(loaded)  # raises a LoadError naming the object and field otherwise
    named = {
        (o["kind"], o["metadata"]["namespace"], o["metadata"]["name"])
        for o in case.objects
        if o["kind"] in ("ResourceClaim", "ResourceClaimTemplate")
    }
    for pod in case.pending:
        ns = pod["metadata"]["namespace"]
        for entry in pod["spec"].get("resourceClaims") or ():
            # A claim (or template) missing would keep the pod out of the queue.
            if "resourceClaimName" in entry:
                assert ("ResourceClaim", ns, entry["resourceClaimName"]) in named
            else:
                assert ("ResourceClaimTemplate", ns, entry["resourceClaimTemplateName"]) in named


def test_dra_cases_cover_what_the_family_promises() -> None:
    """Over a few seeds: partitionable devices, taints, network-attached pools, every request form, shared claims."""
    seen: set[str] = set()
    for seed in range(1, 21):
        case = generate("dra", seed)
        assert case == generate("dra", seed)
        for o in case.objects:
            spec = o.get("spec") or {}
            if o["kind"] == "ResourceSlice":
                seen.update(
                    k for k in ("sharedCounters", "nodeSelector", "allNodes", "perDeviceNodeSelection") if k in spec
                )
                for d in spec.get("devices") or ():
                    seen.update(
                        k for k in ("consumesCounters", "taints", "allowMultipleAllocations", "bindsToNode") if k in d
                    )
                if spec["pool"]["generation"] > 1:
                    seen.add("generations")
            elif o["kind"] == "ResourceClaim":
                status = o.get("status") or {}
                if status.get("allocation"):
                    seen.add("reserved allocations" if status.get("reservedFor") else "unreserved allocations")
                devices = spec["devices"]
                seen.update(k for k in ("constraints", "config") if k in devices)
                seen.update(k for c in devices.get("constraints") or () for k in c if k.endswith("Attribute"))
                for r in devices["requests"]:
                    seen.update(k for k in ("firstAvailable",) if k in r)
                    exact = r.get("exactly") or {}
                    seen.update(k for k in ("adminAccess", "tolerations", "capacity", "selectors") if k in exact)
                    if exact.get("allocationMode") == "All":
                        seen.add("All")
        entries = [(p["metadata"]["namespace"], e) for p in case.pending for e in p["spec"].get("resourceClaims") or ()]
        names = [(ns, e["resourceClaimName"]) for ns, e in entries if "resourceClaimName" in e]
        if len(names) < len(entries):
            seen.add("templates")
        if len(names) != len(set(names)):
            seen.add("shared claims")
        if any(not p["spec"].get("resourceClaims") for p in case.pending):
            seen.add("plain pods")
    assert seen >= {
        "sharedCounters",
        "consumesCounters",
        "nodeSelector",
        "allNodes",
        "taints",
        "allowMultipleAllocations",
        "generations",
        "perDeviceNodeSelection",
        "bindsToNode",
        "constraints",
        "matchAttribute",
        "distinctAttribute",
        "config",
        "firstAvailable",
        "adminAccess",
        "tolerations",
        "capacity",
        "selectors",
        "All",
        "shared claims",
        "templates",
        "reserved allocations",
        "unreserved allocations",
        "plain pods",
    }


def test_an_allocation_is_compared_without_its_share_id_and_timestamp() -> None:
    result = {"request": "r", "driver": "d", "pool": "p", "device": "x", "shareID": "random-uid"}
    selector = {"nodeSelectorTerms": [{"matchFields": [{"key": "metadata.name", "operator": "In", "values": ["n"]}]}]}
    claim = {
        "status": {
            "allocation": {
                "devices": {"results": [result], "config": [{"source": "FromClass", "opaque": {}}]},
                "nodeSelector": selector,
                "allocationTimestamp": "2026-01-01T00:00:00Z",
            }
        }
    }
    assert allocation_record(claim) == {
        "results": [{"request": "r", "driver": "d", "pool": "p", "device": "x"}],
        "config": [{"source": "FromClass", "opaque": {}}],
        "nodeSelector": selector,
    }
    assert allocation_record({"status": {}}) is None
    assert allocation_record(None) is None


def test_a_pods_claims_are_named_directly_or_by_the_controllers_status() -> None:
    pod = {
        "spec": {
            "resourceClaims": [
                {"name": "a", "resourceClaimName": "direct"},
                {"name": "b", "resourceClaimTemplateName": "t"},
                {"name": "c", "resourceClaimTemplateName": "t"},
            ]
        },
        "status": {"resourceClaimStatuses": [{"name": "b", "resourceClaimName": "p-b-x7k2q"}, {"name": "c"}]},
    }
    assert claim_names(pod) == ["direct", "p-b-x7k2q"]


def test_different_devices_on_the_chosen_node_are_a_mismatch() -> None:
    up = Attempt(pod="default/p", node="n1", allocations={"default/c": {"results": [{"device": "gpu-0"}]}})
    same = OurAttempt(node="n1", top=["n1"], allocations={"default/c": {"results": [{"device": "gpu-0"}]}})
    other = OurAttempt(node="n1", top=["n1"], allocations={"default/c": {"results": [{"device": "gpu-1"}]}})
    none = OurAttempt(node="n1", top=["n1"], allocations={"default/c": None})
    assert compare(up, same) == ([], [])
    assert compare(up, other)[0] == ["allocation"]
    assert "kubesched: none" in compare(up, none)[1][0]


def test_a_snapshot_keeps_the_claims_the_controller_recorded_for_a_pod() -> None:
    """Without status.resourceClaimStatuses a replayed pod would wait forever for its template's claim."""
    statuses = [{"name": "gpu", "resourceClaimName": "p-gpu-x7k2q"}]
    pod = {"metadata": {"name": "p"}, "spec": {}, "status": {"phase": "Pending", "resourceClaimStatuses": statuses}}
    assert clean(pod, WATCHED["Pod"])["status"] == {"phase": "Pending", "resourceClaimStatuses": statuses}


def test_a_filter_error_matches_the_error_of_any_node_that_gives_one() -> None:
    """Upstream filters nodes on 16 goroutines and reports the first error met: any erring node's."""
    up = Attempt(pod="default/p", message="running plugin: node-b is broken", error=True)
    ours = OurAttempt(message="running plugin: node-a is broken", error=True)
    assert compare(up, ours)[0] == ["message"]
    ours.raced_errors = ["running plugin: node-a is broken", "running plugin: node-b is broken"]
    assert compare(up, ours) == ([], [])
    unschedulable = Attempt(pod="default/p", message="running plugin: node-b is broken")
    assert compare(unschedulable, ours)[0] == ["result", "message"]  # only errors race


def test_configs_cases_are_valid_and_cover_what_the_family_promises() -> None:
    """Seeds 1-10: every configuration loads; strategies, shapes, weights, moves, spreading kinds, two profiles."""
    from kubesched.config.load import load_config

    seen: set[str] = set()
    for seed in range(1, 11):
        case = generate("configs", seed)
        assert case == generate("configs", seed)
        load_config(
            {"apiVersion": "kubescheduler.config.k8s.io/v1", "kind": "KubeSchedulerConfiguration", **case.config}
        )
        profiles = case.config["profiles"]
        names = {p["schedulerName"] for p in profiles}
        if len(profiles) == 2:
            seen.add("two profiles")
            assert any(p["spec"].get("schedulerName") in names - {"default-scheduler"} for p in case.pending)
        if "percentageOfNodesToScore" in case.config or any("percentageOfNodesToScore" in p for p in profiles):
            seen.add("percentageOfNodesToScore")
        for prof in profiles:
            plugins = prof["plugins"]
            seen.update(f"{point} {how}" for point, sets in plugins.items() for how in sets)
            for pc in prof["pluginConfig"]:
                args = pc["args"]
                if pc["name"] == "NodeResourcesFit":
                    seen.add(args["scoringStrategy"]["type"])
                elif pc["name"] == "PodTopologySpread":
                    seen.add("List with constraints" if args.get("defaultConstraints") else "List, none")
    assert seen >= {
        "two profiles",
        "percentageOfNodesToScore",
        "LeastAllocated",
        "MostAllocated",
        "RequestedToCapacityRatio",
        "List with constraints",
        "List, none",
        "score enabled",
        "score disabled",
        "filter enabled",
    }, seen


def test_only_victims_already_terminating_may_be_missing_from_an_older_releases_log() -> None:
    """v1.34 names no victim whose deletion had begun: only such extras on our side are let pass."""

    def pod(name: str, terminating: bool) -> dict[str, object]:
        meta: dict[str, object] = {"name": name, "namespace": "default"}
        if terminating:
            meta["deletionTimestamp"] = "2026-11-28T12:40:54Z"
        return {"kind": "Pod", "metadata": meta}

    state = [pod("v1", False), pod("v2", False), pod("gone", True)]
    d = Decision("preemption", 2, "default/p", "first attempt", state, Attempt(pod="default/p", victims=["default/v1"]))
    assert _extra_victims_were_terminating(d, ["default/v1", "default/gone"])
    assert not _extra_victims_were_terminating(d, ["default/v1", "default/v2"])  # a running extra is a finding
    assert not _extra_victims_were_terminating(d, ["default/gone"])  # upstream's own victim missing on our side
    assert not _extra_victims_were_terminating(d, ["default/v1"])  # nothing extra
