"""Tables for people on EKS-like names (issue 29, items 9 and 10): within the console, names never
folded (whole, or elided in the middle as docs/output.md says), and only the resources pods ask for."""

from __future__ import annotations

import io
import json
import os
import re
from pathlib import Path
from typing import Any
from unittest import mock

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from rich.console import Console

import kubesched
from kubesched.cli import main
from kubesched.simulator import explain, table
from kubesched.simulator.report import print_table

ZONES = ("eu-west-1a", "eu-west-1b", "eu-west-1c")
NODES = 6
PODS = 8  # the last asks for more cpu than any node has: pending, with a long message


def _node(name: str, zone: str, extra: str = "", taint: str = "") -> str:
    return (
        f"---\napiVersion: v1\nkind: Node\nmetadata: {{name: {name}, labels: "
        f"{{kubernetes.io/hostname: {name}, topology.kubernetes.io/zone: {zone}}}}}\n{taint}"
        f'status: {{allocatable: {{cpu: "8", memory: 32Gi, pods: "58"{extra}}}}}\n'
    )


def _pod(name: str, requests: str, namespace: str = "default") -> str:
    return (
        f"---\napiVersion: v1\nkind: Pod\nmetadata: {{name: {name}, namespace: {namespace}}}\n"
        f"spec:\n  containers: [{{name: c, resources: {{requests: {requests}, limits: {requests}}}}}]\n"
    )


def _placeholder_node(i: int) -> str:
    return f"zznode{i}q"  # placeholders the property renames; none is a prefix of another


def _placeholder_pod(i: int) -> str:
    return f"zzpod{i}q"


@pytest.fixture(scope="module")
def template() -> str:
    """One simulation's JSON, as text to rename its nodes and pods in."""
    text = "".join(_node(_placeholder_node(i), ZONES[i % 3]) for i in range(NODES))
    text += "".join(_pod(_placeholder_pod(i), "{cpu: '1', memory: 1Gi}", "zzns") for i in range(PODS - 1))
    text += _pod(_placeholder_pod(PODS - 1), "{cpu: '100'}", "zzns")
    sim = kubesched.simulate(text=text, seed=1, record=False)
    return sim.to_json()


_label = st.text("abcdefghijklmnopqrstuvwxyz0123456789", min_size=1, max_size=12)
_dns = st.lists(_label, min_size=1, max_size=4).map("-".join)
_eks_node = st.tuples(st.integers(0, 255), st.integers(0, 255), _dns).map(lambda t: f"ip-10-0-{t[0]}-{t[1]}-{t[2]}")
_domain = st.sampled_from([".eu-west-1.compute.internal", ".ec2.internal", ""]) | st.lists(_label, max_size=4).map(
    lambda labels: "".join("." + label for label in labels)
)
_long_name = st.lists(_label, min_size=1, max_size=12).map("-".join).map(lambda s: s[:120].strip("-") or "x")


def _rename(doc_text: str, nodes: list[str], namespace: str, pods: list[str]) -> dict[str, Any]:
    for i, name in enumerate(nodes):
        doc_text = doc_text.replace(_placeholder_node(i), name)
    for i, name in enumerate(pods):
        doc_text = doc_text.replace(_placeholder_pod(i), name)
    return dict(json.loads(doc_text.replace("zzns", namespace)))


def _render(doc: dict[str, Any], width: int) -> str:
    out = io.StringIO()
    with mock.patch.dict(os.environ, {"COLUMNS": str(width)}):
        print_table(doc, out)
    return out.getvalue()


def _table_rows(out: str, title: str) -> list[list[str]]:
    """The cells of each body line of the table under `title` (a row of several lines gives several)."""
    lines = out.splitlines()
    start = next(i for i, line in enumerate(lines) if line.strip() == title)
    body = next(i for i in range(start, len(lines)) if lines[i].startswith("┡"))
    rows = []
    for line in lines[body + 1 :]:
        if line.startswith("└"):
            break
        rows.append([cell.strip() for cell in line.split("│")[1:-1]])
    return rows


