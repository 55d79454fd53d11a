"""kubesched run's command line: bad input exits 2 with a clear message; json logging."""

from __future__ import annotations

import json
import logging
from pathlib import Path

import pytest

from kubesched.cli import _JSONFormatter, main


def test_bad_config_exits_2_naming_the_field(tmp_path: Path, capsys) -> None:
    cfg = tmp_path / "sched.yaml"
    cfg.write_text(
        "apiVersion: kubescheduler.config.k8s.io/v1\nkind: KubeSchedulerConfiguration\n"
        "leaderElection:\n  leaseDuration: 5s\n  renewDeadline: 10s\n"
    )
    assert main(["run", "--config", str(cfg), "--kubeconfig", str(tmp_path / "none")]) == 2
    err = capsys.readouterr().err
    assert f"{cfg}: invalid KubeSchedulerConfiguration: leaderElection.leaseDuration" in err


def test_profile_errors_name_the_file_and_field(tmp_path: Path, kubeconfig: str, capsys) -> None:
    cfg = tmp_path / "sched.yaml"
    cfg.write_text(
        "apiVersion: kubescheduler.config.k8s.io/v1\nkind: KubeSchedulerConfiguration\n"
        "leaderElection: {leaderElect: false}\nprofiles:\n- plugins:\n    score:\n      enabled: [{name: Foo}]\n"
    )
    assert main(["run", "--config", str(cfg), "--kubeconfig", kubeconfig, "--secure-port", "0"]) == 2
    assert capsys.readouterr().err == (
        f"kubesched: {cfg}: profiles[0].plugins.score.enabled[0].name: initializing profiles: creating profile for "
        'scheduler name default-scheduler: ScorePlugin "Foo" does not exist\n'
    )


def test_unreadable_kubeconfig_exits_2(tmp_path: Path, capsys) -> None:
    assert main(["run", "--kubeconfig", str(tmp_path / "missing"), "--secure-port", "0"]) == 2
    assert "kubesched: cannot reach the cluster:" in capsys.readouterr().err


def test_bad_lease_flag_is_refused(capsys) -> None:
    with pytest.raises(SystemExit) as exit_:
        main(["run", "--leader-elect-lease-duration", "soon"])
    assert exit_.value.code == 2
    assert "invalid duration" in capsys.readouterr().err


def test_json_log_lines() -> None:
    record = logging.LogRecord("kubesched.app", logging.ERROR, __file__, 1, "leaderelection %s", ("lost",), None)
    doc = json.loads(_JSONFormatter().format(record))
    assert (doc["level"], doc["logger"], doc["msg"]) == ("ERROR", "kubesched.app", "leaderelection lost")
