"""PodInfo and the parsed forms of a pod's scheduling constraints (framework/types.go).

A pod manifest is parsed once, when it enters the scheduler, so that plugins on the
hot path read ready-made tuples instead of walking nested dicts.
"""

from __future__ import annotations

import operator
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, fields
from typing import Any

from kubesched.api.errors import FieldError
from kubesched.api.quantity import QuantityError
from kubesched.api.resources import Resources, calculate_resource, parse_resource_list
from kubesched.api.selectors import (
    LabelSelector,
    NodeSelector,
    NodeSelectorTerm,
    Requirement,
    SelectorError,
    parse_label_selector,
    parse_node_selector,
    parse_node_selector_term,
    validate_node_selector_terms,
)
from kubesched.api.taints import HostPort, Toleration, container_host_ports, parse_tolerations
from kubesched.framework.status import Code, Status

DEFAULT_SCHEDULER_NAME = "default-scheduler"
NO_NODE_AVAILABLE_MSG = "0/{} nodes are available"


@dataclass(frozen=True, slots=True)
class AffinityTerm:
    """A pod (anti-)affinity term with its namespaces resolved as upstream's newAffinityTerm."""

    namespaces: frozenset[str]
    selector: LabelSelector
    topology_key: str
    namespace_selector: LabelSelector

    def matches(self, pod: PodInfo, ns_labels: Mapping[str, str] | None) -> bool:
        """Whether `pod` is selected: its namespace is listed or picked by the selector, and labels match."""
        if pod.namespace in self.namespaces or self.namespace_selector.matches(ns_labels or {}):
            return self.selector.matches(pod.labels)
        return False


@dataclass(frozen=True, slots=True)
class WeightedAffinityTerm:
    term: AffinityTerm
    weight: int


@dataclass(frozen=True, slots=True)
class TopologySpreadConstraint:
    max_skew: int
    topology_key: str
    when_unsatisfiable: str
    selector: LabelSelector
    min_domains: int
    node_affinity_policy: str
    node_taints_policy: str


NOT_STARTED = "9999-12-31T23:59:59Z"


@dataclass(slots=True, eq=False)
class PodInfo:
    """A pod as the scheduler sees it: the raw object plus its parsed constraints."""

    obj: dict[str, Any]
    name: str
    namespace: str
    uid: str
    labels: dict[str, str]
    priority: int
    scheduler_name: str
    node_name: str
    requests: Resources
    non_zero_cpu: int
    non_zero_mem: int
    tolerations: tuple[Toleration, ...]
    host_ports: tuple[HostPort, ...]
    node_selector: dict[str, str]
    required_node_affinity: NodeSelector | None
    preferred_node_affinity: tuple[tuple[int, NodeSelectorTerm], ...]
    required_affinity_terms: tuple[AffinityTerm, ...]
    required_anti_affinity_terms: tuple[AffinityTerm, ...]
    preferred_affinity_terms: tuple[WeightedAffinityTerm, ...]
    preferred_anti_affinity_terms: tuple[WeightedAffinityTerm, ...]
    topology_spread_constraints: tuple[TopologySpreadConstraint, ...]
    scheduling_gates: tuple[str, ...]
    images: tuple[str, ...]
    deleting: bool
    preemption_policy: str
    controller: tuple[str, str, str] | None = None  # (apiVersion, kind, name) of the controlling owner

    @property
    def key(self) -> str:
        return f"{self.namespace}/{self.name}"

    @property
    def has_affinity(self) -> bool:
        return bool(
            self.required_affinity_terms
            or self.required_anti_affinity_terms
            or self.preferred_affinity_terms
            or self.preferred_anti_affinity_terms
        )

    @property
    def nominated_node_name(self) -> str:
        return str((self.obj.get("status") or {}).get("nominatedNodeName") or "")

    @property
    def start_time(self) -> str:
        """status.startTime as RFC 3339 text, which compares in time order; a pod not started yet counts as now."""
        return str((self.obj.get("status") or {}).get("startTime") or NOT_STARTED)

    def __repr__(self) -> str:
        return f"PodInfo(key={self.key!r}, node={self.node_name!r})"

    def rebound(
        self, node_name: str, obj: dict[str, Any] | None = None, labels: dict[str, str] | None = None
    ) -> PodInfo:
        """This parse on `node_name` (with the new object and labels, if given); every other field shared.

        dataclasses.replace does the same but looks every field up by name, once or twice a pod per cycle.
        """
        new = PodInfo(*_ALL_FIELDS(self))
        new.node_name = node_name
        if obj is not None:
            new.obj = obj
        if labels is not None:
            new.labels = labels
        return new


