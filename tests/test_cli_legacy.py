"""`kubesched simulate` with a legacy Policy or algorithm provider over examples/legacy."""

import json

import pytest

from kubesched.cli import main

CLUSTER, POLICY = "examples/legacy/cluster", "examples/legacy/policy.json"


def run(capsys: pytest.CaptureFixture[str], *flags: str) -> tuple[int, dict, str]:
    code = main(["simulate", CLUSTER, "--output", "json", "--seed", "1", *flags])
    out = capsys.readouterr()
    return code, (json.loads(out.out) if code == 0 else {}), out.err


@pytest.mark.parametrize("gates", [[], ["--feature-gates", "DefaultPodTopologySpread=false"]])
def test_policy_example(capsys: pytest.CaptureFixture[str], gates: list[str]) -> None:
    code, doc, err = run(capsys, "--policy-config-file", POLICY, *gates)
    assert code == 0, err
    pods = {p["name"]: p for p in doc["pods"]}
    # RegionAffinity keeps the Service in region r2, where web-0 runs; NotRetiring rules out node-d.
    assert {pods["web-1"]["node"], pods["web-2"]["node"]} == {"node-c", "node-e"}
    assert pods["batch"]["node"] in ("node-a", "node-b")
    assert pods["pinned"]["node"] is None
    assert pods["pinned"]["message"].startswith(
        "0/5 nodes are available: 1 node(s) didn't have the requested labels, "
        "4 node(s) didn't match Pod's node affinity/selector."
    )
    spread = "SelectorSpread" if gates else "PodTopologySpread"
    assert spread in pods["web-1"]["plugins"]["score"]["node-c"]
    assert pods["web-1"]["plugins"]["filter"]["node-a"]["ServiceAffinity"] == "node(s) didn't match service affinity"


def test_cluster_autoscaler_provider_packs_nodes(capsys: pytest.CaptureFixture[str]) -> None:
    code, doc, err = run(capsys, "--algorithm-provider", "ClusterAutoscalerProvider")
    assert code == 0, err
    pods = {p["name"]: p for p in doc["pods"]}
    assert pods["batch"]["node"] == pods["web-1"]["node"]  # MostAllocated packs onto a used node
    assert "NodeResourcesMostAllocated" in pods["batch"]["plugins"]["score"][pods["batch"]["node"]]


@pytest.mark.parametrize(
    ("flags", "message"),
    [
        (["--policy-config-file", POLICY, "--algorithm-provider", "DefaultProvider"], "cannot be combined with"),
        (["--algorithm-provider", "DefaultProvider", "--config", POLICY], "cannot be combined with --config"),
        (
            ["--kubernetes-version", "1.35", "--feature-gates", "DefaultPodTopologySpread=false"],
            "--feature-gates: unrecognized feature gate: Default",
        ),
        (["--policy-config-file", "no/such/policy.json"], "no/such/policy.json: cannot read"),
        (["--algorithm-provider", "Nope"], 'algorithm provider "Nope" is not registered'),
    ],
)
def test_bad_legacy_flags_exit_2(capsys: pytest.CaptureFixture[str], flags: list[str], message: str) -> None:
    code, _, err = run(capsys, *flags)
    assert code == 2 and message in err
