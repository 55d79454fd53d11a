"""`kubesched simulate`: load manifests into the embedded cluster, play Scenario steps, schedule until idle."""

from __future__ import annotations

import copy
import functools
import random
from collections.abc import Callable, Collection, Sequence
from dataclasses import dataclass, field
from typing import Any

from kubesched.api.field import aggregate
from kubesched.api.kinds import WORKLOAD_KINDS
from kubesched.apiserver.admission import TERMINAL_PHASES
from kubesched.apiserver.documents import LoadError
from kubesched.apiserver.workload_api import GateError, apply_gates
from kubesched.backend.embedded.cluster import ConflictError, EmbeddedCluster
from kubesched.backend.embedded.controllers.controller_utils import NameGenerator
from kubesched.backend.embedded.controllers.ephemeral_volume import EphemeralVolumeController
from kubesched.backend.embedded.controllers.manager import WorkloadControllers
from kubesched.backend.embedded.controllers.resource_claim import ResourceClaimController
from kubesched.cache.pod_groups import pod_group_name
from kubesched.clock import VirtualClock
from kubesched.config.load import SchedulerConfig, load_config
from kubesched.config.trust import UNTRUSTED, Trust
from kubesched.event_handlers import informed_scheduler
from kubesched.framework.outcome import Outcome, SchedulerEvent
from kubesched.framework.types import AttemptRecord, PodInfo, new_pod_info
from kubesched.release import DEFAULT, DRA_WORKLOAD_RESOURCE_CLAIMS, WORKLOAD_WITH_JOB, Release
from kubesched.scheduler import Scheduler
from kubesched.simulator.load import LoadedInput, admit_update, create_problems, prepare_objects
from kubesched.simulator.scenario import Step, merge_patch

# Kinds the store must hold before nodes and pods arrive, as informers sync before scheduling starts.
_FIRST = (
    "Namespace",
    "PriorityClass",
    "StorageClass",
    "CSIDriver",
    "CSINode",
    "PersistentVolume",
    "PersistentVolumeClaim",
    "Service",
    "ReplicationController",
    "ReplicaSet",
    "StatefulSet",
    "Deployment",
    "DaemonSet",
    "Job",
    "CronJob",
    "PodDisruptionBudget",
    "CSIStorageCapacity",
    "DeviceClass",
    "ResourceSlice",
    "ResourceClaimTemplate",
    "ResourceClaim",
    "Workload",
    "PodGroup",
)


Watcher = Callable[["SimulationResult", Outcome], None]
"""Called with the result so far and each attempt's outcome, as the attempt ends."""
Record = bool | Collection[str] | Callable[[PodInfo], bool]
"""Whose attempts keep the per-plugin record: every pod's, none, the pods these keys select (see `selects`),
or those a predicate picks."""


@dataclass
class SimulationResult:
    outcomes: dict[str, Outcome] = field(default_factory=dict)  # by pod uid, in order of final attempt
    pending: list[PodInfo] = field(default_factory=list)  # pods pending at the start or created later
    scheduler: Scheduler | None = None
    events: list[SchedulerEvent] = field(default_factory=list)
    bound_at: dict[str, float] = field(default_factory=dict)  # pod key -> virtual time of binding
    nominated: dict[str, str] = field(default_factory=dict)  # pod key -> node preemption nominated
    victims: dict[str, list[str]] = field(default_factory=dict)  # preemptor key -> victims' keys
    warnings: list[str] = field(default_factory=list)
    end_time: float = 0.0
    owners: dict[str, str] = field(default_factory=dict)  # pod key -> "Kind/name" of the workload it came from
    controllers: dict[str, tuple[str, ...]] = field(default_factory=dict)  # pod key -> its "Kind/name" chain, up
    watchers: Sequence[Watcher] = ()  # told of every outcome as it comes (streamed output, progress)

    def on_outcome(self, outcome: Outcome) -> None:
        self.outcomes.pop(outcome.pod.uid, None)
        self.outcomes[outcome.pod.uid] = outcome
        for watch in self.watchers:
            watch(self, outcome)

    def on_event(self, event: SchedulerEvent) -> None:
        self.events.append(event)
        if event.type == "Bound":
            self.bound_at[event.pod] = event.time
        elif event.type == "Nominated" and event.node:
            self.nominated[event.pod] = event.node
        elif event.type == "Preempted" and event.preemptor:
            self.victims.setdefault(event.preemptor, []).append(event.pod)