# Every field in declaration order, which is the order PodInfo() takes them.
_ALL_FIELDS = operator.attrgetter(*(f.name for f in fields(PodInfo)))


def _merge_label_keys(raw_term: Mapping[str, Any], labels: Mapping[str, str], selector: LabelSelector) -> LabelSelector:
    """matchLabelKeys/mismatchLabelKeys (beta, on in 1.34): the API server folds them into the selector."""
    extra: list[Requirement] = []
    for k in raw_term.get("matchLabelKeys") or ():
        if k in labels:
            extra.append(Requirement(k, "In", frozenset([labels[k]])))
    for k in raw_term.get("mismatchLabelKeys") or ():
        if k in labels:
            extra.append(Requirement(k, "NotIn", frozenset([labels[k]])))
    if not extra or selector.requirements is None:
        return selector
    return LabelSelector(tuple(sorted(selector.requirements + tuple(extra), key=lambda r: r.key)))


# Equal terms share one object: pods made from one template then carry the same term, and a
# scheduling cycle can match it once (by identity) instead of once per pod. Bounded, oldest
# out first, so per-pod terms (matchLabelKeys) cannot pile up; a term evicted while in use
# only means two objects for equal terms, each matched on its own.
_TERMS: dict[AffinityTerm, AffinityTerm] = {}
MAX_INTERNED_TERMS = 4096


def _affinity_term(raw: Mapping[str, Any], namespace: str, labels: Mapping[str, str], path: str) -> AffinityTerm:
    try:
        selector = parse_label_selector(raw.get("labelSelector"))
        ns_raw = raw.get("namespaceSelector")
        ns_selector = parse_label_selector(ns_raw)
    except SelectorError as err:
        raise FieldError(path, str(err)) from err
    selector = _merge_label_keys(raw, labels, selector)
    namespaces = frozenset(str(n) for n in raw.get("namespaces") or ())
    if not namespaces and ns_raw is None:
        namespaces = frozenset([namespace])
    term = AffinityTerm(namespaces, selector, str(raw.get("topologyKey") or ""), ns_selector)
    shared = _TERMS.get(term)
    if shared is None:
        if len(_TERMS) >= MAX_INTERNED_TERMS:
            del _TERMS[next(iter(_TERMS))]
        shared = _TERMS[term] = term
    return shared


def _weighted_terms(
    raw: list[Mapping[str, Any]] | None, namespace: str, labels: Mapping[str, str], path: str
) -> tuple[WeightedAffinityTerm, ...]:
    out = []
    for i, wt in enumerate(raw or ()):
        term = _affinity_term(wt.get("podAffinityTerm") or {}, namespace, labels, f"{path}[{i}].podAffinityTerm")
        out.append(WeightedAffinityTerm(term, int(wt.get("weight") or 0)))
    return tuple(out)


def parse_spread_constraints(
    raw: list[Mapping[str, Any]] | None, labels: Mapping[str, str], path: str
) -> tuple[TopologySpreadConstraint, ...]:
    out = []
    for i, c in enumerate(raw or ()):
        p = f"{path}[{i}]"
        try:
            selector = parse_label_selector(c.get("labelSelector"))
        except SelectorError as err:
            raise FieldError(f"{p}.labelSelector", str(err)) from err
        selector = _merge_label_keys(c, labels, selector)
        when = str(c.get("whenUnsatisfiable") or "DoNotSchedule")
        if when not in ("DoNotSchedule", "ScheduleAnyway"):
            raise FieldError(f"{p}.whenUnsatisfiable", f'unsupported value "{when}"')
        max_skew = int(c.get("maxSkew") or 0)
        if max_skew <= 0:
            raise FieldError(f"{p}.maxSkew", f"must be greater than zero, got {max_skew}")
        out.append(
            TopologySpreadConstraint(
                max_skew=max_skew,
                topology_key=str(c.get("topologyKey") or ""),
                when_unsatisfiable=when,
                selector=selector,
                min_domains=int(c.get("minDomains") or 1),
                node_affinity_policy=str(c.get("nodeAffinityPolicy") or "Honor"),
                node_taints_policy=str(c.get("nodeTaintsPolicy") or "Ignore"),
            )
        )
    return tuple(out)


def pod_labels(pod: dict[str, Any]) -> dict[str, str]:
    """metadata.labels as PodInfo holds them."""
    return {str(k): str(v) for k, v in ((pod.get("metadata") or {}).get("labels") or {}).items()}


