"""The fault suite (testing/kubesched_testing/faults.py), kubesched only, at CI size.

`python3 bench/faults.py` runs the same scenarios against upstream kube-scheduler too.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from kubesched.backend.kube.api import KubeAPI
from kubesched_testing.controlplane import ControlPlane
from kubesched_testing.faults import run_scenario

pytestmark = pytest.mark.filterwarnings("ignore::urllib3.exceptions.InsecureRequestWarning")


@pytest.mark.parametrize("scenario", ["dropped", "rival", "kill", "restart"])
def test_no_wrong_write_under_faults(
    control_plane: ControlPlane, admin_api: KubeAPI, tmp_path: Path, scenario: str
) -> None:
    fig = run_scenario(control_plane, admin_api, "kubesched", scenario, tmp_path, nodes=6)
    assert fig.overcommitted_nodes == 0, fig.notes
    assert fig.wrong_conditions == 0, fig.notes
    assert fig.tracebacks == 0
    assert fig.bound == fig.fit, fig.notes
    if scenario == "kill":
        assert fig.first_binding_after_restart_s is not None
