"""Which configurations may bring in code and network endpoints.

A profile plugin named by import path ("module.path:factory") makes kubesched import and call
that code; an extender makes it send every pod (annotations, environment values) to a URL.
Manifests, overlays, sweep specs and edits in the UI are data, often someone else's: a
KubeSchedulerConfiguration among them must not be able to do either. So every configuration
is loaded with a `Trust` that says where it came from, and the configuration carries it to
the one place that builds profiles and extenders (the Scheduler). Plugins installed as
packages (the `kubesched.plugins` entry points) are not import paths: installing a package is
a deliberate act, so any configuration may enable them.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Any

from kubesched.config.names import ALL_POINTS
from kubesched.config.types import KubeSchedulerConfiguration

COMMAND_LINE_HINT = "pass this configuration with --config to allow it"


def is_import_path(name: str) -> bool:
    """A plugin name that kubesched would import: "module.path:factory"."""
    return ":" in name


@dataclass(frozen=True)
class Trust:
    """Where a configuration came from, as far as what it may bring in.

    `everything`: a configuration the user gave on purpose (a command-line flag, the Python
    API's `config` argument). Otherwise only the import paths in `plugins` and the extenders
    in `extenders` (entries as decoded, compared whole) pass: those of a configuration that
    was trusted, which an edit may keep but not add to. `hint` tells the user how to pass a
    refused configuration on purpose.
    """

    everything: bool = False
    plugins: frozenset[str] = frozenset()
    extenders: tuple[dict[str, Any], ...] = ()
    hint: str = COMMAND_LINE_HINT

    def hinted(self, hint: str) -> Trust:
        return replace(self, hint=hint)

    @classmethod
    def keeping(cls, cfg: KubeSchedulerConfiguration | None, hint: str) -> Trust:
        """Untrusted, but allowing what `cfg` (a trusted configuration, or None) already named."""
        if cfg is None:
            return Trust(hint=hint)
        return Trust(
            plugins=frozenset(import_paths(cfg)), extenders=tuple(e.model_dump() for e in cfg.extenders), hint=hint
        )


TRUSTED = Trust(everything=True)
UNTRUSTED = Trust()


@dataclass(frozen=True)
class Refusal:
    """What an untrusted configuration may not name: the field and why."""

    field: str
    message: str


def _plugin_names(cfg: KubeSchedulerConfiguration) -> list[tuple[str, str]]:
    """(plugin name, field) for every enabled plugin and every pluginConfig entry of every profile."""
    out: list[tuple[str, str]] = []
    for i, prof in enumerate(cfg.profiles):
        if prof.plugins is not None:
            for point in ALL_POINTS:
                for k, p in enumerate(getattr(prof.plugins, point).enabled):
                    out.append((p.name, f"profiles[{i}].plugins.{point}.enabled[{k}].name"))
        for j, pc in enumerate(prof.pluginConfig):
            out.append((pc.name, f"profiles[{i}].pluginConfig[{j}].name"))
    return out


def import_paths(cfg: KubeSchedulerConfiguration) -> list[str]:
    """The plugin names in `cfg` that are import paths, each once."""
    return list(dict.fromkeys(name for name, _ in _plugin_names(cfg) if is_import_path(name)))


def refusal(cfg: KubeSchedulerConfiguration, trust: Trust) -> Refusal | None:
    """The first import-path plugin or extender `trust` does not allow in `cfg`, or None."""
    if trust.everything:
        return None
    for name, at in _plugin_names(cfg):
        if is_import_path(name) and name not in trust.plugins:
            return Refusal(
                at,
                f'plugin "{name}" is named by import path, which runs its code; a configuration read as data '
                f"may not do that: {trust.hint}",
            )
    for i, ext in enumerate(cfg.extenders):
        if ext.model_dump() not in trust.extenders:
            return Refusal(
                f"extenders[{i}].urlPrefix",
                f'extender "{ext.urlPrefix}" would be sent every pod; a configuration read as data may not '
                f"name one: {trust.hint}",
            )
    return None
