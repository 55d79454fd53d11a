"""`kubesched simulate --report PATH`: one HTML file with the run's figures and tables, readable offline.

Figures are drawn by matplotlib as SVG and written inline, so the file needs no network, no
script and no second file: it opens in any browser, mails as one attachment and prints. The
report reads what the other outputs read (the summary, the pods' states, the events) and, for
score distributions, each scheduling cycle's per-plugin record: the command collects those as
the run goes (`ScoreCollector`, a watcher) and can let each record go once counted, so memory
does not grow with the records. Large clusters are drawn in aggregate (histograms, the top
nodes, zones) rather than one bar a node. matplotlib is imported only when a report is drawn.
"""

from __future__ import annotations

import html
import importlib.metadata
import importlib.util
import io
import re
from collections.abc import Collection, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Protocol, overload

from kubesched.api.quantity import format_quantity
from kubesched.framework.outcome import Outcome
from kubesched.simulator.explain import natural_key
from kubesched.simulator.pod_groups import STATE_WORDS, GroupEntry
from kubesched.simulator.report import human, pod_group_entries, share
from kubesched.simulator.run import SimulationResult, selects
from kubesched.simulator.states import SCHEDULED, pod_states
from kubesched.simulator.summary import Summary, Usage, summarize

if TYPE_CHECKING:
    from matplotlib.axes import Axes
    from matplotlib.figure import Figure


__all__ = [
    "ReportData",
    "ReportError",
    "ScoreCollector",
    "ScoreStats",
    "from_result",
    "pending_series",
    "waiting_series",
    "render",
    "require_plotting",
    "write_html",
]

MAX_NODE_BARS = 60  # up to this many nodes, one bar a node; more: per zone, a histogram and the top nodes
TOP_NODES = 30
TOP_OWNERS = 8  # workloads with their own colour in the placement charts; the rest are "other workloads"
MAX_TABLE_ROWS = 500  # rows of a table (pending pods, warnings) before "... and N more"
MAX_SERIES_POINTS = 2000  # pending-over-time points drawn; more are bucketed (the most waiting in each bucket)
HISTOGRAM_BINS = 20
MAX_GROUP_NODES = 20  # nodes named for a pod group's placed members; the rest are counted
_BINCOUNT_SPAN = 1 << 20  # ScoreStats counts values spanning less than this with bincount (sorting otherwise)
TOTAL = "(total)"  # the sum of a node's final scores, shown beside each plugin's
RUNNING_BEFORE = "running before the simulation"
OTHER_OWNERS = "other workloads"
NO_OWNER = "(no workload)"

# Event types (docs/simulate-contract.md) by what they say about a pod waiting for a node.
_WAITING = frozenset({"Gated", "Unschedulable", "Error", "Nominated"})
_PLACED = frozenset({"Scheduled", "Bound"})
_GONE = frozenset({"Deleted", "Preempted"})


class ReportError(Exception):
    """The report cannot be made (its plotting library is missing)."""


def require_plotting() -> None:
    """Fail before a run, not after it, when matplotlib is not installed."""
    if importlib.util.find_spec("matplotlib") is None:
        raise ReportError("--report needs matplotlib: pip install 'matplotlib==3.11.2' (a kubesched dependency)")


class EventLike(Protocol):
    """An event of the timeline: the simulator's SchedulerEvent or the API's Event."""

    @property
    def time(self) -> float: ...

    @property
    def pod(self) -> str: ...

    @property
    def type(self) -> str: ...


@dataclass(frozen=True, slots=True)
class PodLine:
    """One pod of the contract's `pods`, as the report needs it."""

    key: str
    node: str | None
    result: str
    message: str
    owner: str | None


