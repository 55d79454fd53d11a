"""What every controller shares (upstream's pkg/controller/controller_utils.go, and the API server's name generator).

- Pods from a template (GetPodFromTemplate): the template's labels, annotations,
  finalizers and spec, `generateName: <owner>-`, and the owner as controller
  (`controller: true`, `blockOwnerDeletion: true`).
- Names for `generateName`: the prefix cut to 58 characters and five random
  characters from "bcdfghjklmnpqrstvwxz2456789", drawn from the simulation's seeded
  random generator so that a `--seed` repeats them.
- Template hashes (pod-template-hash, controller-revision-hash) in the same alphabet:
  FNV-1a over the template's canonical JSON. Upstream hashes Go's printed structs,
  which cannot be reproduced here, so the values differ from a real cluster's.
- Which pods a controller owns, adopts and releases (ControllerRefManager), and in
  what order it deletes the surplus (ActivePodsWithRanks, ActivePods).
"""

from __future__ import annotations

import copy
import json
import math
import random
import uuid
from collections import deque
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from functools import cmp_to_key
from typing import Any

from kubesched.api.object import Obj, ObjView
from kubesched.api.selectors import LabelSelector, SelectorError, parse_label_selector, selector_from_set
from kubesched.apiserver.schema import KINDS as API_VERSIONS

ALPHANUMS = "bcdfghjklmnpqrstvwxz2456789"
MAX_NAME_LENGTH = 63
RANDOM_LENGTH = 5
MAX_GENERATED_NAME_LENGTH = MAX_NAME_LENGTH - RANDOM_LENGTH
DNS1123_SUBDOMAIN_MAX_LENGTH = 253
POD_DELETION_COST = "controller.kubernetes.io/pod-deletion-cost"
_PHASE_ORDINAL = {"Pending": 0, "Unknown": 1, "Running": 2}
_FNV_OFFSET, _FNV_PRIME = 0x811C9DC5, 0x01000193


@dataclass(slots=True)
class Plan:
    """What one sync of a controller wants done: objects to create, update and delete, in that order."""

    create: list[Obj] = field(default_factory=list)
    update: list[Obj] = field(default_factory=list)
    delete: list[ObjView] = field(default_factory=list)

    def __bool__(self) -> bool:
        return bool(self.create or self.update or self.delete)


class NameGenerator:
    """The API server's generateName: `base[:58]` plus five random characters, from a seeded generator."""

    def __init__(self, rng: random.Random) -> None:
        self.rng = rng

    def generate(self, base: str) -> str:
        return base[:MAX_GENERATED_NAME_LENGTH] + "".join(self.rng.choice(ALPHANUMS) for _ in range(RANDOM_LENGTH))

    def uid(self) -> str:
        """A fresh object uid, as the API server gives one on create."""
        return str(uuid.UUID(int=self.rng.getrandbits(128), version=4))


def safe_encode_string(text: str) -> str:
    """Each character mapped into the name alphabet, as apimachinery's rand.SafeEncodeString does."""
    return "".join(ALPHANUMS[ord(c) % len(ALPHANUMS)] for c in text)


def fnv32a(data: bytes) -> int:
    h = _FNV_OFFSET
    for b in data:
        h = ((h ^ b) * _FNV_PRIME) & 0xFFFFFFFF
    return h


def compute_hash(template: Any, collision_count: int | None = None) -> str:
    """A template's hash in upstream's alphabet and length: FNV-1a of its canonical JSON, printed in decimal."""
    data = json.dumps(template, sort_keys=True, separators=(",", ":"), ensure_ascii=False).encode()
    if collision_count is not None:
        data += (collision_count & 0xFFFFFFFF).to_bytes(4, "little") + b"\0\0\0\0"
    return safe_encode_string(str(fnv32a(data)))


def meta(obj: ObjView) -> Mapping[str, Any]:
    m = obj.get("metadata")
    return m if m.__class__ is dict or isinstance(m, Mapping) else {}  # dict first: no ABC check per event


def spec(obj: ObjView) -> Mapping[str, Any]:
    s = obj.get("spec")
    return s if s.__class__ is dict or isinstance(s, Mapping) else {}


def name_of(obj: ObjView) -> str:
    return str(meta(obj).get("name") or "")


def namespace_of(obj: ObjView) -> str:
    return str(meta(obj).get("namespace") or "default")


def uid_of(obj: ObjView) -> str:
    return str(meta(obj).get("uid") or "")


def labels_of(obj: ObjView) -> dict[str, str]:
    return {str(k): str(v) for k, v in (meta(obj).get("labels") or {}).items()}