def _shown_as(cell: str, name: str) -> bool:
    """docs/output.md: a name is printed whole, or as its start, '...' and its end (the end no shorter).
    The marker may touch dots of the name itself ("000." + "..." + "0000"), so every place it could be is tried."""
    if cell == name:
        return True
    return any(
        name.startswith(head)
        and name.endswith(tail)
        and len(head) <= len(tail) <= len(head) + 1
        and len(head) + len(tail) < len(name)
        for head, tail in ((cell[:i], cell[i + 3 :]) for i in range(len(cell)) if cell.startswith("...", i))
    )


def _names_in(rows: list[list[str]], column: int) -> list[str]:
    return [row[column] for row in rows if row[column]]


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    st.lists(_eks_node, min_size=NODES, max_size=NODES, unique=True),
    _domain,
    _label,
    st.lists(_long_name, min_size=PODS, max_size=PODS, unique=True),
    st.sampled_from([80, 80, 100, 132, 200]),
)
def test_tables_fit_the_console_and_never_break_a_name(
    template: str, hosts: list[str], domain: str, namespace: str, pods: list[str], width: int
) -> None:
    nodes = [host + domain for host in hosts]
    out = _render(_rename(template, nodes, namespace, pods), width)
    assert max(len(line) for line in out.splitlines()) <= width
    suffix = domain  # the hosts have no dot: the suffix all nodes share is the domain
    short = {n: n[: len(n) - len(suffix)] for n in nodes}
    if suffix:
        assert out.count(f"Node names without {suffix}") == 1
    else:
        assert "Node names without" not in out
    # Pods: one line of its Pod and Node cells per pod, in the JSON's order (more lines are the message's).
    doc = json.loads(template)
    rows = _table_rows(out, "Pods")
    pod_cells = _names_in(rows, 0)
    assert len(pod_cells) == PODS
    for cell, name in zip(pod_cells, (f"{namespace}/{p}" for p in pods), strict=True):
        assert _shown_as(cell, name), (cell, name)
    placed = [p["node"] for p in doc["pods"]]
    node_cells = _names_in(rows, 1)
    assert len(node_cells) == PODS
    for cell, node in zip(node_cells, placed, strict=True):
        assert cell == "-" if node is None else _shown_as(cell, short[nodes[int(node[6:-1])]]), (cell, node)
    # Nodes: every node once, in one cell.
    node_rows = _names_in(_table_rows(out, "Nodes"), 0)
    assert len(node_rows) == NODES
    assert all(any(_shown_as(cell, short[n]) for n in nodes) for cell in node_rows)


def test_eks_names_at_80_columns(template: str) -> None:
    """The newcomer's case: node names lose their common domain, a long pod name its middle."""
    nodes = [f"ip-10-0-{i}-{10 + i}.eu-west-1.compute.internal" for i in range(NODES)]
    pods = [f"prometheus-kube-prometheus-stack-alertmanager-{i}" for i in range(PODS)]
    out = _render(_rename(template, nodes, "monitoring", pods), 80)
    assert max(len(line) for line in out.splitlines()) <= 80
    assert "Node names without .eu-west-1.compute.internal" in out
    assert "compute.internal" not in out.replace("Node names without .eu-west-1.compute.internal", "")
    rows = _table_rows(out, "Pods")
    assert all(row[0] for row in rows[: PODS - 1])  # one line a bound pod (the pending one's message wraps)
    assert re.fullmatch(r"monitor\w*\.\.\.\w*manager-0", rows[0][0])
    assert re.fullmatch(r"ip-10-0-\d-1\d", rows[0][1])
    # Wide enough, the same table uses the room: every name whole.
    wide = _render(_rename(template, nodes, "monitoring", pods), 250)
    assert "..." not in wide
    assert all(f"monitoring/{p}" in wide for p in pods)
    assert max(len(line) for line in wide.splitlines()) > 80


