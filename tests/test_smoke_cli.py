"""The README's main job: simulate the bundled example cluster."""

import json
from pathlib import Path

from kubesched.cli import main

EXAMPLES = Path(__file__).resolve().parent.parent / "examples" / "cluster"


def test_example_cluster_simulates(capsys):
    assert main(["simulate", str(EXAMPLES), "--output", "json", "--seed", "1"]) == 0
    doc = json.loads(capsys.readouterr().out)
    by_name = {p["name"]: p for p in doc["pods"]}
    assert by_name["huge-1"]["result"] == "Unschedulable"
    assert by_name["huge-1"]["message"].startswith("0/6 nodes are available:")
    assert by_name["gated-1"]["result"] == "Gated"
    assert by_name["train-1"]["node"] == "gpu-c2"
    assert by_name["db-proxy"]["node"] == "node-a1"
    web_nodes = {by_name[f"web-{i}"]["node"] for i in (1, 2, 3)}
    assert len(web_nodes) == 3