def build_config(
    loaded: LoadedInput,
    config_doc: dict[str, Any] | None,
    config_source: str,
    *,
    trust: Trust = UNTRUSTED,
    documents: Trust = UNTRUSTED,
    release: Release = DEFAULT,
) -> SchedulerConfig:
    """The configuration given on its own (`config_doc`, trusted as far as `trust` says), else the one among
    the documents, files and overlays (as far as `documents` says: they are data). Trusting is asked for.
    Either is defaulted and checked as `release`'s kube-scheduler would; its gates are the API server's
    too, for the workload kinds."""
    if config_doc is not None:
        return load_config(config_doc, source=config_source, trust=trust, release=release)
    return load_config(loaded.config, source=loaded.config_source, trust=documents, release=release)


def embedded_scheduler(config: SchedulerConfig, cluster: EmbeddedCluster, clock: VirtualClock, **kw: Any) -> Scheduler:
    """A scheduler fed by the embedded cluster's events, reading pods as its informer would."""
    return informed_scheduler(config, cluster, client=cluster, clock=clock, **kw)


def simulate(
    loaded: LoadedInput,
    config: SchedulerConfig,
    *,
    seed: int | None = None,
    record: Record = True,
    registry: Any = None,
    until: float | None = None,
    bind_latency: float = 0.0,
    watchers: Sequence[Watcher] = (),
    scores_only: bool = False,
    settled: Callable[[], None] | None = None,
) -> SimulationResult:
    """With `scores_only`, the attempts `record` leaves out keep a scores-only record (the report's figures).
    `settled` is called where the heap holds little but what lives as long as the result: once the objects
    are admitted and once the cluster is populated (the simulate command freezes the heap there)."""
    objects = prepare_objects(loaded)
    if settled is not None:
        settled()
    _apply_gates(loaded, config.release)
    clock = VirtualClock()
    cluster = EmbeddedCluster(clock)
    result = SimulationResult(warnings=list(loaded.warnings), watchers=watchers)
    parsed: dict[int, PodInfo] = {}  # pending pods as admission parsed them, taken by the informer when created
    sched = embedded_scheduler(
        config,
        cluster,
        clock,
        preparsed=lambda obj: parsed.pop(id(obj), None),
        registry=registry,
        seed=seed,
        record=_record_predicate(record, result, scores_only),
        observer=result,
        bind_latency=bind_latency,
    )
    result.scheduler = sched
    source = f"{config.source}: " if config.source else ""
    result.warnings.extend(source + w for w in sched.unknown_plugin_configs)
    result.warnings.extend(f"--feature-gates: {w}" for w in config.release.warnings)
    workloads = _workload_controllers(
        loaded, cluster, result, seed, config.release.workload_aware and config.release.enabled(WORKLOAD_WITH_JOB)
    )
    claims = _claim_controller(loaded, cluster, result, seed, config.release.enabled(DRA_WORKLOAD_RESOURCE_CLAIMS))
    volumes = _ephemeral_volume_controller(loaded, cluster, result, seed)
    rank = {k: i for i, k in enumerate(_FIRST)}
    first = sorted((so for so in objects if so.obj["kind"] in rank), key=lambda so: rank[so.obj["kind"]])
    nodes = [so for so in objects if so.obj["kind"] == "Node"]
    pods = [so for so in objects if so.obj["kind"] == "Pod"]
    bound = [so for so in pods if (so.obj.get("spec") or {}).get("nodeName")]
    pending = [so for so in pods if not (so.obj.get("spec") or {}).get("nodeName")]
    for so in (*first, *nodes, *bound):
        cluster.create(so.obj)
    # The resourceclaim and ephemeral volume controllers run as the pending pods arrive, as in a cluster: each
    # pod's claims are made as it is created, rather than every pod waiting for claims that come after all of them.
    claims.start()
    volumes.start()
    for so in pending:
        # Only what admission's parse reads is in a PodInfo; creating a pending pod changes none of it (a bound
        # pod gets topology labels), and _apply_gates drops nothing it reads.
        if so.info is not None:
            parsed[id(so.obj)] = so.info
        cluster.create(so.obj)
        parsed.pop(id(so.obj), None)
    result.pending = [_parsed(sched, so.obj) for so in pending]
    workloads.start([so.obj for so in objects if so.obj["kind"] in WORKLOAD_KINDS])
    for step in sorted(loaded.steps, key=lambda st: st.at):
        clock.call_at(step.at, functools.partial(_play, step, cluster, result))
    if settled is not None:
        settled()
    sched.run(until=until)
    result.end_time = clock.now
    return result


