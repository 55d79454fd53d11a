"""The summary, the explanation, the jsonl stream and the progress bar, in process on small simulations."""

from __future__ import annotations

import io
import json
from pathlib import Path

import pytest
from rich.console import Console

from kubesched.api.quantity import format_quantity
from kubesched.framework.outcome import Outcome
from kubesched.release_flags import followed_release
from kubesched.simulator.explain import explain, natural_key, resolve
from kubesched.simulator.load import load_manifests
from kubesched.simulator.progress import RunProgress
from kubesched.simulator.report import JsonLinesWriter, print_table, table_document, to_json
from kubesched.simulator.run import SimulationResult, Watcher, build_config, simulate
from kubesched.simulator.states import pod_states
from kubesched.simulator.summary import NO_ZONE, node_resources, summarize


def node(name: str, cpu: str, pods: str = "10", extra: str = "", zone: str = "") -> str:
    labels = f", topology.kubernetes.io/zone: {zone}" if zone else ""
    return (
        f"---\napiVersion: v1\nkind: Node\n"
        f"metadata: {{name: {name}, labels: {{kubernetes.io/hostname: {name}{labels}}}}}\n"
        f'status: {{allocatable: {{cpu: "{cpu}", memory: 4Gi, pods: "{pods}"{extra}}}}}\n'
    )


def pod(name: str, requests: str, extra: str = "") -> str:
    return (
        f"---\napiVersion: v1\nkind: Pod\nmetadata: {{name: {name}}}\nspec:\n{extra}"
        f"  containers: [{{name: c, resources: {{requests: {requests}, limits: {requests}}}}}]\n"
    )


def run(tmp_path: Path, text: str, record: object = True, watchers: list[Watcher] | None = None) -> SimulationResult:
    f = tmp_path / "in.yaml"
    f.write_text(text)
    loaded = load_manifests([str(f)])
    config = build_config(loaded, None, "")
    return simulate(loaded, config, seed=1, record=record, watchers=watchers or [])  # type: ignore[arg-type]


def test_stranded_capacity_is_free_capacity_where_no_pending_pod_fits(tmp_path: Path) -> None:
    # a (2 cpu free) and b (1 free) cannot take a 3-cpu pod; c has 4 free but no pod slot left.
    text = node("a", "2") + node("b", "1") + node("c", "4", pods="1") + pod("filler", "{cpu: 0}", "  nodeName: c\n")
    text += pod("big", "{cpu: '3'}")
    s = summarize(run(tmp_path, text))
    assert (s.pods, s.scheduled, s.pending) == (1, 0, 1)
    frag = s.fragmentation["cpu"]
    assert (frag.free, frag.stranded, frag.largest_free, frag.largest_free_node) == (7000, 7000, 4000, "c")
    assert s.fragmentation["pods"].stranded == 10 + 10 + 0
    assert s.pending_by_reason == {"Insufficient cpu": 1, "Too many pods": 1}
    c = next(n for n in s.nodes if n.name == "c")
    assert c.resources["pods"].requested == 1 and c.resources["pods"].utilisation == 1.0


def test_one_pending_pod_that_fits_somewhere_strands_nothing_there(tmp_path: Path) -> None:
    text = node("a", "4", zone="z1") + node("b", "1", zone="z1") + node("gpu", "8", extra=', nvidia.com/gpu: "1"')
    text += pod("tainted-away", "{cpu: '2'}", extra="  nodeSelector: {pool: none}\n")
    s = summarize(run(tmp_path, text))
    assert s.pending_by_reason == {"node(s) didn't match Pod's node affinity/selector": 1}
    # It fits a and gpu by its requests (the selector is not about capacity): only b's 1 cpu is stranded.
    assert s.fragmentation["cpu"].stranded == 1000
    assert s.fragmentation["nvidia.com/gpu"].stranded == 0
    assert [(z.zone, z.nodes) for z in s.zones] == [("z1", 2), (NO_ZONE, 1)]
    assert s.zones[1].resources["nvidia.com/gpu"].allocatable == 1
    assert s.resources["cpu"].allocatable == 13000


def test_gated_and_deleted_pods(tmp_path: Path) -> None:
    text = node("a", "1") + pod("gated", "{cpu: '1'}", extra="  schedulingGates: [{name: example.com/hold}]\n")
    text += pod("too-big", "{cpu: '2'}")
    text += "---\napiVersion: kubesched.io/v1alpha1\nkind: Scenario\nmetadata: {name: s}\nsteps:\n"
    text += "- at: 10s\n  delete: [{kind: Pod, namespace: default, name: too-big}]\n"
    s = summarize(run(tmp_path, text))
    assert (s.pods, s.scheduled, s.pending, s.deleted) == (2, 0, 1, 1)
    assert s.by_result == {"Unschedulable": 1, "Gated": 1}
    assert s.pending_by_reason == {"waiting for scheduling gates: [example.com/hold]": 1}


