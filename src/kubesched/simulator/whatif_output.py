"""Printing what-if answers and sweeps: rich tables for people, JSON and CSV for scripts and plots."""

from __future__ import annotations

import csv
import json
from typing import Any, TextIO

from rich.console import Console
from rich.markup import escape
from rich.table import Table

from kubesched.simulator import table as tables
from kubesched.simulator.sweep import AXES, SweepResult
from kubesched.simulator.whatif import Blocked, CapacityAnswer, Comparison

MAX_NAMES = 4  # added node names shown before eliding the middle


def write_json(doc: dict[str, Any], out: TextIO) -> None:
    json.dump(doc, out, indent=2)
    out.write("\n")


def _console(out: TextIO) -> Console:
    return Console(file=out, highlight=False, width=None if out.isatty() else 120)


def _names(names: list[str]) -> str:
    if len(names) <= MAX_NAMES:
        return ", ".join(names)
    return f"{', '.join(names[:2])}, ..., {names[-1]}"


def _pct(value: float | None) -> str:
    return "-" if value is None else f"{100 * value:.1f}%"


def _num(value: float | None, digits: int = 2) -> str:
    return "-" if value is None else f"{value:.{digits}f}"


# --- capacity -----------------------------------------------------------------------------------------------


def print_capacity(answer: CapacityAnswer, out: TextIO) -> None:
    console = _console(out)
    t = answer.template
    shape = ", ".join(f"{k} {v}" for k, v in t.allocatable.items())
    console.print(f"Node template: {escape(t.name)} ({escape(t.path)}): {escape(shape)}")
    console.print(f"{answer.pending_before} pod(s) pending without added nodes; seed {answer.seed}")
    console.print(escape(_headline(answer)))
    for note in answer.notes:
        console.print(f"  {escape(note)}")
    singles = [b for b in answer.blocked if b.pod_group is None]
    gangs = [b for b in answer.blocked if b.pod_group is not None]
    if singles:
        rows = [
            [
                tables.escaped(b.pod),
                tables.escaped(b.owner or "-"),
                tables.text(str(b.pods)),
                tables.escaped(_reasons(b)),
                tables.escaped(b.message),
            ]
            for b in singles
        ]
        headers = ("Pod", "Owner", "Pods like it", "Refused by", "Message")
        title = "Pods no number of these nodes can place (simulated alone on an empty one)"
        tables.print_table(console, title, [(h, "fold") for h in headers], rows, names=(0, 1))
    if gangs:
        rows = [
            [
                tables.escaped(b.pod_group or ""),
                tables.text(str(b.pods)),
                tables.escaped(_reasons(b)),
                tables.escaped(b.message),
            ]
            for b in gangs
        ]
        gang_headers = ("Pod group", "Pods", "Refused by", "Message")
        title = "Pod groups no number of these nodes can place whole (each simulated alone on one empty node a member)"
        tables.print_table(console, title, [(h, "fold") for h in gang_headers], rows, names=(0,))
    if answer.still_pending:
        rows = [[tables.escaped(pod), tables.escaped(message)] for pod, message in answer.still_pending]
        title = f"Still pending with {answer.max_nodes} node(s) added"
        tables.print_table(console, title, [("Pod", "fold"), ("Message", "fold")], rows, names=(0,))
    table = Table(title="Simulations, in the order run")
    columns = (
        ("Nodes added", "Pending", "Of them blocked", "Enough")
        if answer.blocked
        else ("Nodes added", "Pending", "Enough")
    )
    for col in columns:
        table.add_column(col, justify="right")
    for trial in answer.trials:
        cells = [str(trial.nodes), str(trial.pending), "yes" if trial.ok else "no"]
        if answer.blocked:
            cells.insert(2, str(trial.pending - len(trial.waiting)))
        table.add_row(*cells)
    console.print(table)


def _reasons(b: Blocked) -> str:
    return "; ".join(f"{p}: {v}" for p, v in b.reasons.items()) or "-"


def _headline(answer: CapacityAnswer) -> str:
    name = answer.template.name
    if answer.status == "none-needed":
        return "No nodes needed: every pending pod schedules on the cluster as it is."
    if answer.status == "found":
        return f"Answer: {answer.nodes} node(s) like {name} let every pending pod schedule: {_names(answer.added)}"
    if answer.status == "max-nodes":
        left = len(answer.still_pending)
        return (
            f"No answer up to --max-nodes {answer.max_nodes}: that many nodes like {name} leave {left} pod(s) pending"
        )
    alone = sum(b.pods for b in answer.blocked if b.pod_group is None)
    gangs = [b for b in answer.blocked if b.pod_group is not None]
    never = [f"{alone} pod(s) cannot run on one"] if alone else []
    if gangs:
        never.append(f"{len(gangs)} pod group(s) ({sum(b.pods for b in gangs)} pods) can never be placed whole")
    if answer.nodes == 0:
        rest = "the others schedule without added nodes"
    elif answer.nodes is not None:
        rest = f"{answer.nodes} node(s) place all the others: {_names(answer.added)}"
    else:
        rest = f"even {answer.max_nodes} node(s) leave {len(answer.still_pending)} other pod(s) pending"
    return f"No number of nodes like {name} places every pending pod: {' and '.join(never)}; {rest}."