class ScoreStats:
    """Final (weighted) scores of the nodes each scheduling cycle scored, per Score plugin and in total,
    the chosen node's counted apart from all nodes' (others = all less chosen).

    Scores are integers: each is counted by value, so memory stays small whatever the run's size.
    Values wait in arrays and are counted in batches (numpy), which keeps `add` cheap at 50,000 pods.
    """

    _FLUSH = 1_000_000

    def __init__(self) -> None:
        self.chosen: dict[str, dict[int, int]] = {}
        self.all: dict[str, dict[int, int]] = {}
        self.cycles = 0  # scheduling cycles that chose a node and scored
        self.unscored = 0  # cycles that chose a node without scoring (one feasible node, as upstream)
        self._pending: dict[str, list[Any]] = {}  # plugin -> numpy arrays of values not counted yet
        self._waiting = 0

    def add(self, chosen: str, final: Mapping[str, Mapping[str, int]]) -> None:
        """One cycle that chose `chosen`; `final` is its record's finalScore (node -> plugin -> score)."""
        mine = final.get(chosen)
        if not final or mine is None:
            self.unscored += 1
            return
        import numpy as np

        self.cycles += 1
        scores = list(final.values())
        for plugin, value in mine.items():
            _bump(self.chosen, plugin, value)
            self._wait(plugin, np.asarray([s[plugin] for s in scores if plugin in s], dtype=np.int64))
        _bump(self.chosen, TOTAL, sum(mine.values()))
        self._wait(TOTAL, np.asarray([sum(s.values()) for s in scores], dtype=np.int64))

    def add_columns(self, chosen: str, nodes: Sequence[str], columns: Mapping[str, Any]) -> None:
        """As `add`, from a scores-only record: `columns` maps each plugin to its final scores over `nodes`."""
        import numpy as np

        total = np.zeros(len(nodes), dtype=np.int64)
        for column in columns.values():
            total = total + column
        at = _position(chosen, nodes, total) if columns else -1
        if at < 0:
            self.unscored += 1
            return
        self.cycles += 1
        for plugin, column in columns.items():
            _bump(self.chosen, plugin, int(column[at]))
            self._wait(plugin, column)
        _bump(self.chosen, TOTAL, int(total[at]))
        self._wait(TOTAL, total)

    def _wait(self, plugin: str, values: Any) -> None:
        self._pending.setdefault(plugin, []).append(values)
        self._waiting += len(values)
        if self._waiting >= self._FLUSH:
            self._flush()

    def _flush(self) -> None:
        import numpy as np

        for plugin, arrays in self._pending.items():
            if not arrays:
                continue
            values = np.concatenate(arrays)
            arrays.clear()
            if not len(values):
                continue
            lo, hi = int(values.min()), int(values.max())
            if hi - lo < _BINCOUNT_SPAN:  # scores span a few thousand values: counting beats sorting
                counts = np.bincount(values - lo)
                uniques = np.flatnonzero(counts)
                counts = counts[uniques]
                uniques += lo
            else:
                uniques, counts = np.unique(values, return_counts=True)
            into = self.all.setdefault(plugin, {})
            for v, n in zip(uniques.tolist(), counts.tolist(), strict=True):
                into[v] = into.get(v, 0) + n
        self._waiting = 0

    def distributions(self) -> dict[str, tuple[dict[int, int], dict[int, int]]]:
        """plugin -> (chosen nodes' scores, the other scored nodes' scores), each value -> count; total first."""
        self._flush()
        out: dict[str, tuple[dict[int, int], dict[int, int]]] = {}
        for plugin in [TOTAL, *sorted(p for p in self.all if p != TOTAL)]:
            chosen = self.chosen.get(plugin, {})
            others = {v: n - chosen.get(v, 0) for v, n in self.all.get(plugin, {}).items()}
            out[plugin] = (dict(chosen), {v: n for v, n in others.items() if n > 0})
        return out


def _position(chosen: str, nodes: Sequence[str], total: Any) -> int:
    """Where `chosen` is in `nodes` (-1: absent), looked for first among the best totals, where the cycle chose it:
    reading every node's name cost more than the rest of counting a cycle."""
    import numpy as np

    best = np.flatnonzero(total == total.max()).tolist() if len(total) else []
    for i in [*best, *range(len(nodes))]:
        if nodes[i] == chosen:
            return int(i)
    return -1


class _NodeNames(Sequence[str]):
    """The names of a scores-only record's nodes, read only where asked."""

    def __init__(self, nodes: Sequence[Any]) -> None:
        self.nodes = nodes

    def __len__(self) -> int:
        return len(self.nodes)

    @overload
    def __getitem__(self, i: int) -> str: ...
    @overload
    def __getitem__(self, i: slice) -> list[str]: ...
    def __getitem__(self, i: int | slice) -> str | list[str]:
        if isinstance(i, slice):
            return [ni.name for ni in self.nodes[i]]
        return str(self.nodes[i].name)


def _bump(into: dict[str, dict[int, int]], plugin: str, value: int) -> None:
    counts = into.setdefault(plugin, {})
    counts[value] = counts.get(value, 0) + 1


class ScoreCollector:
    """A simulation watcher: counts each scheduling cycle that chose a node into ScoreStats as it ends.

    With `drop`, it then lets every attempt's record go (but those of the pods `keep` selects, which
    --explain shows): the table output keeps no record, so the report costs no record memory.
    It must run before a watcher that drops records itself (the JSON Lines writer).
    """

    def __init__(self, *, drop: bool, keep: Collection[str] = ()) -> None:
        self.stats = ScoreStats()
        self.drop = drop
        self.keep = frozenset(keep)

    def __call__(self, result: SimulationResult, outcome: Outcome) -> None:
        record = outcome.record
        if record is None:
            return
        if outcome.result == SCHEDULED and outcome.node is not None:
            if not record.scores_only:
                self.stats.add(outcome.node, record.final_score)
            elif record.final_score:  # an extender's scores too: counted as a full record's, node by node
                columns = record.final_columns.items()
                names = [ni.name for ni in record.scored_nodes]
                final = {n: {p: int(c[i]) for p, c in columns} for i, n in enumerate(names)}
                for node, extra in record.final_score.items():
                    final.setdefault(node, {}).update(extra)
                self.stats.add(outcome.node, final)
            else:
                self.stats.add_columns(outcome.node, _NodeNames(record.scored_nodes), record.final_columns)
        if self.drop and not selects(self.keep, result, outcome.pod):
            outcome.record = None


