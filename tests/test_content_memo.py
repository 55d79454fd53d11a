"""Checks remembered by content (apiserver/memo.py) answer exactly as the checks themselves.

Strict decoding and pod validation keep their answers per distinct spec, so the replicas
of one template are checked once; pods pinned to their nodes (a DaemonSet's) by their
spec's shape, the node's name swapped out. For generated pods, valid and then broken at
random, pinned or not, the remembered answer (asked twice, the second time from memory)
is the plain path's, and decoding normalises the object the same way.
"""

from __future__ import annotations

import copy
import dataclasses
import itertools
from collections.abc import Callable
from typing import Any

import pytest
import yaml
from hypothesis import given, settings
from hypothesis import strategies as st
from tests.test_loader_properties import mutate, pods

import kubesched
from kubesched import event_handlers
from kubesched.api.errors import FieldError
from kubesched.apiserver import schema, validation
from kubesched.apiserver.defaulting import set_defaults
from kubesched.apiserver.memo import PINNED_PLACEHOLDER, ContentMemo, pinned_shape, share_specs
from kubesched.framework.types import PodInfo, new_pod_info
from kubesched.simulator import load


class _Forgetful(ContentMemo[Any]):
    """Remembers nothing: the plain path."""

    def get(self, key: bytes | None) -> Any:
        return None


def test_keys_tell_types_apart() -> None:
    keys = {ContentMemo.key({"a": v}) for v in (1, 1.0, True, "1", None, [1], {"1": 1})}
    assert len(keys) == 7
    assert ContentMemo.key({"a": 1, "b": 2}) == ContentMemo.key({"b": 2, "a": 1})


@pytest.mark.parametrize("value", [{1: "x"}, {"a": 2**64}, {"a": "\ud800"}, {"a": object()}])
def test_what_json_cannot_hold_exactly_is_not_remembered(value: Any) -> None:
    assert ContentMemo.key(value) is None
    m: ContentMemo[int] = ContentMemo()
    m.put(None, 1)
    assert m.get(None) is None


def test_a_full_memo_starts_again() -> None:
    m: ContentMemo[int] = ContentMemo(entries=2)
    for i in range(3):
        m.put(ContentMemo.key(i), i)
    assert m.get(ContentMemo.key(0)) is None
    assert m.get(ContentMemo.key(2)) == 2


def _answers(pod: dict[str, Any]) -> tuple[list[str], dict[str, Any], list[str]]:
    decoded = copy.deepcopy(pod)
    problems = schema.decode_errors(decoded)
    if problems or not isinstance(decoded.get("metadata"), dict):
        return problems, decoded, []
    try:
        set_defaults(decoded)
    except (TypeError, AttributeError, ValueError, KeyError):  # what decoding would have refused first
        return problems, decoded, ["not defaultable"]
    try:
        return problems, decoded, validation.validate(decoded)
    except (TypeError, AttributeError, ValueError, KeyError) as err:
        return problems, decoded, [type(err).__name__]


NODE_NAMES = st.sampled_from(
    ["node-a", "node-b", "n.example.com", PINNED_PLACEHOLDER, "Bad_Name", "", "-x", "a" * 254, "a" * 253]
)
"""Node names a pod may pin itself to: valid ones, the shape's own placeholder, and names validation refuses."""


