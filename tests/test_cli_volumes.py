"""`kubesched simulate` with claims: static local PVs, zonal provisioning, and a claim nothing can serve."""

import json

from kubesched.cli import main


def test_volume_example_through_the_cli(capsys):
    code = main(["simulate", "examples/volumes", "--output", "json", "--seed", "1"])
    out = capsys.readouterr()
    assert code == 0 and "VolumeBinding" not in out.err
    pods = {p["name"]: p for p in json.loads(out.out)["pods"]}
    assert pods["db"]["node"] == "node-a"  # the only local PV big enough lives there
    assert pods["cache"]["node"] == "node-b"  # the class provisions in zone-b only
    assert pods["too-big"]["node"] is None
    assert pods["too-big"]["message"].startswith(
        "0/2 nodes are available: 2 node(s) didn't find available persistent volumes to bind."
    )
