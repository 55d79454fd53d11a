"""The simulator's output: the contract's JSON and a table for people."""

from __future__ import annotations

import dataclasses
from typing import Any, TextIO

from rich.console import Console
from rich.markup import escape
from rich.table import Table

from kubesched.api.quantity import format_quantity
from kubesched.api.resources import CPU, MEMORY
from kubesched.framework.types import PodInfo
from kubesched.scheduler import Scheduler
from kubesched.simulator.run import SimulationResult

_TIMELINE_ONLY = ("Deleted", "Preempted", "Nominated")


def to_json(result: SimulationResult, *, record: bool) -> dict[str, Any]:
    sched = result.scheduler
    assert sched is not None
    pods: list[dict[str, Any]] = []
    attempted = set(result.outcomes)
    empty_plugins: dict[str, dict[str, Any]] = {"filter": {}, "score": {}, "normalizedScore": {}, "finalScore": {}}
    for outcome in result.outcomes.values():
        entry = _pod_entry(result, outcome.pod.namespace, outcome.pod.name, outcome.attempts)
        entry.update(node=outcome.node, result=outcome.result, message=outcome.message)
        gated = sched.queue.gated_pods.get(outcome.pod.uid)
        if gated is not None and outcome.result != "Scheduled":
            entry.update(result="Gated", message=_gate_message(sched, gated.pod_info))
        if record:
            r = outcome.record
            entry["plugins"] = (
                {
                    "filter": r.filter,
                    "score": r.score,
                    "normalizedScore": r.normalized_score,
                    "finalScore": r.final_score,
                }
                if r is not None
                else empty_plugins
            )
        pods.append(entry)
    for pod in result.pending:
        if pod.uid in attempted:
            continue
        entry = _pod_entry(result, pod.namespace, pod.name, 0)
        if sched.responsible_for(pod):
            message = _gate_message(sched, pod)
            entry.update(result="Gated" if message else "Unschedulable", message=message)
        else:
            entry.update(result="Unschedulable", message=f'no profile for schedulerName "{pod.scheduler_name}"')
        if record:
            entry["plugins"] = empty_plugins
        pods.append(entry)
    nodes: list[dict[str, Any]] = []
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
    events = [{k: v for k, v in dataclasses.asdict(e).items() if v is not None} for e in result.events]
    return {"pods": pods, "nodes": nodes, "events": events, "endTime": result.end_time, "warnings": result.warnings}


def _pod_entry(result: SimulationResult, namespace: str, name: str, attempts: int) -> dict[str, Any]:
    key = f"{namespace}/{name}"
    return {
        "namespace": namespace,
        "name": name,
        "node": None,
        "result": "Unschedulable",
        "message": "",
        "nominatedNode": result.nominated.get(key),
        "victims": result.victims.get(key, []),
        "attempts": attempts,
        "boundAt": result.bound_at.get(key),
        "owner": result.owners.get(key),
    }


def _gate_message(sched: Scheduler, pod: PodInfo) -> str:
    gate = sched.profiles[pod.scheduler_name].run_pre_enqueue_plugins(pod)
    return gate.message() if gate is not None else ""


def print_table(doc: dict[str, Any], out: TextIO) -> None:
    console = Console(file=out, width=max(100, Console(file=out).width))
    pods = Table(title="Pods", show_lines=False)
    for col in ("Pod", "Node", "Result", "Attempts", "Bound at", "Why"):
        pods.add_column(col, overflow="fold")
    for p in doc["pods"]:
        style = {"Scheduled": "green", "Gated": "yellow"}.get(p["result"], "red")
        why = p["message"] or ""
        if p["nominatedNode"] and p["result"] != "Scheduled":
            why = f"nominated to {p['nominatedNode']}; {why}"
        if p["victims"]:
            why = f"preempted {', '.join(p['victims'])}" + (f"; {why}" if why else "")
        pods.add_row(
            f"{p['namespace']}/{p['name']}",
            p["node"] or "-",
            f"[{style}]{p['result']}[/]",
            str(p["attempts"]),
            "-" if p["boundAt"] is None else f"{p['boundAt']:g}s",
            escape(why),
        )
    console.print(pods)
    nodes = Table(title="Nodes")
    for col in ("Node", "Pods", "CPU requested", "Memory requested", "Allocatable"):
        nodes.add_column(col)
    for n in doc["nodes"]:
        alloc = ", ".join(f"{k}={v}" for k, v in n["allocatable"].items())
        nodes.add_row(n["name"], str(n["pods"]), n["requested"]["cpu"], n["requested"]["memory"], alloc)
    console.print(nodes)
    if any(e["time"] > 0 or e["type"] in _TIMELINE_ONLY for e in doc["events"]):
        timeline = Table(title="Timeline")
        for col in ("Time", "Pod", "Event", "Node", "Detail"):
            timeline.add_column(col, overflow="fold")
        for e in doc["events"]:
            timeline.add_row(
                f"{e['time']:g}s", e["pod"], e["type"], e.get("node") or "", escape(e.get("message") or "")
            )
        console.print(timeline)
    for w in doc["warnings"]:
        console.print(f"[yellow]warning:[/] {escape(w)}")
    total = len(doc["pods"])
    done = sum(1 for p in doc["pods"] if p["result"] == "Scheduled")
    console.print(f"{done}/{total} pending pods scheduled.")