class _Tracker:
    """Which pods wait for a node, event by event (the contract's event types)."""

    def __init__(self) -> None:
        self.state: dict[str, str] = {}  # pod -> waiting | placed | gone
        self.waiting = 0

    def see(self, event: EventLike) -> None:
        if event.type in _WAITING:
            new = "waiting"
        elif event.type in _PLACED:
            new = "placed"
        elif event.type in _GONE:
            new = "gone"
        else:
            return
        old = self.state.get(event.pod)
        self.waiting += (new == "waiting") - (old == "waiting")
        self.state[event.pod] = new


def waiting_series(events: Iterable[EventLike]) -> list[tuple[float, int]]:
    """(time, pods waiting once every event at that time happened), one point per time with events."""
    tracker = _Tracker()
    points: list[tuple[float, int]] = []
    now: float | None = None
    for event in events:
        if now is not None and event.time != now:
            points.append((now, tracker.waiting))
        now = event.time
        tracker.see(event)
    if now is not None:
        points.append((now, tracker.waiting))
    return points


def pending_series(events: Iterable[EventLike], end_time: float, *, untried: int = 0) -> list[tuple[float, int]]:
    """Pods waiting for a node over virtual time: (time, pods waiting once every event at that time happened).

    A pod waits from its first event (pods pending at the start have theirs at time 0) until a
    scheduling cycle chooses a node for it (`Scheduled`), and again after a failed binding
    (`Error`); a deleted or preempted pod no longer waits. `untried` pods (no profile for their
    schedulerName: they leave no event) count as waiting throughout. The series starts at 0 and
    ends at `end_time`; events must be in time order, as the contract's are.
    """
    points = [(t, waiting + untried) for t, waiting in waiting_series(events)]
    if not points or points[0][0] > 0:
        points.insert(0, (0.0, untried))
    if end_time > points[-1][0]:
        points.append((end_time, points[-1][1]))
    return points


@dataclass
class ReportData:
    """Everything a report shows, from the command's result or the Python API's Simulation."""

    title: str
    config_source: str  # "" for upstream's default configuration
    summary: Summary
    pods: list[PodLine]
    events: Sequence[EventLike]
    end_time: float
    warnings: Sequence[str]
    scores: ScoreStats | None  # None when the run kept no per-plugin record
    details: list[tuple[str, str]] = field(default_factory=list)  # more headline lines (seed, options)
    groups: Sequence[GroupEntry] = ()  # the JSON's podGroups: the pod_groups digest, empty without groups


def from_result(
    result: SimulationResult,
    scores: ScoreStats | None,
    *,
    title: str,
    config_source: str,
    details: Sequence[tuple[str, str]] = (),
) -> ReportData:
    """The command's report: `scores` from the ScoreCollector that watched the run (None without records)."""
    states = list(pod_states(result))
    pods = [PodLine(st.key, st.node, st.result, st.message, result.owners.get(st.key)) for st in states]
    return ReportData(
        title=title,
        config_source=config_source,
        summary=summarize(result),
        pods=pods,
        events=result.events,
        end_time=result.end_time,
        warnings=result.warnings,
        scores=scores,
        details=list(details),
        groups=pod_group_entries(result, states),
    )


def write_html(data: ReportData, path: str) -> None:
    """Write a report to `path` (OSError when it cannot be written)."""
    require_plotting()
    text = render(data)
    with open(path, "w", encoding="utf-8", errors="replace") as f:  # a caller's title may hold a lone surrogate
        f.write(text)


# ---------------------------------------------------------------------------------------------------------------
# Rendering


Section = tuple[str, str, str]  # id, heading, HTML content

_CHOSEN_COLOUR = "#1f77b4"
_OTHERS_COLOUR = "#b8b8b8"
_RUNNING_COLOUR = "#dddddd"
_OTHER_OWNERS_COLOUR = "#8c8c8c"
_CSS = """
body{font-family:system-ui,-apple-system,"Segoe UI",Roboto,"Helvetica Neue",Arial,sans-serif;margin:0 auto;
max-width:1100px;padding:1em 2em;color:#222;line-height:1.4}
h1{font-size:1.5em;margin-bottom:.2em}
h2{font-size:1.2em;border-bottom:1px solid #ccc;padding-bottom:.2em;margin-top:2em}
h3{font-size:1em;margin-bottom:.3em}
nav a{margin-right:1em;font-size:.9em}
dl.headline{display:grid;grid-template-columns:max-content auto;gap:.2em 1.5em}dl.headline dt{font-weight:600}
dl.headline dd{margin:0}
table{border-collapse:collapse;font-size:.85em;margin:.5em 0}th,td{border:1px solid #ddd;padding:.2em .5em;
text-align:left;vertical-align:top}th{background:#f4f4f4}td.num{text-align:right;font-variant-numeric:tabular-nums}
figure{margin:1em 0}figure svg{max-width:100%;height:auto}figcaption{font-size:.85em;color:#555}
p.note{color:#555;font-size:.9em}footer{margin-top:3em;font-size:.8em;color:#777}
"""