def test_only_the_named_pods_are_recorded(tmp_path: Path) -> None:
    text = node("a", "4") + node("b", "4") + pod("p1", "{cpu: '1'}") + pod("p2", "{cpu: '1'}")
    result = run(tmp_path, text, record=["default/p2"])
    records = {o.pod.name: o.record for o in result.outcomes.values()}
    assert records["p1"] is None and records["p2"] is not None
    assert set(records["p2"].filter) == {"a", "b"}
    assert all(o.record is None for o in run(tmp_path, text, record=False).outcomes.values())


def test_explanation_of_a_scored_attempt(tmp_path: Path) -> None:
    text = node("node-10", "4") + node("node-2", "8") + node("node-1", "1") + pod("p", "{cpu: '2'}")
    result = run(tmp_path, text, record=["default/p"])
    (st,) = resolve(result, ["p"])
    ex = explain(result, st)
    assert [n.node for n in ex.nodes] == [ex.node, *(n for n in ("node-10", "node-2") if n != ex.node), "node-1"]
    chosen, loser, filtered = ex.nodes
    assert chosen.chosen and chosen.why == "chosen: highest total score"
    assert chosen.total == sum(chosen.scores.values()) and loser.total is not None and chosen.total > loser.total
    assert loser.why.startswith(f"passed every filter; scored {chosen.total - loser.total} lower than {ex.node}")
    assert (filtered.rejected_by, filtered.reason, filtered.total) == ("NodeResourcesFit", "Insufficient cpu", None)
    assert ex.cluster_nodes == 3 and ex.attempts == 1 and ex.result == "Scheduled"


def test_natural_order() -> None:
    names = ["node-10", "node-2", "node-1", "a", "node-02b", "node-2a", "10", "9"]
    assert sorted(names, key=natural_key) == ["9", "10", "a", "node-1", "node-2", "node-2a", "node-02b", "node-10"]


def test_jsonl_writes_a_bound_pod_at_once_and_drops_its_record(tmp_path: Path) -> None:
    text = node("a", "1") + pod("first", "{cpu: '1'}") + pod("kept", "{cpu: 0}") + pod("second", "{cpu: '1'}")
    text += "---\napiVersion: kubesched.io/v1alpha1\nkind: Scenario\nmetadata: {name: s}\nsteps:\n"
    text += "- at: 10s\n  delete: [{kind: Pod, namespace: default, name: first}]\n"
    out = io.StringIO()
    writer = JsonLinesWriter(out, record=True, keep=["default/kept"])
    seen: dict[str, int] = {}

    def lines_so_far(result: SimulationResult, outcome: Outcome) -> None:
        seen.setdefault(outcome.pod.name + "/" + outcome.result, len(out.getvalue().splitlines()))

    result = run(tmp_path, text, watchers=[writer, lines_so_far])
    assert seen["first/Scheduled"] == 1  # written the moment it was bound, long before the run ended
    assert seen["second/Scheduled"] == 3  # second was bound at 10 s, after first and kept
    records = {o.pod.name: o.record for o in result.outcomes.values()}
    assert records["first"] is None and records["second"] is None and records["kept"] is not None
    writer.finish(result)
    lines = [json.loads(line) for line in out.getvalue().splitlines()]
    assert [(x["kind"], x.get("name")) for x in lines[:3]] == [("pod", "first"), ("pod", "kept"), ("pod", "second")]
    assert list(lines[0]["plugins"]["filter"]) == ["a"]  # its record, written before it was dropped
    assert set(lines[0]["plugins"]["filter"]["a"].values()) == {"passed"}
    assert lines[-1]["kind"] == "summary" and lines[-1]["pods"]["scheduled"] == 3


class FakeClock:
    def __init__(self) -> None:
        self.now = 100.0

    def __call__(self) -> float:
        return self.now


