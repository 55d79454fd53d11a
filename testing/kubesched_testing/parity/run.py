"""Run families of seeded cases against upstream and kubesched; the report bench/parity.py prints."""

from __future__ import annotations

import time
from collections.abc import Callable, Iterable
from pathlib import Path

from kubesched_testing.controlplane import ControlPlane, ControlPlaneError, missing_scheduler_reason, scheduler_binary
from kubesched_testing.parity.compare import FamilyReport, tally, write_mismatch
from kubesched_testing.parity.families import generate
from kubesched_testing.parity.upstream import Decision, UpstreamRunner

# Families whose clusters reach upstream's percentageOfNodesToScore. Upstream filters on 16
# goroutines and stops once it has enough feasible nodes, so which nodes it examined (and
# where the next cycle starts) is a matter of timing: those decisions are replayed on the
# nodes upstream found feasible, and the examined counts are not compared.
RESTRICTED_FAMILIES = frozenset({"large"})


def parse_seeds(text: str) -> list[int]:
    """'1-50', '3', '1,4,9-12'."""
    out: list[int] = []
    for part in text.split(","):
        part = part.strip()
        if not part:
            continue
        if "-" in part:
            lo, hi = part.split("-", 1)
            out.extend(range(int(lo), int(hi) + 1))
        else:
            out.append(int(part))
    return out


def run_family(
    cp: ControlPlane,
    family: str,
    seeds: Iterable[int],
    out_dir: Path | None = None,
    progress: Callable[[str], None] = lambda _: None,
    kubernetes_version: str = "1.36",
) -> FamilyReport:
    """`kubernetes_version`: the release both sides follow (its binary upstream, --kubernetes-version here)."""
    binary = scheduler_binary(kubernetes_version)
    if binary is None:
        raise ControlPlaneError(missing_scheduler_reason(kubernetes_version))
    runner = UpstreamRunner(cp, binary=binary)
    decisions: list[Decision] = []
    configs: dict[int, dict[str, object]] = {}
    failures: list[str] = []
    for seed in seeds:
        case = generate(family, seed)
        configs[seed] = case.config
        started = time.monotonic()
        try:
            got = runner.run(case)
        except Exception as err:  # one case the harness could not play is reported; the others go on
            failures.append(f"{family} seed {seed}: {type(err).__name__}: {err}")
            progress(failures[-1])
            continue
        decisions.extend(got)
        progress(f"{family} seed {seed}: {len(got)} decisions in {time.monotonic() - started:.1f}s")
    report = tally(
        family,
        decisions,
        lambda d: configs[d.seed],
        restrict=family in RESTRICTED_FAMILIES,
        kubernetes_version=kubernetes_version,
    )
    report.notes.update({"harness failures": len(failures)} if failures else {})
    if out_dir is not None:
        for m in report.mismatches:
            write_mismatch(m, out_dir, configs[m.decision.seed])
    return report
