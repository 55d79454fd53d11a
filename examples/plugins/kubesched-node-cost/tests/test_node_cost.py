"""The NodeCost plugin alone, and inside a scheduler built from a config that names it."""

from __future__ import annotations

from typing import Any

import pytest
from kubesched_node_cost.plugin import ERR_TOO_EXPENSIVE, NodeCostArgs, new

from kubesched.config.load import load_config
from kubesched.config.trust import TRUSTED
from kubesched.framework.runtime.framework import FrameworkError
from kubesched.framework.status import Code, Status
from kubesched_testing.cluster import new_test_cluster
from kubesched_testing.framework import build_snapshot, filter_statuses, new_plugin, score_nodes
from kubesched_testing.wrappers import make_node, make_pod

KEY = "example.com/hourly-cost"


def priced(name: str, price: str | None) -> dict:
    w = make_node(name).capacity({"cpu": "4", "memory": "8Gi"})
    if price is not None:
        w.label(KEY, price)
    return w.obj()


def capped(name: str, cap: str) -> dict:
    pod = make_pod(name).obj()
    pod["metadata"]["annotations"] = {"example.com/max-node-cost": cap}
    return pod


def test_filter_keeps_pods_under_their_cap():
    snapshot = build_snapshot([priced("cheap", "1"), priced("dear", "8"), priced("unpriced", None)])
    pl = new_plugin(new, NodeCostArgs(), snapshot)
    got = filter_statuses(pl, capped("p", "5"), snapshot, batch=False)
    assert dict(zip([ni.name for ni in snapshot.node_info_list], got, strict=True)) == {
        "cheap": None,
        "dear": Status(Code.UNSCHEDULABLE_AND_UNRESOLVABLE, ERR_TOO_EXPENSIVE),
        "unpriced": None,
    }


def test_score_is_linear_in_price():
    snapshot = build_snapshot([priced("a", "0"), priced("b", "2.5"), priced("c", "20"), priced("d", None)])
    pl = new_plugin(new, NodeCostArgs(maxCost=10, defaultScore=30), snapshot)
    scores, _ = score_nodes(pl, make_pod("p").obj(), snapshot, nodes=["a", "b", "c", "d"])
    assert scores == [100, 75, 0, 30]


CONFIG: dict[str, Any] = {
    "apiVersion": "kubescheduler.config.k8s.io/v1",
    "kind": "KubeSchedulerConfiguration",
    "profiles": [
        {
            "schedulerName": "default-scheduler",
            "plugins": {"multiPoint": {"enabled": [{"name": "kubesched_node_cost.plugin:new", "weight": 5}]}},
            "pluginConfig": [{"name": "kubesched_node_cost.plugin:new", "args": {"maxCost": 4}}],
        }
    ],
}


def test_a_config_can_name_the_plugin_by_import_path():
    tc = new_test_cluster([priced("cheap", "1"), priced("dear", "3")], config=CONFIG)
    tc.create(make_pod("p").obj())
    tc.sched.run()
    assert tc.get("Pod", "default", "p")["spec"]["nodeName"] == "cheap"
    record = tc.recorder.outcomes[-1].record
    assert record is not None
    assert record.final_score["cheap"]["kubesched_node_cost.plugin:new"] == 75 * 5


def test_bad_args_name_the_field():
    bad = {
        **CONFIG,
        "profiles": [
            dict(
                CONFIG["profiles"][0],
                pluginConfig=[{"name": "kubesched_node_cost.plugin:new", "args": {"maxCost": -1}}],
            )
        ],
    }
    with pytest.raises(
        FrameworkError, match=r'plugin "kubesched_node_cost.plugin:new": args.maxCost: Input should be greater than 0'
    ):
        new_test_cluster([priced("a", "1")], config=bad)
    assert load_config(CONFIG, trust=TRUSTED).raw.profiles[0].plugins is not None  # as --config gives it