# --- compare ------------------------------------------------------------------------------------------------


def print_comparison(cmp: Comparison, out: TextIO) -> None:
    console = _console(out)
    doc = cmp.to_json()
    a, b = doc["a"], doc["b"]
    releases = a["kubernetesVersion"] != b["kubernetesVersion"]  # an upgrade compare names them
    for label, side in (("A", a), ("B", b)):
        named = f", kube-scheduler {escape(side['kubernetesVersion'])}" if releases else ""
        console.print(f"{label}: {escape(side['config'])}{named}")
    console.print(f"The same manifests and seed ({cmp.seed}) under both.")
    table = Table()
    table.add_column("Measure")
    for col in ("A", "B", "B - A"):
        table.add_column(col, justify="right")

    def row(label: str, x: float | None, y: float | None, kind: str = "int") -> None:
        value, delta = _FORMATS[kind]
        change = "-" if x is None or y is None else delta(y - x)
        table.add_row(label, "-" if x is None else value(x), "-" if y is None else value(y), change)

    for key, label in (
        ("pods", "pods"),
        ("scheduled", "scheduled"),
        ("pending", "pending"),
        ("nodesUsed", "nodes with pods"),
    ):
        row(label, a[key], b[key])
    shown = {*cmp.a.sim.summary.shown(), *cmp.b.sim.summary.shown()}  # the JSON keeps every resource
    for resource in (r for r in a["utilisation"] if r in shown):
        row(f"utilisation {resource}", a["utilisation"].get(resource), b["utilisation"].get(resource), "pct")
    for resource in a["nodeUtilisation"]:
        for stat in ("stddev", "range"):
            x, y = a["nodeUtilisation"][resource][stat], b["nodeUtilisation"][resource][stat]
            row(f"node {resource} utilisation {stat}", x, y, "pct")
    for scope in ("placedPerNode", "placedPerZone"):
        for stat in ("stddev", "range"):
            row(f"{_scope(scope)} {stat}", a[scope][stat], b[scope][stat], "num")
    zones = sorted(set(a["placedPerZone"]["counts"]) | set(b["placedPerZone"]["counts"]))
    for zone in zones:
        row(
            f"pods placed in {zone}",
            a["placedPerZone"]["counts"].get(zone, 0),
            b["placedPerZone"]["counts"].get(zone, 0),
        )
    console.print(table)
    moved = doc["moved"]
    if not moved:
        console.print("Every pod lands on the same node with the same result under both.")
        return
    suffix = tables.domain_suffix([n.name for side in (cmp.a, cmp.b) for n in side.sim.nodes])
    rows = [
        [
            tables.escaped(m["pod"]),
            tables.escaped(tables.without(m["nodeA"], suffix) if m["nodeA"] else "-"),
            tables.escaped(m["resultA"] or "-"),
            tables.escaped(tables.without(m["nodeB"], suffix) if m["nodeB"] else "-"),
            tables.escaped(m["resultB"] or "-"),
        ]
        for m in moved
    ]
    headers = ("Pod", "Node under A", "Result under A", "Node under B", "Result under B")
    title = f"Pods that land differently: {len(moved)} of {a['pods']}"
    tables.print_table(console, title, [(h, "fold") for h in headers], rows, names=(0, 1, 3))
    if suffix:
        console.print(f"Node names without {escape(suffix)}")
    _print_why(console, moved, suffix)


def _print_why(console: Any, moved: list[dict[str, Any]], suffix: str) -> None:
    """Per moved pod (a release compare records scores), the plugins whose scores of its two nodes changed."""
    explained = [m for m in moved if m.get("why")]
    if not explained:
        return
    console.print("Why (weighted plugin scores of the two nodes that changed, A -> B):")
    for m in explained:
        console.print(f"  {escape(m['pod'])}")
        for change in m["why"]:
            if "scoresA" not in change:
                side = "A" if "filterA" in change else "B"
                node = tables.without(change["node"], suffix) if suffix else change["node"]
                verdict = change[f"filter{side}"]
                console.print(f"    {escape(change['plugin'])} under {side} rejects {escape(node)}: {escape(verdict)}")
                continue
            parts = []
            for node in change["scoresA"]:
                x, y = change["scoresA"][node], change["scoresB"][node]
                shown = tables.without(node, suffix) if suffix else node
                parts.append(f"{escape(shown)} {'-' if x is None else x} -> {'-' if y is None else y}")
            console.print(f"    {escape(change['plugin'])}: " + ", ".join(parts))


