"""The simulator's output: the contract's JSON and a table for people."""

from __future__ import annotations

import dataclasses
import json
import json.encoder
import math
import time
from collections.abc import Callable, Collection, Iterable, Iterator, Mapping
from fractions import Fraction
from typing import Any, TextIO

from rich.console import Console
from rich.markup import escape

from kubesched.api.quantity import QuantityError, format_quantity, parse_quantity
from kubesched.api.resources import CPU, EPHEMERAL_STORAGE, MEMORY, PODS
from kubesched.dra.claims import pod_resource_claims
from kubesched.framework.outcome import Outcome, SchedulerEvent
from kubesched.scheduler import Scheduler
from kubesched.simulator import table
from kubesched.simulator.explain import natural_key
from kubesched.simulator.pod_groups import GroupEntry, digest, pod_group_of
from kubesched.simulator.run import SimulationResult, selects
from kubesched.simulator.states import SCHEDULED, PodState, outcome_state, pod_states
from kubesched.simulator.summary import Summary, shown_resources, summarize

_TIMELINE_ONLY = ("Deleted", "Preempted", "Nominated")
_EVENT_FIELDS = tuple(f.name for f in dataclasses.fields(SchedulerEvent))
_BASIC = (CPU, MEMORY, PODS)


def to_json(result: SimulationResult, *, record: bool, summary: Summary | None = None) -> dict[str, Any]:
    """The contract's JSON document; with `record`, each pod's per-plugin record of its last attempt.
    `summary` is the result's, when the caller has it already."""
    states = list(pod_states(result))
    return _document(result, summary or summarize(result, states), states, brief=False, record=record)


def table_document(result: SimulationResult, summary: Summary, states: list[PodState]) -> dict[str, Any]:
    """What `print_table` reads of the JSON document: its pods an iterator (each entry made as its row is,
    so they are never all held), and without the fields the table does not show (resource claims, owner,
    PodGroup), which at scale cost more to look up than the rest of an entry. `summary` and `states` are
    the result's (`summarize`, `pod_states`)."""
    return _document(result, summary, states, brief=True, record=False)


def _document(
    result: SimulationResult, summary: Summary, states: list[PodState], *, brief: bool, record: bool
) -> dict[str, Any]:
    sched = result.scheduler
    assert sched is not None
    entries = (pod_entry(result, st, record=record, brief=brief) for st in states)
    pods: Iterator[dict[str, Any]] | list[dict[str, Any]] = entries if brief else list(entries)
    doc: dict[str, Any] = {
        "pods": pods,
        "nodes": node_entries(sched, summary),
        "events": event_entries(result),
        "endTime": result.end_time,
        "warnings": result.warnings,
        "summary": summary.to_json(),
    }
    groups = pod_group_entries(result, states)
    if groups:  # workload-aware scheduling (GenericWorkload); absent otherwise
        doc["podGroups"] = groups
    return doc


def pod_group_entries(result: SimulationResult, states: list[PodState]) -> list[GroupEntry]:
    """`podGroups`: each PodGroup some pod names, its members placed (where) and what holds the rest back."""
    if not any(pod_group_of(st.pod.obj) for st in states):
        return []
    sched = result.scheduler
    assert sched is not None
    nodes = sched.cache.nodes

    def labels_of(name: str) -> Mapping[str, str]:
        ni = nodes.get(name)
        return ni.labels if ni is not None else {}

    objects = list(sched.lister.list("PodGroup"))
    pods = ((st.pod.obj, st.result, st.message, st.node) for st in states)
    return [d.to_json() for d in digest(pods, objects, result.events, labels_of)]


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


