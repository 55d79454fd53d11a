"""Plugins by import path and extenders come only from a configuration given on purpose (issue 28, item 1).

Every route by which a KubeSchedulerConfiguration arrives as data (FILES, --overlay, a sweep
spec, a Scenario step, the UI's edits, documents given to the Python API) is tried with a real
payload, `pty:spawn` running `touch MARKER`: the marker must never appear, and the refusal must
name the plugin or extender and the way to pass it on purpose. The same plugin (a harmless one
that touches its own marker) through --config or simulate(config=...) still runs, and an
extender named there is still called.
"""

from __future__ import annotations

import importlib
import socket
from collections.abc import Iterator
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest
import yaml
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from starlette.testclient import TestClient

import kubesched
from kubesched.cli import main
from kubesched.config.load import ConfigError, SchedulerConfig, defaulted_configuration, load_config
from kubesched.config.names import ALL_POINTS
from kubesched.config.trust import TRUSTED, UNTRUSTED, Trust, refusal
from kubesched.framework.interface import FilterPlugin
from kubesched.framework.runtime import out_of_tree
from kubesched.framework.runtime.errors import FrameworkError
from kubesched.framework.status import Status
from kubesched.ui.server import create_app
from kubesched.ui.workspace import InputError, Workspace
from kubesched_testing.cluster import new_test_cluster

LOCAL = "http://127.0.0.1:8080"
"""The UI answers only to its own names (loopback's by default)."""

