"""Start-up: what the command imports before its informers can list, and the collector's part in it."""

from __future__ import annotations

import gc
import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from kubesched.startup import freeze_survivors, survivors_frozen, without_gc


def _modules_after(code: str) -> set[str]:
    """The modules a fresh interpreter holds after running `code`."""
    out = subprocess.run(
        [sys.executable, "-c", f"{code}\nimport json, sys\nprint(json.dumps(sorted(sys.modules)))"],
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    return set(json.loads(out))


def test_importing_the_package_imports_none_of_the_scheduler() -> None:
    loaded = _modules_after("import kubesched")
    assert {m for m in loaded if m.startswith("kubesched")} == {"kubesched"}
    assert "numpy" not in loaded and "pydantic" not in loaded


def test_the_package_names_resolve_on_first_use() -> None:
    import kubesched
    from kubesched.framework.status import Code
    from kubesched.scheduler import Scheduler

    assert kubesched.Scheduler is Scheduler
    assert kubesched.Code is Code
    assert callable(kubesched.simulate)
    with pytest.raises(AttributeError, match="no attribute 'nope'"):
        _ = kubesched.nope


def test_run_can_start_its_informers_before_the_scheduler_is_imported() -> None:
    """`kubesched run` starts the informers in SchedulerApp.__init__ before it imports the framework: the command
    line and the app module must not pull the scheduler, numpy or the CEL parser in ahead of them."""
    loaded = _modules_after("import kubesched.cli, kubesched.app, kubesched.backend.kube.cluster")
    early = {"kubesched.scheduler", "kubesched.framework.runtime.framework", "numpy", "celpy", "lark"}
    assert not early & loaded, sorted(early & loaded)


def test_cel_is_imported_by_the_first_selector_only() -> None:
    loaded = _modules_after("import kubesched.framework.plugins.registry")
    assert "celpy" not in loaded and "kubesched.dra.cel" not in loaded
    loaded = _modules_after(
        "from kubesched.dra.selector import CELSelectors, DeviceView\n"
        "device = DeviceView('d.example.com', {}, {}, False)\n"
        "assert CELSelectors().matches('device.driver == \"d.example.com\"', device)"
    )
    assert "celpy" in loaded


def test_without_gc_turns_the_collector_off_inside_and_freezes_what_was_made() -> None:
    assert gc.isenabled()
    frozen = gc.get_freeze_count()
    try:
        with without_gc():
            assert not gc.isenabled()
            made = [[i] for i in range(1000)]
        assert gc.isenabled()
        assert gc.get_freeze_count() >= frozen + len(made)
    finally:
        gc.unfreeze()


def test_without_gc_leaves_a_collector_already_off_alone() -> None:
    gc.disable()
    try:
        frozen = gc.get_freeze_count()
        with without_gc():
            pass
        assert not gc.isenabled()
        assert gc.get_freeze_count() == frozen
    finally:
        gc.enable()


def test_the_entry_point_runs_the_command_line() -> None:
    done = subprocess.run([sys.executable, "-m", "kubesched", "--version"], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    assert done.stdout.startswith("kubesched ") and "(Kubernetes v1.36)" in done.stdout


def test_survivors_frozen_lets_go_of_what_was_frozen_inside() -> None:
    gc.unfreeze()
    with survivors_frozen():
        made = [[i] for i in range(1000)]
        freeze_survivors()
        assert gc.get_freeze_count() >= len(made)
    assert gc.get_freeze_count() == 0


def test_simulate_freezes_before_the_output_and_leaves_nothing_frozen(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """Frozen at its phase boundaries, so the output's collections skip the run's objects; nothing frozen
    after, so a process running commands one after another frees each one's garbage."""
    from kubesched import cli
    from kubesched.simulator import commands

    gc.unfreeze()
    frozen_at_output: list[int] = []
    write = commands._write

    def counting(*args: Any, **kw: Any) -> int:
        frozen_at_output.append(gc.get_freeze_count())
        return write(*args, **kw)

    monkeypatch.setattr(commands, "_write", counting)
    cluster = tmp_path / "c.yaml"
    cluster.write_text(
        "apiVersion: v1\nkind: Node\nmetadata: {name: n1}\nstatus: {allocatable: {cpu: '2', memory: 1Gi, pods: '10'}}\n"
        "---\napiVersion: v1\nkind: Pod\nmetadata: {name: p1}\nspec: {containers: [{name: c}]}\n"
    )
    assert cli.main(["simulate", str(cluster), "-q", "--output", "json"]) == 0
    assert json.loads(capsys.readouterr().out)["pods"][0]["node"] == "n1"
    assert frozen_at_output and frozen_at_output[0] > 0
    assert gc.get_freeze_count() == 0


def test_the_entry_point_exits_with_the_heap_frozen(monkeypatch: pytest.MonkeyPatch) -> None:
    """The interpreter's last collection has nothing to walk: what the command left is frozen."""
    import kubesched.__main__ as entry
    from kubesched import cli

    gc.unfreeze()
    left: list[list[int]] = []

    def command() -> int:
        left.append([1])
        return 3

    monkeypatch.setattr(cli, "main", command)
    try:
        assert entry.main() == 3
        assert left and not any(o is left[0] for o in gc.get_objects())  # only frozen objects are left out
    finally:
        gc.unfreeze()
