"""Profiles: one framework per schedulerName, built from one registry (upstream's pkg/scheduler/profile).

The Scheduler asks for its plugin registry and its profile map here, so that what a
configuration turns into (which plugins exist, which frameworks run them) is decided in
one place and before any queue or cycle exists. `new_map` also holds the profiles to
what one scheduler can serve: one queue orders every pod, so every profile must sort
with the same plugin and the same arguments, and no two may answer to one name.
"""

from __future__ import annotations

from kubesched.config.load import SchedulerConfig
from kubesched.config.trust import import_paths, is_import_path, refusal
from kubesched.framework.interface import Handle
from kubesched.framework.plugins.registry import new_in_tree_registry
from kubesched.framework.runtime.errors import FrameworkError
from kubesched.framework.runtime.framework import Framework
from kubesched.framework.runtime.out_of_tree import entry_point_registry, import_path_factory
from kubesched.framework.runtime.registry import Registry

Map = dict[str, Framework]


def plugin_registry(config: SchedulerConfig, registry: Registry | None = None) -> Registry:
    """The in-tree plugins, then `registry`'s, then installed packages', then the configuration's import paths.

    An installed package cannot replace an in-tree or explicitly given plugin. A
    configuration the trust policy refuses (one not made by load_config) is refused here,
    before any of its import paths becomes an import.
    """
    reg = new_in_tree_registry(config.release)
    if registry is not None:
        reg.merge(registry)
    for name, factory in entry_point_registry().items():
        if name not in reg:
            reg.register(name, factory)
    raw = config.raw
    refused = refusal(raw, config.trust)
    if refused is not None:
        raise FrameworkError(refused.message, config.field_in_document(refused.field) or refused.field)
    for name in import_paths(raw):  # the one place a plugin name becomes an import (when it is used)
        if name not in reg:
            reg.register(name, import_path_factory(name))
    return reg


def unknown_plugin_configs(config: SchedulerConfig, registry: Registry) -> list[str]:
    """pluginConfig entries for plugins that do not exist: kube-scheduler accepts and ignores them."""
    return [
        f'profiles[{i}].pluginConfig[{j}].name: no plugin "{pc.name}" exists, so its args are not used'
        for i, prof in enumerate(config.raw.profiles)
        for j, pc in enumerate(prof.pluginConfig)
        if pc.name not in registry and not is_import_path(pc.name)
    ]


def new_map(config: SchedulerConfig, registry: Registry, handle: Handle) -> Map:
    """NewMap: a framework per profile, each given `handle` (the services every profile shares) as its own.

    A profile that cannot be built, or that one scheduler cannot serve beside the others,
    raises FrameworkError located in the configuration's document.
    """
    raw = config.raw
    batching = config.release.enabled("OpportunisticBatching")
    out: Map = {}
    first: tuple[str, object] | None = None  # the first profile's queue sort plugin and its args
    for i, (prof, args) in enumerate(zip(raw.profiles, config.profile_args, strict=True)):
        name = prof.schedulerName or ""
        try:
            fwk = Framework(
                registry,
                prof,
                args,
                handle,
                percentage_of_nodes_to_score=raw.percentageOfNodesToScore,
                opportunistic_batching=batching,
            )
            if name in out:
                raise FrameworkError(f'a profile with scheduler name "{name}" is already defined', "schedulerName")
            sort = (fwk.queue_sort.name, args.get(fwk.queue_sort.name))
            if first is None:
                first = sort
            elif sort[0] != first[0]:
                raise FrameworkError(
                    f'queue sort plugin "{sort[0]}" differs from the first profile\'s "{first[0]}"',
                    "plugins.queueSort",
                )
            elif sort[1] != first[1]:
                raise FrameworkError(f'queue sort plugin "{sort[0]}" has other args than in the first profile')
        except FrameworkError as err:
            raise FrameworkError(
                f"initializing profiles: creating profile for scheduler name {prof.schedulerName}: {err}",
                config.field_in_document(f"profiles[{i}].{err.field}" if err.field else f"profiles[{i}]"),
            ) from err
        out[name] = fwk
    return out
