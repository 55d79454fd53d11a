"""The UI's model: the manifests being edited, and what their last simulation decided, as pages of rows.

The manifests live here in memory, in the order they were read (FILES, then edits).
Every change re-simulates through `kubesched.simulate` before it is kept, so the store
always holds input the simulator accepts, and a change it refuses is answered with the
simulator's own message (naming the file and document the object came from, or the
edit). Simulations use a fixed seed, so the same input always gives the same answer and
a pod's per-plugin record can be fetched later by running again.

Records are large (about a kilobyte per node an attempt looked at), so a big cluster is
simulated without them and a pod's record is made when someone opens it: one more run
that records that pod and a batch of the other pending pods.
"""

from __future__ import annotations

import re
import threading
import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import yaml

from kubesched.api.kinds import KINDS, NAMESPACED, SCALED_KINDS
from kubesched.api.resources import CPU, MEMORY, PODS
from kubesched.apiserver.documents import (
    DocumentError,
    LoadError,
    check_text_size,
    parse_documents,
    read_object_file,
)
from kubesched.config.load import load_config
from kubesched.config.trust import TRUSTED, Trust
from kubesched.config.types import KIND as CONFIG_KIND
from kubesched.release import release
from kubesched.simulator.api import Event, InputError, PluginRecord, Simulation, simulate_trusting
from kubesched.simulator.budget import Budget
from kubesched.simulator.load import manifest_files
from kubesched.simulator.node_copy import HOSTNAME_LABEL, nodes_like
from kubesched.simulator.pod_groups import GroupEntry
from kubesched.simulator.report import human, share
from kubesched.simulator.report_html import waiting_series
from kubesched.simulator.summary import Usage

__all__ = ["Entry", "InputError", "View", "Workspace"]

FULL_RECORD_PAIRS = 250_000
"""Pending pods times nodes up to which every pod's record is kept (a record costs ~1 KB per node looked at)."""
MAX_PAGE = 1000
NODE_PODS_SHOWN = 500
PENDING = ("Unschedulable", "Gated", "Error")
TERMINAL_PHASES = ("Succeeded", "Failed")
EDIT = "edited in the UI"
UI_HINT = "start kubesched ui with this configuration as --config to allow it"
UI_DATA = Trust(hint=UI_HINT)  # files and edits: data


@dataclass(slots=True)
class Entry:
    """One manifest of the store, with where it came from (for messages) and a stable id (for the page)."""

    id: int
    obj: dict[str, Any]
    origin: str

    @property
    def kind(self) -> str:
        kind = self.obj.get("kind")
        return kind if isinstance(kind, str) else ""

    @property
    def ident(self) -> tuple[str, str, str]:
        return identity(self.obj)

    def row(self) -> dict[str, Any]:
        kind, namespace, name = self.ident
        return {"id": self.id, "kind": kind, "namespace": namespace, "name": name, "origin": self.origin}


def identity(obj: Mapping[str, Any]) -> tuple[str, str, str]:
    """(kind, namespace, name) as the API server keys objects; namespaced kinds default to `default`."""
    kind = obj.get("kind")
    kind = kind if isinstance(kind, str) else ""
    meta = obj.get("metadata")
    meta = meta if isinstance(meta, dict) else {}
    name = meta.get("name")
    namespace = ""
    if kind in NAMESPACED:
        given = meta.get("namespace")
        namespace = given if isinstance(given, str) and given else "default"
    return kind, namespace, name if isinstance(name, str) else ""


@dataclass
class View:
    """One simulation of the store, indexed for the page's questions."""

    version: int
    sim: Simulation
    nodes: list[dict[str, Any]]
    node_index: dict[str, dict[str, Any]]
    zones: list[dict[str, Any]]
    pods: list[dict[str, Any]]  # the simulation's pods in its order, then the pods bound in the input
    pod_index: dict[str, dict[str, Any]]
    pods_on: dict[str, list[str]]
    events_of: dict[str, list[dict[str, Any]]]
    groups: dict[str, GroupEntry]  # `namespace/name` -> the simulation's podGroups entry (the pod_groups digest)
    full_record: bool
    seconds: dict[str, float]
    records: dict[str, PluginRecord] = field(default_factory=dict)  # by pod key; all of them when full_record


@dataclass
class _Candidate:
    """What the store would hold after a change, until its simulation accepts it."""

    entries: list[Entry]
    config: dict[str, Any] | None
    config_origin: str
    seed: int
    trust: Trust  # how far `config` may bring in code and extenders


