"""Configuration checks that depend on the kube-scheduler release (`--kubernetes-version`).

validation.py is v1.36's ValidateKubeSchedulerConfiguration; what an older release adds or
refuses on top of it sits here, so that release differences in configuration stay in one
file: v1.35 forbids DynamicResourcesArgs.bindingTimeout unless DRADeviceBindingConditions and
DRAResourceClaimDeviceStatus are both on (they are off by default there), v1.34 has no such
field, and neither release has v1.36's placement extension points (its strict decoding refuses them).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from kubesched.api.errors import FieldError
from kubesched.config import names as n
from kubesched.config.types import DynamicResourcesArgs, KubeSchedulerConfiguration
from kubesched.config.validation import forbidden
from kubesched.release import Release


def release_decode_error(cfg: KubeSchedulerConfiguration, release: Release) -> tuple[str, str] | None:
    """Fields the release's types do not have, as its strict decoding refuses them: (field, message)."""
    if release.dynamic_resources_binding_timeout_field:
        return None
    for i, prof in enumerate(cfg.profiles):
        for j, pc in enumerate(prof.pluginConfig):
            if isinstance(pc.args, DynamicResourcesArgs) and pc.args.bindingTimeout is not None:
                return (
                    f"profiles[{i}].pluginConfig[{j}].args.bindingTimeout",
                    f"strict decoding error: decoding .profiles[{i}].pluginConfig[{j}]: strict decoding error: "
                    f'decoding args for plugin {pc.name}: strict decoding error: unknown field "bindingTimeout"',
                )
    return None


def release_unknown_fields(doc: Mapping[str, Any], release: Release) -> tuple[str, str] | None:
    """The placement points in a release without them: (the first one's path, the release's strict decoding
    error), or None."""
    if release.placement_points:
        return None
    profiles = doc.get("profiles")
    found = []
    for i, prof in enumerate(profiles if isinstance(profiles, list) else ()):
        plugins = prof.get("plugins") if isinstance(prof, Mapping) else None
        if isinstance(plugins, Mapping):
            found += [f"profiles[{i}].plugins.{p}" for p in n.PLACEMENT_POINTS if p in plugins]
    if not found:
        return None
    return found[0], "strict decoding error: " + ", ".join(f'unknown field "{f}"' for f in found)


def release_checks(cfg: KubeSchedulerConfiguration, release: Release, errors: list[FieldError]) -> list[FieldError]:
    """v1.36's validation `errors` as `release`'s kube-scheduler gives them: its own checks added, and a
    bindingTimeout it forbids not also checked for its length."""
    errs: list[FieldError] = []
    forbidden_at: set[str] = set()
    for i, prof in enumerate(cfg.profiles):
        path = f"profiles[{i}]"
        for j, pc in enumerate(prof.pluginConfig):
            args = pc.args
            if (
                release.dynamic_resources_binding_timeout_field
                and isinstance(args, DynamicResourcesArgs)
                and args.bindingTimeout is not None
                and not (
                    release.enabled("DRADeviceBindingConditions") and release.enabled("DRAResourceClaimDeviceStatus")
                )
            ):
                at = f"{path}.pluginConfig[{j}].args.bindingTimeout"
                forbidden_at.add(at)
                errs.append(
                    forbidden(at, "DRADeviceBindingConditions or DRAResourceClaimDeviceStatus feature gate is disabled")
                )
    return [e for e in errors if e.path not in forbidden_at] + errs
