"""`kubesched.simulate(...)`: the simulator for notebooks and scripts, with typed results.

The same path as `kubesched simulate`: the same loading and admission of manifests,
the same configuration handling, the same scheduler; the result is the command's JSON
record (docs/simulate-contract.md) as frozen dataclasses, so what a script reads is what
the command prints. Unusable input raises `InputError` with the command's message.
"""

from __future__ import annotations

import io
import json
import math
import os
from collections.abc import Collection, Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any, Literal, TypeAlias, cast

from kubesched.api.duration import parse_duration
from kubesched.api.quantity import parse_quantity
from kubesched.apiserver.documents import check_text_size, read_object_file, valid_unicode
from kubesched.config.load import ConfigError
from kubesched.config.trust import TRUSTED, UNTRUSTED, Trust
from kubesched.framework.runtime.errors import FrameworkError
from kubesched.release import ReleaseError, release, snapshot_version
from kubesched.simulator.budget import Budget
from kubesched.simulator.load import (
    LoadedInput,
    LoadError,
    add_document,
    add_text,
    finish_loading,
    load_manifests,
)
from kubesched.simulator.pod_groups import GroupEntry
from kubesched.simulator.summary import Summary
from kubesched.startup import few_full_collections

__all__ = [
    "Event",
    "InputError",
    "Manifest",
    "NodeResult",
    "PluginRecord",
    "PodResult",
    "Simulation",
    "simulate",
]

Manifest: TypeAlias = Mapping[str, Any]
Input: TypeAlias = str | os.PathLike[str] | Manifest | Iterable[Manifest]
PodPhase = Literal["Scheduled", "Unschedulable", "Gated", "Error"]
API_HINT = "pass this configuration as simulate(config=...) to allow it"


class InputError(ValueError):
    """Manifests, configuration or options the simulation cannot use; the message names file, object and field."""


@dataclass(frozen=True, slots=True)
class PluginRecord:
    """Per node and plugin, the results of a pod's last scheduling attempt (empty maps when scoring was skipped)."""

    filter: Mapping[str, Mapping[str, str]]
    score: Mapping[str, Mapping[str, int]]
    normalized_score: Mapping[str, Mapping[str, int]]
    final_score: Mapping[str, Mapping[str, int]]

    def total(self, node: str) -> int:
        """The node's final score: the sum of the plugins' weighted scores."""
        return sum(self.final_score.get(node, {}).values())


@dataclass(frozen=True, slots=True)
class PodResult:
    """One pod that was pending: where it went, or why it did not."""

    namespace: str
    name: str
    node: str | None
    result: PodPhase
    message: str
    nominated_node: str | None
    victims: tuple[str, ...]
    attempts: int
    bound_at: float | None
    owner: str | None
    plugins: PluginRecord | None  # None when the simulation ran with record=False
    pod_group: str | None = None  # the PodGroup it names (spec.schedulingGroup; GenericWorkload)

    @property
    def key(self) -> str:
        return f"{self.namespace}/{self.name}"

    @property
    def scheduled(self) -> bool:
        return self.result == "Scheduled"


@dataclass(frozen=True, slots=True)
class NodeResult:
    """A node at the end of the simulation; quantities in Kubernetes notation, as the JSON has them."""

    name: str
    pods: int
    requested: Mapping[str, str]
    allocatable: Mapping[str, str]

    def utilisation(self, resource: str) -> float | None:
        """Requested over allocatable for one resource (0.0-1.0 when it fits), None when the node has none of it."""
        alloc = self.allocatable.get(resource)
        if resource == "pods":
            return self.pods / float(parse_quantity(alloc)) if alloc and parse_quantity(alloc) else None
        if alloc is None or not parse_quantity(alloc):
            return None
        return float(parse_quantity(self.requested.get(resource, "0")) / parse_quantity(alloc))