def _pin(draw: Callable[[st.SearchStrategy[Any]], Any], docs: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Some of `docs`, as a DaemonSet makes them: required to run on one node named in matchFields (a zone
    expression in the same term, at times), each copy on a node of its own, or the same node twice."""
    out: list[dict[str, Any]] = []
    for doc in docs:
        if not draw(st.booleans()):
            out.append(doc)
            continue
        for name in draw(st.lists(NODE_NAMES, min_size=1, max_size=3)):
            pinned = copy.deepcopy(doc)
            term: dict[str, Any] = {"matchFields": [{"key": "metadata.name", "operator": "In", "values": [name]}]}
            if draw(st.booleans()):
                term["matchExpressions"] = [{"key": "zone", "operator": "In", "values": ["a"]}]
            pinned["spec"]["affinity"] = {
                "nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": {"nodeSelectorTerms": [term]}}
            }
            out.append(pinned)
    return out


def test_a_pinned_spec_shape_swaps_only_the_node_name() -> None:
    term = {"matchFields": [{"key": "metadata.name", "operator": "In", "values": ["n1"]}]}
    spec: dict[str, Any] = {
        "affinity": {"nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": {"nodeSelectorTerms": [term]}}}
    }
    before = copy.deepcopy(spec)
    shaped = pinned_shape(spec)
    assert shaped is not None and shaped[1] == "n1" and spec == before
    other = copy.deepcopy(spec)
    other["affinity"]["nodeAffinity"]["requiredDuringSchedulingIgnoredDuringExecution"]["nodeSelectorTerms"][0][
        "matchFields"
    ][0]["values"] = ["n2"]
    assert pinned_shape(other) == (shaped[0], "n2")
    for field_, value in (("operator", "NotIn"), ("key", "metadata.uid"), ("values", ["a", "b"]), ("values", [1])):
        changed = copy.deepcopy(spec)
        changed["affinity"]["nodeAffinity"]["requiredDuringSchedulingIgnoredDuringExecution"]["nodeSelectorTerms"][0][
            "matchFields"
        ][0][field_] = value
        assert pinned_shape(changed) is None
    two_terms = copy.deepcopy(spec)
    two_terms["affinity"]["nodeAffinity"]["requiredDuringSchedulingIgnoredDuringExecution"]["nodeSelectorTerms"] *= 2
    assert pinned_shape(two_terms) is None and pinned_shape({}) is None and pinned_shape("x") is None


@settings(max_examples=150, deadline=None)
@given(data=st.data())
def test_remembered_answers_are_the_plain_answers(data: st.DataObject, monkeypatch: pytest.MonkeyPatch) -> None:
    docs = data.draw(pods())
    if data.draw(st.booleans()):
        docs = _pin(data.draw, docs)
    if data.draw(st.booleans()):
        docs = mutate(data.draw, docs)
    docs = [d for d in docs if isinstance(d, dict) and d.get("kind") == "Pod"]
    with monkeypatch.context() as plain:
        plain.setattr(schema, "_CLEAN_SPECS", _Forgetful())
        plain.setattr(validation, "_POD_ANSWERS", _Forgetful())
        expected = [_answers(d) for d in docs]
    monkeypatch.setattr(schema, "_CLEAN_SPECS", ContentMemo())
    monkeypatch.setattr(validation, "_POD_ANSWERS", ContentMemo())
    for _ in range(2):  # the second time from memory
        assert [_answers(d) for d in docs] == expected


def _count_admission(monkeypatch: pytest.MonkeyPatch, calls: dict[str, int]) -> None:
    """Count spec decodes and pod validations in `calls`, with fresh memos."""
    real_struct, real_validate = schema._Decoder.struct, validation._validate_pod

    def counted_struct(self: Any, obj: dict[str, Any], name: str, path: str, go_path: str) -> None:
        calls["decode"] += path == "spec"
        real_struct(self, obj, name, path, go_path)

    def counted_validate(*args: Any) -> list[str]:
        calls["validate"] += 1
        return real_validate(*args)

    monkeypatch.setattr(schema._Decoder, "struct", counted_struct)
    monkeypatch.setattr(validation, "_validate_pod", counted_validate)
    monkeypatch.setattr(schema, "_CLEAN_SPECS", ContentMemo())
    monkeypatch.setattr(validation, "_POD_ANSWERS", ContentMemo())


def test_replicas_of_one_spec_are_decoded_and_validated_once(monkeypatch: pytest.MonkeyPatch) -> None:
    calls = {"decode": 0, "validate": 0}
    _count_admission(monkeypatch, calls)
    spec = {"containers": [{"name": "c", "resources": {"requests": {"cpu": "1"}}}]}
    for i in range(5):
        pod = {
            "apiVersion": "v1",
            "kind": "Pod",
            "metadata": {"name": f"p{i}", "labels": {"a": "b"}},
            "spec": copy.deepcopy(spec),
        }
        assert schema.decode_errors(pod) == []
        set_defaults(pod)
        assert validation.validate(pod) == []
    assert calls == {"decode": 1, "validate": 1}


def test_pods_pinned_to_their_nodes_are_decoded_validated_and_parsed_once_per_shape(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    calls = {"decode": 0, "validate": 0, "parse": 0}
    _count_admission(monkeypatch, calls)
    real_parse = load.new_pod_info

    def counted_parse(pod: dict[str, Any]) -> PodInfo:
        calls["parse"] += 1
        return real_parse(pod)

    monkeypatch.setattr(load, "new_pod_info", counted_parse)
    parsed: ContentMemo[PodInfo] = ContentMemo()
    infos = []
    for i in range(5):
        term = {"matchFields": [{"key": "metadata.name", "operator": "In", "values": [f"node-{i}"]}]}
        spec = {
            "containers": [{"name": "c", "resources": {"requests": {"cpu": "1"}}}],
            "affinity": {
                "nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": {"nodeSelectorTerms": [term]}}
            },
        }
        pod = _pod(f"ds-{i}", spec)
        assert schema.decode_errors(pod) == []
        set_defaults(pod)
        assert validation.validate(pod) == []
        infos.append(load.pod_info(pod, parsed))
    assert calls == {"decode": 1, "validate": 1, "parse": 1}
    affinities = [i.required_node_affinity for i in infos]
    assert [[a is not None and a.matches({}, f"node-{n}") for n in range(5)] for a in affinities] == [
        [n == i for n in range(5)] for i in range(5)
    ]


def _pod(name: str, spec: dict[str, Any]) -> dict[str, Any]:
    return {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": name}, "spec": copy.deepcopy(spec)}


def test_pods_with_the_same_spec_share_one_dict() -> None:
    spec = {"containers": [{"name": "c", "resources": {"requests": {"cpu": "1"}}}]}
    other = {"containers": [{"name": "c", "resources": {"requests": {"cpu": 1}}}]}  # 1, not "1": not the same
    grouped = {**spec, "schedulingGroup": {"podGroupName": "g"}}
    pods_ = [_pod("a", spec), _pod("b", spec), _pod("c", other), _pod("d", grouped), _pod("e", grouped)]
    share_specs(pods_)
    assert pods_[0]["spec"] is pods_[1]["spec"]
    assert pods_[2]["spec"] is not pods_[0]["spec"] and pods_[2]["spec"] == other
    assert pods_[3]["spec"] is not pods_[4]["spec"]  # a server without the gate drops it pod by pod


def test_pending_pods_are_parsed_once(monkeypatch: pytest.MonkeyPatch) -> None:
    """Admission's parse of a pending pod is the informer's: it is not parsed again when it is created."""
    added: list[str] = []
    real = event_handlers._reparse_pod

    def counted(prev: Any, new: dict[str, Any]) -> Any:
        if prev is None:
            added.append(new["metadata"]["name"])
        return real(prev, new)

    monkeypatch.setattr(event_handlers, "_reparse_pod", counted)
    node = {
        "apiVersion": "v1",
        "kind": "Node",
        "metadata": {"name": "n"},
        "status": {"allocatable": {"cpu": "4", "memory": "8Gi", "pods": "10"}},
    }
    spec = {"containers": [{"name": "c", "resources": {"requests": {"cpu": "1"}}}]}
    bound = _pod("bound", {**spec, "nodeName": "n"})
    result = kubesched.simulate(text=yaml.safe_dump_all([node, bound, _pod("a", spec), _pod("b", spec)]), seed=1)
    assert sorted(p.name for p in result.pods) == ["a", "b"]
    assert all(p.result == "Scheduled" for p in result.pods)
    assert added == ["bound"]  # a bound pod gets the node's topology labels when created: parsed then


def _parse_outcome(parse: Any, pod: dict[str, Any]) -> tuple[str, Any]:
    """("ok", every PodInfo field but obj) or ("error", the exception's type and message)."""
    try:
        info = parse(pod)
    except (FieldError, TypeError, ValueError, AttributeError, KeyError) as err:
        return "error", (type(err).__name__, str(err))
    assert info.obj is pod
    return "ok", {f.name: getattr(info, f.name) for f in dataclasses.fields(info) if f.name != "obj"}


REPLICA_META = st.fixed_dictionaries(
    {"name": st.sampled_from(["r-1", "r-2", "other"])},
    optional={
        "namespace": st.sampled_from(["default", "team-a"]),
        "uid": st.sampled_from(["u1", "u2"]),
        "labels": st.sampled_from([{"app": "web"}, {"app": "db"}, {"app": "web", "tier": "1"}]),
        "deletionTimestamp": st.just("2026-01-01T00:00:00Z"),
        "ownerReferences": st.sampled_from(
            [[{"apiVersion": "apps/v1", "kind": "ReplicaSet", "name": "rs", "controller": True}], []]
        ),
    },
)


@settings(max_examples=150, deadline=None)
@given(data=st.data())
def test_parses_remembered_by_content_are_the_plain_parses(data: st.DataObject) -> None:
    """Replicas of generated pods (same spec and status, metadata drawn apart) parse through the memo as
    new_pod_info parses each on its own: same fields, same errors, and dicts of their own."""
    docs = [d for d in data.draw(pods()) if isinstance(d, dict) and d.get("kind") == "Pod"]
    if data.draw(st.booleans()):
        docs = _pin(data.draw, docs)
    if data.draw(st.booleans()):
        docs = [d for d in mutate(data.draw, docs) if isinstance(d, dict)]
    replicas = []
    for doc in docs:
        for meta in data.draw(st.lists(REPLICA_META, min_size=1, max_size=4)):
            replicas.append({**copy.deepcopy(doc), "metadata": meta})
    parsed: ContentMemo[PodInfo] = ContentMemo()
    infos = []
    for pod in data.draw(st.permutations(replicas)):
        remembered = _parse_outcome(lambda p: load.pod_info(p, parsed), pod)
        assert remembered == _parse_outcome(new_pod_info, pod)
        if remembered[0] == "ok":
            infos.append(load.pod_info(pod, parsed))
    for a, b in itertools.combinations(infos, 2):
        assert a.requests is not b.requests and a.node_selector is not b.node_selector and a.labels is not b.labels
