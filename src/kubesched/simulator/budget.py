"""Bounded work: how much one simulation may read, hold and create, checked before anything is built.

A six-kilobyte file of twenty Deployments asking for 100,000 replicas each is valid
Kubernetes, and would make two million pods; kubesched would build them until memory
ran out. So every simulation has a budget, and the counts are worked out from the
manifests before a single pod is made:

- pods: the pods listed, plus every pod the workloads will create over the run
  (replicas; a Job's parallelism, up to its completions; a DaemonSet's, one per node;
  a CronJob's Job), plus what Scenario steps add: each scale-up, and a whole new set
  for each step that changes a Deployment's, DaemonSet's or StatefulSet's template. Pods a workload
  already owns in the input count toward it, not on top of it.
- objects: every object read, plus the pods above and what controllers make besides
  (a Deployment's ReplicaSet per template, a CronJob's Job, ResourceClaims from
  templates, the PersistentVolumeClaims of generic ephemeral volumes).
- input: bytes per file, pipe, standard input or UI edit, and YAML values (mappings,
  lists and scalars, alias copies included) per input and per object.

Each limit is raisable (`--max-pods`, `--max-objects`, `--max-input-bytes`; in Python
`max_pods=`, `max_objects=`, `max_input_bytes=`); going over one is a `BudgetError`
naming the budget, the count and the flag.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from kubesched.apiserver.documents import (
    DEFAULT_MAX_INPUT_BYTES,
    MAX_OBJECT_NODES,
    BudgetError,
    input_nodes_allowed,
)

__all__ = [
    "DEFAULT_MAX_INPUT_BYTES",
    "DEFAULT_MAX_OBJECTS",
    "DEFAULT_MAX_PODS",
    "MAX_OBJECT_NODES",
    "Budget",
    "BudgetError",
    "Expansion",
    "check",
    "check_objects_read",
    "expansion",
]

DEFAULT_MAX_PODS = 1_000_000
DEFAULT_MAX_OBJECTS = 2_000_000
"""Room for 100,000 nodes, 1,000,000 pods and 900,000 other objects: workloads, their ReplicaSets, claims, classes."""

_OWNED_KINDS = ("Deployment", "ReplicaSet", "ReplicationController", "StatefulSet", "DaemonSet", "Job", "CronJob")
_REPLICATED = ("Deployment", "ReplicaSet", "ReplicationController", "StatefulSet")
_ROLLED = ("Deployment", "DaemonSet", "StatefulSet")  # a new template replaces every pod
_MAX_OWNER_DEPTH = 8


@dataclass(frozen=True, slots=True)
class Budget:
    """The most one simulation may hold and read; see the module's docstring for what counts."""

    max_pods: int = DEFAULT_MAX_PODS
    max_objects: int = DEFAULT_MAX_OBJECTS
    max_input_bytes: int = DEFAULT_MAX_INPUT_BYTES

    def __post_init__(self) -> None:
        for name in ("max_pods", "max_objects", "max_input_bytes"):
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, int) or value < 0:
                raise BudgetError(f"{name}: expected a whole number, 0 or more, got {value!r}")

    @property
    def max_input_nodes(self) -> int:
        """YAML values one input may hold: one per 8 bytes of the byte budget, as real manifests have them."""
        return input_nodes_allowed(self.max_input_bytes)


def _int(value: Any, default: int) -> int:
    """A count as the manifests give it: anything not a whole number is the API server's to refuse (0 here)."""
    if value is None:
        return default
    return value if isinstance(value, int) and not isinstance(value, bool) and value > 0 else 0


def _spec(obj: Mapping[str, Any]) -> Mapping[str, Any]:
    spec = obj.get("spec")
    return spec if isinstance(spec, Mapping) else {}


def _meta(obj: Mapping[str, Any]) -> Mapping[str, Any]:
    meta = obj.get("metadata")
    return meta if isinstance(meta, Mapping) else {}


Key = tuple[str, str, str]


def _key(obj: Mapping[str, Any]) -> Key:
    meta = _meta(obj)
    kind = str(obj.get("kind") or "")
    namespace = "" if kind == "Node" else str(meta.get("namespace") or "default")
    return kind, namespace, str(meta.get("name") or "")


