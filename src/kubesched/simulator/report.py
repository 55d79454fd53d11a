"""The simulator's output: the contract's JSON and a table for people."""

from __future__ import annotations

from typing import Any, TextIO

from rich.console import Console
from rich.markup import escape
from rich.table import Table

from kubesched.api.quantity import format_quantity
from kubesched.api.resources import CPU, MEMORY
from kubesched.simulator.run import SimulationResult


def to_json(result: SimulationResult, *, record: bool) -> dict[str, Any]:
    sched = result.scheduler
    assert sched is not None
    pods: list[dict[str, Any]] = []
    attempted = set(result.outcomes)
    for outcome in result.outcomes.values():
        entry: dict[str, Any] = {
            "namespace": outcome.pod.namespace,
            "name": outcome.pod.name,
            "node": outcome.node,
            "result": outcome.result,
            "message": outcome.message,
            "nominatedNode": None,
            "victims": [],
            "attempts": outcome.attempts,
        }
        if record and outcome.record is not None:
            r = outcome.record
            entry["plugins"] = {
                "filter": r.filter,
                "score": r.score,
                "normalizedScore": r.normalized_score,
                "finalScore": r.final_score,
            }
        pods.append(entry)
    for pod in result.pending:
        if pod.uid in attempted:
            continue
        gate = sched.profiles[pod.scheduler_name].run_pre_enqueue_plugins(pod) if sched.responsible_for(pod) else None
        entry = {
            "namespace": pod.namespace,
            "name": pod.name,
            "node": None,
            "result": "Gated" if gate is not None else "Unschedulable",
            "message": gate.message() if gate is not None else f'no profile for schedulerName "{pod.scheduler_name}"',
            "nominatedNode": None,
            "victims": [],
            "attempts": 0,
        }
        if record:
            entry["plugins"] = {"filter": {}, "score": {}, "normalizedScore": {}, "finalScore": {}}
        pods.append(entry)
    nodes = []
    for name, ni in sched.cache.nodes.items():
        if ni.node is None:
            continue
        nodes.append(
            {
                "name": name,
                "pods": len(ni.pods),
                "requested": {r: format_quantity(r, ni.requested.get(r, 0)) for r in (CPU, MEMORY)},
                "allocatable": {r: format_quantity(r, v) for r, v in ni.allocatable.items()},
            }
        )
    nodes.sort(key=lambda n: n["name"])
    return {"pods": pods, "nodes": nodes}


def print_table(doc: dict[str, Any], out: TextIO) -> None:
    console = Console(file=out, width=max(100, Console(file=out).width))
    pods = Table(title="Pods", show_lines=False)
    for col in ("Pod", "Node", "Result", "Attempts", "Why"):
        pods.add_column(col, overflow="fold")
    for p in doc["pods"]:
        style = {"Scheduled": "green", "Gated": "yellow"}.get(p["result"], "red")
        pods.add_row(
            f"{p['namespace']}/{p['name']}",
            p["node"] or "-",
            f"[{style}]{p['result']}[/]",
            str(p["attempts"]),
            escape(p["message"] or ""),
        )
    console.print(pods)
    nodes = Table(title="Nodes")
    for col in ("Node", "Pods", "CPU requested", "Memory requested", "Allocatable"):
        nodes.add_column(col)
    for n in doc["nodes"]:
        alloc = ", ".join(f"{k}={v}" for k, v in n["allocatable"].items())
        nodes.add_row(n["name"], str(n["pods"]), n["requested"]["cpu"], n["requested"]["memory"], alloc)
    console.print(nodes)
    total = len(doc["pods"])
    done = sum(1 for p in doc["pods"] if p["result"] == "Scheduled")
    console.print(f"{done}/{total} pending pods scheduled.")