@pytest.mark.parametrize(
    ("names", "suffix"),
    [
        (
            ["ip-10-0-0-1.eu-west-1.compute.internal", "ip-10-0-0-2.eu-west-1.compute.internal"],
            ".eu-west-1.compute.internal",
        ),
        (["a.x.example.com", "b.y.example.com"], ".example.com"),
        (["node-1", "node-2"], ""),
        (["a.example.com", "example.com"], ".com"),  # example.com keeps its first label
        (["example", "a.example"], ""),
        (["a.b", "a.b"], ".b"),
        (["one.example.com"], ".example.com"),
        ([], ""),
    ],
)
def test_domain_suffix(names: list[str], suffix: str) -> None:
    assert table.domain_suffix(names) == suffix
    assert all(table.without(n, suffix) for n in names)


@given(st.text(min_size=1, max_size=300), st.integers(4, 200))
def test_elide_keeps_the_start_and_the_end(name: str, width: int) -> None:
    out = table.elide(name, width)
    assert out == name if len(name) <= width else len(out) == width and _shown_as(out, name)


# --- item 10: only the resources pods ask for --------------------------------------------------------------

_EXTRA = ', ephemeral-storage: 100Gi, attachable-volumes-aws-ebs: "25", hugepages-2Mi: 1Gi'
_GPU_TAINT = "spec: {taints: [{key: gpu, value: only, effect: NoSchedule}]}\n"
CLUSTER = (
    _node("a.ec2.internal", ZONES[0], _EXTRA)
    + _node("b.ec2.internal", ZONES[1], _EXTRA)
    + _node("gpu.ec2.internal", ZONES[2], _EXTRA + ', nvidia.com/gpu: "4"', _GPU_TAINT)
    + _pod("web", "{cpu: '1', memory: 1Gi}")
)
GPU = _pod("train", "{cpu: '1', nvidia.com/gpu: '1'}")  # does not tolerate the GPU node's taint: pending
UNSEEN = ("ephemeral-storage", "attachable-volumes", "hugepages", "nvidia.com/gpu")


def _simulate(tmp_path: Path, capsys: pytest.CaptureFixture[str], text: str, *args: str) -> str:
    f = tmp_path / "cluster.yaml"
    f.write_text(text)
    assert main(["simulate", str(f), "--seed", "1", *args]) == 0
    return capsys.readouterr().out


