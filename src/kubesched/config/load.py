"""Load, default and validate a KubeSchedulerConfiguration document."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import pydantic

from kubesched.api.errors import FieldError
from kubesched.config.defaults import default_args, set_defaults
from kubesched.config.types import API_VERSION, ARGS_TYPES, KIND, KubeSchedulerConfiguration, _Args
from kubesched.config.validation import validate_args, validate_configuration


class ConfigError(ValueError):
    """An unusable configuration; `errors` lists every field at fault."""

    def __init__(self, errors: list[FieldError], source: str = "", *, kind: str = KIND) -> None:
        self.errors = errors
        self.source = source
        prefix = f"{source}: " if source else ""
        super().__init__(prefix + f"invalid {kind}: " + "; ".join(str(e) for e in errors))


@dataclass
class SchedulerConfig:
    """A defaulted, validated configuration with typed args per profile."""

    raw: KubeSchedulerConfiguration
    profile_args: list[dict[str, Any]] = field(default_factory=list)


def _loc(loc: tuple[Any, ...]) -> str:
    out = ""
    for part in loc:
        out += f"[{part}]" if isinstance(part, int) else (f".{part}" if out else str(part))
    return out


def pydantic_errors(err: pydantic.ValidationError, prefix: str = "") -> list[FieldError]:
    out = []
    for e in err.errors():
        path = _loc(tuple(e["loc"]))
        path = f"{prefix}.{path}" if prefix and path else (prefix or path)
        msg = "unknown field" if e["type"] == "extra_forbidden" else e["msg"]
        out.append(FieldError(path, msg))
    return out


def load_config(doc: dict[str, Any] | None, *, source: str = "") -> SchedulerConfig:
    """Turn a parsed YAML document (or None for the defaults) into a SchedulerConfig."""
    doc = dict(doc or {"apiVersion": API_VERSION, "kind": KIND})
    errors: list[FieldError] = []
    if doc.get("kind", KIND) != KIND:
        errors.append(FieldError("kind", f'"{doc.get("kind")}" is not {KIND}'))
    if doc.get("apiVersion", API_VERSION) != API_VERSION:
        errors.append(FieldError("apiVersion", f'"{doc.get("apiVersion")}" is not supported, use {API_VERSION}'))
    if errors:
        raise ConfigError(errors, source)
    try:
        cfg = KubeSchedulerConfiguration.model_validate(doc)
    except pydantic.ValidationError as err:
        raise ConfigError(pydantic_errors(err), source) from err
    set_defaults(cfg)
    profile_args: list[dict[str, Any]] = []
    for i, prof in enumerate(cfg.profiles):
        typed: dict[str, Any] = {}
        for j, pc in enumerate(prof.pluginConfig):
            path = f"profiles[{i}].pluginConfig[{j}].args"
            kind = ARGS_TYPES.get(pc.name)
            if kind is None:
                typed[pc.name] = pc.args
                continue
            want = f"{pc.name}Args"
            if pc.args and pc.args.get("kind") not in (None, want):
                errors.append(
                    FieldError(f"{path}.kind", f'"{pc.args.get("kind")}" does not match plugin {pc.name}, want {want}')
                )
                continue
            try:
                args: _Args | None = kind.model_validate(pc.args) if pc.args is not None else None
            except pydantic.ValidationError as err:
                errors += pydantic_errors(err, path)
                continue
            args = default_args(pc.name, args)
            assert args is not None
            errors += validate_args(pc.name, args, path)
            typed[pc.name] = args
        profile_args.append(typed)
    errors += validate_configuration(cfg)
    if errors:
        raise ConfigError(errors, source)
    return SchedulerConfig(cfg, profile_args)