V1 = {"apiVersion": "kubescheduler.config.k8s.io/v1", "kind": "KubeSchedulerConfiguration"}
NODE = {
    "apiVersion": "v1",
    "kind": "Node",
    "metadata": {"name": "n1"},
    "status": {"allocatable": {"cpu": "4", "memory": "8Gi", "pods": "110"}},
}
POD = {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p1"}, "spec": {"containers": [{"name": "c"}]}}


class Passes(FilterPlugin):
    NAME = "Passes"

    def filter(self, state: Any, pod: Any, node_info: Any) -> Status | None:
        return None


def touch_marker(args: Any, handle: Any) -> Passes:
    """A plugin factory with a visible effect: it touches the file its args name."""
    Path(args["path"]).touch()
    return Passes()


def spawn_config(marker: Path) -> dict[str, Any]:
    """The attack: pty.spawn(["/bin/sh", "-c", "touch MARKER"], handle)."""
    return {
        **V1,
        "profiles": [
            {
                "schedulerName": "default-scheduler",
                "plugins": {"filter": {"enabled": [{"name": "pty:spawn"}]}},
                "pluginConfig": [{"name": "pty:spawn", "args": ["/bin/sh", "-c", f"touch {marker}"]}],
            }
        ],
    }


def marker_config(marker: Path) -> dict[str, Any]:
    name = "tests.test_trust:touch_marker"
    return {
        **V1,
        "profiles": [
            {
                "schedulerName": "default-scheduler",
                "plugins": {"filter": {"enabled": [{"name": name}]}},
                "pluginConfig": [{"name": name, "args": {"path": str(marker)}}],
            }
        ],
    }


def extender_config(port: int) -> dict[str, Any]:
    ext = {"urlPrefix": f"http://127.0.0.1:{port}/x", "filterVerb": "filter", "httpTimeout": "200ms"}
    return {**V1, "extenders": [ext]}


@pytest.fixture
def listener() -> Iterator[socket.socket]:
    """A loopback port that records connections (the kernel queues them; nothing answers)."""
    sock = socket.socket()
    sock.bind(("127.0.0.1", 0))
    sock.listen(16)
    sock.settimeout(0.2)
    yield sock
    sock.close()


def connected(sock: socket.socket) -> bool:
    try:
        conn, _ = sock.accept()
    except TimeoutError:
        return False
    conn.close()
    return True


def write(path: Path, *docs: dict[str, Any]) -> str:
    path.write_text(yaml.safe_dump_all(docs))
    return str(path)


@pytest.fixture
def cluster(tmp_path: Path) -> str:
    return write(tmp_path / "cluster.yaml", NODE, POD)


def refused(err: str, *needles: str) -> None:
    assert len(err.strip().splitlines()) == 1, err
    for needle in needles:
        assert needle in err, err


# --- the command line ---------------------------------------------------------------------------------------


@pytest.mark.parametrize("how", ["file", "overlay"])
def test_simulate_refuses_a_plugin_by_import_path_among_the_files(
    tmp_path: Path, cluster: str, capsys: pytest.CaptureFixture[str], how: str
) -> None:
    marker = tmp_path / "PWNED"
    evil = write(tmp_path / "evil.yaml", spawn_config(marker))
    args = [cluster, evil] if how == "file" else [cluster, "--overlay", evil]
    assert main(["simulate", "-q", *args]) == 2
    assert not marker.exists()
    err = capsys.readouterr().err
    refused(err, f"{evil}, document 1: profiles[0].plugins.filter.enabled[0].name", '"pty:spawn"', "with --config")


def test_simulate_config_flag_still_runs_the_plugin(
    tmp_path: Path, cluster: str, capsys: pytest.CaptureFixture[str]
) -> None:
    marker = tmp_path / "ran"
    config = write(tmp_path / "config.yaml", marker_config(marker))
    assert main(["simulate", "-q", "--output", "json", cluster, "--config", config]) == 0
    assert marker.exists()


def test_simulate_refuses_an_extender_among_the_files_without_connecting(
    tmp_path: Path, cluster: str, capsys: pytest.CaptureFixture[str], listener: socket.socket
) -> None:
    evil = write(tmp_path / "evil.yaml", extender_config(listener.getsockname()[1]))
    assert main(["simulate", "-q", cluster, evil]) == 2
    assert not connected(listener)
    refused(capsys.readouterr().err, f"{evil}, document 1: extenders[0].urlPrefix", "127.0.0.1", "with --config")


def test_an_extender_from_config_flag_is_still_called(
    tmp_path: Path, cluster: str, capsys: pytest.CaptureFixture[str], listener: socket.socket
) -> None:
    config = write(tmp_path / "config.yaml", extender_config(listener.getsockname()[1]))
    main(["simulate", "-q", "--output", "json", cluster, "--config", config])
    assert connected(listener)


def test_whatif_refuses_a_plugin_among_its_files(
    tmp_path: Path, cluster: str, capsys: pytest.CaptureFixture[str]
) -> None:
    marker = tmp_path / "PWNED"
    evil = write(tmp_path / "evil.yaml", spawn_config(marker))
    assert main(["whatif", "compare", cluster, evil, "--config", "default", "--config", "default"]) == 2
    assert not marker.exists()
    refused(capsys.readouterr().err, '"pty:spawn"', "with --config")


def test_a_scenario_step_cannot_configure_the_scheduler(
    tmp_path: Path, cluster: str, capsys: pytest.CaptureFixture[str]
) -> None:
    marker = tmp_path / "PWNED"
    scenario = {
        "apiVersion": "kubesched.io/v1alpha1",
        "kind": "Scenario",
        "steps": [{"at": "1s", "create": [spawn_config(marker)]}],
    }
    main(["simulate", "-q", "--output", "json", cluster, write(tmp_path / "scenario.yaml", scenario)])
    assert not marker.exists()
    assert "KubeSchedulerConfiguration" in capsys.readouterr().err  # skipped, and said so


# --- sweep ----------------------------------------------------------------------------------------------------


def sweep_spec(tmp_path: Path, config: str = "default", base: tuple[str, ...] = ("cluster.yaml",)) -> str:
    return write(tmp_path / "spec.yaml", {"base": list(base), "config": config})


def test_sweep_refuses_a_config_its_spec_names(
    tmp_path: Path, cluster: str, capsys: pytest.CaptureFixture[str]
) -> None:
    marker = tmp_path / "PWNED"
    write(tmp_path / "evil.yaml", spawn_config(marker))
    assert main(["sweep", "--workers", "1", sweep_spec(tmp_path, "evil.yaml")]) == 2
    assert not marker.exists()
    refused(capsys.readouterr().err, '"pty:spawn"', "give this file to kubesched sweep with --config")


def test_sweep_refuses_a_config_among_its_base_files(
    tmp_path: Path, cluster: str, capsys: pytest.CaptureFixture[str]
) -> None:
    marker = tmp_path / "PWNED"
    write(tmp_path / "evil.yaml", spawn_config(marker))
    assert main(["sweep", "--workers", "1", sweep_spec(tmp_path, base=("cluster.yaml", "evil.yaml"))]) == 2
    assert not marker.exists()
    refused(capsys.readouterr().err, '"pty:spawn"', "name it as the spec's config")


def test_sweep_runs_a_spec_config_also_given_with_config_flag(
    tmp_path: Path, cluster: str, capsys: pytest.CaptureFixture[str]
) -> None:
    marker = tmp_path / "ran"
    config = write(tmp_path / "mine.yaml", marker_config(marker))
    spec = sweep_spec(tmp_path, "mine.yaml")
    assert main(["sweep", "--workers", "1", "--output", "json", spec, "--config", config]) == 0
    assert marker.exists()


# --- the Python API -------------------------------------------------------------------------------------------


@pytest.mark.parametrize("where", ["objects", "text", "overlay"])
def test_api_refuses_a_config_among_the_documents(tmp_path: Path, where: str) -> None:
    marker = tmp_path / "PWNED"
    evil = spawn_config(marker)
    with pytest.raises(kubesched.InputError) as caught:
        if where == "objects":
            kubesched.simulate([NODE, POD, evil])
        elif where == "text":
            kubesched.simulate([NODE, POD], text=yaml.safe_dump(evil))
        else:
            kubesched.simulate([NODE, POD], overlays=[evil])
    assert not marker.exists()
    refused(str(caught.value), '"pty:spawn"', "simulate(config=...)")


def test_api_config_argument_still_runs_the_plugin(tmp_path: Path) -> None:
    marker = tmp_path / "ran"
    sim = kubesched.simulate([NODE, POD], config=marker_config(marker))
    assert marker.exists()
    assert sim.pod("p1").scheduled


def test_a_scheduler_config_built_by_hand_is_held_to_its_trust(tmp_path: Path) -> None:
    """The Scheduler is the last gate: a SchedulerConfig that load_config did not make is untrusted by default."""
    marker = tmp_path / "PWNED"
    cfg = SchedulerConfig(defaulted_configuration(spawn_config(marker)))
    with pytest.raises(FrameworkError, match='plugin "pty:spawn" is named by import path'):
        from kubesched.simulator.load import LoadedInput
        from kubesched.simulator.run import simulate

        simulate(LoadedInput(), cfg)
    assert not marker.exists()


# --- the UI ---------------------------------------------------------------------------------------------------


@pytest.fixture
def ui(cluster: str) -> TestClient:
    return TestClient(create_app(Workspace.from_files([cluster])), base_url=LOCAL)


def test_ui_refuses_a_config_edit(tmp_path: Path, ui: TestClient) -> None:
    marker = tmp_path / "PWNED"
    r = ui.put("/api/config", json={"text": yaml.safe_dump(spawn_config(marker))})
    assert r.status_code == 400
    assert not marker.exists()
    refused(r.json()["error"], "the configuration edited in the UI", '"pty:spawn"', "kubesched ui")


def test_ui_refuses_a_config_among_edited_objects(tmp_path: Path, ui: TestClient, listener: socket.socket) -> None:
    marker = tmp_path / "PWNED"
    r = ui.post("/api/objects", json={"text": yaml.safe_dump(spawn_config(marker))})
    assert r.status_code == 400
    assert not marker.exists()
    refused(r.json()["error"], '"pty:spawn"', "kubesched ui")
    r = ui.post("/api/objects", json={"text": yaml.safe_dump(extender_config(listener.getsockname()[1]))})
    assert r.status_code == 400
    assert not connected(listener)
    refused(r.json()["error"], "extenders[0].urlPrefix")


def test_ui_refuses_a_config_among_its_files(tmp_path: Path, cluster: str) -> None:
    marker = tmp_path / "PWNED"
    evil = write(tmp_path / "evil.yaml", spawn_config(marker))
    with pytest.raises(InputError, match='"pty:spawn"'):
        Workspace.from_files([cluster, evil])
    assert not marker.exists()


def test_ui_edit_may_keep_what_config_flag_trusted_but_not_add(tmp_path: Path, cluster: str) -> None:
    marker = tmp_path / "ran"
    config = write(tmp_path / "config.yaml", marker_config(marker))
    client = TestClient(create_app(Workspace.from_files([cluster], config)), base_url=LOCAL)
    assert marker.exists()
    marker.unlink()
    edited = marker_config(marker)
    edited["profiles"][0]["percentageOfNodesToScore"] = 50
    assert client.put("/api/config", json={"text": yaml.safe_dump(edited)}).status_code == 200
    assert marker.exists()
    evil = tmp_path / "PWNED"
    added = marker_config(marker)
    added["profiles"][0]["plugins"]["filter"]["enabled"].append({"name": "pty:spawn"})
    added["profiles"][0]["pluginConfig"].append({"name": "pty:spawn", "args": ["/bin/sh", "-c", f"touch {evil}"]})
    r = client.put("/api/config", json={"text": yaml.safe_dump(added)})
    assert r.status_code == 400
    assert not evil.exists()
    refused(r.json()["error"], '"pty:spawn"')


def test_an_edit_may_keep_a_trusted_extender_but_not_move_it() -> None:
    trusted = load_config(extender_config(1), trust=TRUSTED).raw
    edit = Trust.keeping(trusted, "hint")
    assert refusal(load_config(extender_config(1), trust=TRUSTED).raw, edit) is None
    moved = refusal(load_config(extender_config(2), trust=TRUSTED).raw, edit)
    assert moved is not None
    assert moved.field == "extenders[0].urlPrefix"
    assert '"http://127.0.0.1:2/x"' in moved.message
    assert moved.message.endswith(": hint")


def test_installed_plugins_stay_available_from_any_configuration(monkeypatch: pytest.MonkeyPatch) -> None:
    """Installing a package is the deliberate act: a configuration among the documents may enable it."""
    eps = [SimpleNamespace(name="Passes", load=lambda: lambda args, handle: Passes())]
    monkeypatch.setattr(
        out_of_tree.importlib.metadata, "entry_points", lambda group: eps if group == "kubesched.plugins" else []
    )
    config = {**V1, "profiles": [{"plugins": {"filter": {"enabled": [{"name": "Passes"}]}}}]}
    sim = kubesched.simulate([NODE, POD, config], record=True)
    plugins = sim.pod("p1").plugins
    assert plugins is not None
    assert plugins.filter["n1"]["Passes"] == "passed"


# --- any shape of configuration -------------------------------------------------------------------------------

_modules = st.from_regex(r"kst_[a-z]{1,8}(\.[a-z]{1,6})?", fullmatch=True)
_import_paths = st.builds(lambda m, a: f"{m}:{a}", _modules, st.from_regex(r"[a-z]{1,6}", fullmatch=True))
_points = st.sampled_from(ALL_POINTS)


@st.composite
def _configs(draw: st.DrawFn) -> dict[str, Any]:
    """Profiles with import-path plugins at random points, in pluginConfig, or both."""
    profiles = []
    for i in range(draw(st.integers(1, 3))):
        plugins: dict[str, Any] = {}
        for name in draw(st.lists(_import_paths, max_size=3)):
            point = draw(_points)
            plugins.setdefault(point, {"enabled": []})["enabled"].append({"name": name})
        configs = [{"name": n, "args": {}} for n in draw(st.lists(_import_paths, max_size=2, unique=True))]
        profile: dict[str, Any] = {"schedulerName": f"s{i}", "plugins": plugins, "pluginConfig": configs}
        profiles.append(profile)
    if not any(p["plugins"] or p["pluginConfig"] for p in profiles):
        profiles[0]["plugins"] = {"filter": {"enabled": [{"name": draw(_import_paths)}]}}
    return {**V1, "profiles": profiles}


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(config=_configs(), route=st.sampled_from(["objects", "overlay", "load_config"]))
def test_no_untrusted_configuration_imports_anything(
    monkeypatch: pytest.MonkeyPatch, config: dict[str, Any], route: str
) -> None:
    imported: list[str] = []
    real = importlib.import_module

    def recording(name: str, package: str | None = None) -> Any:
        imported.append(name)
        return real(name, package)

    monkeypatch.setattr(importlib, "import_module", recording)
    if route == "load_config":
        with pytest.raises(ConfigError):
            load_config(config, trust=UNTRUSTED)
    elif route == "objects":
        with pytest.raises(kubesched.InputError):
            kubesched.simulate([NODE, POD, config])
    else:
        with pytest.raises(kubesched.InputError):
            kubesched.simulate([NODE, POD], overlays=[config])
    assert not [m for m in imported if m.startswith("kst_")]


def test_trusted_configuration_does_import(monkeypatch: pytest.MonkeyPatch) -> None:
    """The property's recorder sees imports: the same kind of configuration, trusted, is imported."""
    imported: list[str] = []
    real = importlib.import_module

    def recording(name: str, package: str | None = None) -> Any:
        imported.append(name)
        return real(name, package)

    monkeypatch.setattr(importlib, "import_module", recording)
    config = {**V1, "profiles": [{"plugins": {"filter": {"enabled": [{"name": "kst_nothing:new"}]}}}]}
    with pytest.raises(FrameworkError, match='cannot import module "kst_nothing"'):
        new_test_cluster([], config=config)
    assert "kst_nothing" in imported
