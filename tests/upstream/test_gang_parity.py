"""The `gang` family against real kube-scheduler v1.36, with the workload-aware alpha gates on both sides.

Seed 2 places three gangs without constraints, 9 has a topology gang that fits nowhere, and in 12
NodeResourcesFit's placement score (MostAllocated over a domain) outweighs PodGroupPodsCount, so a
gang takes the fuller zone and half of it waits; in 14 a high-priority gang preempts lower-priority pods
as a whole (WorkloadAwarePreemption); in 18 two gangs share a ResourceClaim each
(DRAWorkloadResourceClaims) on a DeviceClass with one device: the first allocates it once
for all its members, the second cannot allocate its claim and waits. Longer runs:

    export KUBESCHED_K8S_ASSETS=$(../shared/k8s/install.sh)
    python3 bench/parity.py --family gang --seeds 1-8
"""

from __future__ import annotations

import pytest

from kubesched_testing.controlplane import assets_dir, missing_assets_reason
from kubesched_testing.parity.compare import format_table
from kubesched_testing.parity.gang import run_gang_family

SEEDS = [2, 9, 12, 14, 18]

pytestmark = pytest.mark.skipif(assets_dir() is None, reason=missing_assets_reason())


def test_gang_decisions_match_upstream() -> None:
    report = run_gang_family(None, SEEDS)  # its own control plane: the alpha API served
    assert report.decisions >= 50, f"too few decisions to say anything: {report.decisions}"
    listing = "\n".join(f"{m.decision.pod} seed {m.decision.seed}: {'; '.join(m.details)}" for m in report.mismatches)
    assert not report.mismatches, f"\n{format_table([report])}\n{listing}"
    assert report.exact == report.decisions