def pod_entry(result: SimulationResult, st: PodState, *, record: bool, brief: bool = False) -> dict[str, Any]:
    """One pod of `pods`; `plugins` (with `record`) is empty for a pod whose attempts were not recorded.
    `brief`: without resourceClaims, owner and podGroup (`table_document`)."""
    key = st.key
    entry: dict[str, Any] = {
        "namespace": st.pod.namespace,
        "name": st.pod.name,
        "node": st.node,
        "result": st.result,
        "message": st.message,
        "nominatedNode": result.nominated.get(key),
        "victims": result.victims.get(key, []),
    }
    if not brief:
        entry["resourceClaims"] = _resource_claims(result, st.pod.namespace, st.pod.name)
    entry["attempts"] = st.attempts
    entry["boundAt"] = result.bound_at.get(key)
    if not brief:
        entry["owner"] = result.owners.get(key)
        entry["podGroup"] = pod_group_of(st.pod.obj)
    if record:
        r = st.outcome.record if st.outcome is not None else None
        entry["plugins"] = (
            {"filter": r.filter, "score": r.score, "normalizedScore": r.normalized_score, "finalScore": r.final_score}
            if r is not None
            else {"filter": {}, "score": {}, "normalizedScore": {}, "finalScore": {}}
        )
    return entry


def node_entries(sched: Scheduler, summary: Summary) -> list[dict[str, Any]]:
    """`nodes`, by name: requested holds every resource the node offers or its pods request (pods counted),
    as `summary` (the run's) measured it: each node's usage is worked out once."""
    nodes: list[dict[str, Any]] = []
    for used in summary.nodes:
        ni = sched.cache.nodes[used.name]
        nodes.append(
            {
                "name": used.name,
                "pods": used.pods,
                "requested": {r: format_quantity(r, u.requested) for r, u in used.resources.items()},
                "allocatable": {r: format_quantity(r, v) for r, v in ni.allocatable.items()},
            }
        )
    nodes.sort(key=lambda n: n["name"])
    return nodes


def event_entries(result: SimulationResult) -> list[dict[str, Any]]:
    return [{k: v for k in _EVENT_FIELDS if (v := getattr(e, k)) is not None} for e in result.events]


TAG = "kind"
"""Each JSON line's tag: pod, node, event, warning, podGroup or summary ("type" is already an event's field)."""


class JsonLinesWriter:
    """`--output jsonl`: one JSON object a line, each pod's as soon as it is final (docs/output.md).

    A watcher of the simulation (`simulate(..., watchers=[writer])`): a pod's line goes out when it
    is bound (a bound pod is never tried again), and its per-plugin record is dropped then, so memory
    does not grow with the records of pods already written; `finish` writes the pods still pending,
    the nodes, events, warnings and the summary. The pods `keep` selects (by name or workload, see
    `run.selects`) keep their record, for --explain.
    """

    FLUSH_EVERY = 0.5  # seconds: a reader following the stream sees lines at least this often

    def __init__(self, out: TextIO, *, record: bool, keep: Collection[str] = ()) -> None:
        self.out = out
        self.record = record
        self.keep = frozenset(keep)
        self.written: dict[str, Outcome] = {}  # pod uid -> the outcome its line showed
        self._flushed = time.monotonic()

    def __call__(self, result: SimulationResult, outcome: Outcome) -> None:
        if outcome.result != SCHEDULED:
            return
        assert result.scheduler is not None
        st = outcome_state(result.scheduler, outcome)
        self._line({TAG: "pod", **pod_entry(result, st, record=self.record)})
        self.written[outcome.pod.uid] = outcome
        if not selects(self.keep, result, outcome.pod):
            outcome.record = None
        now = time.monotonic()
        if now - self._flushed >= self.FLUSH_EVERY:
            self.out.flush()
            self._flushed = now

    def finish(self, result: SimulationResult) -> None:
        sched = result.scheduler
        assert sched is not None
        states = list(pod_states(result))
        for st in states:
            if st.outcome is None or self.written.get(st.pod.uid) is not st.outcome:
                self._line({TAG: "pod", **pod_entry(result, st, record=self.record)})
        summary = summarize(result, states)
        for node in node_entries(sched, summary):
            self._line({TAG: "node", **node})
        for event in event_entries(result):
            self._line({TAG: "event", **event})
        for warning in result.warnings:
            self._line({TAG: "warning", "message": warning})
        for group in pod_group_entries(result, states):
            self._line({TAG: "podGroup", **group})
        self._line({TAG: "summary", "endTime": result.end_time, **summary.to_json()})
        self.out.flush()

    def _line(self, obj: dict[str, Any]) -> None:
        self.out.write(_compact(obj) + "\n")


