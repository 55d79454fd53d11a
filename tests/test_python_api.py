"""kubesched.simulate(...): the command's answer as typed results, from paths, objects and text."""

from __future__ import annotations

import inspect
import json
import re
from pathlib import Path

import pytest

import kubesched
from kubesched.cli import main
from kubesched_testing.configs import most_allocated

ROOT = Path(__file__).resolve().parents[1]


def _node(name: str, cpu: str = "4") -> dict:
    return {
        "apiVersion": "v1",
        "kind": "Node",
        "metadata": {"name": name},
        "status": {"allocatable": {"cpu": cpu, "memory": "16Gi", "pods": "110"}},
    }


def _pod(name: str, cpu: str = "1") -> dict:
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": name},
        "spec": {"containers": [{"name": "c", "resources": {"requests": {"cpu": cpu}}}]},
    }


def test_same_answer_as_the_command(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["simulate", str(ROOT / "examples/cluster"), "--output", "json", "--seed", "3"]) == 0
    text = capsys.readouterr().out
    printed = json.loads(text)
    sim = kubesched.simulate(ROOT / "examples/cluster", seed=3)
    assert sim.to_json() == text  # exactly what --output json prints, as docs/python-api.md says
    assert sim.to_dict() == printed
    assert [p.key for p in sim.pods] == [f"{p['namespace']}/{p['name']}" for p in printed["pods"]]
    assert {p.key: p.node for p in sim.pods} == sim.placements()
    for typed, raw in zip(sim.pods, printed["pods"], strict=True):
        assert typed.result == raw["result"] and typed.message == raw["message"]
        assert typed.plugins is not None and typed.plugins.filter == raw["plugins"]["filter"]
        if typed.node and raw["plugins"]["finalScore"]:
            assert typed.plugins.total(typed.node) == sum(raw["plugins"]["finalScore"][typed.node].values())


def test_what_a_caller_changes_stays_the_callers() -> None:
    sim = kubesched.simulate([_node("a"), _pod("p")], seed=1)
    text = sim.to_json()
    mine = sim.to_dict()
    mine["pods"][0]["node"] = "elsewhere"
    mine["warnings"].append("mine")
    mine.clear()
    assert sim.to_json() == text and json.loads(text)["pods"][0]["node"] == "a"
    assert sim.to_dict()["pods"][0]["node"] == "a" and sim.to_dict()["warnings"] == []


def test_objects_and_text_mix_with_paths() -> None:
    text = "apiVersion: v1\nkind: Pod\nmetadata: {name: from-text}\n"
    mine = _pod("from-object", "3")
    sim = kubesched.simulate([_node("a"), _node("b")], mine, text=text, seed=1)
    assert mine == _pod("from-object", "3")  # the caller's objects are not defaulted in place
    assert sim.pod("from-object").scheduled
    assert sim.pod("default/from-text").node in ("a", "b")
    assert [n.name for n in sim.nodes] == ["a", "b"]
    used = sim.node(sim.pod("from-object").node or "")
    assert used.utilisation("cpu") == pytest.approx(0.75)
    assert used.utilisation("nvidia.com/gpu") is None
    with pytest.raises(KeyError):
        sim.pod("nope")


def test_config_mapping_changes_the_answer() -> None:
    objs = [_node("a"), _node("b"), _pod("p1"), _pod("p2")]
    spread = kubesched.simulate(objs, seed=1)
    assert len({p.node for p in spread.pods}) == 2  # LeastAllocated by default
    packing = most_allocated()
    packed = kubesched.simulate([_node("a"), _node("b"), _pod("p1"), _pod("p2")], config=packing, seed=1)
    assert len({p.node for p in packed.pods}) == 1


def test_summary_and_overlays() -> None:
    base = [_node("a"), _pod("p1", "3"), _pod("p2", "3")]
    sim = kubesched.simulate(base, seed=1)
    assert (sim.summary.scheduled, sim.summary.pending) == (1, 1)
    assert sim.summary.pending_by_reason == {"Insufficient cpu": 1}
    assert sim.summary.resources["cpu"].requested == 3000
    assert sim.summary.fragmentation["cpu"].stranded == 1000  # 1 cpu left where no 3-cpu pod fits
    bigger = kubesched.simulate(base, overlays=[_node("a", "8")], seed=1)
    assert bigger.summary.pending == 0
    assert any("a" in w and "<overlay object 0>" in w for w in bigger.warnings)
    with pytest.raises(kubesched.InputError, match="already exists"):
        kubesched.simulate(base, [_node("a", "8")])


