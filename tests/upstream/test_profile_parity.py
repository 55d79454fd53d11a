"""Plugins per extension point, in order and with weights, as real kube-scheduler v1.36 builds them.

Upstream logs each profile's plugin lists at start-up ("the scheduler starts to work with
those plugins"); our Framework for the same configuration must list the same.
"""

from __future__ import annotations

import json
import re
import time
from typing import Any

import pytest

from kubesched.config.load import load_config
from kubesched.config.trust import TRUSTED
from kubesched.framework.interface import Handle
from kubesched.framework.plugins.registry import new_in_tree_registry
from kubesched.framework.runtime.framework import Framework
from kubesched_testing.controlplane import ControlPlane

POINTS = {
    "PreEnqueue": "preEnqueue",
    "QueueSort": "queueSort",
    "PreFilter": "preFilter",
    "Filter": "filter",
    "PostFilter": "postFilter",
    "PreScore": "preScore",
    "Score": "score",
    "Reserve": "reserve",
    "Permit": "permit",
    "PreBind": "preBind",
    "Bind": "bind",
    "PostBind": "postBind",
}


def profile(name: str, **plugins: Any) -> dict[str, Any]:
    return {"schedulerName": name, "plugins": plugins}


CASES: dict[str, list[dict[str, Any]]] = {
    "default": [],
    "filter re-listed in another order": [
        profile("default-scheduler", filter={"enabled": [{"name": "NodeAffinity"}, {"name": "TaintToleration"}]})
    ],
    "weights changed and plugins disabled": [
        profile(
            "default-scheduler",
            score={
                "enabled": [{"name": "ImageLocality", "weight": 7}, {"name": "NodeResourcesFit", "weight": 3}],
                "disabled": [{"name": "NodeResourcesBalancedAllocation"}, {"name": "TaintToleration"}],
            },
            preFilter={"disabled": [{"name": "InterPodAffinity"}]},
        )
    ],
    "everything disabled then a few enabled": [
        profile(
            "default-scheduler",
            multiPoint={
                "enabled": [
                    {"name": "PrioritySort"},
                    {"name": "NodeResourcesFit", "weight": 4},
                    {"name": "DefaultBinder"},
                    {"name": "PodTopologySpread"},
                ],
                "disabled": [{"name": "*"}],
            },
        )
    ],
    "two profiles": [
        profile("default-scheduler"),
        profile("other", filter={"disabled": [{"name": "*"}]}, score={"disabled": [{"name": "ImageLocality"}]}),
    ],
}


def upstream_profiles(cp: ControlPlane, profiles: list[dict[str, Any]]) -> list[dict[str, Any]]:
    proc = cp.start_scheduler({"profiles": profiles} if profiles else {}, verbosity=2, name="profiles")
    want = max(1, len(profiles))
    deadline = time.monotonic() + 30
    try:
        while time.monotonic() < deadline:
            found = re.findall(
                r'"the scheduler starts to work with those plugins" Plugins=(\{.*\})', proc.log_path.read_text()
            )
            if len(found) >= want:
                return [json.loads(f) for f in found[:want]]
            time.sleep(0.1)
    finally:
        proc.stop()
        cp.schedulers.remove(proc)
    raise AssertionError(f"kube-scheduler logged no plugin lists:\n{proc.log_path.read_text()[-2000:]}")


def ours(profiles: list[dict[str, Any]]) -> list[dict[str, list[tuple[str, int]]]]:
    doc: dict[str, Any] = {"apiVersion": "kubescheduler.config.k8s.io/v1", "kind": "KubeSchedulerConfiguration"}
    if profiles:
        doc["profiles"] = profiles
    cfg = load_config(doc, trust=TRUSTED)
    out = []
    for prof, args in zip(cfg.raw.profiles, cfg.profile_args, strict=True):
        fwk = Framework(new_in_tree_registry(), prof, args, Handle())
        out.append(
            {
                point: [(p.name, fwk.score_weights[p.name] if point == "score" else 0) for p in fwk.points[point]]
                for point in POINTS.values()
            }
        )
    return out


@pytest.mark.parametrize("case", sorted(CASES))
def test_plugins_per_point_match_upstream(control_plane: ControlPlane, case: str) -> None:
    profiles = CASES[case]
    up = [
        {
            ours_name: [(p["Name"], p["Weight"]) for p in lists[up_name]["Enabled"] or ()]
            for up_name, ours_name in POINTS.items()
        }
        for lists in upstream_profiles(control_plane, profiles)
    ]
    assert ours(profiles) == up
