"""`kubesched shadow --report`: one self-contained HTML page over the shadowed period.

The summary (agreement, what the shadow's configuration would change), agreement by
namespace, workload and reason, and every decision that was not an agreement (node or
preemption) with the scores, or the nominations and victims, that made the difference.
No script, no outside resource: it opens anywhere and can be mailed as it is.
"""

from __future__ import annotations

import html
from typing import Any

from kubesched.shadow.tally import Decision, Tally

MAX_ROWS = 2000  # disagreements listed; the summary counts them all

_STYLE = """
body{font:14px/1.4 system-ui,sans-serif;margin:2em;color:#222}
table{border-collapse:collapse;margin:1em 0}
td,th{border:1px solid #ccc;padding:.25em .6em;text-align:left}
th{background:#f3f3f3}
td.n{text-align:right}
.differ{background:#fde8e8}.tie{background:#fff7dd}.sampled{background:#eef3ff}
"""


class ReportCollector:
    """The decisions worth listing (all but agreements, preemption included), kept as they come."""

    def __init__(self) -> None:
        self.rows: list[Decision] = []
        self.left_out = 0

    def __call__(self, d: Decision) -> None:
        if d.outcome == "agree" and d.preemption_agrees:
            return
        if len(self.rows) < MAX_ROWS:
            self.rows.append(d)
        else:
            self.left_out += 1


def _e(value: Any) -> str:
    return html.escape("" if value is None else str(value))


def _counts_table(title: str, rows: dict[str, Any]) -> str:
    out = [f"<h2>{_e(title)}</h2><table><tr><th></th><th>observed</th><th>agree</th><th>ties</th><th>agree %</th></tr>"]
    for key, c in rows.items():
        pct = f"{100 * (c['agree'] + c['ties']) / c['observed']:.1f}" if c["observed"] else "-"
        out.append(
            f"<tr><td>{_e(key)}</td><td class=n>{c['observed']}</td><td class=n>{c['agree']}</td>"
            f"<td class=n>{c['ties']}</td><td class=n>{pct}</td></tr>"
        )
    out.append("</table>")
    return "".join(out)


def render(tally: Tally, collector: ReportCollector, assumption: str, config_source: str) -> str:
    s = tally.summary()
    change = s["wouldChange"]
    parts = [
        "<!doctype html><html><head><meta charset=utf-8><title>kubesched shadow report</title>",
        f"<style>{_STYLE}</style></head><body><h1>kubesched shadow</h1>",
        f"<p>{_e(assumption)}</p><p>Shadow configuration: {_e(config_source or 'upstream defaults')}</p>",
        "<table>",
        f"<tr><th>observed</th><td class=n>{s['observed']}</td></tr>",
        *(f"<tr><th>{_e(k)}</th><td class=n>{v}</td></tr>" for k, v in s["outcomes"].items()),
        f"<tr><th>unschedulable (cluster / shadow)</th><td class=n>{change['unschedulable']['actual']} / "
        f"{change['unschedulable']['shadow']}</td></tr>",
        f"<tr><th>nodes used (cluster / shadow)</th><td class=n>{change['nodesUsed']['actual']} / "
        f"{change['nodesUsed']['shadow']}</td></tr>",
        f"<tr><th>most pods on a node (cluster / shadow)</th><td class=n>{change['mostPodsOnANode']['actual']} / "
        f"{change['mostPodsOnANode']['shadow']}</td></tr>",
        f"<tr><th>cpu requested on the chosen node before the pod, mean (cluster / shadow)</th><td class=n>"
        f"{change['cpuOfChosenNode']['actual']}% / {change['cpuOfChosenNode']['shadow']}%</td></tr>",
        f"<tr><th>preemptions (observed / agreeing)</th><td class=n>{s['preemption']['observed']} / "
        f"{s['preemption']['agree']}</td></tr>",
        f"<tr><th>lag, max / mean (ms)</th><td class=n>{s['lagMs']['max']} / {s['lagMs']['mean']}</td></tr>",
        "</table>",
        _counts_table("By namespace", s["byNamespace"]),
        _counts_table("By workload", s["byWorkload"]),
        _counts_table("By the cluster's outcome", s["byReason"]),
        "<h2>Decisions taken otherwise</h2><table><tr><th>pod</th><th>cluster</th><th>shadow</th>"
        "<th>outcome</th><th>why</th></tr>",
    ]
    for d in collector.rows:
        line = d.line()
        why = "; ".join(f"{p}: {v['actual']} vs {v['shadow']}" for p, v in (line.get("scores") or {}).items())
        why = line.get("actualRejected") or line.get("message") or why
        outcome = d.outcome
        if not d.preemption_agrees:
            outcome = "differ"
            why = "preemption: " + "; ".join(
                f"{side} nominates {p['node'] or 'nothing'}, evicting {', '.join(p['victims']) or 'nothing'}"
                for side, p in (("cluster", line["preemption"]["actual"]), ("shadow", line["preemption"]["shadow"]))
            )
        parts.append(
            f"<tr class={_e(outcome)}><td>{_e(d.pod)}</td><td>{_e(d.actual or '(unschedulable)')}</td>"
            f"<td>{_e(d.verdict.node or '(unschedulable)')}</td><td>{_e(outcome)}</td><td>{_e(why)}</td></tr>"
        )
    parts.append("</table>")
    if collector.left_out:
        parts.append(f"<p>{collector.left_out} more not listed.</p>")
    parts.append("</body></html>\n")
    return "".join(parts)