def is_being_deleted(obj: ObjView) -> bool:
    return bool(meta(obj).get("deletionTimestamp"))


def api_version(kind: str) -> str:
    return API_VERSIONS.get(kind, "v1")


def controller_ref(owner: ObjView) -> Obj:
    """metav1.NewControllerRef: the owner as the one controller, blocking its deletion until the dependent is gone."""
    kind = str(owner.get("kind"))
    return {
        "apiVersion": api_version(kind),
        "kind": kind,
        "name": name_of(owner),
        "uid": uid_of(owner),
        "controller": True,
        "blockOwnerDeletion": True,
    }


def controller_of(obj: ObjView) -> Mapping[str, Any] | None:
    """metav1.GetControllerOf: the owner reference with `controller: true`, if any."""
    for ref in meta(obj).get("ownerReferences") or ():
        if (ref.__class__ is dict or isinstance(ref, Mapping)) and ref.get("controller") is True:
            return ref
    return None


def refers_to(ref: Mapping[str, Any], owner: ObjView) -> bool:
    """The reference names the owner: same kind and name, and the same uid when both carry one."""
    if ref.get("kind") != owner.get("kind") or ref.get("name") != name_of(owner):
        return False
    ref_uid, owner_uid = str(ref.get("uid") or ""), uid_of(owner)
    return not ref_uid or not owner_uid or ref_uid == owner_uid


def is_controlled_by(obj: ObjView, owner: ObjView) -> bool:
    ref = controller_of(obj)
    return ref is not None and refers_to(ref, owner)


def label_selector(owner: ObjView) -> LabelSelector | None:
    """The owner's pod selector (a map for ReplicationControllers), or None when it has none or cannot be parsed."""
    raw = spec(owner).get("selector")
    try:
        if owner.get("kind") == "ReplicationController":
            return selector_from_set({str(k): str(v) for k, v in raw.items()}) if isinstance(raw, Mapping) else None
        return parse_label_selector(raw) if isinstance(raw, Mapping) else None
    except SelectorError:
        return None


def template_of(owner: ObjView) -> Mapping[str, Any] | None:
    template = spec(owner).get("template")
    return template if isinstance(template, Mapping) else None


def pods_prefix(controller_name: str) -> str:
    """`<name>-` when that is a valid generateName (it is unless the name is already at the length limit)."""
    prefix = controller_name + "-"
    return prefix if len(prefix) <= DNS1123_SUBDOMAIN_MAX_LENGTH else controller_name


def pod_from_template(template: Mapping[str, Any], owner: ObjView, generate_name: str = "") -> Obj:
    """GetPodFromTemplate, with the owner as controller; the name comes from generateName at creation."""
    tmeta = meta(template)
    pod_meta: Obj = {
        "namespace": namespace_of(owner),
        "generateName": generate_name or pods_prefix(name_of(owner)),
        "labels": dict(tmeta.get("labels") or {}),
        "ownerReferences": [controller_ref(owner)],
    }
    if tmeta.get("annotations"):
        pod_meta["annotations"] = dict(tmeta["annotations"])
    if tmeta.get("finalizers"):
        pod_meta["finalizers"] = list(tmeta["finalizers"])
    return {"apiVersion": "v1", "kind": "Pod", "metadata": pod_meta, "spec": copy.deepcopy(dict(spec(template)))}


def is_pod_active(pod: ObjView) -> bool:
    """Neither finished nor being deleted (controller.IsPodActive)."""
    phase = (pod.get("status") or {}).get("phase")
    return phase not in ("Succeeded", "Failed") and not is_being_deleted(pod)


def is_pod_ready(pod: ObjView) -> bool:
    """The Ready condition; a Running pod nobody reported readiness for counts as ready, as no kubelet runs here."""
    status = pod.get("status") or {}
    for c in status.get("conditions") or ():
        if isinstance(c, Mapping) and c.get("type") == "Ready":
            return c.get("status") == "True"
    return status.get("phase") == "Running"


def is_running_and_ready(pod: ObjView) -> bool:
    return (pod.get("status") or {}).get("phase") == "Running" and is_pod_ready(pod)


@dataclass(slots=True)
class Claim:
    """ClaimPods' answer: the pods the controller owns now, and those to adopt or release first."""

    owned: list[ObjView] = field(default_factory=list)
    adopt: list[ObjView] = field(default_factory=list)
    release: list[ObjView] = field(default_factory=list)