_FORMATS: dict[str, tuple[Any, Any]] = {
    "int": (lambda v: str(int(v)), lambda d: f"{int(d):+d}"),
    "pct": (lambda v: f"{100 * v:.1f}%", lambda d: f"{100 * d:+.1f} pt"),
    "num": (lambda v: f"{v:.2f}", lambda d: f"{d:+.2f}"),
}


def _scope(key: str) -> str:
    return "pods placed per node" if key == "placedPerNode" else "pods placed per zone"


# --- sweep --------------------------------------------------------------------------------------------------

COLUMNS = (
    "index",
    "nodes",
    "template",
    "config",
    "scale",
    "seed",
    "kubernetesVersion",
    "pods",
    "scheduled",
    "pending",
    "clusterNodes",
    "nodesUsed",
)


def sweep_rows(result: SweepResult) -> list[dict[str, Any]]:
    """One flat row per point (utilisation.<resource> columns), for CSV and data frames."""
    resources = result.resources()
    out = []
    for row in result.rows:
        flat = {c: row.get(c) for c in COLUMNS}
        util = row.get("utilisation") or {}
        flat.update({f"utilisation.{r}": util.get(r) for r in resources})
        flat.update(
            {"wallSeconds": row.get("wallSeconds"), "cpuSeconds": row.get("cpuSeconds"), "error": row.get("error")}
        )
        out.append(flat)
    return out


def write_csv(result: SweepResult, out: TextIO) -> None:
    rows = sweep_rows(result)
    writer = csv.DictWriter(out, fieldnames=list(rows[0]) if rows else list(COLUMNS), lineterminator="\n")
    writer.writeheader()
    writer.writerows(rows)


def print_sweep(result: SweepResult, out: TextIO) -> None:
    """One row a point: the axes the spec varies, then what was measured (pending pods, cpu and memory used).

    Pods are a column only when the points differ in them (a scale axis), else in the title: a
    column fewer lets the table of three axes fit 80 columns."""
    console = _console(out)
    resources = [r for r in result.resources() if r in ("cpu", "memory")]
    varied = [a for a in AXES if len({row[a] for row in result.rows}) > 1] or ["nodes"]
    errors = any(row.get("error") for row in result.rows)
    counts = {row.get("pods") for row in result.rows if not row.get("error")}
    where = f"{result.workers} process(es)" if result.engine == "processes" else f"Ray ({result.workers} CPUs)"
    title = f"Sweep {result.spec.path}: {len(result.rows)} point(s) in {result.wall_seconds:.1f} s on {where}"
    if len(counts) == 1:
        title += f", {counts.pop()} pod(s) each"
    columns: list[tables.Column] = [("#", None, "right")]
    columns += [(axis, "fold", "left" if axis in _NAMED_AXES else "right") for axis in varied]
    measures = ["pods"] if len(counts) > 1 else []
    measures += ["pending", "nodesUsed"]
    headers = {"nodesUsed": "nodes used"}
    columns += [(headers.get(m, m), "fold", "right") for m in measures]
    columns += [(f"{r} used", "fold", "right") for r in resources]
    columns.append(("time", "fold", "right"))
    if errors:
        columns.append(("error", "fold"))
    rows = []
    for row in result.rows:
        util = row.get("utilisation") or {}
        cells = [tables.text(str(row["index"]))]
        cells += [tables.escaped(_axis(row[a])) for a in varied]
        cells += [tables.text(str(row.get(m, "-"))) for m in measures]
        cells += [tables.text(_pct(util.get(r))) for r in resources]
        seconds = row.get("wallSeconds")
        cells.append(tables.text("-" if seconds is None else f"{seconds:.2f}s"))
        if errors:
            cells.append(tables.escaped(row.get("error") or ""))
        rows.append(cells)
    names = [1 + i for i, axis in enumerate(varied) if axis in _NAMED_AXES]
    console.print(escape(title))  # a line of its own: as a title it would wrap to the table's width
    tables.print_table(console, None, columns, rows, names=names)


_NAMED_AXES = ("template", "config")  # file names, or `default`


def _axis(value: Any) -> str:
    if value is None:
        return "-"
    return f"{value:g}" if isinstance(value, float) else str(value)