@dataclass(frozen=True, slots=True)
class Event:
    """One step of a pod's life on the virtual clock (the JSON's `events`)."""

    time: float
    pod: str
    type: str
    node: str | None = None
    message: str | None = None
    preemptor: str | None = None


@dataclass(frozen=True)
class Simulation:
    """What one simulation decided. `to_json()` gives the contract's JSON text, `to_dict()` a copy of its object."""

    pods: tuple[PodResult, ...]
    nodes: tuple[NodeResult, ...]
    events: tuple[Event, ...]
    end_time: float
    warnings: tuple[str, ...]
    summary: Summary  # pods by result and reason, utilisation per resource, zone and node, fragmentation
    _doc: dict[str, Any] = field(repr=False, compare=False)
    config_source: str = ""  # the KubeSchedulerConfiguration's file ("<config>" for a mapping); "": upstream's default
    _by_key: dict[str, PodResult] = field(repr=False, compare=False, default_factory=dict)

    def __post_init__(self) -> None:
        self._by_key.update((p.key, p) for p in self.pods)

    def pod(self, key: str) -> PodResult:
        """A pod by `namespace/name` (a bare name means namespace default)."""
        found = self._by_key.get(key if "/" in key else f"default/{key}")
        if found is None:
            raise KeyError(f"no pending pod {key!r} in this simulation")
        return found

    def node(self, name: str) -> NodeResult:
        for n in self.nodes:
            if n.name == name:
                return n
        raise KeyError(f"no node {name!r} in this simulation")

    @property
    def scheduled(self) -> tuple[PodResult, ...]:
        return tuple(p for p in self.pods if p.scheduled)

    @property
    def pending(self) -> tuple[PodResult, ...]:
        """Pods still without a node at the end (unschedulable, gated or failed)."""
        return tuple(p for p in self.pods if not p.scheduled)

    @property
    def pod_groups(self) -> tuple[GroupEntry, ...]:
        """The JSON's `podGroups` (each group's members placed, where, and what holds the rest back); empty
        when no pod names a group. Copies: nothing a caller does to them reaches this Simulation."""
        return tuple(cast(GroupEntry, json.loads(json.dumps(g))) for g in self._doc.get("podGroups") or ())

    def placements(self) -> dict[str, str | None]:
        """`namespace/name` -> node (None when not scheduled), in the order of the pods' final attempts."""
        return {p.key: p.node for p in self.pods}

    def rows(self) -> list[dict[str, Any]]:
        """One flat row per pod, for `pandas.DataFrame(sim.rows())`."""
        return [
            {
                "pod": p.key,
                "node": p.node,
                "result": p.result,
                "attempts": p.attempts,
                "boundAt": p.bound_at,
                "owner": p.owner,
                "message": p.message,
            }
            for p in self.pods
        ]

    def to_json(self) -> str:
        """The text `kubesched simulate --output json` prints for the same run (docs/simulate-contract.md),
        byte for byte: a string, so nothing a caller does to it reaches this Simulation."""
        from kubesched.simulator.report import write_json

        out = io.StringIO()
        write_json(self._doc, out)
        out.write("\n")
        return out.getvalue()

    def to_dict(self) -> dict[str, Any]:
        """That JSON object as dicts and lists: the caller's own copy, to change or keep at will."""
        return cast(dict[str, Any], json.loads(json.dumps(self._doc)))

    def write_report(self, path: str | os.PathLike[str], *, title: str = "kubesched simulation") -> None:
        """The HTML report `kubesched simulate --report` writes (docs/report.md); needs matplotlib.

        Score distributions come from the pods' records (none with record=False). The report module
        gets plain data, so that it never imports this one."""
        from kubesched.simulator.report_html import PodLine, ReportData, ScoreStats, write_html

        stats: ScoreStats | None = None
        for p in self.pods:
            if p.plugins is None:
                continue
            stats = stats or ScoreStats()
            if p.scheduled and p.node is not None and p.attempts:
                stats.add(p.node, p.plugins.final_score)
        data = ReportData(
            title=title,
            config_source=self.config_source,
            summary=self.summary,
            pods=[PodLine(p.key, p.node, p.result, p.message, p.owner) for p in self.pods],
            events=self.events,
            end_time=self.end_time,
            warnings=self.warnings,
            scores=stats,
            groups=self.pod_groups,
        )
        write_html(data, os.fspath(path))