def pod_own_fields(pod: dict[str, Any]) -> dict[str, Any]:
    """The PodInfo fields read from metadata alone (name, namespace, uid, labels, deleting, controller):
    the replicas of one template differ in nothing else."""
    meta = pod.get("metadata") or {}
    namespace = str(meta.get("namespace") or "default")
    return {
        "name": str(meta.get("name") or ""),
        "namespace": namespace,
        "uid": str(meta.get("uid") or f"{namespace}/{meta.get('name')}"),
        "labels": pod_labels(pod),
        "deleting": bool(meta.get("deletionTimestamp")),
        "controller": next(
            (
                (str(o.get("apiVersion", "")), str(o.get("kind", "")), str(o.get("name", "")))
                for o in meta.get("ownerReferences") or ()
                if o.get("controller")
            ),
            None,
        ),
    }


def new_pod_info(pod: dict[str, Any]) -> PodInfo:
    """Parse a Pod manifest; raises FieldError naming the offending field."""
    spec = pod.get("spec") or {}
    own = pod_own_fields(pod)
    namespace, labels = own["namespace"], own["labels"]
    try:
        requests, non_zero_cpu, non_zero_mem = calculate_resource(pod)
    except QuantityError as err:
        raise FieldError(_find_bad_quantity(spec), str(err)) from err
    affinity = spec.get("affinity") or {}
    node_aff = affinity.get("nodeAffinity") or {}
    required = node_aff.get("requiredDuringSchedulingIgnoredDuringExecution")
    required_sel = None
    if required is not None:
        try:
            validate_node_selector_terms(required.get("nodeSelectorTerms") or [])
        except SelectorError as err:
            raise FieldError(
                "spec.affinity.nodeAffinity.requiredDuringSchedulingIgnoredDuringExecution", str(err)
            ) from err
        required_sel = parse_node_selector(required)
    preferred = tuple(
        (int(p.get("weight") or 0), parse_node_selector_term(p.get("preference") or {}))
        for p in node_aff.get("preferredDuringSchedulingIgnoredDuringExecution") or ()
    )
    pa = affinity.get("podAffinity") or {}
    paa = affinity.get("podAntiAffinity") or {}
    req_key = "requiredDuringSchedulingIgnoredDuringExecution"
    pref_key = "preferredDuringSchedulingIgnoredDuringExecution"
    images = tuple(
        str(c.get("image") or "") for g in ("initContainers", "containers") for c in spec.get(g) or () if c.get("image")
    )
    return PodInfo(
        obj=pod,
        **own,
        priority=int(spec.get("priority") or 0),
        scheduler_name=str(spec.get("schedulerName") or DEFAULT_SCHEDULER_NAME),
        node_name=str(spec.get("nodeName") or ""),
        requests=requests,
        non_zero_cpu=non_zero_cpu,
        non_zero_mem=non_zero_mem,
        tolerations=parse_tolerations(spec.get("tolerations")),
        host_ports=container_host_ports(spec),
        node_selector={str(k): str(v) for k, v in (spec.get("nodeSelector") or {}).items()},
        required_node_affinity=required_sel,
        preferred_node_affinity=preferred,
        required_affinity_terms=tuple(
            _affinity_term(t, namespace, labels, f"spec.affinity.podAffinity.{req_key}[{i}]")
            for i, t in enumerate(pa.get(req_key) or ())
        ),
        required_anti_affinity_terms=tuple(
            _affinity_term(t, namespace, labels, f"spec.affinity.podAntiAffinity.{req_key}[{i}]")
            for i, t in enumerate(paa.get(req_key) or ())
        ),
        preferred_affinity_terms=_weighted_terms(
            pa.get(pref_key), namespace, labels, f"spec.affinity.podAffinity.{pref_key}"
        ),
        preferred_anti_affinity_terms=_weighted_terms(
            paa.get(pref_key), namespace, labels, f"spec.affinity.podAntiAffinity.{pref_key}"
        ),
        topology_spread_constraints=parse_spread_constraints(
            spec.get("topologySpreadConstraints"), labels, "spec.topologySpreadConstraints"
        ),
        scheduling_gates=tuple(str(g.get("name", "")) for g in spec.get("schedulingGates") or ()),
        images=images,
        preemption_policy=str(spec.get("preemptionPolicy") or "PreemptLowerPriority"),
    )