def _controller(obj: Mapping[str, Any]) -> Key | None:
    """The workload that controls `obj` (its controller ownerReference), if any."""
    refs = _meta(obj).get("ownerReferences")
    if not isinstance(refs, list):
        return None
    for ref in refs:
        if isinstance(ref, Mapping) and ref.get("controller") is True and ref.get("kind") in _OWNED_KINDS:
            return str(ref["kind"]), _key(obj)[1], str(ref.get("name") or "")
    return None


def _job_pods(spec: Mapping[str, Any]) -> int:
    """A Job's pods at once: parallelism (default 1), no more than its completions when it has them."""
    parallelism = _int(spec.get("parallelism"), 1)
    if spec.get("completions") is None:
        return parallelism
    return min(parallelism, _int(spec.get("completions"), 1))


def _template(obj: Mapping[str, Any]) -> Mapping[str, Any] | None:
    """The pod template a workload makes its pods from (a CronJob's through its Job template)."""
    spec = _spec(obj)
    if obj.get("kind") == "CronJob":
        job = spec.get("jobTemplate")
        spec = _spec(job) if isinstance(job, Mapping) else {}
    template = spec.get("template")
    return template if isinstance(template, Mapping) else None


def _wanted(obj: Mapping[str, Any], nodes: int) -> int:
    """The pods a workload will have at once, from its spec as written (defaults as the API server fills them)."""
    if _template(obj) is None:
        return 0
    kind = obj.get("kind")
    spec = _spec(obj)
    if kind in _REPLICATED:
        return _int(spec.get("replicas"), 1)
    if kind == "Job":
        return _job_pods(spec)
    if kind == "CronJob":
        job = spec.get("jobTemplate")
        return _job_pods(_spec(job) if isinstance(job, Mapping) else {})
    if kind == "DaemonSet":
        return nodes
    return 0


def _claims_per_pod(pod_spec: Mapping[str, Any]) -> int:
    """Claims controllers make for each such pod: a ResourceClaim per claim template it names (the resourceclaim
    controller), a PersistentVolumeClaim per generic ephemeral volume (the ephemeral volume controller)."""
    entries = pod_spec.get("resourceClaims")
    volumes = pod_spec.get("volumes")
    made = 0
    if isinstance(entries, list):
        made += sum(1 for e in entries if isinstance(e, Mapping) and e.get("resourceClaimTemplateName"))
    if isinstance(volumes, list):
        made += sum(1 for v in volumes if isinstance(v, Mapping) and v.get("ephemeral") is not None)
    return made


@dataclass(frozen=True, slots=True)
class Expansion:
    """What a simulation's input will grow to, counted from the manifests alone."""

    listed_pods: int  # pods in the input not owned by a workload in it
    workloads: int
    workload_pods: int  # pods the workloads will have, those they own in the input included
    read: int  # objects in the input (files and Scenario steps)
    made: int  # objects controllers make besides pods: ReplicaSets, Jobs, ResourceClaims, ephemeral volumes' PVCs
    largest: tuple[str, int]  # the workload with the most pods ("" when none) and that count
    owned_listed: int = 0  # pods in the input that a workload in it owns (in `read`, and in `workload_pods`)

    @property
    def pods(self) -> int:
        return self.listed_pods + self.workload_pods

    @property
    def objects(self) -> int:
        """Objects the store will hold: those read, the pods the workloads add, and what else controllers make."""
        return self.read + self.workload_pods - self.owned_listed + self.made