def simulate(
    *inputs: Input,
    text: str | None = None,
    config: str | os.PathLike[str] | Manifest | None = None,
    seed: int | None = None,
    record: bool | Collection[str] = True,
    until: float | str | None = None,
    bind_latency: float | str = 0.0,
    overlays: Iterable[Input] = (),
    max_pods: int | None = None,
    max_objects: int | None = None,
    max_input_bytes: int | None = None,
    kubernetes_version: str | None = None,
    feature_gates: str | Mapping[str, bool] = "",
) -> Simulation:
    """Simulate scheduling: manifests in, a `Simulation` out.

    `inputs` are paths to YAML/JSON files or directories (read as `kubesched simulate`
    reads them), Kubernetes objects as mappings, or iterables of them; `text` is YAML or
    JSON text with one or more documents. `config` is a KubeSchedulerConfiguration (a
    path or a mapping); `until` and `bind_latency` are seconds or durations such as "10m".
    `record` is True (every pod's per-plugin record), False, the command line's "full" or
    "none", or the `namespace/name` keys of the pods to record. Negative or infinite
    seconds, a bare string of keys and other wrong types raise InputError. `overlays` are
    inputs like `inputs` whose objects replace those of the same kind, namespace and name
    (`--overlay`). `max_pods`, `max_objects` and `max_input_bytes` raise (or lower) the
    simulation's budget (docs/security.md); input over it raises InputError before anything
    is built.

    `kubernetes_version` ("1.34", "1.35" or "1.36", the default) is the kube-scheduler release
    to follow, with `feature_gates` ("A=true,B=false", or a mapping such as
    `{"OpportunisticBatching": False}`) on top of its defaults (docs/versions.md). v1.36's alpha
    workload-aware scheduling is behind gates such as `"GenericWorkload=true,GangScheduling=true"`
    (docs/workload-aware.md).

    Only `config` may name plugins by import path or extenders: a KubeSchedulerConfiguration
    among the inputs, the text or the overlays is data, and one that does raises InputError.
    """
    with few_full_collections():
        return _simulate(
            inputs,
            text=text,
            config=config,
            seed=seed,
            record=record,
            until=until,
            bind_latency=bind_latency,
            overlays=overlays,
            max_pods=max_pods,
            max_objects=max_objects,
            max_input_bytes=max_input_bytes,
            kubernetes_version=kubernetes_version,
            feature_gates=feature_gates,
            config_trust=TRUSTED,
            documents_trust=UNTRUSTED.hinted(API_HINT),
        )


def simulate_trusting(config_trust: Trust, documents_trust: Trust, *inputs: Input, **kw: Any) -> Simulation:
    """`simulate` for kubesched's own commands, which say how far they trust the `config` argument (a sweep
    spec's configuration is data; so is one edited in the UI) and a configuration among the documents (the
    refusal's hint names the command's own way to pass one on purpose)."""
    with few_full_collections():
        return _simulate(inputs, config_trust=config_trust, documents_trust=documents_trust, **kw)


def _feature_gates_text(gates: str | Mapping[str, bool]) -> str:
    """`--feature-gates` text from the text itself or a mapping of gate to bool."""
    if isinstance(gates, str):
        return gates
    if isinstance(gates, Mapping) and all(isinstance(k, str) and isinstance(v, bool) for k, v in gates.items()):
        return ",".join(f"{k}={str(v).lower()}" for k, v in gates.items())
    raise InputError("feature_gates: expected text such as 'OpportunisticBatching=false' or a mapping to bools")