class Workspace:
    """The manifests, the configuration and the seed; the current `View`; edits that re-simulate.

    `config_trust` is how far the starting configuration may name plugins by import path and extenders
    (`TRUSTED` for --config). An edited configuration is data sent over HTTP: it may keep those of a
    trusted starting configuration, never add any.
    """

    def __init__(
        self,
        entries: list[Entry],
        config: dict[str, Any] | None = None,
        config_origin: str = "",
        *,
        config_trust: Trust = UI_DATA,
        seed: int = 1,
        until: float | None = None,
        bind_latency: float = 0.0,
        record_pairs: int = FULL_RECORD_PAIRS,
        budget: Budget | None = None,
        notes: Sequence[str] = (),
        kubernetes_version: str | None = None,
        feature_gates: str = "",
    ) -> None:
        self.kubernetes_version = kubernetes_version  # the kube-scheduler release every run follows
        self.feature_gates = feature_gates
        self.budget = budget or Budget()  # every run's, and every edit's text
        self.notes = list(notes)  # how the files were combined (--overlay's replacements), shown with the warnings
        self.entries = entries
        self._by_ident = {e.ident: e for e in entries}
        self.config = config
        self.config_origin = config_origin
        self.seed = seed
        self.until = until
        self.bind_latency = bind_latency
        self.record_pairs = record_pairs
        self._next_id = max((e.id for e in entries), default=0) + 1
        self._lock = threading.Lock()
        self._version = 0
        self.config_trust = config_trust
        self.view = self._simulate(_Candidate(entries, config, config_origin, seed, config_trust))
        followed = release(kubernetes_version, feature_gates)
        trusted = load_config(config, trust=config_trust, release=followed).raw if config_trust.everything else None
        self._edit_trust = Trust.keeping(trusted, UI_HINT)

    @classmethod
    def from_files(
        cls, paths: Sequence[str], config_path: str | None = None, overlays: Sequence[str] = (), **kw: Any
    ) -> Workspace:
        """FILES as `kubesched simulate` reads them, with `overlays` (--overlay) replacing their objects; a
        KubeSchedulerConfiguration among them is the configuration (data, as an edit is); --config's is trusted."""
        entries, config, origin = read_files(paths, kw.get("budget"))
        notes: list[str] = []
        if overlays:
            extra, overlay_config, overlay_origin = read_files(overlays, kw.get("budget"))
            entries, notes = _overlaid(entries, extra)
            if overlay_config is not None:
                if config is not None:
                    notes.append(f"{overlay_origin} (KubeSchedulerConfiguration) replaces the one in {origin}")
                config, origin = overlay_config, overlay_origin
        if config_path:
            return cls(entries, read_config(config_path), config_path, config_trust=TRUSTED, notes=notes, **kw)
        return cls(entries, config, origin, notes=notes, **kw)

    # ------------------------------------------------------------------ simulation

    def _simulate(self, c: _Candidate) -> View:
        nodes = sum(1 for e in c.entries if e.kind == "Node")
        full = _estimated_pending(c.entries, nodes) * max(nodes, 1) <= self.record_pairs
        wall, cpu = time.perf_counter(), time.process_time()
        sim = self._run(c, record=full)
        seconds = {"wall": time.perf_counter() - wall, "cpu": time.process_time() - cpu}
        self._version += 1
        view = _build_view(self._version, sim, c.entries, full, seconds)
        if full:
            view.records.update((p.key, p.plugins) for p in sim.pods if p.plugins is not None)
        return view

    def _run(self, c: _Candidate, record: bool | list[str]) -> Simulation:
        try:
            return simulate_trusting(
                c.trust,
                UI_DATA,
                [e.obj for e in c.entries],
                config=c.config,
                seed=c.seed,
                record=record,
                until=self.until,
                bind_latency=self.bind_latency,
                max_pods=self.budget.max_pods,
                max_objects=self.budget.max_objects,
                max_input_bytes=self.budget.max_input_bytes,
                kubernetes_version=self.kubernetes_version,
                feature_gates=self.feature_gates,
            )
        except InputError as err:
            raise InputError(_located(str(err), c.entries, c.config_origin)) from err

    def _commit(self, c: _Candidate) -> View:
        """Simulate the candidate (under the lock); keep it only if the simulator accepts it."""
        view = self._simulate(c)
        self.entries, self.config, self.config_origin, self.seed = c.entries, c.config, c.config_origin, c.seed
        self.config_trust = c.trust
        self._by_ident = {e.ident: e for e in c.entries}
        self._next_id = max([self._next_id - 1, *(e.id for e in c.entries)]) + 1
        self.view = view
        return view

    # ------------------------------------------------------------------ edits

    def apply(self, text: str) -> list[dict[str, Any]]:
        """Create or replace the objects in `text` (YAML or JSON, one or more documents); returns what changed."""
        docs = _documents(text, EDIT, self.budget)
        if not docs:
            raise InputError(f"{EDIT}: no objects in the text")
        with self._lock:
            entries = list(self.entries)
            position = {e.ident: i for i, e in enumerate(entries)}
            config, config_origin, trust = self.config, self.config_origin, self.config_trust
            next_id = self._next_id
            changed: list[dict[str, Any]] = []
            for obj, origin in docs:
                if obj.get("kind") == CONFIG_KIND:
                    config, config_origin, trust = obj, origin, self._edit_trust
                    changed.append({"kind": CONFIG_KIND, "namespace": "", "name": "", "change": "configured"})
                    continue
                ident = identity(obj)
                at = position.get(ident) if ident[2] else None
                if at is None:
                    entries.append(Entry(next_id, obj, origin))
                    position[ident] = len(entries) - 1
                    next_id += 1
                    change = "created"
                else:
                    entries[at] = Entry(entries[at].id, obj, origin)
                    change = "changed"
                changed.append({"kind": ident[0], "namespace": ident[1], "name": ident[2], "change": change})
            self._commit(_Candidate(entries, config, config_origin, self.seed, trust))
            return changed

    def delete(self, entry_id: int) -> dict[str, Any]:
        with self._lock:
            found = [e for e in self.entries if e.id == entry_id]
            if not found:
                raise KeyError(f"no object with id {entry_id}")
            entries = [e for e in self.entries if e.id != entry_id]
            self._commit(_Candidate(entries, self.config, self.config_origin, self.seed, self.config_trust))
            return found[0].row()

    def clone_node(self, name: str, count: int = 1) -> list[str]:
        """Add `count` nodes like node `name` (`node_copy.nodes_like`, as whatif adds them): its shape, the next
        free names, each its own host; names and hostname labels of every node simulated count as taken."""
        if not 1 <= count <= 10_000:
            raise InputError(f"count: must be between 1 and 10000, got {count}")
        with self._lock:
            source = self._by_ident.get(("Node", "", name))
            if source is None:
                raise KeyError(f"no node {name!r} among the manifests (a node a Scenario step creates is edited there)")
            made = nodes_like(source.obj, count, self._node_names())
            entries = list(self.entries)
            entries.extend(Entry(self._next_id + i, node, f"{EDIT} (like node {name})") for i, node in enumerate(made))
            self._commit(_Candidate(entries, self.config, self.config_origin, self.seed, self.config_trust))
            return [node["metadata"]["name"] for node in made]

    def _node_names(self) -> set[str]:
        """Names and hostname labels in use: the manifests' nodes and those Scenario steps made."""
        taken = {n["name"] for n in self.view.nodes}
        for e in self.entries:
            if e.kind == "Node":
                taken.add(e.ident[2])
                labels = (e.obj.get("metadata") or {}).get("labels")
                host = labels.get(HOSTNAME_LABEL) if isinstance(labels, dict) else None
                if isinstance(host, str):
                    taken.add(host)
        return taken

    def set_config(self, text: str) -> None:
        """A KubeSchedulerConfiguration as YAML or JSON; empty text means the upstream default."""
        config: dict[str, Any] | None = None
        if text.strip():
            docs = _documents(text, "the configuration", self.budget)
            if len(docs) != 1:
                raise InputError(f"the configuration: expected one KubeSchedulerConfiguration, found {len(docs)}")
            config = docs[0][0]
        with self._lock:
            origin = "the configuration edited in the UI" if config is not None else ""
            self._commit(_Candidate(self.entries, config, origin, self.seed, self._edit_trust))

    def rerun(self, seed: int | None = None) -> None:
        with self._lock:
            seed = self.seed if seed is None else seed
            self._commit(_Candidate(self.entries, self.config, self.config_origin, seed, self.config_trust))

    # ------------------------------------------------------------------ reading

    def state(self) -> dict[str, Any]:
        v = self.view
        sim = v.sim
        counts: dict[str, int] = {"nodes": len(v.nodes), "objects": len(self.entries)}
        for p in v.pods:
            group = "pending" if p["result"] in PENDING else p["result"].lower()
            counts[group] = counts.get(group, 0) + 1
        return {
            "version": v.version,
            "seed": self.seed,
            "counts": counts,
            "endTime": sim.end_time,
            "warnings": [*self.notes, *sim.warnings],
            "zones": v.zones,
            "events": len(sim.events),
            "podGroups": len(v.groups),
            "record": "all pods" if v.full_record else "on demand",
            "config": self.config_origin or ("" if self.config is None else "given"),
            "seconds": v.seconds,
        }

    def nodes_page(
        self, zone: str = "", q: str = "", sort: str = "name", offset: int = 0, limit: int = 100
    ) -> dict[str, Any]:
        rows = [
            n for n in self.view.nodes if (not zone or n["zone"] == zone) and (not q or q.lower() in n["name"].lower())
        ]
        keys: dict[str, Callable[[dict[str, Any]], Any]] = {
            "cpu": lambda n: -(n["cpu"] or 0.0),
            "memory": lambda n: -(n["memory"] or 0.0),
            "pods": lambda n: -n["pods"],
        }
        if sort in keys:
            rows = sorted(rows, key=keys[sort])
        page = _page(rows, offset, limit)
        page["items"] = [_readable(n) for n in page["items"]]
        return page

    def heatmap(self) -> dict[str, Any]:
        """Every node's CPU and memory utilisation by zone, compactly, for the cluster picture."""
        by_zone: dict[str, dict[str, list[Any]]] = {}
        for n in self.view.nodes:
            z = by_zone.setdefault(n["zone"], {"names": [], "cpu": [], "memory": []})
            z["names"].append(n["name"])
            z["cpu"].append(None if n["cpu"] is None else round(n["cpu"], 3))
            z["memory"].append(None if n["memory"] is None else round(n["memory"], 3))
        return {"zones": [{"zone": zone, **z} for zone, z in sorted(by_zone.items())]}

    def node_detail(self, name: str) -> dict[str, Any]:
        v = self.view
        row = v.node_index.get(name)
        if row is None:
            raise KeyError(f"no node {name!r}")
        entry = self._by_ident.get(("Node", "", name))
        obj = entry.obj if entry is not None else {}
        meta = obj.get("metadata") or {}
        spec = obj.get("spec") or {}
        on = v.pods_on.get(name, [])
        return {
            **_readable(row),
            "labels": meta.get("labels") or {},
            "taints": spec.get("taints") or [],
            "unschedulable": bool(spec.get("unschedulable")),
            "entry": entry.row() if entry is not None else None,
            "podCount": len(on),
            "pods": [v.pod_index[k] for k in on[:NODE_PODS_SHOWN]],
        }

    def pods_page(
        self, status: str = "pending", q: str = "", node: str = "", offset: int = 0, limit: int = 100
    ) -> dict[str, Any]:
        wanted: Callable[[str], bool] = {
            "pending": lambda r: r in PENDING,
            "scheduled": lambda r: r == "Scheduled",
            "running": lambda r: r == "Running",
            "gone": lambda r: r in ("Preempted", "Deleted"),
        }.get(status, lambda r: True)
        needle = q.lower()
        rows = [
            p
            for p in self.view.pods
            if wanted(p["result"])
            and (not node or p["node"] == node)
            and (not needle or any(needle in (p[f] or "").lower() for f in ("key", "owner", "podGroup")))
        ]
        return _page(rows, offset, limit)

    def pod_groups_page(self, state: str = "", q: str = "", offset: int = 0, limit: int = 100) -> dict[str, Any]:
        """The run's PodGroups as the JSON's podGroups has them, by state (Scheduled, Waiting, TimedOut) or name."""
        needle = q.lower()
        rows = [
            g
            for key, g in self.view.groups.items()
            if (not state or g["state"] == state) and (not needle or needle in key.lower())
        ]
        return _page(rows, offset, limit)

    def pod_detail(self, key: str) -> dict[str, Any]:
        v = self.view
        row = v.pod_index.get(key)
        if row is None:
            raise KeyError(f"no pod {key!r}")
        namespace, _, name = key.partition("/")
        entry = self._by_ident.get(("Pod", namespace, name))
        group = v.groups.get(f"{namespace}/{row['podGroup']}") if row["podGroup"] else None
        return {
            **row,
            "entry": entry.row() if entry is not None else None,
            "events": v.events_of.get(key, []),
            "group": group,
        }

    def record(self, key: str) -> PluginRecord | None:
        """The pod's per-plugin record (None for a pod the simulation did not schedule); made on demand."""
        row = self.view.pod_index.get(key)
        if row is None:
            raise KeyError(f"no pod {key!r}")
        if not row["simulated"]:
            return None  # bound in the input: never scheduled here
        found = self.view.records.get(key)
        if found is not None or self.view.full_record:
            return found
        with self._lock:
            v = self.view
            if key in v.records:
                return v.records[key]
            batch = max(1, self.record_pairs // max(len(v.nodes), 1))
            others = [p["key"] for p in v.pods if p["result"] in PENDING and p["key"] not in (key, *v.records)]
            wanted = [key, *others[: batch - 1]]
            current = _Candidate(self.entries, self.config, self.config_origin, self.seed, self.config_trust)
            sim = self._run(current, record=wanted)
            if len(v.records) + len(wanted) > 4 * batch:  # keep at most a few batches
                v.records.clear()
            asked = set(wanted)
            for p in sim.pods:
                if p.key in asked and p.plugins is not None:  # the others' records are empty, not absent
                    v.records[p.key] = p.plugins
            return v.records.get(key)

    def record_page(
        self, key: str, show: str = "all", q: str = "", offset: int = 0, limit: int = 100
    ) -> dict[str, Any]:
        """The pod's record as table rows, one per node its last attempt looked at: feasible nodes by final
        score, best first, then the nodes a Filter plugin rejected."""
        row = self.view.pod_index.get(key)
        rec = self.record(key)
        assert row is not None
        if rec is None:
            return {"pod": row, "recorded": False, **_page([], 0, limit)}
        rows: list[dict[str, Any]] = []
        rejected_by: dict[str, int] = {}
        for node, verdicts in rec.filter.items():
            reason = next(((p, v) for p, v in verdicts.items() if v != "passed"), None)
            if reason is not None:
                rejected_by[reason[0]] = rejected_by.get(reason[0], 0) + 1
            rows.append(
                {
                    "node": node,
                    "feasible": reason is None,
                    "filter": verdicts,
                    "score": rec.score.get(node, {}),
                    "normalizedScore": rec.normalized_score.get(node, {}),
                    "finalScore": rec.final_score.get(node, {}),
                    "total": rec.total(node) if node in rec.final_score else None,
                    "chosen": node == row["node"],
                }
            )
        rows.sort(key=lambda r: (not r["feasible"], -(r["total"] or 0), r["node"]))
        feasible = sum(1 for r in rows if r["feasible"])
        chosen = [r for r in rows if r["feasible"]] if show == "feasible" else rows
        if show == "rejected":
            chosen = [r for r in rows if not r["feasible"]]
        if q:
            chosen = [r for r in chosen if q.lower() in r["node"].lower()]
        return {
            "pod": row,
            "recorded": True,
            "examined": len(rows),
            "feasible": feasible,
            "nodesInCluster": len(self.view.nodes),
            "rejectedBy": dict(sorted(rejected_by.items(), key=lambda kv: -kv[1])),
            "filterPlugins": _plugin_order(rec.filter),
            "scorePlugins": _plugin_order(rec.score),
            "weights": _weights(rec),
            **_page(chosen, offset, limit),
        }

    def events_page(self, kind: str = "", q: str = "", offset: int = 0, limit: int = 100) -> dict[str, Any]:
        needle = q.lower()
        events = self.view.sim.events
        chosen = [
            e
            for e in events
            if (not kind or e.type == kind) and (not needle or needle in e.pod.lower() or needle in (e.node or ""))
        ]
        page = _page(chosen, offset, limit)
        page["items"] = [_event(e) for e in page["items"]]
        return {**page, "types": sorted({e.type for e in events})}

    def pending_over_time(self) -> list[list[float]]:
        """(time, pods waiting) at each time with events, as the HTML report counts them: a pod waits from an
        unschedulable, gated or failed attempt until it is scheduled or gone."""
        return [[t, n] for t, n in waiting_series(self.view.sim.events)]

    def objects_page(self, kind: str = "", q: str = "", offset: int = 0, limit: int = 100) -> dict[str, Any]:
        needle = q.lower()
        kinds: dict[str, int] = {}
        rows: list[dict[str, Any]] = []
        for e in self.entries:
            k, ns, name = e.ident
            kinds[k] = kinds.get(k, 0) + 1
            if (not kind or k == kind) and (not needle or needle in f"{ns}/{name}".lower()):
                rows.append(e.row())
        return {**_page(rows, offset, limit), "kinds": kinds}

    def object_text(self, entry_id: int) -> dict[str, Any]:
        entry = next((e for e in self.entries if e.id == entry_id), None)
        if entry is None:
            raise KeyError(f"no object with id {entry_id}")
        return {**entry.row(), "text": _yaml(entry.obj)}

    def export(self) -> str:
        """Every manifest as one YAML stream (the configuration first, if any): `kubesched simulate` reads it."""
        docs = ([self.config] if self.config is not None else []) + [e.obj for e in self.entries]
        return yaml.dump_all(docs, Dumper=_DUMPER, sort_keys=False, default_flow_style=False, allow_unicode=True)

    def config_text(self) -> dict[str, Any]:
        return {"text": "" if self.config is None else _yaml(self.config), "origin": self.config_origin}


# ---------------------------------------------------------------------- reading input


def read_files(paths: Sequence[str], budget: Budget | None = None) -> tuple[list[Entry], dict[str, Any] | None, str]:
    """Manifests from files and directories (sorted, as the simulate command reads them), with their origins."""
    budget = budget or Budget()
    entries: list[Entry] = []
    config: dict[str, Any] | None = None
    config_origin = ""
    for source, text in _files(paths, budget):
        for obj, origin in _documents(text, source, budget):
            if obj.get("kind") == CONFIG_KIND:
                if config is not None:
                    raise InputError(f"{origin}: a second KubeSchedulerConfiguration (first in {config_origin})")
                config, config_origin = obj, origin
            else:
                entries.append(Entry(len(entries) + 1, obj, origin))
    return entries, config, config_origin


def _overlaid(entries: list[Entry], overlays: list[Entry]) -> tuple[list[Entry], list[str]]:
    """The FILEs' entries with each overlay entry in place of the one of the same kind, namespace and name (else
    added after them), as `kubesched simulate --overlay` combines them: each replacement noted, an object given
    twice among the overlays refused. Only named objects of kinds the store holds replace anything."""
    out = list(entries)
    position = {e.ident: i for i, e in enumerate(out) if _replaceable(e)}
    seen: dict[tuple[str, str, str], Entry] = {}
    notes: list[str] = []
    next_id = max((e.id for e in out), default=0) + 1
    for e in overlays:
        if _replaceable(e):
            first = seen.setdefault(e.ident, e)
            if first is not e:
                raise InputError(
                    f"{e.origin} ({_described(e)}): given twice among the overlays (first in {first.origin})"
                )
        at = position.get(e.ident) if _replaceable(e) else None
        if at is None:
            out.append(Entry(next_id, e.obj, e.origin))
            next_id += 1
        else:
            notes.append(f"{e.origin} ({_described(e)}) replaces the object in {out[at].origin}")
            out[at] = Entry(out[at].id, e.obj, e.origin)
    return out, notes


def _replaceable(e: Entry) -> bool:
    return e.kind in KINDS and bool(e.ident[2])


def _described(e: Entry) -> str:
    kind, namespace, name = e.ident
    return f"{kind} {namespace}/{name}" if namespace else f"{kind} {name}"


def read_config(path: str) -> dict[str, Any]:
    try:
        return read_object_file(path)
    except LoadError as err:
        raise InputError(str(err)) from err


def _files(paths: Sequence[str], budget: Budget) -> Iterator[tuple[str, str]]:
    for p in paths:
        if p == "-":
            raise InputError("-: kubesched ui reads files and directories, not standard input")
        try:
            yield from manifest_files(p, budget)
        except LoadError as err:
            raise InputError(str(err)) from err


def _documents(text: str, source: str, budget: Budget) -> list[tuple[dict[str, Any], str]]:
    """The objects of a YAML or JSON stream, `List`s opened, each with `source, document N[, items[j]]`; the text
    within the budget's bytes and values."""
    try:
        check_text_size(source, text, budget.max_input_bytes)
    except LoadError as err:
        raise InputError(str(err)) from err
    try:
        docs = parse_documents(text, max_nodes=budget.max_input_nodes)
    except DocumentError as err:
        raise InputError(f"{source}: {err}") from err
    present = [(i, d) for i, d in enumerate(docs, start=1) if d is not None]
    out: list[tuple[dict[str, Any], str]] = []
    for i, doc in present:
        where = source if source == EDIT and len(present) == 1 else f"{source}, document {i}"
        if not isinstance(doc, dict):
            raise InputError(f"{where}: expected a Kubernetes object (a mapping), got {type(doc).__name__}")
        kind = doc.get("kind")
        if kind == "List" or (isinstance(kind, str) and kind.endswith("List") and "items" in doc):
            items = doc.get("items") or []
            if not isinstance(items, list):
                raise InputError(f"{where}: items: expected a list of objects")
            for j, item in enumerate(items):
                if not isinstance(item, dict):
                    raise InputError(f"{where}: items[{j}]: expected an object")
                out.append((item, f"{where}, items[{j}]"))
        else:
            out.append((doc, where))
    return out


_OBJECT_SOURCE = re.compile(r"<objects 0>, document (\d+)")


def _located(message: str, entries: Sequence[Entry], config_origin: str) -> str:
    """The simulator's message with `<objects 0>, document N` put back as the file and document (or the edit)."""

    def origin(m: re.Match[str]) -> str:
        i = int(m[1]) - 1
        return entries[i].origin if 0 <= i < len(entries) else m[0]

    message = _OBJECT_SOURCE.sub(origin, message)
    return message.replace("<config>", config_origin or "the configuration")


def _estimated_pending(entries: Sequence[Entry], nodes: int) -> int:
    """Pods the simulation will schedule, before it runs: unbound pods and the workloads' replicas."""
    count = 0
    for e in entries:
        spec = e.obj.get("spec")
        spec = spec if isinstance(spec, dict) else {}
        if e.kind == "Pod":
            count += 0 if spec.get("nodeName") else 1
        elif e.kind == "DaemonSet":
            count += nodes
        elif e.kind in SCALED_KINDS or e.kind == "Job":
            n = spec.get("parallelism" if e.kind == "Job" else "replicas", 1)
            count += n if isinstance(n, int) and not isinstance(n, bool) and n > 0 else 1
    return count


# ---------------------------------------------------------------------- the view


def _build_view(version: int, sim: Simulation, entries: Sequence[Entry], full: bool, seconds: dict[str, float]) -> View:
    running: list[dict[str, Any]] = []
    for e in entries:
        if e.kind == "Pod":
            spec = e.obj.get("spec") or {}
            phase = (e.obj.get("status") or {}).get("phase")
            if isinstance(spec, dict) and spec.get("nodeName") and phase not in TERMINAL_PHASES:
                _, ns, name = e.ident
                running.append(_pod_row(ns, name, spec["nodeName"], "Running", ""))
    pods = [
        {
            **_pod_row(p.namespace, p.name, p.node, p.result, p.message),
            "attempts": p.attempts,
            "owner": p.owner,
            "boundAt": p.bound_at,
            "nominatedNode": p.nominated_node,
            "victims": list(p.victims),
            "podGroup": p.pod_group,
            "simulated": True,
        }
        for p in sim.pods
    ]
    simulated = {p["key"] for p in pods}
    pods.extend(r for r in running if r["key"] not in simulated)
    pod_index = {p["key"]: p for p in pods}
    gone, events_of = _timeline(sim)
    for key, how in gone.items():
        if key in pod_index:
            pod_index[key]["result"] = how  # off its node at the end: Preempted or Deleted
    usage = {n.name: n.resources for n in sim.summary.nodes}
    zones = {n.name: n.zone for n in sim.summary.nodes}
    nodes: list[dict[str, Any]] = []
    for n in sim.nodes:
        zone = zones[n.name]
        use = usage[n.name]
        nodes.append(
            {
                "name": n.name,
                "zone": zone,
                "pods": n.pods,
                "requested": dict(n.requested),
                "allocatable": dict(n.allocatable),
                "cpu": use[CPU].utilisation,
                "memory": use[MEMORY].utilisation,
                "podShare": use[PODS].utilisation,
            }
        )
    node_index = {n["name"]: n for n in nodes}
    pods_on: dict[str, list[str]] = {}
    for p in pods:
        if p["node"] in node_index and p["result"] in ("Scheduled", "Running"):
            pods_on.setdefault(p["node"], []).append(p["key"])
    return View(
        version=version,
        sim=sim,
        nodes=nodes,
        node_index=node_index,
        zones=_zones(nodes, usage),
        pods=pods,
        pod_index=pod_index,
        pods_on=pods_on,
        events_of=events_of,
        groups={f"{g['namespace']}/{g['name']}": g for g in sim.pod_groups},
        full_record=full,
        seconds=seconds,
    )


def _readable(node: dict[str, Any]) -> dict[str, Any]:
    """A node row with its amounts as the CLI's table shows them (`usage`: requested/allocatable in one unit;
    `allocatableShown`), so the page and the command agree; made for the rows a page shows, not every node."""
    req, alloc = node["requested"], node["allocatable"]
    return {
        **node,
        "usage": {r: share(r, req.get(r, "0"), alloc.get(r, "0")) for r in (CPU, MEMORY, PODS)},
        "allocatableShown": {r: human(r, q) for r, q in alloc.items()},
    }


def _pod_row(namespace: str, name: str, node: str | None, result: str, message: str) -> dict[str, Any]:
    return {
        "key": f"{namespace}/{name}",
        "namespace": namespace,
        "name": name,
        "node": node,
        "result": result,
        "message": message,
        "attempts": 0,
        "owner": None,
        "boundAt": None,
        "nominatedNode": None,
        "victims": [],
        "podGroup": None,
        "simulated": False,
    }


def _timeline(sim: Simulation) -> tuple[dict[str, str], dict[str, list[dict[str, Any]]]]:
    """Pods whose last event took them off their node (Preempted, Deleted), and each pod's events."""
    last: dict[str, str] = {}
    events_of: dict[str, list[dict[str, Any]]] = {}
    for e in sim.events:
        if e.type in ("Scheduled", "Bound", "Preempted", "Deleted"):
            last[e.pod] = e.type
        events_of.setdefault(e.pod, []).append(_event(e))
    return {k: t for k, t in last.items() if t in ("Preempted", "Deleted")}, events_of


def _event(e: Event) -> dict[str, Any]:
    return {
        "time": e.time,
        "pod": e.pod,
        "type": e.type,
        "node": e.node,
        "message": e.message,
        "preemptor": e.preemptor,
    }


def _zones(nodes: Sequence[dict[str, Any]], usage: Mapping[str, Mapping[str, Usage]]) -> list[dict[str, Any]]:
    """Pods and cpu and memory utilisation by zone, from the summary's figures per node."""
    sums: dict[str, dict[str, int]] = {}
    for n in nodes:
        z = sums.setdefault(n["zone"], {"nodes": 0, "pods": 0, "cpuReq": 0, "cpuAlloc": 0, "memReq": 0, "memAlloc": 0})
        z["nodes"] += 1
        z["pods"] += n["pods"]
        for res, key in ((CPU, "cpu"), (MEMORY, "mem")):
            z[f"{key}Req"] += usage[n["name"]][res].requested
            z[f"{key}Alloc"] += usage[n["name"]][res].allocatable
    return [
        {
            "zone": zone,
            "nodes": z["nodes"],
            "pods": z["pods"],
            "cpu": z["cpuReq"] / z["cpuAlloc"] if z["cpuAlloc"] else None,
            "memory": z["memReq"] / z["memAlloc"] if z["memAlloc"] else None,
        }
        for zone, z in sorted(sums.items())
    ]


def _page(rows: Sequence[Any], offset: int, limit: int) -> dict[str, Any]:
    offset = max(0, offset)
    limit = max(1, min(limit, MAX_PAGE))
    return {"total": len(rows), "offset": offset, "limit": limit, "items": list(rows[offset : offset + limit])}


def _plugin_order(per_node: Mapping[str, Mapping[str, Any]]) -> list[str]:
    seen: dict[str, None] = {}
    for plugins in per_node.values():
        seen.update(dict.fromkeys(plugins))
    return list(seen)


def _weights(rec: PluginRecord) -> dict[str, int]:
    """Each Score plugin's weight, read off the record (final = normalized x weight) where a score is not 0."""
    out: dict[str, int] = {}
    for node, finals in rec.final_score.items():
        normalized = rec.normalized_score.get(node, {})
        for plugin, final in finals.items():
            if plugin not in out and normalized.get(plugin):
                out[plugin] = final // normalized[plugin]
    return out


_DUMPER: Any = getattr(yaml, "CSafeDumper", yaml.SafeDumper)  # libyaml's, where PyYAML has it: 10x faster


def _yaml(obj: Any) -> str:
    return yaml.dump(obj, Dumper=_DUMPER, sort_keys=False, default_flow_style=False, allow_unicode=True)
