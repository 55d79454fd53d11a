"""Out-of-tree plugins: entry-point discovery and the errors a user sees for broken ones."""

from __future__ import annotations

from types import SimpleNamespace
from typing import Any

import pytest

from kubesched.framework.interface import FilterPlugin
from kubesched.framework.runtime import out_of_tree
from kubesched.framework.runtime.errors import FrameworkError
from kubesched_testing.cluster import new_test_cluster
from kubesched_testing.wrappers import make_node, make_pod


class DenyAll(FilterPlugin):
    NAME = "DenyAll"

    def filter(self, state: Any, pod: Any, node_info: Any) -> Any:
        from kubesched.framework.status import Code, Status

        return Status(Code.UNSCHEDULABLE, "denied")


def deny_all(args: Any, handle: Any) -> DenyAll:
    return DenyAll()


def profile(*names: str, point: str = "multiPoint") -> dict[str, Any]:
    return {
        "apiVersion": "kubescheduler.config.k8s.io/v1",
        "kind": "KubeSchedulerConfiguration",
        "profiles": [
            {"schedulerName": "default-scheduler", "plugins": {point: {"enabled": [{"name": n} for n in names]}}}
        ],
    }


def fake_entry_points(monkeypatch: pytest.MonkeyPatch, **loaders: Any) -> None:
    eps = [SimpleNamespace(name=n, load=f) for n, f in loaders.items()]
    monkeypatch.setattr(
        out_of_tree.importlib.metadata, "entry_points", lambda group: eps if group == "kubesched.plugins" else []
    )


def test_installed_plugin_is_enabled_by_name(monkeypatch):
    fake_entry_points(monkeypatch, DenyAll=lambda: lambda args, handle: DenyAll())
    tc = new_test_cluster([make_node("n").capacity({"cpu": "1"}).obj()], config=profile("DenyAll"))
    tc.create(make_pod("p").obj())
    tc.sched.run(until=1)
    assert tc.recorder.outcomes[0].message.startswith("0/1 nodes are available: 1 denied.")


def test_a_broken_package_only_matters_to_profiles_that_use_it(monkeypatch):
    def boom() -> Any:
        raise ImportError("No module named 'numpyy'")

    fake_entry_points(monkeypatch, Broken=boom)
    new_test_cluster([], config=None)  # the default profile does not use it
    with pytest.raises(FrameworkError, match="plugin \"Broken\": cannot load entry point: No module named 'numpyy'"):
        new_test_cluster([], config=profile("Broken"))


@pytest.mark.parametrize(
    ("name", "want"),
    [
        ("no_such_module_xyz:new", 'plugin "no_such_module_xyz:new": cannot import module "no_such_module_xyz"'),
        ("json:nope", 'plugin "json:nope": module "json" has no attribute "nope"'),
        ("json:__doc__", 'plugin "json:__doc__": "json:__doc__" is not callable'),
        ("json:dumps", 'initializing plugin "json:dumps": dumps'),
    ],
)
def test_import_path_errors_say_what_is_wrong(name, want):
    with pytest.raises(FrameworkError, match=want.replace("(", r"\(")):
        new_test_cluster([], config=profile(name))


def test_plugin_that_lacks_the_asked_extension_point():
    with pytest.raises(
        FrameworkError, match='plugin "tests.test_out_of_tree:deny_all" does not extend ScorePlugin plugin'
    ):
        new_test_cluster([], config=profile("tests.test_out_of_tree:deny_all", point="score"))
