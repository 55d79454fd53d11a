"""`kubesched simulate --report PATH` and `Simulation.write_report`: the self-contained HTML report."""

import json
import os
import subprocess
import sys
from html.parser import HTMLParser
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import kubesched
from kubesched.cli import main
from kubesched.framework.outcome import SchedulerEvent
from kubesched.simulator import report_html
from kubesched.simulator.report_html import TOTAL, ScoreStats, pending_series

ROOT = Path(__file__).resolve().parent.parent
CLUSTER = str(ROOT / "examples" / "cluster")
SCENARIO = str(ROOT / "examples" / "scenario")
SECTIONS = ("run", "utilisation", "pending-over-time", "scores", "placements", "pending", "fragmentation", "warnings")


class Page(HTMLParser):
    """What a test reads off a report: sections, the <svg>s in each, text, and every link-like attribute."""

    def __init__(self, text: str) -> None:
        super().__init__(convert_charrefs=True)
        self.tags: list[str] = []
        self.section: str | None = None
        self.svgs: dict[str, int] = {}
        self.text: dict[str, list[str]] = {}
        self.links: list[tuple[str, str, str]] = []  # tag, attribute, value
        self.feed(text)
        self.close()

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.tags.append(tag)
        values = dict(attrs)
        if tag == "section":
            self.section = values.get("id")
            self.svgs[self.section or ""] = 0
        if tag == "svg" and self.section is not None:
            self.svgs[self.section] += 1
        for name, value in attrs:
            if name in ("src", "href", "xlink:href", "action", "data", "poster") or "url(" in (value or ""):
                self.links.append((tag, name, value or ""))

    def handle_endtag(self, tag: str) -> None:
        if tag == "section":
            self.section = None

    def handle_data(self, data: str) -> None:
        self.text.setdefault(self.section or "", []).append(data)

    def words(self, section: str) -> str:
        return " ".join(" ".join(self.text.get(section, [])).split())


def simulate(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str, str]:
    code = main(["simulate", *args])
    out, err = capsys.readouterr()
    return code, out, err


def check_offline(text: str, page: Page) -> None:
    """No script, no stylesheet link, nothing fetched: every reference points inside the page."""
    assert "script" not in page.tags and "link" not in page.tags and "img" not in page.tags
    assert "@import" not in text
    for tag, name, value in page.links:
        target = value.split("url(", 1)[1] if "url(" in value else value
        assert target.startswith("#"), (tag, name, value)


@pytest.mark.parametrize("output", ["table", "json", "jsonl"])
def test_report_on_the_example_cluster(tmp_path: Path, capsys: pytest.CaptureFixture[str], output: str) -> None:
    path = tmp_path / "report.html"
    code, out, _ = simulate(capsys, CLUSTER, "--seed", "1", "-q", "--output", output, "--report", str(path))
    assert code == 0
    plain_code, plain, _ = simulate(capsys, CLUSTER, "--seed", "1", "-q", "--output", output)
    assert (plain_code, plain) == (code, out)  # the report changes no decision and no byte of the output
    text = path.read_text()
    page = Page(text)
    check_offline(text, page)
    assert [s for s in page.svgs] == list(SECTIONS)
    # 3 zones: the cluster's, the zones' and the nodes' utilisation; one figure each for scores and placements.
    assert page.svgs == {s: 0 for s in SECTIONS} | {"utilisation": 3, "scores": 1, "placements": 1}
    doc = json.loads(simulate(capsys, CLUSTER, "--seed", "1", "-q", "--output", "json")[1])
    pods = doc["summary"]["pods"]
    assert f"{pods['scheduled']} of {pods['total']} scheduled, {pods['pending']} pending" in page.words("run")
    assert "Configuration upstream's default KubeSchedulerConfiguration" in page.words("run")
    assert "nvidia.com/gpu" in page.words("utilisation")  # extended resources are drawn and tabled
    assert "Everything happened at virtual time 0" in page.words("pending-over-time")
    for reason in doc["summary"]["pendingByReason"]:
        assert reason in page.words("pending")
    for p in doc["pods"]:
        if p["result"] != "Scheduled":
            assert p["namespace"] + "/" + p["name"] in page.words("pending")
    assert "Largest free" in page.words("fragmentation")