def _apply_gates(loaded: LoadedInput, release: Release) -> None:
    """What the API server with the simulation's gates does to the admitted objects (apiserver/workload_api.py)."""
    everything = [*loaded.objects, *loaded.step_objects]
    context = loaded.admission
    classes = {name: value for name, (value, _) in context.classes.items()} if context is not None else {}
    default = context.global_default if context is not None else ""
    try:
        loaded.warnings.extend(apply_gates([so.obj for so in everything], release, classes, default))
    except GateError as err:
        where = next((so.describe() for so in everything if so.obj is err.obj), "")
        raise LoadError(f"{where}: {err}" if where else str(err)) from err


def _record_predicate(
    record: Record, result: SimulationResult, scores_only: bool = False
) -> bool | Callable[[PodInfo], bool | AttemptRecord]:
    if scores_only and record is not True:
        full = _record_predicate(record, result)
        return lambda pod: True if full is True or (callable(full) and full(pod)) else AttemptRecord(scores_only=True)
    if isinstance(record, bool) or callable(record):
        return record
    keys = frozenset(record)
    return (lambda pod: selects(keys, result, pod)) if keys else False


def selects(keys: frozenset[str], result: SimulationResult, pod: PodInfo) -> bool:
    """Whether `keys` name the pod ("namespace/name") or a workload above it ("namespace/Kind/name").

    A workload's pods are named only as its controllers make them: the chain each pod arrived
    with tells whose they are, so --explain can keep the records of a workload's pods.
    """
    if pod.key in keys:
        return True
    group = pod_group_name(pod.obj)
    if group is not None and f"{pod.namespace}/PodGroup/{group}" in keys:
        return True
    return any(f"{pod.namespace}/{link}" in keys for link in result.controllers.get(pod.key, ()))


def _workload_controllers(
    loaded: LoadedInput, cluster: EmbeddedCluster, result: SimulationResult, seed: int | None, with_job: bool = False
) -> WorkloadControllers:
    """The workload controllers, naming what they create from the seed, admitting it as the input was admitted."""
    context = loaded.admission
    assert context is not None

    chains: dict[tuple[str, ...], tuple[str, ...]] = {}  # one tuple for all the pods of a chain

    def owner(kind: str, event: str, old: Any, new: Any) -> None:
        if kind == "Pod" and event == "ADDED":
            found = manager.controllers_of(new)
            if found:
                chain = chains.setdefault(tuple(found), tuple(found))
                meta = new.get("metadata") or {}
                key = f"{meta.get('namespace') or 'default'}/{meta.get('name')}"
                result.owners[key] = chain[-1]
                result.controllers[key] = chain

    def created(pod: dict[str, Any]) -> None:
        if not (pod.get("spec") or {}).get("nodeName"):
            result.pending.append(new_pod_info(pod))

    def deleted(pod: Any) -> None:
        meta = pod.get("metadata") or {}
        key = f"{meta.get('namespace') or 'default'}/{meta.get('name')}"
        uid = str(meta.get("uid") or key)
        if uid not in result.outcomes:  # never tried: it leaves no trace in `pods`
            result.pending = [p for p in result.pending if p.uid != uid]
        result.on_event(SchedulerEvent(cluster.clock(), key, "Deleted"))

    def admit(obj: dict[str, Any]) -> str:
        problems = create_problems(obj, context)
        return aggregate(problems) if problems else ""

    rng = random.Random(f"kubesched-names/{seed}") if seed is not None else random.Random()
    manager = WorkloadControllers(
        cluster,
        NameGenerator(rng),
        admit=admit,
        on_created=created,
        on_deleted=deleted,
        warn=result.warnings.append,
        workload_with_job=with_job,
    )
    cluster.subscribe(owner)  # every pod's workload, as it arrives (its owners may be gone by the end)
    return manager