_compact = json.JSONEncoder(separators=(",", ":")).encode


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


def console_for(out: TextIO) -> Console:
    """A console on `out`: the terminal's width there, else 80 columns (rich's default)."""
    return Console(file=out)


def print_table(doc: dict[str, Any], out: TextIO, *, pods: bool = True, shown: Collection[str] | None = None) -> None:
    """The human summary: pods (unless `pods` is False), nodes, timeline, warnings and the run's summary.

    `doc` is the JSON document or `table_document`'s part of it; its pods are read once, in order, so
    they may come from an iterator. `shown` is the run's `Summary.shown()`, the resources given a row or
    a mention; without it, those the pods on the nodes request (the document does not say what pending
    pods request)."""
    console = console_for(out)
    if shown is None:
        used = doc["summary"]["resources"]
        shown = shown_resources(used, {r for r, u in used.items() if u["requested"] != "0"})
    if pods:
        suffix = table.domain_suffix([n["name"] for n in doc["nodes"]])
        done, total = _print_pods(console, doc["pods"], suffix)
        if suffix:
            console.print(f"Node names without {escape(suffix)}", highlight=False)
        use = {n["name"]: n["utilisation"] for n in doc["summary"]["nodes"]}
        _print_nodes(console, doc["nodes"], use, shown, suffix)
        if any(e["time"] > 0 or e["type"] in _TIMELINE_ONLY for e in doc["events"]):
            _print_timeline(console, doc["events"], suffix)
        for w in doc["warnings"]:
            console.print(f"[yellow]warning:[/] {escape(w)}")
        _print_waiting_groups(console, doc)
        print_summary(console, doc["summary"], shown)
    else:
        _print_waiting_groups(console, doc)
        done, total = _scheduled(doc["pods"])
    console.print(f"{done}/{total} pending pods scheduled.")


def _scheduled(entries: Iterable[dict[str, Any]]) -> tuple[int, int]:
    """How many of the pods were scheduled, of how many."""
    done = total = 0
    for p in entries:
        total += 1
        done += p["result"] == "Scheduled"
    return done, total


def _print_waiting_groups(console: Console, doc: dict[str, Any]) -> None:
    """A line for each PodGroup not wholly placed: how many are, and what holds the rest back."""
    for g in doc.get("podGroups") or ():
        if g["placed"] < g["members"]:
            console.print(f"[yellow]waiting:[/] {escape(g['explain'])}", highlight=False)


def _print_pods(console: Console, entries: Iterable[dict[str, Any]], suffix: str) -> tuple[int, int]:
    """One row a pod; node names without `suffix` (table.domain_suffix). The entries are read once (an
    iterator's go as their rows are made); how many were scheduled, of how many."""
    timed = False  # bound later than time 0 (scenarios, bind latency): a column more
    done = 0
    rows: list[list[table.Cell]] = []
    bound_at: list[float | None] = []
    for p in entries:
        style = {"Scheduled": "green", "Gated": "yellow"}.get(p["result"], "red")
        done += p["result"] == "Scheduled"
        timed = timed or bool(p["boundAt"])
        bound_at.append(p["boundAt"])
        why = p["message"] or ""
        if p["nominatedNode"] and p["result"] != "Scheduled":
            why = f"nominated to {table.without(p['nominatedNode'], suffix)}; {why}"
        if p["victims"]:
            why = f"preempted {', '.join(p['victims'])}" + (f"; {why}" if why else "")
        rows.append(
            [
                table.text(f"{p['namespace']}/{p['name']}"),
                table.text(table.without(p["node"], suffix) if p["node"] else "-"),
                table.styled(p["result"], style),
                table.text(str(p["attempts"])),
                table.escaped(why),
            ]
        )
    if timed:
        for row, at in zip(rows, bound_at, strict=True):
            row.insert(4, table.text("-" if at is None else f"{at:g}s"))
    headers = ("Pod", "Node", "Result", "Tries", *(("Bound at",) if timed else ()), "Why")
    table.print_table(console, "Pods", [(col, "fold") for col in headers], rows, names=(0, 1))
    return done, len(rows)