def test_progress_waits_then_draws_at_most_every_interval(tmp_path: Path) -> None:
    clock = FakeClock()
    buf = io.StringIO()
    progress = RunProgress(Console(file=buf, force_terminal=True, width=120), delay=1.0, interval=0.25, clock=clock)
    draws: list[float] = []
    real_draw = progress._draw

    def draw(result: SimulationResult, now: float) -> None:
        draws.append(now)
        real_draw(result, now)

    progress._draw = draw  # type: ignore[method-assign]

    def tick(result: SimulationResult, outcome: Outcome) -> None:
        clock.now += 0.1

    text = node("a", "100", pods="100") + "".join(pod(f"p{i}", "{cpu: '1'}") for i in range(30))
    result = run(tmp_path, text, record=False, watchers=[tick, progress])
    assert draws[0] >= 101.0  # nothing in the first second
    assert all(b - a >= 0.25 - 1e-9 for a, b in zip(draws, draws[1:], strict=False))
    assert len(draws) < len(result.outcomes) / 2
    assert "scheduling" in buf.getvalue() and "pods/s" in buf.getvalue()
    progress.close()


def test_no_draw_for_a_short_run(tmp_path: Path) -> None:
    buf = io.StringIO()
    progress = RunProgress(Console(file=buf, force_terminal=True), clock=FakeClock())
    run(tmp_path, node("a", "4") + pod("p", "{cpu: '1'}"), record=False, watchers=[progress])
    progress.close()
    assert buf.getvalue() == ""


@pytest.mark.parametrize("names", [["nope"], ["default/p", "x/y"]])
def test_resolve_reports_every_unknown_name(tmp_path: Path, names: list[str]) -> None:
    from kubesched.simulator.explain import ExplainError

    result = run(tmp_path, node("a", "4") + pod("p", "{cpu: '1'}"), record=False)
    with pytest.raises(ExplainError) as err:
        resolve(result, names)
    unknown = [n for n in names if n != "default/p"]
    assert str(err.value).count("no pending pod of that name") == len(unknown)


@pytest.mark.parametrize(
    ("resource", "quantity", "shown"),
    [
        ("cpu", "5550m", "5.55"),
        ("cpu", "8", "8"),
        ("cpu", "2246050m", "2246"),
        ("memory", "11104Mi", "10.8Gi"),
        ("memory", "32Gi", "32Gi"),
        ("memory", "512", "512"),
        ("memory", "21431680Mi", "20.4Ti"),
        ("ephemeral-storage", "100Gi", "100Gi"),
        ("hugepages-2Mi", "2Mi", "2Mi"),
        ("pods", "110", "110"),
        ("nvidia.com/gpu", "4", "4"),
    ],
)
def test_quantities_for_people(resource: str, quantity: str, shown: str) -> None:
    from kubesched.simulator.report import human

    assert human(resource, quantity) == shown


def test_a_node_with_only_the_beta_zone_label_is_in_that_zone(tmp_path: Path) -> None:
    beta = node("old", "2").replace(
        "kubernetes.io/hostname: old", "kubernetes.io/hostname: old, failure-domain.beta.kubernetes.io/zone: z1"
    )
    s = summarize(run(tmp_path, node("new", "2", zone="z1") + beta + node("none", "2")))
    assert [(z.zone, z.nodes) for z in s.zones] == [("z1", 2), (NO_ZONE, 1)]


_EXAMPLES = Path(__file__).resolve().parents[3] / "examples"


@pytest.mark.parametrize("example", ["cluster", "dra", "gangs", "scenario", "eks"])
def test_the_tables_document_prints_what_the_whole_document_does(example: str) -> None:
    """table_document leaves out what the table does not show and reads each node's usage once: the same
    table, with and without the pods, and the same requests as each node's own usage."""
    gates = "GenericWorkload=true,GangScheduling=true,TopologyAwareWorkloadScheduling=true"
    release = followed_release(None, gates if example == "gangs" else "", say_warnings=False)
    loaded = load_manifests([str(_EXAMPLES / example)])
    result = simulate(loaded, build_config(loaded, None, "", release=release), seed=1, record=False)
    states = list(pod_states(result))
    summary = summarize(result, states)
    for pods in (True, False):
        brief, whole = io.StringIO(), io.StringIO()
        print_table(table_document(result, summary, states), brief, pods=pods, shown=summary.shown())
        print_table(to_json(result, record=False), whole, pods=pods, shown=summary.shown())
        assert brief.getvalue() == whole.getvalue()
        assert f"/{len(states)} pending pods scheduled." in brief.getvalue()
    assert result.scheduler is not None
    cache = result.scheduler.cache.nodes
    for entry in to_json(result, record=False)["nodes"]:
        own = node_resources(cache[entry["name"]])
        assert entry["requested"] == {r: format_quantity(r, u.requested) for r, u in own.items()}
