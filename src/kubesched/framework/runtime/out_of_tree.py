"""Out-of-tree plugins: installed packages (entry points) and plugins a config names by import path.

Two ways in, as upstream's out-of-tree registry is the two ways a Go binary gets
plugins compiled in:

- a package declares `[project.entry-points."kubesched.plugins"] MyPlugin = "pkg.mod:new"`;
  profiles then enable `MyPlugin` like any in-tree plugin;
- a profile names `pkg.mod:new` directly (no install step), and pluginConfig uses that name;
  only a configuration given on purpose may (--config, simulate(config=...); config/trust.py),
  and the Scheduler registers such names only then.

A factory is called as `factory(args, handle)` and returns the plugin. A factory with an
`ARGS` attribute (a pydantic model) gets its pluginConfig args validated into that
model, with errors naming the field. Imports happen when a profile uses the plugin,
so one broken package cannot stop profiles that do not use it.
"""

from __future__ import annotations

import importlib
import importlib.metadata
from collections.abc import Iterable
from typing import Any

import pydantic

from kubesched.framework.interface import Handle, Plugin
from kubesched.framework.runtime.registry import PluginFactory, Registry

ENTRY_POINT_GROUP = "kubesched.plugins"


class PluginLoadError(ValueError):
    """A plugin that cannot be imported, built or given its args; the message names it."""


def load_factory(name: str, target: str) -> PluginFactory:
    """Import "module.path:attribute" for plugin `name`."""
    module_name, sep, attr = target.partition(":")
    if not sep or not module_name or not attr:
        raise PluginLoadError(f'plugin "{name}": "{target}" is not an import path of the form module.path:factory')
    try:
        module = importlib.import_module(module_name)
    except Exception as err:
        raise PluginLoadError(f'plugin "{name}": cannot import module "{module_name}": {err}') from err
    obj: Any = module
    for part in attr.split("."):
        try:
            obj = getattr(obj, part)
        except AttributeError as err:
            raise PluginLoadError(f'plugin "{name}": module "{module_name}" has no attribute "{attr}"') from err
    if not callable(obj):
        raise PluginLoadError(f'plugin "{name}": "{target}" is not callable')
    return obj


def typed_args(name: str, factory: Any, args: Any) -> Any:
    """Validate raw pluginConfig args into the factory's ARGS model, if it declares one."""
    model = getattr(factory, "ARGS", None)
    if model is None or not (isinstance(model, type) and issubclass(model, pydantic.BaseModel)):
        return args
    if isinstance(args, model):
        return args
    raw = {k: v for k, v in (args or {}).items() if k not in ("kind", "apiVersion")}
    try:
        return model.model_validate(raw)
    except pydantic.ValidationError as err:
        problems = "; ".join(
            f"args.{'.'.join(str(p) for p in e['loc'])}: "
            + ("unknown field" if e["type"] == "extra_forbidden" else e["msg"])
            for e in err.errors()
        )
        raise PluginLoadError(f'plugin "{name}": {problems}') from err


class _Lazy:
    """A registry entry that imports its factory on first use."""

    def __init__(self, name: str, load: Any) -> None:
        self.name = name
        self._load = load
        self._factory: Any = None

    def factory(self) -> Any:
        if self._factory is None:
            try:
                self._factory = self._load()
            except PluginLoadError:
                raise
            except Exception as err:  # an entry point's module is someone else's code
                raise PluginLoadError(f'plugin "{self.name}": cannot load entry point: {err}') from err
            if not callable(self._factory):
                raise PluginLoadError(f'plugin "{self.name}": entry point is not callable')
        return self._factory

    def __call__(self, args: Any, handle: Handle) -> Plugin:
        f = self.factory()
        return f(typed_args(self.name, f, args), handle)


def entry_point_registry(entry_points: Iterable[Any] | None = None) -> Registry:
    """Plugins installed packages declare in the `kubesched.plugins` entry point group."""
    r = Registry()
    eps = entry_points if entry_points is not None else importlib.metadata.entry_points(group=ENTRY_POINT_GROUP)
    for ep in eps:
        if ep.name not in r:
            r.register(ep.name, _Lazy(ep.name, ep.load))
    return r


def import_path_factory(name: str) -> PluginFactory:
    """The factory for a profile plugin named "module.path:factory"."""
    return _Lazy(name, lambda: load_factory(name, name))
