#!/usr/bin/env python3
"""Parity with real kube-scheduler v1.36 (or v1.35, v1.34): the same decisions, one by one, from both schedulers.

    export KUBESCHED_K8S_ASSETS=$(../shared/k8s/install.sh)
    python3 bench/parity.py --family plain --seeds 1-50 [--family preemption ...] [--out DIR]
    python3 bench/parity.py --family dra --seeds 1-20      # issue 16's bar: 300+ decisions, all exact
    python3 bench/parity.py --kubernetes-version 1.35 --seeds 1-5   # after ../shared/k8s/install.sh 1.35
    python3 bench/parity.py --family configs --seeds 1-10  # random configurations, one or two profiles
    python3 bench/parity.py --family gang --seeds 1-5      # PodGroups, the workload-aware alpha gates on (v1.36)

For every seeded cluster of a family, upstream kube-scheduler schedules its pods
one at a time on a real etcd + kube-apiserver; kubesched then replays each
decision on the exact state upstream saw. The table counts decisions that match
exactly (result, FitError text, every node's weighted score per plugin, chosen
node within the top-scoring set, the devices allocated to each ResourceClaim of a
bound pod, preemption's nominee and victims); each mismatch
is listed with its state file (manifests `kubesched simulate` reads) and a JSON
file of both sides. Exit status 1 when any decision differs.
"""

from __future__ import annotations

import argparse
import logging
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "testing"))  # kubesched_testing: not in the wheel
from kubesched_testing.controlplane import ControlPlaneError, control_plane  # noqa: E402
from kubesched_testing.parity.compare import format_table  # noqa: E402
from kubesched_testing.parity.families import FAMILIES  # noqa: E402
from kubesched_testing.parity.gang import run_gang_family  # noqa: E402
from kubesched_testing.parity.run import parse_seeds, run_family  # noqa: E402


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--family", action="append", choices=[*FAMILIES, "gang", "all"], help="repeatable; default: all")
    p.add_argument("--seeds", default="1-10", help="e.g. 1-50 or 1,4,9-12 (default 1-10)")
    p.add_argument("--out", type=Path, help="where mismatch files go (default: a new temporary folder)")
    p.add_argument("--max-listed", type=int, default=50, help="mismatches printed per family")
    p.add_argument(
        "--kubernetes-version",
        default="1.36",
        choices=("1.34", "1.35", "1.36"),
        help="upstream's kube-scheduler of this release against kubesched --kubernetes-version (default 1.36)",
    )
    args = p.parse_args(argv)
    # A replay's scheduling errors (a plugin failing on the pod, as upstream's did) are compared, not logged.
    logging.getLogger("kubesched").setLevel(logging.CRITICAL)
    families = [*FAMILIES, "gang"] if not args.family or "all" in args.family else args.family
    seeds = parse_seeds(args.seeds)
    out = args.out or Path(tempfile.mkdtemp(prefix="kubesched-parity-"))
    started = time.monotonic()
    reports = []
    try:
        with control_plane() as cp:
            for fam in families:
                if fam == "gang":  # workload-aware scheduling: its own control plane, the alpha API served
                    if args.kubernetes_version != "1.36":
                        print(f"parity: gang: v1.36 only (not {args.kubernetes_version}): skipped", file=sys.stderr)
                        continue
                    reports.append(run_gang_family(cp, seeds, progress=lambda s: print(s, file=sys.stderr)))
                    continue
                reports.append(
                    run_family(
                        cp,
                        fam,
                        seeds,
                        out,
                        progress=lambda s: print(s, file=sys.stderr),
                        kubernetes_version=args.kubernetes_version,
                    )
                )
    except ControlPlaneError as err:
        print(f"parity: {err}", file=sys.stderr)
        return 2
    print(format_table(reports))
    print(
        f"\nkube-scheduler v{args.kubernetes_version} against kubesched --kubernetes-version {args.kubernetes_version}"
    )
    print(f"{sum(r.decisions for r in reports)} decisions in {time.monotonic() - started:.0f}s; files in {out}")
    for r in reports:
        for key, n in r.notes.items():
            print(f"{r.family}: {key}: {n}")
        for m in r.mismatches[: args.max_listed]:
            d = m.decision
            print(f"\n{d.family} seed {d.seed} {d.pod} ({d.label}): {', '.join(m.kinds)}\n  state: {m.state_file}")
            for line in m.details[:12]:
                print(f"  {line}")
            if len(m.details) > 12:
                print(f"  ... {len(m.details) - 12} more")
    return 1 if any(r.mismatches for r in reports) else 0


if __name__ == "__main__":
    sys.exit(main())
