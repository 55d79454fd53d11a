"""Pieces of pod scheduling signatures that several plugins share (staging kube-scheduler framework/signers.go).

A signature only has to be equal for pods the scheduler treats alike, so every value
here is canonical: lists whose order means nothing are sorted, and structures are
compared as canonical JSON. Values come from the pod as the API server stored it.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from json.encoder import encode_basestring_ascii
from typing import Any, Final

from kubesched.framework.types import PodInfo

# The keys of signature fragments, as upstream names them (one key may come from several plugins).
DYNAMIC_RESOURCES: Final = "v1.Pod.Spec.DynamicResources"
IMAGE_NAMES: Final = "v1.Pod.Spec.CanonicalImageNames()"
LABELS: Final = "v1.Pod.Labels"
NODE_NAME: Final = "v1.Pod.Spec.NodeName"
NODE_AFFINITY: Final = "v1.Pod.Spec.Affinity.NodeAffinity"
NODE_SELECTOR: Final = "v1.Pod.Spec.Affinity.NodeSelector"
HOST_PORTS: Final = "v1.Pod.Spec.HostPorts()"
RESOURCES: Final = "v1.Pod.Spec.ContainerRequestsAndOverheads()"
SCHEDULER_NAME: Final = "v1.Pod.Spec.SchedulerName"
TOLERATIONS: Final = "v1.Pod.Spec.Tolerations"
VOLUMES: Final = "v1.Pod.Spec.Volumes.NonSyntheticSources()"
FEATURES: Final = "v1.Pod.Spec.RequiredFeatures()"


# A string as canonical() writes it (json.dumps escapes to ASCII by default).
_str: Final = encode_basestring_ascii


def canonical(value: Any) -> str:
    """JSON with sorted keys and no spaces: equal values, equal text."""
    return json.dumps(value, sort_keys=True, separators=(",", ":"))


def _spec(pod: PodInfo) -> Mapping[str, Any]:
    return pod.obj.get("spec") or {}


def _containers(pod: PodInfo) -> list[Mapping[str, Any]]:
    spec = _spec(pod)
    return [*(spec.get("containers") or ()), *(spec.get("initContainers") or ())]


def host_ports(pod: PodInfo) -> list[int]:
    """The host ports of every container and init container, once each, in order."""
    return sorted(
        {int(p["hostPort"]) for c in _containers(pod) for p in c.get("ports") or () if p.get("hostPort") or 0}
    )


def image_names(pod: PodInfo, normalize: Any) -> list[str]:
    """The container and init container images, normalized (a missing tag is :latest), once each."""
    return sorted({normalize(c.get("image") or "") for c in _containers(pod)})


def _requirement(r: Mapping[str, Any]) -> str:
    return canonical({**r, "values": sorted(r.get("values") or ())})


_REQUIREMENT_KEYS: Final = frozenset(("key", "operator", "values"))


def _plain_requirement(r: Mapping[str, Any]) -> str:
    """_requirement for the usual requirement, key, operator and string values, written out in canonical
    order without the encoder's pass over a dict: NodeAffinity signs every pod, most with such terms."""
    key, op, values = r.get("key"), r.get("operator"), r.get("values") or ()
    if (
        type(key) is str
        and type(op) is str
        and r.keys() <= _REQUIREMENT_KEYS
        and isinstance(values, list)
        and all(type(v) is str for v in values)
    ):
        return f'{{"key":{_str(key)},"operator":{_str(op)},"values":[{",".join(map(_str, sorted(values)))}]}}'
    return _requirement(r)


def _requirements(reqs: Sequence[Mapping[str, Any]] | None) -> list[str]:
    return sorted(map(_plain_requirement, reqs or ()))


def _term(term: Mapping[str, Any]) -> dict[str, list[str]]:
    return {
        "MatchExpressions": _requirements(term.get("matchExpressions")),
        "MatchFields": _requirements(term.get("matchFields")),
    }


def _term_text(term: Mapping[str, Any]) -> str:
    """canonical(_term(term)), the two lists of strings written out in canonical order."""
    exprs = ",".join(map(_str, _requirements(term.get("matchExpressions"))))
    fields = ",".join(map(_str, _requirements(term.get("matchFields"))))
    return f'{{"MatchExpressions":[{exprs}],"MatchFields":[{fields}]}}'


def node_affinity(pod: PodInfo) -> dict[str, list[str]] | None:
    """Required terms and preferred (weight, term) pairs, each sorted; None when the pod has no nodeAffinity."""
    aff = (_spec(pod).get("affinity") or {}).get("nodeAffinity")
    if aff is None:
        return None
    required = (aff.get("requiredDuringSchedulingIgnoredDuringExecution") or {}).get("nodeSelectorTerms") or ()
    preferred = aff.get("preferredDuringSchedulingIgnoredDuringExecution") or ()
    return {
        "Required": sorted(map(_term_text, required)),
        "Preferred": sorted(
            canonical({"Weight": p.get("weight", 0), "Preference": _term(p.get("preference") or {})}) for p in preferred
        ),
    }


def node_selector(pod: PodInfo) -> dict[str, str] | None:
    return _spec(pod).get("nodeSelector")


def tolerations(pod: PodInfo) -> list[Mapping[str, Any]]:
    """The tolerations ordered by key, then value (upstream's order; the rest of each keeps its place)."""
    return sorted(_spec(pod).get("tolerations") or (), key=lambda t: (t.get("key", ""), t.get("value", "")))


def volumes(pod: PodInfo) -> list[str]:
    """Every volume's source but ConfigMaps and Secrets, which never change where a pod fits and differ per pod."""
    out = []
    for v in _spec(pod).get("volumes") or ():
        if "configMap" in v or "secret" in v:
            continue
        out.append(canonical({k: x for k, x in v.items() if k != "name"}))
    return sorted(out)


def labels(pod: PodInfo) -> dict[str, str]:
    return dict(pod.labels)
