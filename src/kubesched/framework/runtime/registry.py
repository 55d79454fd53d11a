"""Plugin registry: name -> factory(args, handle). In-tree plugins plus any a user adds."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from kubesched.framework.interface import Handle, Plugin

PluginFactory = Callable[[Any, Handle], Plugin]


class Registry(dict[str, PluginFactory]):
    def register(self, name: str, factory: PluginFactory) -> None:
        if name in self:
            raise ValueError(f'a plugin named "{name}" already exists')
        self[name] = factory

    def merge(self, other: Registry) -> None:
        for name, factory in other.items():
            self.register(name, factory)