def claim(owner: ObjView, selector: LabelSelector, candidates: Iterable[ObjView]) -> Claim:
    """ControllerRefManager.ClaimObjects: keep what it controls and matches, adopt matching orphans, release the rest.

    Orphans are adopted only when neither they nor the owner are being deleted.
    """
    out = Claim()
    for obj in candidates:
        ref = controller_of(obj)
        matches = selector.matches(labels_of(obj))
        if ref is not None:
            if not refers_to(ref, owner):
                continue
            if matches:
                out.owned.append(obj)
            elif not is_being_deleted(obj):
                out.release.append(obj)
            continue
        if matches and not is_being_deleted(obj) and not is_being_deleted(owner):
            out.adopt.append(obj)
            out.owned.append(obj)
    return out


def adopted(obj: ObjView, owner: ObjView) -> Obj:
    """A copy of `obj` with the owner added as its controller."""
    out = copy.copy(dict(obj))
    out["metadata"] = dict(meta(obj))
    out["metadata"]["ownerReferences"] = [*(meta(obj).get("ownerReferences") or ()), controller_ref(owner)]
    return out


def released(obj: ObjView, owner: ObjView) -> Obj:
    """A copy of `obj` without its owner references to `owner`."""
    out = copy.copy(dict(obj))
    out["metadata"] = dict(meta(obj))
    refs = [r for r in meta(obj).get("ownerReferences") or () if not (isinstance(r, Mapping) and refers_to(r, owner))]
    if refs:
        out["metadata"]["ownerReferences"] = refs
    else:
        out["metadata"].pop("ownerReferences", None)
    return out


def parse_time(value: Any) -> datetime | None:
    if not isinstance(value, str) or not value:
        return None
    try:
        return datetime.fromisoformat(value.replace("Z", "+00:00").replace("z", "+00:00"))
    except ValueError:
        return None


def _creation(pod: ObjView) -> datetime | None:
    return parse_time(meta(pod).get("creationTimestamp"))


def _ready_time(pod: ObjView) -> datetime | None:
    for c in (pod.get("status") or {}).get("conditions") or ():
        if isinstance(c, Mapping) and c.get("type") == "Ready" and c.get("status") == "True":
            return parse_time(c.get("lastTransitionTime"))
    return None


def _deletion_cost(pod: ObjView) -> int:
    raw = (meta(pod).get("annotations") or {}).get(POD_DELETION_COST)
    try:
        return int(str(raw)) if raw is not None else 0
    except ValueError:
        return 0


def _restarts(pod: ObjView) -> tuple[int, int]:
    status = pod.get("status") or {}
    regular = max((int(c.get("restartCount") or 0) for c in status.get("containerStatuses") or ()), default=0)
    sidecars = {
        c.get("name")
        for c in spec(pod).get("initContainers") or ()
        if isinstance(c, Mapping) and c.get("restartPolicy") == "Always"
    }
    init = status.get("initContainerStatuses") or ()
    sidecar = max((int(c.get("restartCount") or 0) for c in init if c.get("name") in sidecars), default=0)
    return regular, sidecar


def _after_or_zero(t1: datetime | None, t2: datetime | None) -> bool:
    if t1 is None or t2 is None:
        return t1 is None
    return t1 > t2


def _log_rank(t: datetime, now: datetime) -> int:
    d = (now - t).total_seconds() * 1e9  # Go compares durations in nanoseconds
    return int(math.log2(d)) if d > 0 else -1


def _compare_for_deletion(a: ObjView, b: ObjView, rank_a: int, rank_b: int, now: datetime | None, ranked: bool) -> int:
    """Negative when `a` should be deleted before `b` (ActivePodsWithRanks.Less when ranked, else ActivePods.Less)."""
    node_a, node_b = spec(a).get("nodeName") or "", spec(b).get("nodeName") or ""
    if node_a != node_b and (not node_a or not node_b):
        return -1 if not node_a else 1
    phase_a = _PHASE_ORDINAL.get((a.get("status") or {}).get("phase") or "", 0)
    phase_b = _PHASE_ORDINAL.get((b.get("status") or {}).get("phase") or "", 0)
    if phase_a != phase_b:
        return -1 if phase_a < phase_b else 1
    ready_a, ready_b = is_pod_ready(a), is_pod_ready(b)
    if ready_a != ready_b:
        return -1 if not ready_a else 1
    if ranked:
        cost_a, cost_b = _deletion_cost(a), _deletion_cost(b)
        if cost_a != cost_b:
            return -1 if cost_a < cost_b else 1
        if rank_a != rank_b:
            return -1 if rank_a > rank_b else 1
    if ready_a and ready_b:
        ta, tb = _ready_time(a), _ready_time(b)
        if ta != tb:
            return _newer_first(a, b, ta, tb, now if ranked else None)
    restarts_a, restarts_b = _restarts(a), _restarts(b)
    if restarts_a != restarts_b:
        return -1 if restarts_a > restarts_b else 1
    ca, cb = _creation(a), _creation(b)
    if ca != cb:
        return _newer_first(a, b, ca, cb, now if ranked else None)
    return 0