def test_record_false_leaves_plugins_out_and_until_takes_durations() -> None:
    sim = kubesched.simulate([_node("a"), _pod("p")], record=False, until="1m", bind_latency="200ms")
    assert sim.pod("p").plugins is None
    assert sim.pod("p").bound_at == pytest.approx(0.2)
    assert [(e.type, e.pod) for e in sim.events] == [("Scheduled", "default/p"), ("Bound", "default/p")]


@pytest.mark.parametrize(
    ("inputs", "kwargs", "needle"),
    [
        ((_pod("bad", "-1"),), {}, r"<object 0>, document 1 \(Pod default/bad\): spec\.containers\[0\]"),
        (([_node("a"), "not an object"],), {}, r"<objects 0>, document 2: expected a Kubernetes object"),
        ((42,), {}, r"input 0: expected a path"),
        (("/nonexistent/dir",), {}, r"/nonexistent/dir: no such file"),
        ((), {"text": "kind: [unclosed"}, r"<text>: "),
        ((), {"until": "soon"}, r"until: "),
        ((), {"until": -5}, r"until: expected a finite number of seconds, 0 or more, got -5"),
        ((), {"bind_latency": float("nan")}, r"bind_latency: expected a finite number of seconds"),
        ((), {"until": [1]}, r"until: expected seconds or a duration"),
        ((), {"record": "maybe"}, r"record: expected True, False, \"full\", \"none\" or"),
        ((), {"record": 3}, r"record: expected True, False or pod keys, got int"),
        ((), {"record": ["default/p", 7]}, r"record: pod keys are \"namespace/name\" strings, got 7"),
        (
            (),
            {
                "config": {
                    "apiVersion": "kubescheduler.config.k8s.io/v1",
                    "kind": "KubeSchedulerConfiguration",
                    "profiles": [{"plugins": {"score": {"enabled": [{"name": "Nope"}]}}}],
                }
            },
            r"Nope",
        ),
    ],
)
def test_bad_input_raises_input_error(inputs: tuple, kwargs: dict, needle: str) -> None:
    with pytest.raises(kubesched.InputError, match=needle):
        kubesched.simulate(*inputs, **kwargs)


def test_the_docs_examples_run(capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch) -> None:
    """Every python block of docs/python-api.md runs as written, from the repository root."""
    monkeypatch.chdir(ROOT)
    blocks = re.findall(r"```python\n(.*?)```", (ROOT / "docs/python-api.md").read_text(), re.S)
    assert len(blocks) == 4
    for block in blocks:
        exec(compile(block, "docs/python-api.md", "exec"), {})
    out = capsys.readouterr().out
    assert "default/web-1 Scheduled" in out
    assert "{1: 4, 2: 3, 3: 2, 4: 1, 5: 0, 6: 0}" in out


def test_the_docs_describe_each_argument_once() -> None:
    """docs/python-api.md's Inputs: one bullet for each argument of simulate(), none twice, none missing."""
    text = (ROOT / "docs/python-api.md").read_text()
    inputs = text.split("## Inputs", 1)[1].split("\n## ", 1)[0]
    heads = re.findall(r"^- ((?:`[a-z_]+[^`]*`(?:, )?)+)", inputs, re.M)
    described = sorted(name for head in heads for name in re.findall(r"`([a-z_]+)", head))
    assert described == sorted(inspect.signature(kubesched.simulate).parameters)


def test_record_only_some_pods() -> None:
    objs = [_node("a", "2"), _node("b", "2"), *(_pod(f"p{i}") for i in range(5))]
    full = kubesched.simulate(objs, seed=4)
    none = kubesched.simulate(objs, seed=4, record=False)
    some = kubesched.simulate(objs, seed=4, record=["default/p1", "default/p4"])
    assert some.placements() == full.placements() == none.placements()
    assert some.pod("p1").plugins == full.pod("p1").plugins
    assert some.pod("p4").plugins == full.pod("p4").plugins and not some.pod("p4").scheduled
    others = [p for p in some.pods if p.key not in ("default/p1", "default/p4")]
    assert others and all(p.plugins is not None and not p.plugins.filter for p in others)


def test_record_takes_the_command_lines_words() -> None:
    objs = [_node("a", "2"), _pod("p")]
    assert kubesched.simulate(objs, seed=1, record="full").pod("p").plugins is not None
    assert kubesched.simulate(objs, seed=1, record="none").pod("p").plugins is None