def _share(
    resource: str, requested: str, allocatable: str, ratio: float | None, seen: dict[tuple[str, str, str], str]
) -> str:
    """A node's cell; `seen` holds the `share`s worked out already (nodes of a pool repeat them, and each
    costs exact fractions)."""
    key = (resource, requested, allocatable)
    amounts = seen.get(key)
    if amounts is None:
        amounts = seen[key] = share(resource, requested, allocatable)
    return amounts + (f" {ratio * 100:.0f}%" if ratio is not None else "")


_BYTES = (MEMORY, EPHEMERAL_STORAGE)
_UNITS = ("Ki", "Mi", "Gi", "Ti", "Pi", "Ei")
_FINEST = 3  # decimals a small nonzero amount may get before it is shown as under 0.001 of the unit


def human(resource: str, quantity: str) -> str:
    """A quantity for people (tables only): cpu in cores, bytes in the largest binary unit, at most one decimal
    (two for cpu) unless a small amount would read 0."""
    value = _humanised(resource, quantity)
    if value is None:
        return quantity
    scale, unit = _unit(resource, value)
    return _figure(resource, value / scale) + unit


def share(resource: str, requested: str, allocatable: str) -> str:
    """`requested/allocatable` for people, both in the unit `human` gives the larger of the two: a cell reads in
    one unit (`0.5Gi/29.9Gi`, not `512Mi/29.9Gi`), and an amount too small for it is not shown as 0."""
    req, alloc = _humanised(resource, requested), _humanised(resource, allocatable)
    if req is None or alloc is None:
        return f"{human(resource, requested)}/{human(resource, allocatable)}"
    scale, unit = _unit(resource, max(req, alloc))
    return f"{_figure(resource, req / scale)}{unit}/{_figure(resource, alloc / scale)}{unit}"


def _humanised(resource: str, quantity: str) -> Fraction | None:
    """The amount of a resource shown in cores or binary units; None for others and for what does not parse."""
    if resource != CPU and resource not in _BYTES and not resource.startswith("hugepages-"):
        return None
    try:
        return parse_quantity(quantity)
    except QuantityError:
        return None


def _unit(resource: str, value: Fraction) -> tuple[int, str]:
    """The divisor and suffix `value` is shown in: cores for cpu, else the largest binary unit under it."""
    scale, unit = 1, ""
    if resource == CPU:
        return scale, unit
    for suffix in _UNITS:
        if value < scale * 1024:
            break
        scale, unit = scale * 1024, suffix
    return scale, unit


def _figure(resource: str, value: Fraction) -> str:
    """Two decimals for cpu and one for bytes (none from 100 up); more, up to three, for a small amount that
    would otherwise read 0."""
    places = (2 if resource == CPU else 1) if value < 100 else 0
    text = _decimal(value, places)
    while value and text == "0" and places < _FINEST:
        places += 1
        text = _decimal(value, places)
    return f"<{10**-_FINEST:.{_FINEST}f}" if value and text == "0" else text


def _decimal(value: Fraction, places: int) -> str:
    """`value` rounded to `places` decimals, exactly (a float loses the last digits of a large quantity)."""
    scaled = math.floor(abs(value) * 10**places + Fraction(1, 2))  # half up, as people round
    whole, frac = divmod(scaled, 10**places)
    text = f"{whole}.{frac:0{places}d}".rstrip("0").rstrip(".") if places else str(whole)
    return f"-{text}" if value < 0 and scaled else text