def expansion(
    objects: Sequence[Mapping[str, Any]],
    scaled: Iterable[tuple[Key, Mapping[str, Any]]] = (),
) -> Expansion:
    """The counts for `objects` (the input and what Scenario steps create); `scaled` gives the merge patches steps
    apply to workloads, in the order they play."""
    by_key: dict[Key, Mapping[str, Any]] = {}
    nodes = 0
    for obj in objects:
        kind = obj.get("kind")
        if kind == "Node":
            nodes += 1
        elif kind in _OWNED_KINDS:
            by_key[_key(obj)] = obj
    grown: dict[Key, int] = {}  # pods steps add to a workload: scale-ups, and a new set per rollout
    rollouts: dict[Key, int] = {}  # Deployments' template changes, a ReplicaSet each
    specs: dict[Key, dict[str, Any]] = {}  # each workload's spec as the steps so far leave it
    for key, patch in scaled:
        target = by_key.get(key)
        if target is None:
            continue
        before = specs.get(key, dict(_spec(target)))
        after = specs[key] = {**before, **_spec(patch)}
        was, now = _wanted({**target, "spec": before}, nodes), _wanted({**target, "spec": after}, nodes)
        grown[key] = grown.get(key, 0) + max(0, now - was)
        if key[0] in _ROLLED and "template" in _spec(patch):
            grown[key] += now
            if key[0] == "Deployment":
                rollouts[key] = rollouts.get(key, 0) + 1

    def top(key: Key) -> Key:
        """The workload that owns `key` at the top: a Deployment's ReplicaSets are the Deployment's."""
        for _ in range(_MAX_OWNER_DEPTH):
            obj = by_key.get(key)
            parent = _controller(obj) if obj is not None else None
            if parent is None or parent not in by_key or parent[0] != "Deployment":
                return key
            key = parent
        return key

    owned: dict[Key, int] = {}
    listed = 0
    claims = 0
    for obj in objects:
        if obj.get("kind") != "Pod":
            continue
        claims += _claims_per_pod(_spec(obj))
        parent = _controller(obj)
        if parent is not None and parent in by_key:
            owner = top(parent)
            owned[owner] = owned.get(owner, 0) + 1
        else:
            listed += 1
    workload_pods = 0
    made = 0
    largest = ("", 0)
    counted = 0
    for key, obj in by_key.items():
        parent = _controller(obj)
        if key[0] == "ReplicaSet" and parent is not None and parent[0] == "Deployment" and parent in by_key:
            continue  # its pods are its Deployment's
        counted += 1
        pods = max(_wanted(obj, nodes) + grown.get(key, 0), owned.get(key, 0))
        made += rollouts.get(key, 0)
        workload_pods += pods
        if pods > largest[1]:
            largest = (f"{key[0]} {key[1]}/{key[2]}", pods)
        template = _template(obj)
        made += (pods - owned.get(key, 0)) * _claims_per_pod(_spec(template) if template else {})
        if key[0] in ("Deployment", "CronJob"):
            made += 1  # the ReplicaSet or Job in between
    return Expansion(
        listed_pods=listed,
        workloads=counted,
        workload_pods=workload_pods,
        read=len(objects),
        made=made + claims,
        largest=largest,
        owned_listed=sum(owned.values()),
    )


def check(counts: Expansion, budget: Budget) -> None:
    """A BudgetError when the counted pods or objects are over the budget."""
    if counts.pods > budget.max_pods:
        raise BudgetError(
            f"{_pods_source(counts)} would create {counts.pods:,} pods, over the budget of {budget.max_pods:,} "
            f"(--max-pods){_largest(counts)}; raise it with --max-pods N"
        )
    if counts.objects > budget.max_objects:
        raise BudgetError(
            f"the input would hold {counts.objects:,} objects ({counts.read:,} read, "
            f"{counts.objects - counts.read:,} made by workloads), over the budget of {budget.max_objects:,} "
            "(--max-objects); raise it with --max-objects N"
        )


def _pods_source(counts: Expansion) -> str:
    workloads = f"{counts.workloads:,} workload{'s' if counts.workloads != 1 else ''}"
    if not counts.listed_pods:
        return workloads
    pods = f"{counts.listed_pods:,} pod{'s' if counts.listed_pods != 1 else ''}"
    return f"{pods} and {workloads}" if counts.workloads else pods


def _largest(counts: Expansion) -> str:
    name, pods = counts.largest
    return f"; the largest, {name}, has {pods:,}" if name and counts.workloads > 1 else ""


def check_objects_read(count: int, budget: Budget, where: Callable[[], str]) -> None:
    """Objects are counted as they are read, so that a file of millions stops at the first one over;
    `where` names the object, asked only then."""
    if count > budget.max_objects:
        raise BudgetError(
            f"{where()}: more than {budget.max_objects:,} objects in the input, over the budget (--max-objects); "
            "raise it with --max-objects N"
        )