def _newer_first(a: ObjView, b: ObjView, ta: datetime | None, tb: datetime | None, now: datetime | None) -> int:
    """The more recent time first (an unset one before any); with `now`, on a log2 scale, then by uid."""
    if now is None or ta is None or tb is None:
        return -1 if _after_or_zero(ta, tb) else 1
    diff = _log_rank(ta, now) - _log_rank(tb, now)
    if diff == 0:
        return -1 if uid_of(a) < uid_of(b) else (1 if uid_of(a) > uid_of(b) else 0)
    return -1 if diff < 0 else 1


def pods_to_delete(pods: Sequence[ObjView], related: Iterable[ObjView], count: int, now: datetime) -> list[ObjView]:
    """getPodsToDelete: the `count` pods a ReplicaSet deletes first (ranked by co-located related pods).

    Pods the comparison cannot tell apart keep their name order (Go's sort is not stable).
    """
    if count >= len(pods):
        return list(pods)
    on_node: dict[str, int] = {}
    for pod in related:
        if is_pod_active(pod):
            node = str(spec(pod).get("nodeName") or "")
            on_node[node] = on_node.get(node, 0) + 1
    ranks = {id(p): on_node.get(str(spec(p).get("nodeName") or ""), 0) for p in pods}

    def cmp(a: ObjView, b: ObjView) -> int:
        return _compare_for_deletion(a, b, ranks[id(a)], ranks[id(b)], now, True)

    return sorted(sorted(pods, key=name_of), key=cmp_to_key(cmp))[:count]


def active_pods_order(pods: Iterable[ObjView]) -> list[ObjView]:
    """controller.ActivePods order: the pods a Job deletes first come first."""

    def cmp(a: ObjView, b: ObjView) -> int:
        return _compare_for_deletion(a, b, 0, 0, None, False)

    return sorted(sorted(pods, key=name_of), key=cmp_to_key(cmp))


Key = tuple[str, str, str]  # kind, namespace, name


class WorkQueue:
    """A controller's keys waiting for sync, each at most once, synced until none is left.

    A sync that queues more keys (a controller reacting to what it just wrote) does not
    start a second drain: the running one takes them, as a controller's workers would.
    """

    def __init__(self, cluster: Any, sync: Callable[[Obj], None]) -> None:
        self._cluster = cluster
        self._sync = sync
        self._keys: deque[Key] = deque()
        self._queued: set[Key] = set()
        self._draining = False

    def add(self, key: Key, *, first: bool = False) -> None:
        if key in self._queued:
            return
        self._queued.add(key)
        if first:
            self._keys.appendleft(key)
        else:
            self._keys.append(key)

    def drain(self) -> None:
        """Sync every queued key whose object still exists."""
        if self._draining:
            return
        self._draining = True
        try:
            while self._keys:
                key = self._keys.popleft()
                self._queued.discard(key)
                obj = self._cluster.get(*key)
                if obj is not None:
                    self._sync(obj)
        finally:
            self._draining = False


class PodObjectController:
    """What the controllers that make objects for pods share (resourceclaim, ephemeral volume): the cluster,
    their names and admission, a work queue of keys, and one warning per pod, so a pod whose object cannot
    be made is said once rather than at every sync."""

    def __init__(
        self,
        cluster: Any,
        names: NameGenerator,
        *,
        admit: Callable[[Obj], str],
        warn: Callable[[str], None] | None = None,
    ) -> None:
        self.cluster = cluster
        self.names = names
        self.admit = admit
        self.warn = warn
        self.started = False
        self._work = WorkQueue(cluster, self._sync)
        self._warned: set[Key] = set()

    def _sync(self, obj: Obj) -> None:
        raise NotImplementedError

    def _warn_once(self, pod: ObjView, message: str) -> None:
        key = ("Pod", namespace_of(pod), name_of(pod))
        if self.warn is not None and key not in self._warned:
            self._warned.add(key)
            self.warn(f"pod {key[1]}/{key[2]}: {message}")
