"""A short parity run per family against real kube-scheduler v1.36 (bench/parity.py runs long ones).

The dra family's bar (issue 16) is 100% exact over 300+ decisions, which seeds 1-20 give:

    export KUBESCHED_K8S_ASSETS=$(../shared/k8s/install.sh)
    python3 bench/parity.py --family dra --seeds 1-20

The configs family (issue 32) is 100% exact on seeds 1-10: `--family configs --seeds 1-10`.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from kubesched_testing.controlplane import ControlPlane
from kubesched_testing.parity.compare import format_table
from kubesched_testing.parity.run import run_family

SMOKE = {
    "plain": range(1, 5),
    "preemption": range(1, 5),
    "volumes": range(1, 5),
    "large": range(2, 3),
    "dra": range(1, 5),
    "configs": range(1, 3),  # random KubeSchedulerConfigurations, one or two profiles
}


@pytest.mark.parametrize("family", sorted(SMOKE))
def test_decisions_match_upstream(control_plane: ControlPlane, family: str, tmp_path: Path) -> None:
    report = run_family(control_plane, family, SMOKE[family], tmp_path)
    assert report.decisions >= 10, f"too few decisions to say anything: {report.decisions}"
    listing = "\n".join(
        f"{m.decision.pod} seed {m.decision.seed} ({m.decision.label}): {'; '.join(m.details[:6])}"
        for m in report.mismatches
    )
    assert not report.mismatches, f"\n{format_table([report])}\n{listing}"