def _find_bad_quantity(spec: Mapping[str, Any]) -> str:
    for group in ("containers", "initContainers"):
        for i, c in enumerate(spec.get(group) or ()):
            for kind in ("requests", "limits"):
                raw = (c.get("resources") or {}).get(kind) or {}
                for name, q in raw.items():
                    try:
                        parse_resource_list({name: q})
                    except QuantityError:
                        return f"spec.{group}[{i}].resources.{kind}.{name}"
    for p in ("overhead",):
        if spec.get(p):
            return f"spec.{p}"
    return "spec.resources.requests"


# Results of a scheduling attempt, shared by the cycle, preemption and extenders (types.go).


class NodeToStatus(dict[str, "Status"]):
    """Statuses of the nodes a cycle rejected; nodes not listed share `absent_nodes_status`.

    The default for absent nodes is UnschedulableAndUnresolvable (preemption cannot help
    there); a PreFilter rejection sets it to its own status for every node.
    """

    def __init__(self, statuses: Mapping[str, Status] | None = None, absent: Status | None = None) -> None:
        super().__init__(statuses or {})
        self.absent_nodes_status = absent if absent is not None else Status(Code.UNSCHEDULABLE_AND_UNRESOLVABLE)

    def get_status(self, node: str) -> Status:
        return self.get(node, self.absent_nodes_status)


@dataclass(slots=True)
class Diagnosis:
    node_to_status: dict[str, Status] = field(default_factory=dict)
    absent_nodes_status: Status | None = None
    unschedulable_plugins: set[str] = field(default_factory=set)
    pending_plugins: set[str] = field(default_factory=set)
    pre_filter_msg: str = ""
    post_filter_msg: str = ""
    evaluated_rejected: int = 0  # rejected nodes examined, whether or not their statuses were worked out

    def node_to_status_map(self) -> NodeToStatus:
        return NodeToStatus(self.node_to_status, self.absent_nodes_status)


class FitError(Exception):
    """No node fits; the message is upstream's `0/N nodes are available: ...` text."""

    def __init__(self, pod: PodInfo, num_all_nodes: int, diagnosis: Diagnosis) -> None:
        super().__init__()
        self.pod = pod
        self.num_all_nodes = num_all_nodes
        self.diagnosis = diagnosis

    def __str__(self) -> str:
        return self.message(self.reason_counts())

    def message(self, reasons: dict[str, int]) -> str:
        """The message, over this error's reason_counts() taken once by a caller that wants both."""
        d = self.diagnosis
        msg = NO_NODE_AVAILABLE_MSG.format(self.num_all_nodes) + ":"
        if d.pre_filter_msg:
            msg += f" {d.pre_filter_msg}."
        else:
            histogram = sorted(f"{n} {r}" for r, n in reasons.items())
            if histogram:
                msg += f" {', '.join(histogram)}."
        if d.post_filter_msg:
            msg += f" {d.post_filter_msg}"
        return msg

    def reason_counts(self) -> dict[str, int]:
        """How many nodes gave each reason (the message's histogram; PreFilter's message for every node)."""
        d = self.diagnosis
        if d.pre_filter_msg:
            return {d.pre_filter_msg: self.num_all_nodes}
        reasons: dict[str, int] = {}
        for s in d.node_to_status.values():
            for r in s.reasons:
                reasons[r] = reasons.get(r, 0) + 1
        absent = self.num_all_nodes - len(d.node_to_status)
        if absent > 0 and d.absent_nodes_status is not None:
            for r in d.absent_nodes_status.reasons:
                reasons[r] = reasons.get(r, 0) + absent
        return reasons


class NoNodesAvailable(Exception):
    pass


@dataclass(slots=True)
class AttemptRecord:
    """What the simulator reports about one attempt, per node and plugin.

    A scores-only record (`scores_only`, for the HTML report's figures) works out no node's filter
    outcome, so filtering keeps its vectorised path, and keeps the final scores as they were computed,
    one column a plugin over `scored_nodes` (`final_columns`), instead of one dict a node, and does not
    even read the nodes' names: a small fraction of a full record's cost.
    """

    filter: dict[str, dict[str, str]] = field(default_factory=dict)
    score: dict[str, dict[str, int]] = field(default_factory=dict)
    normalized_score: dict[str, dict[str, int]] = field(default_factory=dict)
    final_score: dict[str, dict[str, int]] = field(default_factory=dict)
    scores_only: bool = False
    scored_nodes: Sequence[Any] = ()  # the NodeInfos scored, in the columns' order
    final_columns: dict[str, Any] = field(default_factory=dict)  # plugin -> weighted scores (numpy int64)
