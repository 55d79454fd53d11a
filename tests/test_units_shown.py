"""Requested/allocatable as people read it: one unit per cell, the same in the CLI's node table and the UI."""

from __future__ import annotations

import re
from fractions import Fraction
from pathlib import Path

import pytest
from hypothesis import example, given
from hypothesis import strategies as st
from starlette.testclient import TestClient

from kubesched.api.quantity import format_quantity
from kubesched.cli import main
from kubesched.simulator.report import share
from kubesched.ui.server import create_app
from kubesched.ui.workspace import Workspace

# An EKS m5.2xlarge as kubelet reports it (cpu in millicores, memory in Ki) with 7 pods of 1 cpu and 1638Mi.
EKS = """
apiVersion: v1
kind: Node
metadata:
  name: ip-10-0-0-10.eu-west-1.compute.internal
  labels: {kubernetes.io/hostname: ip-10-0-0-10.eu-west-1.compute.internal, topology.kubernetes.io/zone: eu-west-1a}
status:
  allocatable: {cpu: 7910m, memory: 31386148Ki, pods: "58"}
---
apiVersion: v1
kind: Node
metadata:
  name: small
  labels: {kubernetes.io/hostname: small}
spec:
  taints: [{key: dedicated, value: infra, effect: NoSchedule}]
status:
  allocatable: {cpu: 7910m, memory: 31386148Ki, pods: "58"}
---
apiVersion: v1
kind: Pod
metadata: {name: agent, namespace: kube-system}
spec:
  nodeName: small
  containers: [{name: c, resources: {requests: {cpu: 5m, memory: 512Mi}}}]
---
apiVersion: apps/v1
kind: Deployment
metadata: {name: api, namespace: default}
spec:
  replicas: 7
  selector: {matchLabels: {app: api}}
  template:
    metadata: {labels: {app: api}}
    spec:
      containers: [{name: c, resources: {requests: {cpu: "1", memory: 1638Mi}}}]
"""


@pytest.mark.parametrize(
    ("resource", "requested", "allocatable", "shown"),
    [
        ("memory", "11466Mi", "31386148Ki", "11.2Gi/29.9Gi"),  # was 11466Mi / 31386148Ki in the UI
        ("cpu", "7", "7910m", "7/7.91"),  # was 7 / 7910m
        ("memory", "512Mi", "31386148Ki", "0.5Gi/29.9Gi"),  # not 512Mi/29.9Gi: one unit
        ("memory", "10Mi", "32Gi", "0.01Gi/32Gi"),  # small, not 0
        ("memory", "1Ki", "32Gi", "<0.001Gi/32Gi"),
        ("memory", "0", "32Gi", "0Gi/32Gi"),
        ("memory", "40Gi", "32Gi", "40Gi/32Gi"),  # over: the larger picks the unit
        ("memory", "11104Mi", "128Gi", "10.8Gi/128Gi"),
        ("memory", "512", "1000", "512/1000"),
        ("cpu", "1m", "8", "0.001/8"),
        ("cpu", "250", "256", "250/256"),
        ("ephemeral-storage", "2Gi", "100Gi", "2Gi/100Gi"),
        ("hugepages-2Mi", "2Mi", "1Gi", "0.002Gi/1Gi"),
        ("pods", "7", "58", "7/58"),
        ("nvidia.com/gpu", "1", "4", "1/4"),
        ("memory", "bad", "1Gi", "bad/1Gi"),
    ],
)
def test_requested_over_allocatable_in_one_unit(resource: str, requested: str, allocatable: str, shown: str) -> None:
    assert share(resource, requested, allocatable) == shown


_COLUMNS = (("pods", "podShare"), ("cpu", "cpu"), ("memory", "memory"))
_FIGURE = re.compile(r"(<?)([0-9]+)(?:\.([0-9]+))?(Ki|Mi|Gi|Ti|Pi|Ei|)")
_SCALE = {"": 1, "Ki": 2**10, "Mi": 2**20, "Gi": 2**30, "Ti": 2**40, "Pi": 2**50, "Ei": 2**60}


@given(
    st.sampled_from(["memory", "cpu", "ephemeral-storage"]),
    st.integers(min_value=0, max_value=2**62),
    st.integers(min_value=0, max_value=2**62),
)
@example("cpu", 1_706_716_999_241_981_375, 0)  # a float's 53 bits rounded this to .5 instead of .38
def test_both_sides_share_one_unit_and_stay_close(resource: str, requested: int, allocatable: int) -> None:
    """Whatever the amounts: one unit, each side within half its last digit, and nothing nonzero shown as 0."""
    text = share(resource, format_quantity(resource, requested), format_quantity(resource, allocatable))
    sides = [_FIGURE.fullmatch(side) for side in text.split("/")]
    assert len(sides) == 2 and sides[0] is not None and sides[1] is not None, text
    assert sides[0][4] == sides[1][4], text
    for m, amount in zip(sides, (requested, allocatable), strict=True):
        assert m is not None
        exact = Fraction(amount, 1000) if resource == "cpu" else Fraction(amount)
        step = Fraction(_SCALE[m[4]], 10 ** len(m[3] or ""))  # one in the last digit shown
        shown = Fraction(m[2] + "." + (m[3] or "0")) * _SCALE[m[4]]
        if m[1]:
            assert 0 < exact < shown, text  # "<0.001Gi": under the finest figure, not 0
        else:
            assert (shown == 0) == (exact == 0), text
            assert abs(shown - exact) <= step / 2 * Fraction(1001, 1000), text


def test_the_ui_shows_a_node_as_the_cli_table_does(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    path = tmp_path / "eks.yaml"
    path.write_text(EKS)
    monkeypatch.setenv("COLUMNS", "250")
    assert main(["simulate", str(path), "--output", "table"]) == 0
    table = capsys.readouterr().out
    ui = TestClient(create_app(Workspace.from_files([str(path)])), base_url="http://127.0.0.1:8080")
    rows = {n["name"]: n for n in ui.get("/api/nodes").json()["items"]}
    eks = rows["ip-10-0-0-10.eu-west-1.compute.internal"]
    assert eks["usage"] == {"cpu": "7/7.91", "memory": "11.2Gi/29.9Gi", "pods": "7/58"}
    assert eks["allocatableShown"] == {"cpu": "7.91", "memory": "29.9Gi", "pods": "58"}
    assert rows["small"]["usage"] == {"cpu": "0.01/7.91", "memory": "0.5Gi/29.9Gi", "pods": "1/58"}
    cli = {}  # the Nodes table's rows: node, pods, cpu, memory, other
    for line in table.splitlines():
        cells = [c.strip() for c in line.strip("│ ").split("│")]
        if len(cells) == 5 and cells[0] in rows:
            cli[cells[0]] = cells[1:4]
    assert set(cli) == set(rows)
    for name, n in rows.items():
        assert cli[name] == [f"{n['usage'][r]} {n[share_of] * 100:.0f}%" for r, share_of in _COLUMNS], name
    detail = ui.get("/api/node", params={"name": "small"}).json()
    assert detail["usage"] == rows["small"]["usage"] and detail["allocatableShown"]["memory"] == "29.9Gi"


def test_the_html_report_reads_the_same(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path, report = tmp_path / "eks.yaml", tmp_path / "report.html"
    path.write_text(EKS)
    assert main(["simulate", str(path), "-q", "--output", "json", "--report", str(report)]) == 0
    capsys.readouterr()
    html = report.read_text()
    assert "<td>0.5Gi/29.9Gi (2%)</td>" in html and "512Mi" not in html  # the zoneless node's memory
    assert "<td>11.2Gi/29.9Gi (37%)</td>" in html