def _print_nodes(
    console: Console,
    entries: list[dict[str, Any]],
    use: dict[str, dict[str, float | None]],
    shown: Collection[str],
    suffix: str,
) -> None:
    """One row a node, in natural name order, named without `suffix`; `use` is the summary's utilisation
    by node and resource, Other the `shown` resources beyond cpu, memory and pods."""
    rows: list[list[table.Cell]] = []
    seen: dict[tuple[str, str, str], str] = {}
    for n in sorted(entries, key=lambda n: natural_key(n["name"])):
        req, alloc, ratios = n["requested"], n["allocatable"], use.get(n["name"], {})

        def cell(r: str, req: dict[str, str] = req, alloc: dict[str, str] = alloc, ratios: Any = ratios) -> str:
            return _share(r, req.get(r, "0"), alloc.get(r, "0"), ratios.get(r), seen)

        other = [f"{r} {cell(r)}" for r in req if r not in _BASIC and r in shown]
        rows.append(
            [
                table.text(table.without(n["name"], suffix)),
                table.text(cell(PODS)),
                table.text(cell(CPU)),
                table.text(cell(MEMORY)),
                table.text(", ".join(other) or "-"),
            ]
        )
    columns: list[table.Column] = [(col, "fold") for col in ("Node", "Pods", "CPU", "Memory", "Other")]
    table.print_table(console, "Nodes", columns, rows, names=(0,))


def _print_timeline(console: Console, events: list[dict[str, Any]], suffix: str) -> None:
    timeline = [
        [
            table.text(f"{e['time']:g}s"),
            table.text(e["pod"]),
            table.text(e["type"]),
            table.text(table.without(e.get("node") or "", suffix)),
            table.escaped(e.get("message") or ""),
        ]
        for e in events
    ]
    columns = [(col, "fold") for col in ("Time", "Pod", "Event", "Node", "Detail")]
    table.print_table(console, "Timeline", columns, timeline, names=(1, 3))


def _percent(ratio: float | None) -> str:
    return "-" if ratio is None else f"{ratio * 100:.0f}%"


def print_summary(console: Console, summary: dict[str, Any], shown: Collection[str]) -> None:
    """The JSON `summary` as tables: pending pods by reason, utilisation and fragmentation, zones;
    a row or mention for the `shown` resources only."""
    pods = summary["pods"]
    deleted = f", {pods['deleted']} deleted before the end" if pods["deleted"] else ""
    console.print(
        f"Summary: {pods['scheduled']} of {pods['total']} pods scheduled, {pods['pending']} pending{deleted}.",
        highlight=False,
    )
    if summary["pendingByReason"]:
        reasons = [[table.escaped(r), table.text(str(n))] for r, n in summary["pendingByReason"].items()]
        table.print_table(console, "Pending pods by reason", [("Reason", "fold"), ("Pods", None)], reasons)
    frag = summary["fragmentation"]
    resources = [
        [
            table.text(r),
            table.text(human(r, u["requested"])),
            table.text(human(r, u["allocatable"])),
            table.text(_percent(u["utilisation"])),
            table.text(human(r, frag[r]["free"])),
            table.text(human(r, frag[r]["stranded"])),
            table.text(human(r, frag[r]["largestFree"])),
        ]
        for r, u in summary["resources"].items()
        if r in shown
    ]
    headers = ("Resource", "Requested", "Allocatable", "Used", "Free", "Stranded", "Largest free")
    table.print_table(console, "Utilisation", [(h, "fold") for h in headers], resources, names=(0,))
    other = [r for r in summary["resources"] if r in shown and r not in _BASIC]
    zones = [
        [
            table.text(z["zone"]),
            table.text(str(z["nodes"])),
            *(table.text(_percent(z["resources"][r]["utilisation"])) for r in _BASIC),
            table.text(
                ", ".join(f"{r} {_percent(z['resources'][r]['utilisation'])}" for r in other if r in z["resources"])
                or "-"
            ),
        ]
        for z in summary["zones"]
    ]
    zone_headers = ("Zone", "Nodes", "CPU", "Memory", "Pods", "Other")
    table.print_table(console, "Utilisation by zone", [(h, "fold") for h in zone_headers], zones, names=(0,))