def _claim_controller(
    loaded: LoadedInput, cluster: EmbeddedCluster, result: SimulationResult, seed: int | None, workload_claims: bool
) -> ResourceClaimController:
    """The resourceclaim controller, naming claims from the seed, admitting them as the input was admitted."""
    names = _seeded_names("kubesched-claims", seed)
    return ResourceClaimController(
        cluster, names, admit=_admission(loaded), warn=result.warnings.append, workload_claims=workload_claims
    )


def _ephemeral_volume_controller(
    loaded: LoadedInput, cluster: EmbeddedCluster, result: SimulationResult, seed: int | None
) -> EphemeralVolumeController:
    """The ephemeral volume controller, its claims' uids drawn from the seed, admitted as the input was admitted."""
    names = _seeded_names("kubesched-ephemeral", seed)
    return EphemeralVolumeController(cluster, names, admit=_admission(loaded), warn=result.warnings.append)


def _admission(loaded: LoadedInput) -> Callable[[dict[str, Any]], str]:
    """What the API server's admission and validation say of an object a controller creates ("" when none)."""
    context = loaded.admission
    assert context is not None

    def admit(obj: dict[str, Any]) -> str:
        problems = create_problems(obj, context)
        return aggregate(problems) if problems else ""

    return admit


def _seeded_names(stream: str, seed: int | None) -> NameGenerator:
    """Names from their own random stream of the seed, so one controller's draws do not shift another's."""
    return NameGenerator(random.Random(f"{stream}/{seed}") if seed is not None else random.Random())


def _parsed(sched: Scheduler, pod: dict[str, Any]) -> PodInfo:
    """A pod just created: the informer parsed it as it arrived, so its PodInfo is taken, not parsed again."""
    meta = pod["metadata"]
    info = sched.informer_pod(meta.get("namespace") or "default", meta["name"])
    return info if info is not None and info.obj is pod else new_pod_info(pod)


def _play(step: Step, cluster: EmbeddedCluster, result: SimulationResult) -> None:
    """One Scenario step, as the watch events a real cluster would send; a step that cannot apply warns."""
    assert result.scheduler is not None
    for obj in step.create:
        # The store writes only metadata into what it is given (and replaces the rest on change):
        # a copy of the two levels keeps the loaded step as it was.
        obj = {**obj, "metadata": dict(obj["metadata"])}
        if _terminal(obj):
            continue  # kube-scheduler's informers never see a finished pod
        try:
            cluster.create(obj)
        except ConflictError as err:
            result.warnings.append(f"{step.where}: create: {err}")
            continue
        if obj["kind"] == "Pod" and not (obj.get("spec") or {}).get("nodeName"):
            result.pending.append(_parsed(result.scheduler, obj))
    for upd in step.update:
        ref = upd.ref
        current = cluster.get(ref.kind, ref.namespace, ref.name)
        if current is None:
            result.warnings.append(f"{step.where}: update: {ref.describe()} not found")
            continue
        patched = merge_patch(copy.deepcopy(current), upd.patch)
        patched["kind"], patched.setdefault("metadata", {})["name"] = ref.kind, ref.name
        if ref.namespace:
            patched["metadata"]["namespace"] = ref.namespace
        problem = admit_update(patched)
        if problem:
            result.warnings.append(f"{step.where}: update: {ref.describe()}: {problem}")
            continue
        if _terminal(patched):
            # The pod finished: it leaves the scheduler's informer (field selector) as if deleted.
            cluster.delete(ref.kind, ref.namespace, ref.name)
            continue
        cluster.update(patched)
    for ref in step.delete:
        try:
            cluster.delete(ref.kind, ref.namespace, ref.name)
        except ConflictError as err:
            result.warnings.append(f"{step.where}: delete: {err}")
            continue
        if ref.kind == "Pod":
            result.on_event(SchedulerEvent(cluster.clock(), f"{ref.namespace}/{ref.name}", "Deleted"))


def _terminal(obj: dict[str, Any]) -> bool:
    return obj.get("kind") == "Pod" and (obj.get("status") or {}).get("phase") in TERMINAL_PHASES