def render(data: ReportData) -> str:
    """The whole report as one HTML document (self-contained: inline SVG and CSS, no script, no link)."""
    import matplotlib

    with matplotlib.rc_context(
        {
            "svg.hashsalt": "kubesched",  # the same run gives the same file
            "svg.fonttype": "none",  # text stays text: smaller files, selectable, drawn in the reader's sans-serif
            "font.family": "sans-serif",
            "font.size": 9,
            "axes.spines.top": False,
            "axes.spines.right": False,
            "axes.grid": True,
            "axes.axisbelow": True,
            "grid.color": "#e4e4e4",
        }
    ):
        _Figures.count = 0
        tracker = _Tracker()
        for event in data.events:
            tracker.see(event)
        sections = [
            _headline(data),
            _utilisation(data.summary),
            _pending_over_time(data),
            _scores(data.scores),
            _placements(data, tracker),
            _pending_table(data, tracker),
            *_pod_groups(data.groups),
            _fragmentation(data.summary),
            _warnings(data.warnings),
        ]
    nav = "".join(f'<a href="#{sid}">{_e(title)}</a>' for sid, title, _ in sections)
    body = "\n".join(
        f'<section id="{sid}">\n<h2>{_e(title)}</h2>\n{content}\n</section>' for sid, title, content in sections
    )
    return (
        "<!DOCTYPE html>\n"
        '<html lang="en">\n<head>\n<meta charset="utf-8">\n'
        '<meta name="viewport" content="width=device-width, initial-scale=1">\n'
        f"<title>{_e(data.title)}</title>\n<style>{_CSS}</style>\n</head>\n<body>\n"
        f"<h1>{_e(data.title)}</h1>\n<nav>{nav}</nav>\n{body}\n"
        f"<footer>Made by kubesched {_e(_version())} (Kubernetes v1.36 scheduler); figures by matplotlib "
        f"{_e(matplotlib.__version__)}.</footer>\n</body>\n</html>\n"
    )


def _version() -> str:
    try:
        return importlib.metadata.version("kubesched")
    except importlib.metadata.PackageNotFoundError:
        return "(not installed)"


def _e(text: object) -> str:
    return html.escape(str(text), quote=True)


# Figures


class _Figures:
    """Numbers a report's figures, so the ids inside one SVG (clip paths, markers) never clash with another's."""

    count = 0


def _figure(width: float, height: float) -> Figure:
    from matplotlib.figure import Figure

    return Figure(figsize=(width, height), layout="constrained")


_XML_PROLOG = re.compile(r"\A.*?(?=<svg\b)", re.DOTALL)
_METADATA = re.compile(r"<metadata>.*?</metadata>\s*", re.DOTALL)
_ID = re.compile(r'(\bid="|url\(#|xlink:href="#|\bhref="#)([^")]+)')


def _svg(fig: Figure, label: str, caption: str = "") -> str:
    """The figure as inline SVG in a <figure>: no XML prolog (its DOCTYPE names a URL), ids made unique."""
    out = io.StringIO()
    fig.savefig(out, format="svg", metadata={"Date": None, "Creator": None, "Format": None, "Type": None})
    _Figures.count += 1
    prefix = f"f{_Figures.count}-"
    svg = _METADATA.sub("", _XML_PROLOG.sub("", out.getvalue(), count=1))
    svg = _ID.sub(lambda m: m.group(1) + prefix + m.group(2), svg)
    svg = svg.replace("<svg ", f'<svg role="img" aria-label="{_e(label)}" ', 1)
    cap = f"<figcaption>{_e(caption)}</figcaption>" if caption else ""
    return f'<figure class="plot">{svg}{cap}</figure>'


def _percent(ratio: float | None) -> str:
    return "-" if ratio is None else f"{ratio * 100:.0f}%"


def _amount(resource: str, amount: int) -> str:
    return human(resource, format_quantity(resource, amount))


def _share(resource: str, u: Usage) -> str:
    used = share(resource, format_quantity(resource, u.requested), format_quantity(resource, u.allocatable))
    return f"{used} ({_percent(u.utilisation)})"


def _table(headers: Sequence[str], rows: Iterable[Sequence[str]], numeric: Collection[int] = ()) -> str:
    head = "".join(f"<th>{_e(h)}</th>" for h in headers)
    body = "".join(
        "<tr>" + "".join(f"<td{' class=num' if i in numeric else ''}>{_e(c)}</td>" for i, c in enumerate(row)) + "</tr>"
        for row in rows
    )
    return f"<table><thead><tr>{head}</tr></thead><tbody>{body}</tbody></table>"


def _capped(rows: Sequence[Sequence[str]], what: str) -> tuple[Sequence[Sequence[str]], str]:
    if len(rows) <= MAX_TABLE_ROWS:
        return rows, ""
    return rows[:MAX_TABLE_ROWS], f'<p class="note">... and {len(rows) - MAX_TABLE_ROWS} more {what}.</p>'


# Sections


def _headline(data: ReportData) -> Section:
    s = data.summary
    zones = len(s.zones)
    pods = f"{s.scheduled} of {s.pods} scheduled, {s.pending} pending"
    if s.deleted:
        pods += f", {s.deleted} deleted before the end"
    results = ", ".join(f"{r}: {n}" for r, n in sorted(s.by_result.items()))
    lines = [
        ("Pods", pods),
        ("Results", results or "-"),
        ("Nodes", f"{len(s.nodes)} in {zones} zone{'s' if zones != 1 else ''}"),
        ("Configuration", data.config_source or "upstream's default KubeSchedulerConfiguration"),
        ("Virtual time", f"ended at {_duration(data.end_time)}"),
        *data.details,
    ]
    if data.warnings:
        lines.append(("Warnings", f"{len(data.warnings)} (listed at the end)"))
    items = "".join(f"<dt>{_e(k)}</dt><dd>{_e(v)}</dd>" for k, v in lines)
    return "run", "Run", f'<dl class="headline">{items}</dl>'


