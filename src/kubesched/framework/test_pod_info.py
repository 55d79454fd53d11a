"""PodInfo.rebound, the assume and binding copy, equals its plain twin dataclasses.replace."""

from __future__ import annotations

import dataclasses
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from kubesched.framework.types import PodInfo, new_pod_info

_NAMES = st.sampled_from(["", "n1", "node-2"])
_LABELS = st.dictionaries(st.sampled_from(["app", "zone"]), st.sampled_from(["a", "b"]), max_size=2)


@st.composite
def _pods(draw: st.DrawFn) -> dict[str, Any]:
    spec: dict[str, Any] = {
        "containers": [
            {"name": "c", "image": "img", "resources": {"requests": {"cpu": draw(st.sampled_from(["1", "250m"]))}}}
        ],
        "priority": draw(st.integers(0, 100)),
        "nodeSelector": draw(_LABELS),
        "tolerations": [{"key": "k", "operator": "Exists"}] if draw(st.booleans()) else [],
    }
    if draw(st.booleans()):
        spec["nodeName"] = draw(_NAMES)
    meta = {"name": "p", "namespace": "ns", "uid": draw(st.sampled_from(["u1", "u2"])), "labels": draw(_LABELS)}
    return {"kind": "Pod", "metadata": meta, "spec": spec}


def _fields(info: PodInfo) -> dict[str, object]:
    return {f.name: getattr(info, f.name) for f in dataclasses.fields(info)}


@settings(max_examples=100, deadline=None)
@given(pod=_pods(), node=_NAMES, new_obj=st.booleans(), labels=st.none() | _LABELS)
def test_rebound_equals_dataclasses_replace(
    pod: dict[str, Any], node: str, new_obj: bool, labels: dict[str, str] | None
) -> None:
    prev = new_pod_info(pod)
    before = _fields(prev)
    obj = {**pod, "spec": {**pod["spec"], "nodeName": node}} if new_obj else None
    changes: dict[str, Any] = {"node_name": node}
    if obj is not None:
        changes["obj"] = obj
    if labels is not None:
        changes["labels"] = labels
    fast = prev.rebound(node, obj=obj, labels=labels)
    assert fast is not prev
    assert _fields(fast) == _fields(dataclasses.replace(prev, **changes))
    assert _fields(prev) == before  # the original keeps its node
