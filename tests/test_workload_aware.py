"""Workload-aware scheduling (v1.36 alpha) through `kubesched simulate` and the Python API.

The gates as the binary parses them, the alpha kinds refused or admitted as a v1.36 API
server with those gates would, and gangs placed all or nothing (messages as upstream's).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import yaml
from hypothesis import given
from hypothesis import strategies as st

from kubesched.apiserver.workload_api import validate_pod_group, validate_scheduling_group, validate_workload
from kubesched.cli import main
from kubesched.release import ReleaseError, release
from kubesched.simulator.api import InputError, simulate

GATES = "GenericWorkload=true,GangScheduling=true"
TOPOLOGY_GATES = GATES + ",TopologyAwareWorkloadScheduling=true"


def node(name: str, cpu: str = "4", **labels: str) -> dict[str, Any]:
    return {
        "apiVersion": "v1",
        "kind": "Node",
        "metadata": {"name": name, "labels": labels},
        "status": {"allocatable": {"cpu": cpu, "memory": "8Gi", "pods": "110"}},
    }


def group(name: str, min_count: int | None, topology: str | None = None) -> dict[str, Any]:
    policy: dict[str, Any] = {"gang": {"minCount": min_count}} if min_count is not None else {"basic": {}}
    spec: dict[str, Any] = {"schedulingPolicy": policy}
    if topology:
        spec["schedulingConstraints"] = {"topology": [{"key": topology}]}
    return {"apiVersion": "scheduling.k8s.io/v1alpha2", "kind": "PodGroup", "metadata": {"name": name}, "spec": spec}


def pod(name: str, group_name: str | None, cpu: str = "1") -> dict[str, Any]:
    spec: dict[str, Any] = {"containers": [{"name": "c", "image": "i", "resources": {"requests": {"cpu": cpu}}}]}
    if group_name is not None:
        spec["schedulingGroup"] = {"podGroupName": group_name}
    return {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": name}, "spec": spec}


# The gates, with the binary's words (kube-scheduler v1.36 --feature-gates).


@pytest.mark.parametrize(
    ("text", "error"),
    [
        (
            "GangScheduling=true",
            "GangScheduling is enabled, but depends on features that are disabled: [GenericWorkload]",
        ),
        (
            "GenericWorkload=true,WorkloadAwarePreemption=true",
            "WorkloadAwarePreemption is enabled, but depends on features that are disabled: [GangScheduling]",
        ),
        (
            "TopologyAwareWorkloadScheduling=true",
            "TopologyAwareWorkloadScheduling is enabled, but depends on features that are disabled: [GenericWorkload]",
        ),
        ("GenericWorkload", "missing bool value for GenericWorkload"),
        (
            "GenericWorkload=maybe",
            'invalid value of GenericWorkload=maybe, err: strconv.ParseBool: parsing "maybe": invalid syntax',
        ),
        (
            "kube:GenericWorkload=true,GangScheduling=true",
            "set kube feature gates with default empty prefix or kube: prefix consistently, do not mix use",
        ),
        (
            "DynamicResourceAllocation=false",
            "cannot set feature gate DynamicResourceAllocation to false, feature is locked to true",
        ),
        (
            "GangScheduling=true,GenericWorkload=false,AllAlpha=true",  # several: an aggregate (sorted here)
            "[DRAWorkloadResourceClaims is enabled, but depends on features that are disabled: [GenericWorkload], "
            "GangScheduling is enabled, but depends on features that are disabled: [GenericWorkload], "
            "TopologyAwareWorkloadScheduling is enabled, but depends on features that are disabled: [GenericWorkload], "
            "WorkloadWithJob is enabled, but depends on features that are disabled: [GenericWorkload]]",
        ),
    ],
)
def test_bad_gates_are_refused_in_the_binarys_words(text: str, error: str) -> None:
    with pytest.raises(ReleaseError) as err:
        release("1.36", text)
    assert str(err.value) == error


def test_gates_unknown_are_warned_about_and_defaults_hold() -> None:
    gates = release("1.36", "kube:GenericWorkload=T,kube:Nope=false")
    assert gates.warnings == ("unrecognized feature gate: Nope",)
    assert gates.workload_aware and not gates.enabled("GangScheduling")
    assert gates.enabled("OpportunisticBatching") and not gates.enabled("WorkloadWithJob")
    assert gates.gate_text() == "GenericWorkload=true"


def test_v1_35s_workload_gates_are_checked_then_refused_and_v1_34_has_none() -> None:
    with pytest.raises(ReleaseError) as err:  # the binary's dependency check first
        release("1.35", "GangScheduling=true")
    assert str(err.value) == "GangScheduling is enabled, but depends on features that are disabled: [GenericWorkload]"
    with pytest.raises(ReleaseError) as err:  # v1.35's alpha workload API is not v1.36's: not simulated
        release("1.35", "GenericWorkload=true,GangScheduling=true")
    assert str(err.value).startswith("feature gate GenericWorkload=true is not implemented by kubesched for v1.35")
    with pytest.raises(ReleaseError, match="^unrecognized feature gate: WorkloadAwarePreemption$"):
        release("1.35", "GenericWorkload=true,WorkloadAwarePreemption=true")
    with pytest.raises(ReleaseError, match="^unrecognized feature gate: GenericWorkload$"):
        release("1.34", "GenericWorkload=true")
    assert not release("1.35").workload_aware and release("1.36", GATES).workload_aware
    with pytest.raises(InputError, match="--kubernetes-version 1.36"):
        simulate(node("n1"), group("g", 2), pod("a", "g"), kubernetes_version="1.35")


# The API server's side.


def test_the_alpha_kinds_need_generic_workload() -> None:
    with pytest.raises(InputError) as err:
        simulate(node("n1"), group("g", 2), pod("a", "g"))
    assert 'no matches for kind "PodGroup" in version "scheduling.k8s.io/v1alpha2"' in str(err.value)
    assert "--feature-gates=GenericWorkload=true" in str(err.value)


def test_without_the_gate_a_pods_group_is_dropped_and_it_schedules_alone() -> None:
    sim = simulate(node("n1"), pod("a", "g"), pod("b", "g"))
    assert [p.node for p in sim.pods] == ["n1", "n1"]
    assert any("schedulingGroup" in w for w in sim.warnings)


# Messages the v1.36 API server gave for these objects (scheduling.k8s.io/v1alpha2 with every gate on).


def test_pod_group_validation_reads_as_the_servers() -> None:
    pg = group("g", 0)
    pg["spec"]["schedulingPolicy"]["basic"] = {}
    pg["spec"]["schedulingConstraints"] = {"topology": [{"key": "a"}, {"key": "b"}]}
    pg["spec"]["disruptionMode"] = "Foo"
    assert validate_pod_group(pg) == [
        'spec.schedulingPolicy: Invalid value: "{basic, gang}": must specify exactly one of: `basic`, `gang`',
        "spec.schedulingPolicy.gang.minCount: Required value",
        "spec.schedulingConstraints.topology: Too many: 2: must have at most 1 item",
        'spec.disruptionMode: Unsupported value: "Foo": supported values: "Pod", "PodGroup"',
    ]
    pg = group("g", -1)
    pg["spec"]["podGroupTemplateRef"] = {}
    assert validate_pod_group(pg) == [
        'spec.podGroupTemplateRef: Invalid value: "": must specify one of: `workload`',
        "spec.schedulingPolicy.gang.minCount: Invalid value: -1: must be greater than or equal to 1",
    ]
    pg = {"kind": "PodGroup", "metadata": {"name": "g"}, "spec": {}}
    assert validate_pod_group(pg) == ['spec.schedulingPolicy: Invalid value: "": must specify one of: `basic`, `gang`']


def test_workload_validation_reads_as_the_servers() -> None:
    workload = {
        "kind": "Workload",
        "metadata": {"name": "w"},
        "spec": {
            "controllerRef": {"kind": ""},
            "podGroupTemplates": [
                {"name": "T_1", "schedulingPolicy": {}},
                {"name": "T_1", "schedulingPolicy": {"basic": {}}},
            ],
        },
    }
    label = (
        "a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', and must start and "
        "end with an alphanumeric character (e.g. 'my-name',  or '123-abc', regex used for validation is "
        "'[a-z0-9]([-a-z0-9]*[a-z0-9])?')"
    )
    assert validate_workload(workload) == [
        "spec.controllerRef.kind: Required value",
        "spec.controllerRef.name: Required value",
        'spec.podGroupTemplates[1]: Duplicate value: {"name":"T_1","schedulingPolicy":{"basic":{}},'
        '"schedulingConstraints":null}',
        f'spec.podGroupTemplates[0].name: Invalid value: "T_1": {label}',
        'spec.podGroupTemplates[0].schedulingPolicy: Invalid value: "": must specify one of: `basic`, `gang`',
        f'spec.podGroupTemplates[1].name: Invalid value: "T_1": {label}',
    ]
    assert validate_workload({"kind": "Workload", "spec": {}}) == ["spec.podGroupTemplates: Required value"]


def test_a_pods_scheduling_group_must_name_one() -> None:
    bad = pod("a", None)
    bad["spec"]["schedulingGroup"] = {}
    assert validate_scheduling_group(bad) == [
        "spec.schedulingGroup.podGroupName: Invalid value: null: must specify one of: `podGroupName`"
    ]


def test_a_pod_group_from_a_missing_workload_is_refused_by_admission() -> None:
    pg = group("g", 2)
    pg["spec"]["podGroupTemplateRef"] = {"workload": {"workloadName": "w", "podGroupTemplateName": "t"}}
    with pytest.raises(InputError) as err:
        simulate(node("n1"), pg, feature_gates=GATES)
    assert 'podgroups.scheduling.k8s.io "g" is forbidden: PodGroup rejected: Workload "w" not found' in str(err.value)


# Gangs.


def test_a_gang_that_fits_is_placed_whole() -> None:
    sim = simulate(
        node("n1"), node("n2"), group("g", 3), *(pod(f"w{i}", "g", "2") for i in range(3)), feature_gates=GATES
    )
    assert all(p.result == "Scheduled" for p in sim.pods)


def test_a_gang_that_cannot_fit_whole_places_none() -> None:
    sim = simulate(
        node("n1"), node("n2"), group("g", 3), *(pod(f"w{i}", "g", "3") for i in range(3)), feature_gates=GATES
    )
    assert [p.result for p in sim.pods] == ["Unschedulable"] * 3
    messages = sorted(p.message for p in sim.pods)
    assert sum("Insufficient cpu" in m for m in messages) == 1
    assert (
        messages.count(
            "pod group is unschedulable, waiting for minCount pods from a gang to be scheduled, "
            "one or more plugins asked to wait and no plugin rejected pod"
        )
        == 2
    )


def test_without_the_gang_gate_the_same_pods_schedule_one_by_one() -> None:
    """GenericWorkload alone: pods are tried as a group but nothing holds a partial placement back."""
    sim = simulate(
        node("n1"),
        node("n2"),
        group("g", 3),
        *(pod(f"w{i}", "g", "3") for i in range(3)),
        feature_gates="GenericWorkload=true",
    )
    assert sorted(p.result for p in sim.pods) == ["Scheduled", "Scheduled", "Unschedulable"]


def test_a_gang_short_of_min_count_waits_in_pre_enqueue() -> None:
    sim = simulate(node("n1"), group("g", 4), *(pod(f"w{i}", "g") for i in range(3)), feature_gates=GATES)
    assert {(p.result, p.message) for p in sim.pods} == {
        ("Gated", "waiting for minCount pods from a gang to appear in scheduling queue")
    }


def test_a_pod_whose_group_is_missing_waits_for_it() -> None:
    sim = simulate(node("n1"), pod("a", "nowhere"), feature_gates=GATES)
    assert sim.pods[0].result == "Gated"
    assert sim.pods[0].message == 'waiting for pods\'s pod group "nowhere" to appear in scheduling queue'


def test_topology_placement_keeps_a_gang_in_one_domain() -> None:
    nodes = [node(f"a{i}", "2", zone="a") for i in range(2)] + [node(f"b{i}", "2", zone="b") for i in range(3)]
    sim = simulate(
        *nodes,
        group("g", 3, topology="zone"),
        *(pod(f"w{i}", "g", "2") for i in range(3)),
        feature_gates=TOPOLOGY_GATES,
    )
    assert all(p.result == "Scheduled" for p in sim.pods)
    assert {p.node[0] for p in sim.pods if p.node} == {"b"}  # zone a has room for two only


def test_topology_placement_names_the_placements_when_none_fits() -> None:
    nodes = [node(f"a{i}", "2", zone="a") for i in range(2)] + [node(f"b{i}", "2", zone="b") for i in range(2)]
    sim = simulate(
        *nodes,
        group("g", 3, topology="zone"),
        *(pod(f"w{i}", "g", "2") for i in range(3)),
        feature_gates=TOPOLOGY_GATES,
    )
    assert [p.result for p in sim.pods] == ["Unschedulable"] * 3


# What the outputs say about groups.


def test_records_carry_the_group_and_the_digest_names_what_blocks_it() -> None:
    sim = simulate(
        node("n1"), node("n2"), group("g", 3), *(pod(f"w{i}", "g", "3") for i in range(3)), feature_gates=GATES
    )
    assert {p.pod_group for p in sim.pods} == {"g"}
    (entry,) = sim.to_dict()["podGroups"]
    assert (entry["members"], entry["placed"], entry["minCount"]) == (3, 0, 3)
    assert entry["blocking"].startswith("0/2 nodes are available: 2 Insufficient cpu.")
    assert entry["explain"].startswith("pod group default/g: 0 of 3 placed (minCount 3); blocked by: 0/2 nodes")


def test_the_digest_says_a_gang_short_of_pods_waits_in_pre_enqueue() -> None:
    sim = simulate(node("n1"), group("g", 4), *(pod(f"w{i}", "g") for i in range(3)), feature_gates=GATES)
    (entry,) = sim.to_dict()["podGroups"]
    assert entry["gated"] == 3
    assert entry["explain"].endswith("only 3 pods exist, fewer than minCount: they wait in PreEnqueue")


def test_without_groups_the_document_has_no_pod_groups() -> None:
    doc = simulate(node("n1"), pod("a", None)).to_dict()
    assert "podGroups" not in doc and doc["pods"][0]["podGroup"] is None


# WorkloadWithJob.

JOB_GATES = GATES + ",WorkloadWithJob=true"


def job(parallelism: int, completions: int | None, cpu: str, indexed: bool = True) -> dict[str, Any]:
    spec: dict[str, Any] = {
        "parallelism": parallelism,
        "template": {
            "spec": {
                "restartPolicy": "Never",
                "containers": [{"name": "c", "image": "i", "resources": {"requests": {"cpu": cpu}}}],
            }
        },
    }
    if completions is not None:
        spec["completions"] = completions
    if indexed:
        spec["completionMode"] = "Indexed"
    return {"apiVersion": "batch/v1", "kind": "Job", "metadata": {"name": "train"}, "spec": spec}


def test_an_indexed_job_becomes_a_gang_with_workload_with_job() -> None:
    sim = simulate(node("n1"), node("n2"), job(4, 4, "3"), feature_gates=JOB_GATES, seed=1)
    groups = {p.pod_group for p in sim.pods}
    assert len(groups) == 1 and None not in groups
    (name,) = groups
    assert name is not None and name.startswith("train-") and "-train-pgt-0-" in name
    assert [p.result for p in sim.pods] == ["Unschedulable"] * 4  # 4 x 3 CPUs on 2 x 4: none, not two
    (entry,) = sim.to_dict()["podGroups"]
    assert (entry["minCount"], entry["members"], entry["placed"]) == (4, 4, 0)


def test_without_the_gate_or_as_no_candidate_a_job_schedules_pod_by_pod() -> None:
    for gates, spec in (
        (GATES, job(4, 4, "3")),
        (JOB_GATES, job(4, 4, "3", indexed=False)),
        (JOB_GATES, job(4, 5, "3")),
        (JOB_GATES, job(1, 1, "3")),
    ):
        sim = simulate(node("n1"), node("n2"), spec, feature_gates=gates, seed=1)
        assert {p.pod_group for p in sim.pods} == {None}
        assert sum(p.result == "Scheduled" for p in sim.pods) == min(2, spec["spec"]["parallelism"])


def test_names_hash_as_upstreams_helpers_do() -> None:
    from kubesched.backend.embedded.controllers.job_workload import fnv32a, pod_group_name, safe_encode

    assert fnv32a(b"") == 0x811C9DC5 and fnv32a(b"a") == 0xE40C292C
    assert safe_encode("0123456789") == "456789bcdf"  # rand.SafeEncodeString: byte % 27 into its alphabet
    long = pod_group_name("w" * 200, "t" * 100)
    assert len(long) == 253 and long.startswith("w" * 142 + "-" + "t" * 100 + "-")  # the shorter kept whole


def test_explain_takes_a_pod_group_and_the_table_names_what_blocks_it(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / "gang.yaml"
    objs = [node("n1"), node("n2"), group("g", 3), *(pod(f"w{i}", "g", "3") for i in range(3))]
    path.write_text(yaml.safe_dump_all(objs))
    code = main(["simulate", str(path), "--output", "table", "-q", "--feature-gates", GATES, "--explain", "pg/g"])
    out = capsys.readouterr().out
    assert code == 0
    assert "PodGroup default/g: 3 pods: 3 Unschedulable" in out
    assert "waiting: pod group default/g: 0 of 3 placed (minCount 3); blocked by: 0/2 nodes" in " ".join(out.split())


def test_cli_refuses_bad_gates_with_exit_2(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "n.yaml"
    path.write_text(yaml.safe_dump(node("n1")))
    assert main(["simulate", str(path), "-q", "--feature-gates", "GangScheduling=true"]) == 2
    err = capsys.readouterr().err
    assert err.strip() == (
        "kubesched: --feature-gates: GangScheduling is enabled, but depends on features that are disabled: "
        "[GenericWorkload]"
    )


# Workload-aware preemption.

WAP_GATES = GATES + ",WorkloadAwarePreemption=true"
HIGH = {"apiVersion": "scheduling.k8s.io/v1", "kind": "PriorityClass", "metadata": {"name": "high"}, "value": 1000}


def bound(name: str, node_name: str, cpu: str) -> dict[str, Any]:
    p = pod(name, None, cpu)
    p["spec"]["nodeName"] = node_name
    return p


def high_gang(size: int, cpu: str) -> list[dict[str, Any]]:
    pg = group("g", size)
    pg["spec"]["priorityClassName"] = "high"
    members = [pod(f"w{i}", "g", cpu) for i in range(size)]
    for m in members:
        m["spec"]["priorityClassName"] = "high"
    return [pg, *members]


def test_a_gang_preempts_for_itself_as_a_whole() -> None:
    objs = [HIGH, node("n1"), node("n2"), bound("low-1", "n1", "3"), bound("low-2", "n2", "3"), *high_gang(2, "3")]
    sim = simulate(*objs, feature_gates=WAP_GATES)
    assert [p.result for p in sim.pods] == ["Scheduled", "Scheduled"]
    preempted = sorted(e.pod for e in sim.events if e.type == "Preempted")
    assert preempted == ["default/low-1", "default/low-2"]
    assert {e.preemptor for e in sim.events if e.type == "Preempted"} == {"default/g"}


def test_workload_aware_preemption_spares_what_it_does_not_need() -> None:
    objs = [HIGH, node("n1"), node("n2"), bound("low-1", "n1", "3"), bound("low-2", "n2", "1"), *high_gang(2, "3")]
    sim = simulate(*objs, feature_gates=WAP_GATES)
    assert [p.result for p in sim.pods] == ["Scheduled", "Scheduled"]
    assert [e.pod for e in sim.events if e.type == "Preempted"] == ["default/low-1"]  # low-2 leaves room for one


def test_without_the_gate_members_preempt_one_by_one_and_with_it_they_do_not() -> None:
    objs = [HIGH, node("n1"), bound("low-1", "n1", "3"), *high_gang(2, "3")]
    sim = simulate(*objs, feature_gates=WAP_GATES)  # one node: even without low-1 the gang does not fit
    assert [p.result for p in sim.pods] == ["Unschedulable", "Unschedulable"]
    assert not [e for e in sim.events if e.type == "Preempted"]
    assert any("not eligible due to workload aware preemption enabled" in p.message for p in sim.pods)


def test_a_pod_group_gets_its_priority_from_its_class_with_the_gate() -> None:
    pg = group("g", 2)
    pg["spec"]["priority"] = 5
    with pytest.raises(InputError) as err:
        simulate(node("n1"), pg, feature_gates=WAP_GATES)
    assert (
        'podgroups.scheduling.k8s.io "g" is forbidden: priority set in the pod group (5) must match the priority '
        "computed (0) based on the priority class set in the spec"
    ) in str(err.value)


def test_the_digest_says_when_members_gave_up_waiting_at_permit() -> None:
    from kubesched.framework.outcome import SchedulerEvent
    from kubesched.simulator.pod_groups import digest

    timeout = "0/2 nodes are available: rejected due to timeout after waiting 5m0s at plugin GangScheduling."
    members = [(pod(f"w{i}", "g"), "Unschedulable", timeout, None) for i in range(2)]
    placed = [(pod("w2", "g"), "Scheduled", "", "n1")]
    events = [SchedulerEvent(300.0, "default/w1", "Unschedulable", message=timeout)]
    events += [SchedulerEvent(301.5, "default/w0", "Unschedulable", message=timeout)]
    (d,) = digest([*members, *placed], [group("g", 3, topology="zone")], events, lambda n: {"zone": "a"})
    entry = d.to_json()
    assert (entry["state"], entry["timedOut"], entry["timedOutAt"]) == ("TimedOut", 2, 300.0)
    assert (entry["nodes"], entry["domains"], entry["topologyKey"]) == ({"n1": 1}, {"a": 1}, "zone")
    assert entry["explain"] == (
        "pod group default/g: 1 of 3 placed (minCount 3); 2 gave up waiting at Permit (timeout at 300s)"
    )


_GROUP_WAIT = (
    "pod group is unschedulable, waiting for minCount pods from a gang to be scheduled, "
    "one or more plugins asked to wait and no plugin rejected pod"
)
_OUTCOMES = (
    ("Scheduled", ""),
    ("Unschedulable", "0/3 nodes are available: 3 Insufficient cpu."),
    ("Unschedulable", _GROUP_WAIT),
    ("Unschedulable", "0/3 nodes are available: rejected due to timeout after waiting 5m0s at plugin GangScheduling."),
    ("Gated", "waiting for minCount pods from a gang to appear in scheduling queue"),
)


@given(
    members=st.lists(
        st.tuples(st.sampled_from(_OUTCOMES), st.sampled_from(["n1", "n2", "n3"])), min_size=1, max_size=12
    ),
    min_count=st.one_of(st.none(), st.integers(1, 12)),
    topology=st.booleans(),
)
def test_the_digest_accounts_for_every_member(
    members: list[tuple[tuple[str, str], str]], min_count: int | None, topology: bool
) -> None:
    from kubesched.simulator.pod_groups import digest

    zones = {"n1": "a", "n2": "a", "n3": "b"}
    pods = [
        (pod(f"w{i}", "g"), result, message, node if result == "Scheduled" else None)
        for i, ((result, message), node) in enumerate(members)
    ]
    (d,) = digest(pods, [group("g", min_count, "zone" if topology else None)], [], lambda n: {"zone": zones[n]})
    entry = d.to_json()
    placed = [node for (result, _), node in members if result == "Scheduled"]
    assert entry["placed"] == len(placed) == sum(entry["nodes"].values())
    assert entry["members"] == len(entry["podNames"]) == len(members)
    assert entry["domains"] == (
        {z: [zones[n] for n in placed].count(z) for z in {zones[n] for n in placed}} if topology else {}
    )
    assert (entry["state"] == "Scheduled") == (len(placed) == len(members))
    assert (entry["state"] == "TimedOut") == (len(placed) < len(members) and entry["timedOut"] > 0)
    assert entry["explain"].startswith(f"pod group default/g: {len(placed)} of {len(members)} placed")
    assert entry["holdingBack"] is None or entry["explain"].endswith("; " + entry["holdingBack"])


def test_jsonl_has_a_pod_group_line_per_group_as_the_json_has_it(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    import json

    path = tmp_path / "gang.yaml"
    objs = [node("n1"), node("n2"), group("g", 3), *(pod(f"w{i}", "g", "3") for i in range(3)), pod("solo", None)]
    path.write_text(yaml.safe_dump_all(objs))
    args = ["simulate", str(path), "-q", "--feature-gates", GATES]
    assert main([*args, "--output", "jsonl"]) == 0
    lines = [json.loads(line) for line in capsys.readouterr().out.splitlines()]
    assert main([*args, "--output", "json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    groups = [{k: v for k, v in line.items() if k != "kind"} for line in lines if line["kind"] == "podGroup"]
    assert groups == doc["podGroups"] and len(groups) == 1
    assert [line["kind"] for line in lines[-2:]] == ["podGroup", "summary"]
    assert {line["name"]: line["podGroup"] for line in lines if line["kind"] == "pod"} == {
        "w0": "g",
        "w1": "g",
        "w2": "g",
        "solo": None,
    }
