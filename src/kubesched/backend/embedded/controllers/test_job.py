"""The Job controller's plans: how many pods, which indexes, which go first."""

from __future__ import annotations

from typing import Any

import pytest

from kubesched.backend.embedded.controllers.job import COMPLETION_INDEX, generate_selector, parse_indexes, sync


def job(**spec: Any) -> dict[str, Any]:
    j: dict[str, Any] = {
        "kind": "Job",
        "metadata": {"name": "j", "namespace": "ns", "uid": "u"},
        "spec": {"parallelism": 1, "template": {"spec": {"containers": [{"name": "c"}]}}, **spec},
    }
    generate_selector(j)
    return j


def pod(name: str, index: int | None = None, node: str = "") -> dict[str, Any]:
    meta: dict[str, Any] = {"name": name}
    if index is not None:
        meta["annotations"] = {COMPLETION_INDEX: str(index)}
    return {"metadata": meta, "spec": {"nodeName": node}, "status": {"phase": "Running" if node else "Pending"}}


def test_generated_selector_and_labels() -> None:
    j = job()
    assert j["spec"]["selector"] == {"matchLabels": {"batch.kubernetes.io/controller-uid": "u"}}
    assert j["spec"]["template"]["metadata"]["labels"] == {
        "job-name": "j",
        "batch.kubernetes.io/job-name": "j",
        "controller-uid": "u",
        "batch.kubernetes.io/controller-uid": "u",
    }
    manual = job(manualSelector=True, selector={"matchLabels": {"x": "y"}})
    manual["spec"]["template"]["metadata"] = {}
    generate_selector(manual)
    assert manual["spec"]["selector"] == {"matchLabels": {"x": "y"}} and manual["spec"]["template"]["metadata"] == {}


def test_parse_indexes() -> None:
    assert parse_indexes("1,3-5,9") == {1, 3, 4, 5, 9}
    assert parse_indexes("") == set() and parse_indexes("x,2") == {2}


@pytest.mark.parametrize(
    ("spec", "pods", "created", "deleted"),
    [
        pytest.param({"parallelism": 3}, [pod("a")], 2, [], id="up to parallelism"),
        pytest.param({"parallelism": 1}, [pod("a", node="n"), pod("b")], 0, ["b"], id="scale down: pending first"),
        pytest.param(
            {"parallelism": 2, "completions": 3, "completionMode": "Indexed"},
            [pod("a", 0), pod("b", 0, node="n"), pod("c", 7)],
            0,
            ["a", "c"],
            id="indexed: duplicates and out of range go (replacements come next sync)",
        ),
    ],
)
def test_sync(spec: dict[str, Any], pods: list[Any], created: int, deleted: list[str]) -> None:
    plan = sync(job(**spec), pods)
    assert len(plan.create) == created
    assert sorted(p["metadata"]["name"] for p in plan.delete) == deleted


def test_indexed_pods_skip_active_and_completed_indexes() -> None:
    j = job(parallelism=3, completions=6, completionMode="Indexed")
    j["status"] = {"completedIndexes": "0,2"}
    plan = sync(j, [pod("a", 1)])
    assert [p["metadata"]["annotations"][COMPLETION_INDEX] for p in plan.create] == ["3", "4"]
    assert [p["metadata"]["generateName"] for p in plan.create] == ["j-3-", "j-4-"]
