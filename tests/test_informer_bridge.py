"""The informer bridge reuses a pod's parsed constraints across a binding, and only then."""

from __future__ import annotations

import copy
import dataclasses
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from kubesched.event_handlers import _reparse_pod
from kubesched.framework.types import PodInfo, new_pod_info

POD: dict[str, Any] = {
    "kind": "Pod",
    "metadata": {"name": "p", "namespace": "default", "uid": "u1", "labels": {"app": "web"}},
    "spec": {"containers": [{"name": "c", "resources": {"requests": {"cpu": "1"}}}], "tolerations": []},
}


def test_a_binding_from_the_api_reuses_the_parse() -> None:
    prev = new_pod_info(POD)
    bound = copy.deepcopy(POD)  # a real API server sends a fresh object
    bound["spec"]["nodeName"] = "n1"
    bound["status"] = {"conditions": [{"type": "PodScheduled", "status": "True"}]}
    info = _reparse_pod(prev, bound)
    assert info.node_name == "n1" and info.obj is bound
    assert info.requests is prev.requests  # not parsed again


def test_metadata_the_parse_holds_forces_a_new_parse() -> None:
    prev = new_pod_info({**POD, "spec": {**POD["spec"], "nodeName": "n1"}})
    deleting = copy.deepcopy(prev.obj)
    deleting["metadata"]["deletionTimestamp"] = "2026-01-01T00:00:00Z"
    assert _reparse_pod(prev, deleting).deleting
    recreated = copy.deepcopy(prev.obj)
    recreated["metadata"]["uid"] = "u2"
    assert _reparse_pod(prev, recreated).uid == "u2"
    relabelled = copy.deepcopy(prev.obj)
    relabelled["metadata"]["labels"] = {"app": "db"}
    assert _reparse_pod(prev, relabelled).labels == {"app": "db"}


def _fields(info: PodInfo) -> dict[str, object]:
    return {f.name: getattr(info, f.name) for f in dataclasses.fields(info) if f.name != "obj"}


_KEYS = st.sampled_from(["app", "tier", "topology.kubernetes.io/zone", "pod-template-hash"])
_LABELS = st.dictionaries(_KEYS, st.sampled_from(["a", "b", "zone-a"]), max_size=3)


@st.composite
def _term(draw: st.DrawFn) -> dict[str, object]:
    term: dict[str, object] = {"labelSelector": {"matchLabels": {"app": "a"}}, "topologyKey": "kubernetes.io/hostname"}
    for field in ("matchLabelKeys", "mismatchLabelKeys"):
        if draw(st.booleans()):
            term[field] = draw(st.lists(_KEYS, max_size=2, unique=True))
    return term


@settings(max_examples=200, deadline=None)
@given(
    labels=_LABELS,
    added=_LABELS,
    spread=st.lists(_term(), max_size=2),
    required=st.lists(_term(), max_size=1),
    preferred=st.lists(_term(), max_size=1),
)
def test_a_binding_that_adds_labels_parses_as_a_new_parse(
    labels: dict[str, str],
    added: dict[str, str],
    spread: list[dict[str, object]],
    required: list[dict[str, object]],
    preferred: list[dict[str, object]],
) -> None:
    """PodTopologyLabels admission adds the node's zone at binding: the reused parse equals a fresh one."""
    spec: dict[str, object] = {
        "containers": [{"name": "c", "resources": {"requests": {"cpu": "1"}}}],
        "topologySpreadConstraints": [
            {**t, "maxSkew": 1, "whenUnsatisfiable": "DoNotSchedule", "topologyKey": "zone"} for t in spread
        ],
        "affinity": {
            "podAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": required},
            "podAntiAffinity": {
                "preferredDuringSchedulingIgnoredDuringExecution": [
                    {"weight": 1, "podAffinityTerm": t} for t in preferred
                ]
            },
        },
    }
    pod: dict[str, Any] = {
        "kind": "Pod",
        "metadata": {"name": "p", "namespace": "ns", "uid": "u", "labels": labels},
        "spec": spec,
    }
    prev = new_pod_info(pod)
    bound = {**pod, "metadata": {**pod["metadata"], "labels": {**labels, **added}}, "spec": {**spec, "nodeName": "n"}}
    assert _fields(_reparse_pod(prev, bound)) == _fields(new_pod_info(copy.deepcopy(bound)))


_SPEC_EDITS = st.sampled_from(["none", "priority", "add toleration", "drop tolerations", "node selector", "unbind"])


@settings(max_examples=100, deadline=None)
@given(edit=_SPEC_EDITS, was_bound=st.booleans(), fresh=st.booleans())
def test_any_other_spec_change_parses_as_a_new_parse(edit: str, was_bound: bool, fresh: bool) -> None:
    """The reused parse equals a fresh one whatever else changed in the spec besides nodeName, whether the
    update shares the spec's values (the embedded cluster) or brings fresh copies (an API server)."""
    spec: dict[str, Any] = dict(POD["spec"], **({"nodeName": "n0"} if was_bound else {}))
    prev = new_pod_info({**POD, "spec": spec})
    new_spec = copy.deepcopy(spec) if fresh else dict(spec)
    new_spec["nodeName"] = "n1"
    if edit == "priority":
        new_spec["priority"] = 7
    elif edit == "add toleration":
        new_spec["tolerations"] = [{"key": "k", "operator": "Exists"}]
    elif edit == "drop tolerations":
        del new_spec["tolerations"]
    elif edit == "node selector":
        new_spec["nodeSelector"] = {"zone": "a"}
    elif edit == "unbind":
        del new_spec["nodeName"]
    bound = {**POD, "spec": new_spec}
    info = _reparse_pod(prev, bound)
    assert _fields(info) == _fields(new_pod_info(copy.deepcopy(bound)))
    assert (info.requests is prev.requests) == (edit == "none")
