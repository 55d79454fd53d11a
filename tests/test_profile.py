"""Explicit construction: profile.new_map builds one framework per profile from one handle of services,
and the Scheduler hands every profile the same services, whole, before any plugin is built."""

from __future__ import annotations

import dataclasses
from typing import Any

import pytest

from kubesched.config.load import SchedulerConfig, load_config
from kubesched.config.trust import TRUSTED
from kubesched.config.types import Plugin, PluginConfig, PluginSet
from kubesched.framework.interface import Handle
from kubesched.framework.plugins.dynamicresources.dra_manager import shared_manager
from kubesched.framework.plugins.queuesort.priority_sort import PrioritySort
from kubesched.framework.runtime.errors import FrameworkError
from kubesched.framework.runtime.registry import Registry
from kubesched.profile import new_map, plugin_registry, unknown_plugin_configs
from kubesched_testing.cluster import new_test_cluster


def _two_profiles(**second: Any) -> SchedulerConfig:
    """Two profiles; `second` fields of the second set after loading, past validation (a hand-built config)."""
    cfg = load_config(
        {
            "apiVersion": "kubescheduler.config.k8s.io/v1",
            "kind": "KubeSchedulerConfiguration",
            "profiles": [{"schedulerName": "a"}, {"schedulerName": "b"}],
        },
        trust=TRUSTED,
    )
    for key, value in second.items():
        setattr(cfg.raw.profiles[1], key, value)
    return cfg


def test_one_framework_per_profile_each_with_its_own_handle() -> None:
    cfg = _two_profiles()
    services = Handle(parallelism=3)
    profiles = new_map(cfg, plugin_registry(cfg), services)
    assert list(profiles) == ["a", "b"]
    for name, fwk in profiles.items():
        assert fwk.handle.profile_name == name and fwk.handle.framework is fwk
        assert fwk.handle.parallelism == 3
    assert services.profile_name == "" and services.framework is None  # the given handle is left as it was


def test_two_profiles_with_one_name_are_refused() -> None:
    cfg = _two_profiles(schedulerName="a")
    with pytest.raises(FrameworkError, match='scheduler name "a" is already defined') as err:
        new_map(cfg, plugin_registry(cfg), Handle())
    assert err.value.field == "profiles[1].schedulerName"


def test_profiles_must_sort_with_the_same_queue_sort_plugin() -> None:
    cfg = _two_profiles()
    plugins = cfg.raw.profiles[1].plugins
    assert plugins is not None
    plugins.queueSort = PluginSet(enabled=[Plugin(name="Other")], disabled=[Plugin(name="*")])
    reg = plugin_registry(cfg, _registry_with_other_sort())
    with pytest.raises(FrameworkError, match='differs from the first profile\'s "PrioritySort"') as err:
        new_map(cfg, reg, Handle())
    assert err.value.field == "profiles[1].plugins.queueSort"


def test_profiles_must_give_the_queue_sort_plugin_the_same_args() -> None:
    cfg = _two_profiles()
    cfg.profile_args[1]["PrioritySort"] = {"unexpected": True}
    with pytest.raises(FrameworkError, match="other args than in the first profile"):
        new_map(cfg, plugin_registry(cfg), Handle())


def _registry_with_other_sort() -> Registry:
    class Other(PrioritySort):
        NAME = "Other"

    reg = Registry()
    reg.register("Other", lambda args, handle: Other())
    return reg


def test_plugin_config_for_a_plugin_nobody_registered_is_reported() -> None:
    cfg = _two_profiles(pluginConfig=[PluginConfig(name="Nobody", args={})])
    assert unknown_plugin_configs(cfg, plugin_registry(cfg)) == [
        'profiles[1].pluginConfig[0].name: no plugin "Nobody" exists, so its args are not used'
    ]


def test_the_scheduler_gives_every_profile_the_same_services_whole() -> None:
    tc = new_test_cluster(
        config={
            "apiVersion": "kubescheduler.config.k8s.io/v1",
            "kind": "KubeSchedulerConfiguration",
            "profiles": [{"schedulerName": "a"}, {"schedulerName": "b"}],
        }
    )
    sched = tc.sched
    a, b = (sched.profiles[n].handle for n in ("a", "b"))
    for h in (a, b):
        unset = [f.name for f in dataclasses.fields(h) if getattr(h, f.name) is None]
        # A simulation scrapes no metrics, and PodGroup states exist only with GenericWorkload: every other
        # service is given.
        assert unset == ["metrics", "pod_groups"]
        assert h.snapshot is sched.snapshot and h.nominator is sched.queue.nominator
        assert h.clock is sched.clock and h.rng is sched.rng and h.lister is sched.lister
    assert shared_manager(a) is shared_manager(b)  # one DRA manager, a typed field of every handle
    with pytest.raises(dataclasses.FrozenInstanceError):
        a.snapshot = None  # type: ignore[misc]
