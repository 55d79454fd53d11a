"""The simulator's output: the contract's JSON and a table for people."""

from __future__ import annotations

import dataclasses
import json.encoder
from collections.abc import Callable
from typing import Any, TextIO

from rich.console import Console
from rich.markup import escape

from kubesched.api.quantity import format_quantity
from kubesched.api.resources import CPU, MEMORY
from kubesched.dra.claims import pod_resource_claims
from kubesched.framework.types import PodInfo
from kubesched.schedule_one import SchedulerEvent
from kubesched.scheduler import Scheduler
from kubesched.simulator import table
from kubesched.simulator.run import SimulationResult

_TIMELINE_ONLY = ("Deleted", "Preempted", "Nominated")
_EVENT_FIELDS = tuple(f.name for f in dataclasses.fields(SchedulerEvent))


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
    events = [{k: v for k in _EVENT_FIELDS if (v := getattr(e, k)) is not None} for e in result.events]
    return {"pods": pods, "nodes": nodes, "events": events, "endTime": result.end_time, "warnings": result.warnings}


def write_json(doc: dict[str, Any], out: TextIO) -> None:
    """`json.dump(doc, out, indent=1)`, byte for byte, written list item by list item.

    The standard library's indented encoder is pure Python and hands the stream a few bytes
    at a time (a million writes at 50000 pods); here each top-level list is encoded a batch
    of items at a time, strings by the C encoder's own function: half the time, and never
    the whole document as one string.
    """
    if not isinstance(doc, dict) or not doc:
        out.write(_dumps(doc, "\n"))
        return
    sep = "{\n "
    for k, v in doc.items():
        out.write(f"{sep}{_key(k)}: ")
        sep = ",\n "
        if not isinstance(v, list | tuple) or not v:
            out.write(_dumps(v, "\n "))
            continue
        for start in range(0, len(v), _BATCH):
            batch = ",\n  ".join([_dumps(item, "\n  ") for item in v[start : start + _BATCH]])
            out.write(f"[\n  {batch}" if start == 0 else f",\n  {batch}")
        out.write("\n ]")
    out.write("\n}")


_BATCH = 1000
_encode_str: Callable[[str], str] = json.encoder.encode_basestring_ascii


def _float(o: float) -> str:
    if o != o:
        return "NaN"
    if o in (float("inf"), float("-inf")):
        return "Infinity" if o > 0 else "-Infinity"
    return float.__repr__(o)


def _key(k: Any) -> str:
    """A dict key as json writes it (after its conversions to str)."""
    if isinstance(k, str):
        return _encode_str(k)
    if isinstance(k, float):
        return _encode_str(_float(k))
    if k is True or k is False or k is None:
        return _encode_str({True: "true", False: "false", None: "null"}[k])
    if isinstance(k, int):
        return _encode_str(int.__repr__(k))
    raise TypeError(f"keys must be str, int, float, bool or None, not {k.__class__.__name__}")


def _dumps(o: Any, indent: str) -> str:
    """One value as json.dumps(indent=1) writes it at the depth whose line start (newline and spaces) is indent."""
    if isinstance(o, str):
        return _encode_str(o)
    if o is None:
        return "null"
    if o is True:
        return "true"
    if o is False:
        return "false"
    if isinstance(o, int):
        return int.__repr__(o)
    if isinstance(o, float):
        return _float(o)
    inner = indent + " "
    if isinstance(o, dict):
        if not o:
            return "{}"
        items = (f"{_key(k)}: {_dumps(v, inner)}" for k, v in o.items())
        return f"{{{inner}{(',' + inner).join(items)}{indent}}}"
    if isinstance(o, list | tuple):
        if not o:
            return "[]"
        return f"[{inner}{(',' + inner).join(_dumps(v, inner) for v in o)}{indent}]"
    raise TypeError(f"Object of type {o.__class__.__name__} is not JSON serializable")


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
        "resourceClaims": _resource_claims(result, namespace, name),
        "attempts": attempts,
        "boundAt": result.bound_at.get(key),
        "owner": result.owners.get(key),
    }


def _resource_claims(result: SimulationResult, namespace: str, name: str) -> list[dict[str, Any]]:
    """The contract's resourceClaims: the pod's claims, with their devices only once it is bound."""
    sched = result.scheduler
    pod = sched.informer_pod(namespace, name) if sched is not None else None
    if pod is None or sched is None or not (pod.obj.get("spec") or {}).get("resourceClaims"):
        return []
    entries = pod_resource_claims(sched.lister, pod.obj)
    if not pod.node_name:
        for entry in entries:
            entry["devices"] = []
    return entries


def _gate_message(sched: Scheduler, pod: PodInfo) -> str:
    gate = sched.profiles[pod.scheduler_name].run_pre_enqueue_plugins(pod)
    return gate.message() if gate is not None else ""


def print_table(doc: dict[str, Any], out: TextIO) -> None:
    console = Console(file=out, width=max(100, Console(file=out).width))
    pods: list[list[table.Cell]] = []
    for p in doc["pods"]:
        style = {"Scheduled": "green", "Gated": "yellow"}.get(p["result"], "red")
        why = p["message"] or ""
        if p["nominatedNode"] and p["result"] != "Scheduled":
            why = f"nominated to {p['nominatedNode']}; {why}"
        if p["victims"]:
            why = f"preempted {', '.join(p['victims'])}" + (f"; {why}" if why else "")
        pods.append(
            [
                table.text(f"{p['namespace']}/{p['name']}"),
                table.text(p["node"] or "-"),
                table.styled(p["result"], style),
                table.text(str(p["attempts"])),
                table.text("-" if p["boundAt"] is None else f"{p['boundAt']:g}s"),
                table.escaped(why),
            ]
        )
    columns: list[table.Column] = [(col, "fold") for col in ("Pod", "Node", "Result", "Attempts", "Bound at", "Why")]
    table.print_table(console, "Pods", columns, pods)
    nodes = [
        [
            table.text(n["name"]),
            table.text(str(n["pods"])),
            table.text(n["requested"]["cpu"]),
            table.text(n["requested"]["memory"]),
            table.text(", ".join(f"{k}={v}" for k, v in n["allocatable"].items())),
        ]
        for n in doc["nodes"]
    ]
    columns = [(col, None) for col in ("Node", "Pods", "CPU requested", "Memory requested", "Allocatable")]
    table.print_table(console, "Nodes", columns, nodes)
    if any(e["time"] > 0 or e["type"] in _TIMELINE_ONLY for e in doc["events"]):
        timeline = [
            [
                table.text(f"{e['time']:g}s"),
                table.text(e["pod"]),
                table.text(e["type"]),
                table.text(e.get("node") or ""),
                table.escaped(e.get("message") or ""),
            ]
            for e in doc["events"]
        ]
        columns = [(col, "fold") for col in ("Time", "Pod", "Event", "Node", "Detail")]
        table.print_table(console, "Timeline", columns, timeline)
    for w in doc["warnings"]:
        console.print(f"[yellow]warning:[/] {escape(w)}")
    total = len(doc["pods"])
    done = sum(1 for p in doc["pods"] if p["result"] == "Scheduled")
    console.print(f"{done}/{total} pending pods scheduled.")