def _simulate(
    inputs: tuple[Input, ...],
    *,
    text: str | None = None,
    config: str | os.PathLike[str] | Manifest | None = None,
    seed: int | None = None,
    record: bool | Collection[str] = True,
    until: float | str | None = None,
    bind_latency: float | str = 0.0,
    overlays: Iterable[Input] = (),
    max_pods: int | None = None,
    max_objects: int | None = None,
    max_input_bytes: int | None = None,
    kubernetes_version: str | None = None,
    feature_gates: str | Mapping[str, bool] = "",
    config_trust: Trust,
    documents_trust: Trust,
) -> Simulation:
    from kubesched.simulator.report import to_json
    from kubesched.simulator.run import build_config
    from kubesched.simulator.run import simulate as run_simulation
    from kubesched.simulator.summary import summarize

    record = _record(record)
    source = ""  # the configuration's, for a profile that cannot be built
    try:
        budget = _budget(max_pods, max_objects, max_input_bytes)
        feature_gates = _feature_gates_text(feature_gates)
        release(kubernetes_version, feature_gates)  # a bad version or gate before any input is read
        loaded = _load(inputs, text, tuple(overlays), budget)
        version, note = snapshot_version(kubernetes_version, loaded.cluster_version)
        followed = release(version, feature_gates)
        config_doc, config_source = _config_document(config)
        scheduler_config = build_config(
            loaded, config_doc, config_source, trust=config_trust, documents=documents_trust, release=followed
        )
        source = scheduler_config.source
        result = run_simulation(
            loaded,
            scheduler_config,
            seed=seed,
            record=record,
            until=_seconds("until", until),
            bind_latency=_seconds("bind_latency", bind_latency) or 0.0,
        )
        if note is not None:
            result.warnings.insert(0, note)
    except (LoadError, ConfigError) as err:
        raise InputError(str(err)) from err
    except ReleaseError as err:
        raise InputError(f"{err.flag.removeprefix('--').replace('-', '_')}: {err}") from err
    except FrameworkError as err:  # its field and file are kept apart from its text: put them back
        raise InputError(err.located(source)) from err
    summary = summarize(result)
    return _typed(to_json(result, record=bool(record), summary=summary), summary, config_source or loaded.config_source)


def _budget(max_pods: int | None, max_objects: int | None, max_input_bytes: int | None) -> Budget:
    """The default budget with what the caller raised or lowered."""
    given = {"max_pods": max_pods, "max_objects": max_objects, "max_input_bytes": max_input_bytes}
    return Budget(**{k: v for k, v in given.items() if v is not None})


def _load(inputs: tuple[Input, ...], text: str | None, overlays: tuple[Input, ...], budget: Budget) -> LoadedInput:
    """Paths first through the command's loader (overlay paths after the others), then objects and text."""
    paths, objects = _split(inputs, "input")
    overlay_paths, overlay_objects = _split(overlays, "overlay")
    loaded = load_manifests(paths, overlay_paths, finish=False, budget=budget)
    for (source, index, obj), overlay in [*((o, False) for o in objects), *((o, True) for o in overlay_objects)]:
        if not isinstance(obj, Mapping):
            raise InputError(f"{source}, document {index}: expected a Kubernetes object (a mapping)")
        add_document(loaded, _plain(obj), source, index, overlay)
    if text is not None:
        check_text_size("<text>", text, budget.max_input_bytes)
        add_text(loaded, "<text>", text)
    finish_loading(loaded, paths + overlay_paths)
    return loaded


def _split(inputs: tuple[Input, ...], what: str) -> tuple[list[str], list[tuple[str, int, Any]]]:
    """Paths apart from objects, each object named as errors will name it."""
    paths: list[str] = []
    objects: list[tuple[str, int, Any]] = []
    for i, item in enumerate(inputs):
        if isinstance(item, str | os.PathLike):
            paths.append(os.fspath(item))
        elif isinstance(item, Mapping):
            objects.append((f"<{what} object {i}>" if what != "input" else f"<object {i}>", 1, item))
        elif isinstance(item, Iterable) and not isinstance(item, bytes):
            name = f"<{what} objects {i}>" if what != "input" else f"<objects {i}>"
            objects.extend((name, j, obj) for j, obj in enumerate(item, start=1))
        else:
            raise InputError(f"{what} {i}: expected a path, a Kubernetes object or objects, got {type(item).__name__}")
    return paths, objects


