"""Configuration checks that depend on the kube-scheduler release (`--kubernetes-version`).

validation.py is v1.36's ValidateKubeSchedulerConfiguration; what an older release adds or
refuses on top of it sits here, so that release differences in configuration stay in one
file: v1.35 forbids DynamicResourcesArgs.bindingTimeout unless DRADeviceBindingConditions and
DRAResourceClaimDeviceStatus are both on (they are off by default there), v1.34 has no such
field, and neither release has v1.36's placement extension points.
"""

from __future__ import annotations

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


def release_checks(cfg: KubeSchedulerConfiguration, release: Release) -> list[FieldError]:
    """The errors `release`'s kube-scheduler gives that v1.36's validation does not."""
    errs: list[FieldError] = []
    for i, prof in enumerate(cfg.profiles):
        path = f"profiles[{i}]"
        if not release.placement_points and prof.plugins is not None:
            for point in n.PLACEMENT_POINTS:
                plugin_set = getattr(prof.plugins, point)
                if plugin_set.enabled or plugin_set.disabled:
                    errs.append(FieldError(f"{path}.plugins.{point}", f"unknown field in {release.version}"))
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
                errs.append(
                    forbidden(
                        f"{path}.pluginConfig[{j}].args.bindingTimeout",
                        "DRADeviceBindingConditions or DRAResourceClaimDeviceStatus feature gate is disabled",
                    )
                )
    return errs