def _duration(seconds: float) -> str:
    """Virtual time for people: 0s, 250ms, 1m30s, 2h5m."""
    if seconds == 0:
        return "0s"
    if seconds < 1:
        return f"{seconds * 1000:g}ms"
    whole = int(seconds)
    h, rest = divmod(whole, 3600)
    m, s = divmod(rest, 60)
    s_text = f"{s + seconds - whole:g}s" if s or seconds != whole else ""
    return (f"{h}h" if h else "") + (f"{m}m" if m else "") + s_text


def _shown(s: Summary) -> list[str]:
    """The summary's shown resources (cpu, memory, pods and what pods request) that some node offers:
    utilisation means something only for those."""
    return [r for r in s.shown() if s.resources[r].allocatable > 0]


def _utilisation(s: Summary) -> Section:
    shown = _shown(s)
    if not shown:
        return "utilisation", "Utilisation", '<p class="note">No node offers any resource.</p>'
    parts = [_cluster_figure(s, shown)]
    unoffered = [r for r in s.shown() if s.resources[r].allocatable == 0 and r in s.wanted]
    if unoffered:
        parts.append(f'<p class="note">Requested but offered by no node: {_e(", ".join(unoffered))}.</p>')
    if len(s.zones) > 1:
        parts.append(_zones_figure(s, shown))
    if len(s.nodes) > 1:
        parts.append(_node_spread_figure(s, shown))
    rows = [
        [z.zone, str(z.nodes), *(_share(r, z.resources[r]) if r in z.resources else "-" for r in shown)]
        for z in s.zones
    ]
    parts.append("<h3>By zone</h3>" + _table(["Zone", "Nodes", *shown], rows, numeric={1}))
    return "utilisation", "Utilisation", "\n".join(parts)


def _cluster_figure(s: Summary, shown: list[str]) -> str:
    fig = _figure(8, 0.45 * len(shown) + 1.0)
    ax = fig.add_subplot()
    ratios = [100 * (s.resources[r].utilisation or 0.0) for r in shown]
    y = list(range(len(shown)))
    ax.barh(y, ratios, color=_CHOSEN_COLOUR)
    ax.set_yticks(y, shown)
    ax.invert_yaxis()
    ax.set_xlim(0, max(100.0, *ratios) * 1.25)
    ax.set_xlabel("requested / allocatable (%)")
    for i, r in enumerate(shown):
        ax.annotate(_share(r, s.resources[r]), (ratios[i], i), xytext=(4, 0), textcoords="offset points", va="center")
    ax.set_title("Cluster utilisation by resource")
    return _svg(fig, "Cluster utilisation by resource")


def _zones_figure(s: Summary, shown: list[str]) -> str:
    import numpy as np

    zones = [z.zone for z in s.zones]
    fig = _figure(min(11.0, 2 + 0.35 * len(zones) * len(shown) + 0.5 * len(zones)), 3.8)
    ax = fig.add_subplot()
    x = np.arange(len(zones))
    width = 0.8 / len(shown)
    for i, r in enumerate(shown):
        values = [100 * (z.resources[r].utilisation or 0.0) if r in z.resources else 0.0 for z in s.zones]
        ax.bar(x + (i - (len(shown) - 1) / 2) * width, values, width, label=r)
    ax.set_xticks(x, zones, rotation=30 if len(zones) > 6 else 0, ha="right" if len(zones) > 6 else "center")
    ax.set_ylabel("requested / allocatable (%)")
    ax.set_title("Utilisation by zone and resource")
    ax.legend(loc="upper left", bbox_to_anchor=(1.0, 1.0), frameon=False)
    return _svg(fig, "Utilisation by zone and resource", "Zones from the node label topology.kubernetes.io/zone.")


