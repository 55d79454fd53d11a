"""NodeLabel: upstream's TestNodeLabelFilter and TestNodeLabelScore tables."""

from __future__ import annotations

import pytest

from kubesched.config.types import NodeLabelArgs
from kubesched.framework.cycle_state import CycleState
from kubesched.framework.node_info import NodeInfo, parse_node
from kubesched.framework.plugins.nodelabel import node_label
from kubesched.framework.status import Code
from kubesched.framework.types import new_pod_info
from kubesched_testing.wrappers import make_node, make_pod

U = Code.UNSCHEDULABLE_AND_UNRESOLVABLE
FILTER_CASES = [
    ("present label does not match", {"presentLabels": ["baz"]}, U),
    ("absent label does not match", {"absentLabels": ["baz"]}, None),
    ("one of two present labels matches", {"presentLabels": ["foo", "baz"]}, U),
    ("one of two absent labels matches", {"absentLabels": ["foo", "baz"]}, U),
    ("all present labels match", {"presentLabels": ["foo", "bar"]}, None),
    ("all absent labels match", {"absentLabels": ["foo", "bar"]}, U),
    ("both present and absent label matches", {"presentLabels": ["foo"], "absentLabels": ["bar"]}, U),
    ("neither present nor absent label matches", {"presentLabels": ["foz"], "absentLabels": ["baz"]}, U),
    ("present label matches and absent label doesn't match", {"presentLabels": ["foo"], "absentLabels": ["baz"]}, None),
    ("present label doesn't match and absent label matches", {"presentLabels": ["foz"], "absentLabels": ["bar"]}, U),
    ("no label", {}, None),
]


@pytest.mark.parametrize(("name", "args", "want"), FILTER_CASES, ids=[c[0] for c in FILTER_CASES])
def test_node_label_filter(name: str, args: dict[str, list[str]], want: Code | None) -> None:
    node = NodeInfo(parse_node(make_node("n").label("foo", "any value").label("bar", "any value").obj()))
    plugin = node_label.new(NodeLabelArgs(**args), None)  # type: ignore[arg-type]
    status = plugin.filter(CycleState(), new_pod_info(make_pod("p").obj()), node)
    assert (status.code if status is not None else None) == want
    if status is not None:
        assert status.reasons == (node_label.ERR_REASON_PRESENCE_VIOLATED,)


SCORE_CASES = [
    ("one present label match", {"presentLabelsPreference": ["foo"]}, 100),
    ("one present label mismatch", {"presentLabelsPreference": ["somelabel"]}, 0),
    ("two present labels match", {"presentLabelsPreference": ["foo", "bar"]}, 100),
    ("two present labels mismatch", {"presentLabelsPreference": ["somelabel1", "somelabel2"]}, 0),
    ("two present labels only one matches", {"presentLabelsPreference": ["foo", "somelabel"]}, 50),
    ("one absent label match", {"absentLabelsPreference": ["foo"]}, 0),
    ("one absent label mismatch", {"absentLabelsPreference": ["somelabel"]}, 100),
    ("two absent labels match", {"absentLabelsPreference": ["foo", "bar"]}, 0),
    ("two absent labels mismatch", {"absentLabelsPreference": ["somelabel1", "somelabel2"]}, 100),
    ("two absent labels only one matches", {"absentLabelsPreference": ["foo", "somelabel"]}, 50),
    (
        "two present labels match, two absent labels mismatch",
        {"presentLabelsPreference": ["foo", "bar"], "absentLabelsPreference": ["somelabel1", "somelabel2"]},
        100,
    ),
    (
        "two present labels both mismatch, two absent labels both match",
        {"presentLabelsPreference": ["somelabel1", "somelabel2"], "absentLabelsPreference": ["foo", "bar"]},
        0,
    ),
    (
        "two present labels one matches, two absent labels mismatch",
        {"presentLabelsPreference": ["foo", "somelabel"], "absentLabelsPreference": ["somelabel1", "somelabel2"]},
        75,
    ),
    ("no label preference", {}, 0),
]


@pytest.mark.parametrize(("name", "args", "want"), SCORE_CASES, ids=[c[0] for c in SCORE_CASES])
def test_node_label_score(name: str, args: dict[str, list[str]], want: int) -> None:
    node = NodeInfo(parse_node(make_node("machine1").label("foo", "").label("bar", "").obj()))
    plugin = node_label.new(NodeLabelArgs(**args), None)  # type: ignore[arg-type]
    assert plugin.score(CycleState(), new_pod_info(make_pod("p").obj()), node) == (want, None)


def test_node_label_without_node_is_an_error() -> None:
    plugin = node_label.new(NodeLabelArgs(), None)  # type: ignore[arg-type]
    pod = new_pod_info(make_pod("p").obj())
    status = plugin.filter(CycleState(), pod, NodeInfo())
    assert status is not None and status.code == Code.ERROR
    _, status = plugin.score(CycleState(), pod, NodeInfo())
    assert status is not None and status.code == Code.ERROR