def test_table_shows_only_the_resources_pods_request(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("COLUMNS", "200")
    out = _simulate(tmp_path, capsys, CLUSTER, "--output", "table")
    for resource in UNSEEN:
        assert resource not in out
    assert [row[0] for row in _table_rows(out, "Utilisation")] == ["cpu", "memory", "pods"]
    doc = json.loads(_simulate(tmp_path, capsys, CLUSTER, "--output", "json"))
    summary = doc["summary"]
    assert {"ephemeral-storage", "attachable-volumes-aws-ebs", "hugepages-2Mi", "nvidia.com/gpu"} <= set(
        summary["resources"]
    )  # the JSON keeps every resource
    assert summary["resources"]["ephemeral-storage"]["utilisation"] == 0
    assert set(doc["nodes"][0]["requested"]) >= {"ephemeral-storage", "hugepages-2Mi"}


def test_a_resource_only_a_pending_pod_requests_is_shown(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """No bound pod uses a GPU, but a pending pod wants one: 0% of the GPUs is the point."""
    monkeypatch.setenv("COLUMNS", "200")
    out = _simulate(tmp_path, capsys, CLUSTER + GPU, "--output", "table")
    utilisation = {row[0]: row for row in _table_rows(out, "Utilisation")}
    assert list(utilisation) == ["cpu", "memory", "pods", "nvidia.com/gpu"]
    assert utilisation["nvidia.com/gpu"][1:4] == ["0", "4", "0%"]
    assert "nvidia.com/gpu 0/4 0%" in out  # the GPU node's row in Nodes
    assert "ephemeral-storage" not in out


def test_report_shows_only_the_resources_pods_request(tmp_path: Path) -> None:
    pytest.importorskip("matplotlib")
    sim = kubesched.simulate(text=CLUSTER + GPU, seed=1)
    path = tmp_path / "report.html"
    sim.write_report(path)
    text = path.read_text()
    for resource in ("ephemeral-storage", "attachable-volumes", "hugepages"):
        assert resource not in text
    assert "nvidia.com/gpu" in text


def test_compare_table_shows_only_the_resources_pods_request(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    f = tmp_path / "cluster.yaml"
    f.write_text(CLUSTER)
    args = ["whatif", "compare", str(f), "--config", "default", "--config", "default"]
    assert main([*args, "--output", "table"]) == 0
    out = capsys.readouterr().out
    measures = [line.split("│")[1].strip() for line in out.splitlines() if line.startswith("│ utilisation")]
    assert measures == ["utilisation cpu", "utilisation memory", "utilisation pods"]
    assert main([*args, "--output", "json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert {"ephemeral-storage", "hugepages-2Mi", "attachable-volumes-aws-ebs"} <= set(doc["a"]["utilisation"])


class _Terminal(io.StringIO):
    def isatty(self) -> bool:
        return True


def test_sweep_table_fits_80_columns_with_every_value() -> None:
    """Three varied axes on an 80-column terminal: before, rich squeezed `#` and `seed` to nothing."""
    from kubesched.simulator.sweep import sweep
    from kubesched.simulator.whatif_output import print_sweep

    result = sweep(str(Path(__file__).parents[1] / "examples/whatif/sweep.yaml"), workers=1)
    out = _Terminal()
    with mock.patch.dict(os.environ, {"COLUMNS": "80", "NO_COLOR": "1"}):
        print_sweep(result, out)
    text = re.sub(r"\x1b\[[0-9;]*m", "", out.getvalue())
    assert max(len(line) for line in text.splitlines()) <= 80
    rows = [[c.strip() for c in line.split("│")[1:-1]] for line in text.splitlines() if line.startswith("│")]
    assert [r[0] for r in rows] == [str(i) for i in range(len(result.rows))]
    assert [r[3] for r in rows] == [str(p["seed"]) for p in result.rows]
    assert all(_shown_as(r[2], p["config"]) for r, p in zip(rows, result.rows, strict=True))
    assert "8 pod(s) each" in " ".join(text.split())


def test_the_eks_example_at_80_columns(capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch) -> None:
    """examples/eks, as docs/output.md runs it."""
    monkeypatch.setenv("COLUMNS", "80")
    example = str(Path(__file__).parents[1] / "examples" / "eks")
    assert main(["simulate", example, "--output", "table", "--seed", "1"]) == 0
    out = capsys.readouterr().out
    assert max(len(line) for line in out.splitlines()) <= 80
    assert "Node names without .eu-west-1.compute.internal" in out
    for resource in ("ephemeral-storage", "attachable-volumes", "hugepages"):
        assert resource not in out
    assert [row[0] for row in _table_rows(out, "Utilisation")] == ["cpu", "memory", "pods", "nvidia.com/gpu"]
    pods = [row[0] for row in _table_rows(out, "Pods") if row[0]]
    assert len(pods) == 6 and "ml/cuda-vector-add" in pods
    nodes = [row[0] for row in _table_rows(out, "Nodes")]
    assert nodes == ["ip-10-0-0-10", "ip-10-0-0-17", "ip-10-0-1-24", "ip-10-0-1-31", "ip-10-0-2-38", "ip-10-0-2-45"]


# --- --explain's tables: the same layout (table.print_table) -------------------------------------------------

_SCORES = {"TaintToleration": 300, "NodeResourcesFit": 98, "NodeResourcesBalancedAllocation": 74}


def _explanation(nodes: list[str], feasible: int) -> explain.Explanation:
    """A pod's explanation: the first node chosen, the next `feasible` - 1 lost on scores, the rest filtered out."""
    chosen = nodes[0]
    rows = [
        explain.NodeExplanation(
            node=node,
            filters={"NodeResourcesFit": "passed"},
            rejected_by=None,
            reason=None,
            scores=dict(_SCORES, NodeResourcesFit=98 - i),
            total=sum(_SCORES.values()) - i,
            chosen=i == 0,
            why="chosen: highest total score"
            if i == 0
            else f"passed every filter; scored {i} lower than {chosen}, mostly on NodeResourcesFit ({i} lower)",
            rival=None if i == 0 else chosen,
        )
        for i, node in enumerate(nodes[:feasible])
    ]
    rows += [
        explain.NodeExplanation(
            node=node,
            filters={"TaintToleration": "node(s) had untolerated taint(s)"},
            rejected_by="TaintToleration",
            reason="node(s) had untolerated taint(s)",
            scores={},
            total=None,
            chosen=False,
            why="filtered out by TaintToleration: node(s) had untolerated taint(s)",
        )
        for node in nodes[feasible:]
    ]
    return explain.Explanation(
        pod="default/web-1",
        result="Scheduled",
        message="",
        node=chosen,
        nominated_node=None,
        victims=[],
        preempted_by=None,
        attempts=1,
        cluster_nodes=len(nodes),
        nodes=rows,
        zero_score_plugins=["ImageLocality"],
    )


def _render_explained(items: list[explain.Explanation | explain.WorkloadExplanation], width: int) -> str:
    out = io.StringIO()
    explain.render(items, Console(file=out, width=width))
    return out.getvalue()


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    st.lists(_eks_node, min_size=1, max_size=NODES, unique=True),
    _domain,
    st.integers(1, NODES),
    st.sampled_from([80, 80, 100, 132, 200]),
)
def test_explain_tables_fit_the_console_and_never_break_a_node_name(
    hosts: list[str], domain: str, feasible: int, width: int
) -> None:
    nodes = [host + domain for host in hosts]
    pod = _explanation(nodes, min(feasible, len(nodes)))
    placed = [
        explain.NodeGroup(node, pods=i + 1, totals=[472], won_by={"NodeResourcesFit": 1})
        for i, node in enumerate(nodes)
    ]
    workload = explain.WorkloadExplanation(
        workload="Deployment default/web",
        pods=len(nodes),
        by_result={"Scheduled": len(nodes)},
        placed=placed,
        waiting=[],
        examples=[pod],
    )
    out = _render_explained([pod, workload], width)
    assert max(len(line) for line in out.splitlines()) <= width
    short = [
        n[: len(n) - len(domain)] for n in nodes
    ]  # the hosts have no dot: the suffix all nodes share is the domain
    assert out.count(f"Node names without {domain}") == (3 if domain else 0)  # two pod tables and the workload's
    for title in ("Nodes examined for default/web-1", "Where its pods went"):
        cells = _names_in(_table_rows(out, title), 0)
        assert len(cells) == len(nodes)
        for cell, name in zip(cells, short, strict=True):
            assert _shown_as(cell, name), (cell, name)
    # A score line is never wrapped: the longest plugin name shares its line with its score.
    assert all(
        line.rstrip(" │").endswith(" NodeResourcesBalancedAllocation")
        for line in out.splitlines()
        if "Balanced" in line
    )


def test_the_eks_example_explained_at_80_columns(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """docs/output.md's EKS example, explained: node names without their domain, whole, one line a row's name."""
    monkeypatch.setenv("COLUMNS", "80")
    example = str(Path(__file__).parents[1] / "examples" / "eks")
    workload = "monitoring/sts/prometheus-kube-prometheus-stack-alertmanager"
    args = ["simulate", example, "--output", "table", "--seed", "1", "--explain", "ml/cuda-vector-add", "--explain"]
    assert main([*args, workload]) == 0
    out = capsys.readouterr().out
    assert max(len(line) for line in out.splitlines()) <= 80
    hosts = ["ip-10-0-0-10", "ip-10-0-0-17", "ip-10-0-1-24", "ip-10-0-1-31", "ip-10-0-2-38", "ip-10-0-2-45"]
    rows = _table_rows(out, "Nodes examined for ml/cuda-vector-add")
    assert _names_in(rows, 0) == hosts
    assert out.count("Node names without .eu-west-1.compute.internal") == 3
    placed = _table_rows(out, "Where its pods went")
    assert len(placed) == 3 and all(row[0] in hosts for row in placed)
    body = [line for line in out.splitlines() if line.startswith("│")]
    assert not any("compute.internal" in line for line in body)