def _plain(obj: Mapping[str, Any]) -> dict[str, Any]:
    """A caller's mapping as the plain dicts and lists the loader works on (it fills defaults in place), its strings
    as a JSON file would give them (a lone surrogate is U+FFFD)."""

    def conv(v: Any) -> Any:
        if isinstance(v, Mapping):
            return {valid_unicode(k) if isinstance(k, str) else k: conv(x) for k, x in v.items()}
        if isinstance(v, list | tuple):
            return [conv(x) for x in v]
        return valid_unicode(v) if isinstance(v, str) else v

    return cast(dict[str, Any], conv(obj))


def _config_document(config: str | os.PathLike[str] | Manifest | None) -> tuple[dict[str, Any] | None, str]:
    if config is None:
        return None, ""
    if isinstance(config, Mapping):
        return _plain(config), "<config>"
    path = os.fspath(config)
    return read_object_file(path), path


def _seconds(name: str, value: float | str | None) -> float | None:
    """Seconds, or a duration as the command line takes it; like its flags, never negative."""
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int | float | str):
        raise InputError(f'{name}: expected seconds or a duration such as "10m", got {type(value).__name__}')
    if isinstance(value, str):
        try:
            return parse_duration(value)
        except ValueError as err:
            raise InputError(f"{name}: {err}") from err
    if not math.isfinite(value) or value < 0:
        raise InputError(f"{name}: expected a finite number of seconds, 0 or more, got {value}")
    return float(value)


def _record(record: bool | Collection[str]) -> bool | Collection[str]:
    """True, False, the command line's "full" or "none", or pod keys; a lone string is none of the last."""
    if isinstance(record, str):
        if record in ("full", "none"):
            return record == "full"
        raise InputError(f'record: expected True, False, "full", "none" or "namespace/name" keys, got {record!r}')
    if isinstance(record, bool):
        return record
    try:
        keys = list(record)
    except TypeError as err:
        raise InputError(f"record: expected True, False or pod keys, got {type(record).__name__}") from err
    bad = [k for k in keys if not isinstance(k, str)]
    if bad:
        raise InputError(f'record: pod keys are "namespace/name" strings, got {bad[0]!r}')
    return keys


def _typed(doc: dict[str, Any], summary: Summary, config_source: str) -> Simulation:
    return Simulation(
        pods=tuple(_pod(p) for p in doc["pods"]),
        nodes=tuple(
            NodeResult(name=n["name"], pods=n["pods"], requested=n["requested"], allocatable=n["allocatable"])
            for n in doc["nodes"]
        ),
        events=tuple(Event(**e) for e in doc["events"]),
        end_time=doc["endTime"],
        warnings=tuple(doc["warnings"]),
        summary=summary,
        _doc=doc,
        config_source=config_source,
    )


def _pod(p: dict[str, Any]) -> PodResult:
    plugins = p.get("plugins")
    return PodResult(
        namespace=p["namespace"],
        name=p["name"],
        node=p["node"],
        result=p["result"],
        message=p["message"],
        nominated_node=p["nominatedNode"],
        victims=tuple(p["victims"]),
        attempts=p["attempts"],
        bound_at=p["boundAt"],
        owner=p["owner"],
        plugins=None
        if plugins is None
        else PluginRecord(
            filter=plugins["filter"],
            score=plugins["score"],
            normalized_score=plugins["normalizedScore"],
            final_score=plugins["finalScore"],
        ),
        pod_group=p.get("podGroup"),
    )