def _node_spread_figure(s: Summary, shown: list[str]) -> str:
    """Per resource, how many nodes are how full: the shape behind the cluster's average."""
    import numpy as np
    from matplotlib.ticker import MaxNLocator

    columns = min(3, len(shown))
    rows = -(-len(shown) // columns)
    fig = _figure(3.3 * columns, 2.3 * rows)
    axes = fig.subplots(rows, columns, squeeze=False)
    for ax, r in zip(axes.flat, shown, strict=False):
        ratios = [100 * u for n in s.nodes if r in n.resources and (u := n.resources[r].utilisation) is not None]
        top = max(100.0, *ratios) if ratios else 100.0
        edges = np.linspace(0, top, HISTOGRAM_BINS + 1)
        ax.hist(ratios, bins=edges, color=_CHOSEN_COLOUR)
        ax.yaxis.set_major_locator(MaxNLocator(integer=True))
        ax.set_title(r)
        ax.set_xlabel("node utilisation (%)")
    for ax in list(axes.flat)[len(shown) :]:
        ax.set_visible(False)
    axes[0][0].set_ylabel("nodes")
    return _svg(fig, "Node utilisation by resource", "Nodes by their requested / allocatable share of each resource.")


def _untried(data: ReportData) -> int:
    """Pods never tried (no profile for their schedulerName): no event says they wait."""
    seen = {e.pod for e in data.events}
    return sum(1 for p in data.pods if p.result != SCHEDULED and p.key not in seen)


def _pending_over_time(data: ReportData) -> Section:
    sid, title = "pending-over-time", "Pending pods over virtual time"
    points = pending_series(data.events, data.end_time, untried=_untried(data))
    if all(t == 0 for t, _ in points):
        note = (
            "Everything happened at virtual time 0 (no Scenario steps after it, no bind latency): "
            f"{points[-1][1]} pod(s) still waited for a node at the end."
        )
        return sid, title, f'<p class="note">{_e(note)}</p>'
    times, counts, bucketed = _drawable(points)
    scale, unit = _time_unit(data.end_time)
    fig = _figure(9, 3.2)
    ax = fig.add_subplot()
    ax.step([t / scale for t in times], counts, where="post", color=_CHOSEN_COLOUR)
    ax.set_xlabel(f"virtual time ({unit})")
    ax.set_ylabel("pods waiting for a node")
    ax.set_ylim(bottom=0)
    ax.set_xlim(left=0)
    caption = (
        "A pod waits from its first event until a scheduling cycle chooses a node for it "
        "(again after a failed binding); deleted and preempted pods no longer count."
    )
    if bucketed:
        caption += f" {len(points)} points drawn as {len(times)}: the most pods waiting within each step."
    return sid, title, _svg(fig, title, caption)


def _drawable(points: list[tuple[float, int]]) -> tuple[list[float], list[int], bool]:
    """Points where the count changes (and the last); at most MAX_SERIES_POINTS, bucketed by time keeping maxima."""
    kept = [p for i, p in enumerate(points) if i == 0 or i == len(points) - 1 or p[1] != points[i - 1][1]]
    if len(kept) <= MAX_SERIES_POINTS:
        return [t for t, _ in kept], [n for _, n in kept], False
    start, end = kept[0][0], kept[-1][0]
    step = (end - start) / (MAX_SERIES_POINTS - 1)
    buckets: dict[int, int] = {}
    for t, n in kept:
        b = int((t - start) / step)
        buckets[b] = max(buckets.get(b, 0), n)
    times = [start + b * step for b in sorted(buckets)]
    counts = [buckets[b] for b in sorted(buckets)]
    times.append(end)
    counts.append(kept[-1][1])
    return times, counts, True


def _time_unit(end: float) -> tuple[float, str]:
    if end >= 3 * 3600:
        return 3600.0, "h"
    if end >= 600:
        return 60.0, "min"
    return 1.0, "s"


def _scores(stats: ScoreStats | None) -> Section:
    sid, title = "scores", "Score distributions"
    if stats is None:
        return sid, title, '<p class="note">Not recorded: the run kept no per-plugin record (--record none).</p>'
    dists = stats.distributions()
    if not stats.cycles:
        note = f"No scheduling cycle scored nodes ({stats.unscored} chose the only feasible node, as upstream does)."
        return sid, title, f'<p class="note">{_e(note)}</p>'
    zero = [p for p, (c, o) in dists.items() if p != TOTAL and not any(c) and not any(o)]
    drawn = [p for p in dists if p not in zero]
    columns = min(3, len(drawn))
    rows = -(-len(drawn) // columns)
    fig = _figure(3.4 * columns, 2.4 * rows)
    axes = fig.subplots(rows, columns, squeeze=False)
    for ax, plugin in zip(axes.flat, drawn, strict=False):
        _score_panel(ax, plugin, *dists[plugin])
    for ax in list(axes.flat)[len(drawn) :]:
        ax.set_visible(False)
    fig.legend(*axes[0][0].get_legend_handles_labels(), loc="outside upper center", ncols=2, frameon=False)
    caption = (
        f"Final (weighted) scores of {stats.cycles} scheduling cycle(s) that chose a node after scoring: the chosen "
        "node's against the other feasible nodes it scored, each as a share of its group."
    )
    if stats.unscored:
        caption += f" {stats.unscored} cycle(s) chose the only feasible node without scoring (as upstream)."
    parts = [_svg(fig, title, caption)]
    if zero:
        parts.append(f'<p class="note">Scored 0 on every node: {_e(", ".join(zero))}.</p>')
    return sid, title, "\n".join(parts)


def _score_panel(ax: Axes, plugin: str, chosen: dict[int, int], others: dict[int, int]) -> None:
    import numpy as np
    from matplotlib.ticker import MaxNLocator

    values = [*chosen, *others]
    lo, hi = min(values), max(values)
    if hi - lo < HISTOGRAM_BINS:
        edges = np.arange(lo - 0.5, hi + 1.5)
    else:
        edges = np.linspace(lo, hi + 1, HISTOGRAM_BINS + 1)
    for counts, colour, label, fill in (
        (others, _OTHERS_COLOUR, "others", True),
        (chosen, _CHOSEN_COLOUR, "chosen", False),
    ):
        if not counts:
            continue
        hist, _ = np.histogram(list(counts), bins=edges, weights=list(counts.values()))
        share = 100 * hist / hist.sum()
        ax.stairs(share, edges, fill=fill, color=colour, label=label, linewidth=1.5)
    ax.xaxis.set_major_locator(MaxNLocator(integer=True, min_n_ticks=1))
    ax.set_title("total of all plugins" if plugin == TOTAL else plugin)
    ax.set_xlabel("final score")
    ax.set_ylabel("% of nodes")


def _placements(data: ReportData, tracker: _Tracker) -> Section:
    """Pods on each node at the end: placed by this simulation (by workload) or running before it."""
    sid, title = "placements", "Placements"
    s = data.summary
    if not s.nodes:
        return sid, title, '<p class="note">No nodes.</p>'
    placed: dict[str, dict[str, int]] = {}
    by_owner: dict[str, int] = {}
    for p in data.pods:
        if p.result != SCHEDULED or p.node is None or tracker.state.get(p.key) == "gone":
            continue
        owner = p.owner or NO_OWNER
        on = placed.setdefault(p.node, {})
        on[owner] = on.get(owner, 0) + 1
        by_owner[owner] = by_owner.get(owner, 0) + 1
    top = sorted(by_owner, key=lambda o: (-by_owner[o], o))[:TOP_OWNERS]
    categories = [*top, *([OTHER_OWNERS] if len(by_owner) > len(top) else []), RUNNING_BEFORE]
    per_node: dict[str, dict[str, int]] = {}
    zone_of: dict[str, str] = {}
    for n in s.nodes:
        counts: dict[str, int] = {}
        for owner, k in placed.get(n.name, {}).items():
            cat = owner if owner in top else OTHER_OWNERS
            counts[cat] = counts.get(cat, 0) + k
        counts[RUNNING_BEFORE] = max(0, n.pods - sum(counts.values()))
        per_node[n.name] = counts
        zone_of[n.name] = n.zone
    colours = _owner_colours(categories)
    parts: list[str] = []
    if len(s.nodes) <= MAX_NODE_BARS:
        names = sorted(per_node, key=natural_key)
        parts.append(_stacked(names, [per_node[n] for n in names], categories, colours, "Pods per node", "node"))
    else:
        zones = [z.zone for z in s.zones]
        by_zone: dict[str, dict[str, int]] = {z: {} for z in zones}
        for name, counts in per_node.items():
            into = by_zone[zone_of[name]]
            for cat, k in counts.items():
                into[cat] = into.get(cat, 0) + k
        parts.append(_stacked(zones, [by_zone[z] for z in zones], categories, colours, "Pods per zone", "zone"))
        parts.append(_pods_histogram([sum(c.values()) for c in per_node.values()]))
        busiest = sorted(per_node, key=lambda n: (-sum(per_node[n].values()), natural_key(n)))[:TOP_NODES]
        parts.append(
            _stacked(
                busiest, [per_node[n] for n in busiest], categories, colours, f"The {TOP_NODES} busiest nodes", "node"
            )
        )
    empty = sum(1 for n in s.nodes if n.pods == 0)
    parts.append(f'<p class="note">{empty} of {len(s.nodes)} node(s) hold no pod at the end.</p>')
    owners = [[o, str(by_owner[o])] for o in sorted(by_owner, key=lambda o: (-by_owner[o], o))]
    rows, more = _capped(owners, "workloads")
    parts.append("<h3>Pods placed by workload</h3>" + _table(["Workload", "Pods placed"], rows, numeric={1}) + more)
    return sid, title, "\n".join(parts)


def _owner_colours(categories: list[str]) -> dict[str, str]:
    from matplotlib import colormaps
    from matplotlib.colors import to_hex

    palette = [to_hex(colormaps["tab10"](i)) for i in range(10) if i != 7]  # tab10's grey is "other workloads"
    colours: dict[str, str] = {}
    for i, cat in enumerate(c for c in categories if c not in (OTHER_OWNERS, RUNNING_BEFORE)):
        colours[cat] = palette[i % len(palette)]
    colours[OTHER_OWNERS] = _OTHER_OWNERS_COLOUR
    colours[RUNNING_BEFORE] = _RUNNING_COLOUR
    return colours


def _stacked(
    labels: list[str],
    counts: list[dict[str, int]],
    categories: list[str],
    colours: dict[str, str],
    title: str,
    axis: str,
) -> str:
    import numpy as np
    from matplotlib.ticker import MaxNLocator

    fig = _figure(min(11.0, 5.0 + 0.22 * len(labels)), 3.8)
    ax = fig.add_subplot()
    x = np.arange(len(labels))
    bottom = np.zeros(len(labels))
    for cat in categories:
        values = np.array([c.get(cat, 0) for c in counts], dtype=float)
        if not values.any():
            continue
        ax.bar(x, values, 0.8, bottom=bottom, color=colours[cat], label=cat)
        bottom += values
    many = len(labels) > 12
    crowded = sum(len(label) for label in labels) > 60
    rotation = 90 if many else 30 if crowded else 0
    ax.set_xticks(
        x, labels, rotation=rotation, ha="right" if rotation == 30 else "center", fontsize=7 if many else None
    )
    ax.yaxis.set_major_locator(MaxNLocator(integer=True))
    ax.set_xlabel(axis)
    ax.set_ylabel("pods")
    ax.set_title(title)
    if bottom.any():  # a legend of nothing makes matplotlib warn on stderr (a cluster without pods)
        ax.legend(loc="upper left", bbox_to_anchor=(1.0, 1.0), frameon=False, fontsize=8)
    return _svg(fig, title)


def _pods_histogram(pods: list[int]) -> str:
    from matplotlib.ticker import MaxNLocator

    fig = _figure(7, 3)
    ax = fig.add_subplot()
    top = max(pods, default=0)
    bins = range(0, top + 2) if top < 2 * HISTOGRAM_BINS else HISTOGRAM_BINS * 2
    ax.hist(pods, bins=bins, color=_CHOSEN_COLOUR)
    ax.xaxis.set_major_locator(MaxNLocator(integer=True))
    ax.set_xlabel("pods on the node")
    ax.set_ylabel("nodes")
    ax.set_title("Nodes by number of pods")
    return _svg(fig, "Nodes by number of pods")


def _pending_table(data: ReportData, tracker: _Tracker) -> Section:
    sid, title = "pending", "Pending pods"
    s = data.summary
    if not s.pending:
        return sid, title, '<p class="note">None: every pod was scheduled (or deleted before the end).</p>'
    parts = [
        "<h3>By reason</h3>"
        + _table(["Reason", "Pods"], [[r, str(n)] for r, n in s.pending_by_reason.items()], numeric={1})
        + '<p class="note">A pod counts once for each reason it had.</p>'
    ]
    waiting = [p for p in data.pods if p.result != SCHEDULED and tracker.state.get(p.key) != "gone"]
    rows, more = _capped([[p.key, p.result, p.owner or "-", p.message] for p in waiting], "pending pods")
    parts.append("<h3>Pods</h3>" + _table(["Pod", "Result", "Workload", "Why"], rows) + more)
    return sid, title, "\n".join(parts)


def _pod_groups(groups: Sequence[GroupEntry]) -> list[Section]:
    """Each PodGroup (gang): its policy, members placed, state, what holds the rest back and where the placed went;
    no section for a run without groups."""
    if not groups:
        return []
    rows = [
        [
            f"{g['namespace']}/{g['name']}",
            f"minCount {g['minCount']}" if g["minCount"] is not None else "basic",
            f"{g['placed']}/{g['members']}",
            STATE_WORDS[g["state"]] + (f" at {_duration(g['timedOutAt'])}" if g["timedOutAt"] is not None else ""),
            g["holdingBack"] or "-",
            _placed_at(g),
        ]
        for g in groups
    ]
    shown, more = _capped(rows, "pod groups")
    whole = sum(1 for g in groups if g["state"] == "Scheduled")
    note = (
        f'<p class="note">{whole} of {len(groups)} group(s) scheduled whole. A gang binds none of its pods until '
        "minCount of them fit; a topology constraint keeps the group within one domain of its node label.</p>"
    )
    table = _table(["Pod group", "Policy", "Placed", "State", "What holds the rest back", "Placed on"], shown)
    return [("pod-groups", "Pod groups", table + more + note)]


def _placed_at(g: GroupEntry) -> str:
    """The domain (topology-constrained groups) and the nodes the placed members went to."""
    if not g["nodes"]:
        return "-"
    placed = list(g["nodes"].items())
    nodes = ", ".join(f"{n} ({k})" if k > 1 else n for n, k in placed[:MAX_GROUP_NODES])
    if len(placed) > MAX_GROUP_NODES:
        nodes += f", ... and {len(placed) - MAX_GROUP_NODES} more nodes"
    if g["topologyKey"] is None:
        return nodes
    domains = ", ".join(f"{g['topologyKey']}={d}" for d in sorted(g["domains"]))
    return f"{domains}: {nodes}"


def _fragmentation(s: Summary) -> Section:
    shown = _shown(s)
    rows = [
        [
            r,
            _amount(r, f.free),
            _amount(r, f.stranded),
            _amount(r, f.largest_free),
            f.largest_free_node or "-",
        ]
        for r, f in s.fragmentation.items()
        if r in shown
    ]
    note = (
        '<p class="note">Free: allocatable less requested. Stranded: free on nodes where no pending pod fits by '
        "its resource requests. Largest free: the most free on one node.</p>"
    )
    return (
        "fragmentation",
        "Fragmentation",
        _table(["Resource", "Free", "Stranded", "Largest free", "On node"], rows) + note,
    )


def _warnings(warnings: Sequence[str]) -> Section:
    if not warnings:
        return "warnings", "Warnings", '<p class="note">None.</p>'
    items = "".join(f"<li>{_e(w)}</li>" for w in warnings[:MAX_TABLE_ROWS])
    more = (
        f'<p class="note">... and {len(warnings) - MAX_TABLE_ROWS} more.</p>' if len(warnings) > MAX_TABLE_ROWS else ""
    )
    return "warnings", "Warnings", f"<ul>{items}</ul>{more}"