def test_report_on_the_example_scenario(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "report.html"
    code, _, _ = simulate(capsys, SCENARIO, "--seed", "1", "-q", "--output", "table", "--report", str(path))
    assert code == 0
    text = path.read_text()
    page = Page(text)
    check_offline(text, page)
    assert page.svgs["pending-over-time"] == 1
    assert page.svgs["scores"] == 1
    assert "ended at 5m" in page.words("run")
    assert "every pod was scheduled" in page.words("pending")


def test_scenario_pending_series_follows_the_events(capsys: pytest.CaptureFixture[str]) -> None:
    """examples/scenario: web-1 and the gated report wait at 0; web-1 fits at 1m; ingest arrives at 3m and
    preempts batch-b at once; report's gate comes off at 4m; batch-a (running) is deleted at 5m."""
    doc = json.loads(simulate(capsys, SCENARIO, "--seed", "1", "-q", "--output", "json")[1])
    events = [SchedulerEvent(e["time"], e["pod"], e["type"]) for e in doc["events"]]
    series = pending_series(events, doc["endTime"])
    assert series == [(0.0, 2), (60.0, 1), (180.0, 1), (240.0, 0), (300.0, 0)]
    # Check each point against the events by hand: pods whose latest event before then says they wait.
    for time, count in series:
        latest: dict[str, str] = {}
        for e in events:
            if e.time <= time:
                latest[e.pod] = e.type
        assert count == sum(1 for t in latest.values() if t in ("Gated", "Unschedulable", "Error", "Nominated"))


def test_pending_series_rules() -> None:
    def ev(t: float, pod: str, kind: str) -> SchedulerEvent:
        return SchedulerEvent(t, pod, kind)

    events = [
        ev(0, "a", "Unschedulable"),
        ev(0, "b", "Scheduled"),
        ev(0, "running", "Deleted"),  # a pod already running: never waited, changes nothing
        ev(5, "c", "Gated"),  # created by a step at 5s
        ev(5, "a", "Nominated"),
        ev(7, "b", "Error"),  # its binding failed: it waits again
        ev(7, "b", "Scheduled"),
        ev(7, "b", "Bound"),
        ev(9, "c", "Deleted"),
        ev(9, "a", "Preempted"),  # placed later without an event here would not matter: a victim is gone
    ]
    assert pending_series(events, 12.0, untried=1) == [(0.0, 2), (5.0, 3), (7.0, 3), (9.0, 1), (12.0, 1)]
    assert pending_series([], 0.0) == [(0.0, 0)]
    assert pending_series([ev(3, "x", "Unschedulable")], 3.0) == [(0.0, 0), (3.0, 1)]


def test_score_stats_split_the_chosen_node_from_the_others() -> None:
    stats = ScoreStats()
    stats.add("n1", {"n1": {"A": 10, "B": 3}, "n2": {"A": 4, "B": 3}, "n3": {"A": 4, "B": 0}})
    stats.add("n2", {"n2": {"A": 4, "B": 0}})
    stats.add("n9", {})  # one feasible node: scoring skipped
    dists = stats.distributions()
    assert (stats.cycles, stats.unscored) == (2, 1)
    assert dists["A"] == ({10: 1, 4: 1}, {4: 2})
    assert dists["B"] == ({3: 1, 0: 1}, {3: 1, 0: 1})
    assert dists[TOTAL] == ({13: 1, 4: 1}, {7: 1, 4: 1})
    assert list(dists) == [TOTAL, "A", "B"]


def test_score_collector_lets_records_go_in_table_mode(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """Table output keeps no record: with --report the run counts scores and drops each record (not --explain's)."""
    from kubesched.simulator import run as run_module

    kept: list[tuple[str, bool]] = []
    original = run_module.simulate

    def spy(*args: object, **kwargs: object) -> run_module.SimulationResult:
        result = original(*args, **kwargs)  # type: ignore[arg-type]
        kept.extend((o.pod.key, o.record is not None) for o in result.outcomes.values())
        return result

    path = tmp_path / "r.html"
    monkeypatch.setattr(run_module, "simulate", spy)
    code, out, _ = simulate(capsys, CLUSTER, "-q", "--output", "table", "--report", str(path), "--explain", "web-1")
    assert code == 0 and "Nodes examined for default/web-1" in out
    assert kept and dict(kept) == {key: key == "default/web-1" for key, _ in kept}
    assert Page(path.read_text()).svgs["scores"] == 1


def test_record_none_leaves_the_scores_out(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "r.html"
    code, _, _ = simulate(capsys, CLUSTER, "-q", "--output", "json", "--record", "none", "--report", str(path))
    page = Page(path.read_text())
    assert code == 0 and page.svgs["scores"] == 0
    assert "Not recorded" in page.words("scores")


def test_many_nodes_are_drawn_in_aggregate(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(report_html, "MAX_NODE_BARS", 3)
    monkeypatch.setattr(report_html, "TOP_NODES", 2)
    path = tmp_path / "r.html"
    assert simulate(capsys, CLUSTER, "-q", "--output", "table", "--report", str(path))[0] == 0
    text = path.read_text()
    assert Page(text).svgs["placements"] == 3  # per zone, a histogram of pods per node, the busiest nodes
    assert "Pods per zone" in text and "The 2 busiest nodes" in text and "Nodes by number of pods" in text


@pytest.mark.parametrize(
    "target", ["missing-dir/report.html", ".", "read-only/report.html"], ids=["no-dir", "a-dir", "read-only"]
)
def test_unwritable_report_path_is_refused_before_the_run(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], target: str
) -> None:
    if target.startswith("read-only"):
        if os.geteuid() == 0:
            pytest.skip("root writes into read-only directories")
        (tmp_path / "read-only").mkdir(mode=0o555)
    code, out, err = simulate(capsys, CLUSTER, "-q", "--output", "json", "--report", str(tmp_path / target))
    assert code == 2
    assert out == ""  # nothing ran: no output at all
    assert err.startswith(f"kubesched: --report: cannot write {tmp_path / target}: ")
    assert "Traceback" not in err
    assert not [p for p in tmp_path.rglob("*") if p.name.endswith(".tmp")]


def test_a_failed_run_leaves_no_report(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    bad = tmp_path / "bad.yaml"
    bad.write_text("apiVersion: v1\nkind: Pod\nmetadata: {name: p}\nspec: {priority: yes}\n")
    code, _, err = simulate(capsys, str(bad), "-q", "--report", str(tmp_path / "r.html"))
    assert code == 2 and "Traceback" not in err
    assert list(tmp_path.iterdir()) == [bad]


def test_python_api_writes_the_same_report(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    sim = kubesched.simulate(SCENARIO, seed=1)
    path = tmp_path / "api.html"
    sim.write_report(path, title="from Python")
    text = path.read_text()
    page = Page(text)
    check_offline(text, page)
    assert "<title>from Python</title>" in text
    assert page.svgs["pending-over-time"] == 1 and page.svgs["scores"] == 1
    cli_path = tmp_path / "cli.html"
    simulate(capsys, SCENARIO, "--seed", "1", "-q", "--output", "json", "--report", str(cli_path))
    # Same run, same figures, byte for byte.
    svgs = [s.split("</svg>")[0] for s in text.split("<svg ")[1:]]
    assert svgs == [s.split("</svg>")[0] for s in cli_path.read_text().split("<svg ")[1:]]
    unrecorded = kubesched.simulate(CLUSTER, seed=1, record=False)
    unrecorded.write_report(tmp_path / "none.html")
    assert "Not recorded" in Page((tmp_path / "none.html").read_text()).words("scores")


def test_config_source_is_in_the_headline(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    config = tmp_path / "sched.yaml"
    config.write_text("apiVersion: kubescheduler.config.k8s.io/v1\nkind: KubeSchedulerConfiguration\n")
    path = tmp_path / "r.html"
    simulate(capsys, CLUSTER, "-q", "--output", "table", "--config", str(config), "--report", str(path))
    assert f"Configuration {config}" in Page(path.read_text()).words("run")
    assert kubesched.simulate(CLUSTER, config=config, record=False).config_source == str(config)


def test_simulate_without_report_does_not_import_matplotlib(tmp_path: Path) -> None:
    code = (
        "import sys; from kubesched.cli import main; "
        f"main(['simulate', {CLUSTER!r}, '-q', '--output', 'json']); "
        "sys.exit(3 if 'matplotlib' in sys.modules else 0)"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=False)
    assert done.returncode == 0, done.stderr[-2000:]


@settings(max_examples=200, deadline=None)
@given(
    cycles=st.lists(
        st.tuples(
            st.integers(0, 5),  # nodes scored
            st.integers(0, 5),  # which one was chosen (past the end: not scored)
            st.lists(st.integers(0, 300), min_size=2 * 6, max_size=2 * 6),  # two plugins' scores
        ),
        max_size=8,
    )
)
def test_score_columns_count_as_node_dicts(cycles: list[tuple[int, int, list[int]]]) -> None:
    """A scores-only record's columns count exactly as the full record's finalScore does."""
    by_dict, by_column = ScoreStats(), ScoreStats()
    for n, pick, values in cycles:
        nodes = [f"n{i}" for i in range(n)]
        columns = {"A": np.asarray(values[:n], dtype=np.int64), "B": np.asarray(values[6 : 6 + n], dtype=np.int64)}
        final = {node: {p: int(c[i]) for p, c in columns.items()} for i, node in enumerate(nodes)}
        by_dict.add(f"n{pick}", final)
        by_column.add_columns(f"n{pick}", nodes, columns)
    assert by_column.distributions() == by_dict.distributions()
    assert (by_column.cycles, by_column.unscored) == (by_dict.cycles, by_dict.unscored)


def test_table_report_counts_every_cycle_from_scores_only_records(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Table output keeps no record: its report's scores come from scores-only records, and draw the same figure as
    json output's full records; neither output changes."""
    figures = {}
    for output in ("table", "json"):
        path = tmp_path / f"{output}.html"
        code, out, _ = simulate(capsys, CLUSTER, "--seed", "1", "-q", "--output", output, "--report", str(path))
        assert code == 0 and simulate(capsys, CLUSTER, "--seed", "1", "-q", "--output", output)[1] == out
        section = path.read_text().split('<section id="scores"')[1].split("</section>")[0]
        figures[output] = section
    assert "<svg" in figures["table"] and figures["table"] == figures["json"]


def test_score_stats_count_widely_spread_values() -> None:
    """Values spread wider than bincount suits (an extender's, a custom weight's) are counted by sorting, alike."""
    stats = ScoreStats()
    stats.add("n1", {"n1": {"A": 10**7}, "n2": {"A": -3}, "n3": {"A": 10**7}})
    assert stats.distributions()["A"] == ({10**7: 1}, {10**7: 1, -3: 1})


GANGS = str(ROOT / "examples" / "gangs")
GANG_GATES = "GenericWorkload=true,GangScheduling=true,TopologyAwareWorkloadScheduling=true"


class Rows(HTMLParser):
    """The cells of each table row in one section of a report."""

    def __init__(self, text: str, section: str) -> None:
        super().__init__(convert_charrefs=True)
        self.section, self.inside, self.cell = section, False, False
        self.rows: list[list[str]] = []
        self.feed(text)
        self.close()

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if tag == "section":
            self.inside = dict(attrs).get("id") == self.section
        elif self.inside and tag == "tr":
            self.rows.append([])
        elif self.inside and tag in ("td", "th"):
            self.rows[-1].append("")
            self.cell = True

    def handle_endtag(self, tag: str) -> None:
        if tag in ("td", "th"):
            self.cell = False

    def handle_data(self, data: str) -> None:
        if self.inside and self.cell:
            self.rows[-1][-1] += data


def test_report_shows_each_pod_group_from_the_digest(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "report.html"
    args = (GANGS, "--seed", "1", "-q", "--feature-gates", GANG_GATES)
    code, _, _ = simulate(capsys, *args, "--output", "table", "--report", str(path))
    assert code == 0
    text = path.read_text()
    page = Page(text)
    check_offline(text, page)
    assert list(page.svgs) == [*SECTIONS[:-2], "pod-groups", *SECTIONS[-2:]]
    assert '<a href="#pod-groups">Pod groups</a>' in text
    header, *rows = Rows(text, "pod-groups").rows
    assert header == ["Pod group", "Policy", "Placed", "State", "What holds the rest back", "Placed on"]
    groups = json.loads(simulate(capsys, *args, "--output", "json")[1])["podGroups"]
    by_name = {r[0]: r for r in rows}
    assert sorted(by_name) == sorted(f"{g['namespace']}/{g['name']}" for g in groups)
    for g in groups:
        row = by_name[f"{g['namespace']}/{g['name']}"]
        assert row[1:3] == [f"minCount {g['minCount']}", f"{g['placed']}/{g['members']}"]
        assert row[4] == (g["holdingBack"] or "-")  # the table's words for the same group
        assert g["explain"].endswith(row[4]) or row[4] == "-"
    train, eval_, tiny = by_name["default/train"], by_name["default/eval"], by_name["default/tiny"]
    assert train[3] == "scheduled whole" and train[5] == "topology.kubernetes.io/zone=b: b1, b2, b3"
    assert eval_[3] == "waiting" and eval_[4].startswith("blocked by: 0/5 nodes are available: ") and eval_[5] == "-"
    assert "Insufficient cpu" in eval_[4]
    assert tiny[4] == "only 2 pods exist, fewer than minCount: they wait in PreEnqueue"
    assert "1 of 4 group(s) scheduled whole" in page.words("pod-groups")


def test_python_api_report_shows_the_same_groups(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    sim = kubesched.simulate(GANGS, seed=1, feature_gates=GANG_GATES)
    assert [g["name"] for g in sim.pod_groups] == ["eval", "pair", "tiny", "train"]
    sim.write_report(tmp_path / "api.html")
    cli = tmp_path / "cli.html"
    simulate(capsys, GANGS, "--seed", "1", "-q", "--feature-gates", GANG_GATES, "--report", str(cli))
    assert Rows((tmp_path / "api.html").read_text(), "pod-groups").rows == Rows(cli.read_text(), "pod-groups").rows


def test_without_groups_the_report_has_no_group_section(tmp_path: Path) -> None:
    kubesched.simulate(CLUSTER, seed=1, record=False).write_report(tmp_path / "r.html")
    assert "pod-groups" not in Page((tmp_path / "r.html").read_text()).svgs


def test_a_large_groups_nodes_are_counted_past_the_first_twenty(tmp_path: Path) -> None:
    def node(i: int) -> dict[str, object]:
        alloc = {"cpu": "4", "memory": "8Gi", "pods": "110"}
        return {"apiVersion": "v1", "kind": "Node", "metadata": {"name": f"n{i}"}, "status": {"allocatable": alloc}}

    def member(i: int) -> dict[str, object]:
        container = {"name": "c", "image": "i", "resources": {"requests": {"cpu": "3"}}}
        spec = {"schedulingGroup": {"podGroupName": "big"}, "containers": [container]}
        return {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": f"w{i}"}, "spec": spec}

    group = {
        "apiVersion": "scheduling.k8s.io/v1alpha2",
        "kind": "PodGroup",
        "metadata": {"name": "big"},
        "spec": {"schedulingPolicy": {"gang": {"minCount": 25}}},
    }
    sim = kubesched.simulate(
        *(node(i) for i in range(25)), group, *(member(i) for i in range(25)), feature_gates=GANG_GATES
    )
    (entry,) = sim.pod_groups
    assert entry["placed"] == 25 and len(entry["nodes"]) == 25  # 3 CPUs of 4: one member a node
    sim.write_report(tmp_path / "r.html")
    _, row = Rows((tmp_path / "r.html").read_text(), "pod-groups").rows
    assert row[5] == ", ".join(f"n{i}" for i in range(20)) + ", ... and 5 more nodes"  # natural order: n2 before n10
