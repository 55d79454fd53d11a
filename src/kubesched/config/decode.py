"""Decode a KubeSchedulerConfiguration document the way kube-scheduler's strict codec does.

Upstream turns the YAML into JSON and decodes it case-sensitively into the v1 Go
types, failing on the first value of the wrong type and collecting every unknown
field (strict decoding); then it decodes each in-tree plugin's args the same way.
Here the parsed document is walked against the pydantic models and their Go types
(types.Go), producing upstream's error texts and a normalised document: nulls
dropped, durations and base64 data in Go's spelling, whole floats as ints.
"""

from __future__ import annotations

import base64
import binascii
import functools
import math
import types
from dataclasses import dataclass, field
from typing import Annotated, Any, Union, get_args, get_origin

from pydantic import BaseModel

from kubesched.config.goduration import canonical, go_quote
from kubesched.config.types import (
    API_VERSION,
    ARGS_TYPES,
    GROUP,
    KIND,
    Go,
    GoStruct,
    KubeSchedulerConfiguration,
    _Args,
)

SCHEME = "pkg/scheduler/apis/config/scheme/scheme.go:29"
_TYPE_META = 'struct { APIVersion string "json:\\"apiVersion,omitempty\\""; Kind string "json:\\"kind,omitempty\\"" }'
_INT_RANGE = {"int32": (-(2**31), 2**31 - 1), "int64": (-(2**63), 2**63 - 1)}


class DecodeError(ValueError):
    """A document upstream cannot decode; the message is upstream's, `field` the path it does not give
    (`profiles[0].plugins.score.enabled[1].weight`; Go names the struct field without list indices)."""

    def __init__(self, message: str, field: str = "") -> None:
        super().__init__(message)
        self.field = field


@dataclass
class _State:
    """One decode: the first type error (Go keeps decoding past it) and the unknown fields."""

    type_error: str | None = None
    type_error_path: str = ""
    unknown: list[str] = field(default_factory=list)

    def type_error_at(self, message: str, path: str) -> None:
        if self.type_error is None:
            self.type_error, self.type_error_path = message, path


@dataclass(frozen=True)
class Spec:
    """How one field decodes and serialises: its JSON shape and the Go type errors name."""

    kind: str  # struct, slice, map, scalar, raw
    go: str = ""  # the Go type's name, as errors print it
    model: type[BaseModel] | None = None
    elem: Spec | None = None
    pointer: bool = False  # optional in Go (a pointer): left out only when unset


def _json_kind(value: Any) -> str:
    if isinstance(value, bool):
        return "bool"
    if isinstance(value, int | float):
        return "number"
    if isinstance(value, str):
        return "string"
    if isinstance(value, dict):
        return "object"
    if isinstance(value, list):
        return "array"
    return "string"  # YAML-only scalars (timestamps) reach Go as strings


def _number_literal(value: int | float) -> str:
    if isinstance(value, float) and value.is_integer() and abs(value) < 1e21:
        return str(int(value))
    return repr(value) if isinstance(value, float) else str(value)


@functools.cache
def field_spec(model: type[BaseModel], name: str) -> Spec:
    """How a model's field decodes (and serialises)."""
    f = model.model_fields[name]
    return _spec_of(f.annotation, f.metadata)


def _spec_of(annotation: Any, metadata: list[Any] = ()) -> Spec:  # type: ignore[assignment]
    """The decoding spec of a field from its (possibly Annotated, Optional) type."""
    metadata = list(metadata)
    pointer = False
    while True:
        origin = get_origin(annotation)
        if origin is Annotated:
            base, *extra = get_args(annotation)
            annotation, metadata = base, metadata + list(extra)
        elif origin in (Union, types.UnionType):
            options = [a for a in get_args(annotation) if a is not type(None)]
            pointer = pointer or len(options) < len(get_args(annotation))
            annotation = options[0]
        else:
            break
    spec = _plain_spec(annotation, metadata)
    return Spec(spec.kind, spec.go, spec.model, spec.elem, pointer) if pointer else spec


def _plain_spec(annotation: Any, metadata: list[Any]) -> Spec:
    for m in metadata:
        if isinstance(m, GoStruct):
            inner = _struct(m.model)
            if get_origin(annotation) is list:
                return Spec("slice", "[]" + inner.go, elem=inner)
            return inner
    go = next((m.type for m in metadata if isinstance(m, Go)), None)
    if go == "raw":
        return Spec("raw")
    if go == "map[string]string":
        return Spec("map", go, elem=Spec("scalar", "string"))
    if isinstance(annotation, type) and issubclass(annotation, BaseModel):
        return _struct(annotation)
    if get_origin(annotation) is list:
        elem = _spec_of(get_args(annotation)[0])
        return Spec("slice", "[]" + elem.go, elem=elem)
    if go is not None:
        return Spec("scalar", go)
    return Spec("scalar", {str: "string", bool: "bool", int: "int64", float: "float64"}[annotation])


def _struct(model: type[BaseModel]) -> Spec:
    return Spec("struct", getattr(model, "go_type", "") or model.__name__, model)


def is_string(go: str) -> bool:
    """Go types that hold a JSON string: string, named string types, durations, []byte."""
    return go in ("string", "duration", "bytes") or go.startswith("v1.")


def _zero(spec: Spec) -> Any:
    if spec.kind == "struct":
        return {}
    if spec.kind == "slice":
        return []
    if spec.kind == "map":
        return {}
    if spec.go == "duration":
        return "0s"
    return "" if is_string(spec.go) else (False if spec.go == "bool" else 0)


class _Decoder:
    def __init__(self, state: _State) -> None:
        self.state = state

    def _type_error(self, value_kind: str, struct: str, keys: list[str], go: str, path: str) -> None:
        where = f"Go struct field {struct}.{'.'.join(keys)}" if struct else "Go value"
        self.state.type_error_at(f"json: cannot unmarshal {value_kind} into {where} of type {_go_name(go)}", path)

    def value(self, v: Any, spec: Spec, struct: str, keys: list[str], path: str) -> Any:
        """The normalised value, or _SKIP where Go leaves the field at its zero value."""
        if spec.kind == "raw":
            return v
        if spec.kind == "struct":
            if not isinstance(v, dict):
                self._type_error(_json_kind(v), struct, keys, spec.go, path)
                return _SKIP
            return self.struct(v, spec, keys, path)
        if spec.kind == "slice":
            if not isinstance(v, list):
                self._type_error(_json_kind(v), struct, keys, spec.go, path)
                return _SKIP
            assert spec.elem is not None
            out = []
            for i, item in enumerate(v):
                if item is None:
                    out.append(_zero(spec.elem))
                    continue
                got = self.value(item, spec.elem, struct, keys, f"{path}[{i}]")
                out.append(_zero(spec.elem) if got is _SKIP else got)
            return out
        if spec.kind == "map":
            if not isinstance(v, dict):
                self._type_error(_json_kind(v), struct, keys, spec.go, path)
                return _SKIP
            out_map = {}
            for k, item in v.items():
                if item is None:
                    out_map[str(k)] = ""
                    continue
                got = self.value(item, Spec("scalar", "string"), struct, keys, f"{path}.{k}")
                if got is not _SKIP:
                    out_map[str(k)] = got
            return out_map
        return self.scalar(v, spec.go, struct, keys, path)

    def scalar(self, v: Any, go: str, struct: str, keys: list[str], path: str) -> Any:
        kind = _json_kind(v)
        if is_string(go):
            if kind != "string":
                if go == "duration":  # metav1.Duration's own UnmarshalJSON fails at once
                    where = f"Go struct field {struct}.{'.'.join(keys)}"
                    raise DecodeError(f"json: cannot unmarshal {kind} into {where} of type string", path)
                self._type_error(kind, struct, keys, go, path)
                return _SKIP
            text = str(v)
            if go == "duration":
                try:
                    return canonical(text)
                except ValueError as err:
                    raise DecodeError(str(err), path) from err
            if go == "bytes":
                return self._base64(text, path)
            return text
        if go == "bool":
            if kind != "bool":
                self._type_error(kind, struct, keys, go, path)
                return _SKIP
            return v
        if kind != "number":
            self._type_error(kind, struct, keys, go, path)
            return _SKIP
        if go in _INT_RANGE:
            lo, hi = _INT_RANGE[go]
            if isinstance(v, float) and (not math.isfinite(v) or not v.is_integer()) or not lo <= v <= hi:
                self._type_error(f"number {_number_literal(v)}", struct, keys, go, path)
                return _SKIP
            return int(v)
        return v  # float32, float64

    def _base64(self, text: str, path: str) -> str:
        """encoding/json's []byte: standard base64 with padding; the first bad byte is reported."""
        clean = text.replace("\r", "").replace("\n", "")
        try:
            data = base64.b64decode(clean, validate=True)
        except (binascii.Error, ValueError):
            alphabet = set("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/")
            bad = next((i for i, c in enumerate(clean) if c not in alphabet and c != "="), None)
            if bad is None:
                bad = clean.index("=") if "=" in clean else len(clean) - len(clean) % 4
            self.state.type_error_at(f"illegal base64 data at input byte {bad}", path)
            return ""
        return base64.b64encode(data).decode()

    def struct(self, v: dict[str, Any], spec: Spec, keys: list[str], path: str) -> dict[str, Any]:
        model = spec.model
        assert model is not None
        name = spec.go.split(".")[-1]
        embedded: dict[str, str] = getattr(model, "go_embedded", {})
        out: dict[str, Any] = {}
        for raw_key, item in v.items():
            key = str(raw_key)
            child_path = f"{path}.{key}" if path else key
            f = model.model_fields.get(key)
            if f is None or (issubclass(model, _Args) and key in ("apiVersion", "kind")):
                if f is None:
                    self.state.unknown.append(child_path)
                elif isinstance(item, str):
                    out[key] = item
                continue
            if item is None:
                continue
            child_keys = [*keys, embedded[key], key] if key in embedded else [*keys, key]
            got = self.value(item, field_spec(model, key), name, child_keys, child_path)
            if got is not _SKIP:
                out[key] = got
        return out


_SKIP = object()


def _go_name(go: str) -> str:
    return {"duration": "string", "bytes": "[]uint8"}.get(go, go)


def _unknown_text(paths: list[str]) -> str:
    return ", ".join(f"unknown field {go_quote(p)}" for p in sorted(paths))


def _type_meta(doc: Any) -> tuple[str, str]:
    """apiVersion and kind, read first as upstream's codec does."""
    if not isinstance(doc, dict):
        raise DecodeError(
            f"couldn't get version/kind; json parse error: json: cannot unmarshal {_json_kind(doc)} "
            f"into Go value of type {_TYPE_META}"
        )
    for key in ("apiVersion", "kind"):
        value = doc.get(key)
        if value is not None and not isinstance(value, str):
            raise DecodeError(
                "couldn't get version/kind; json parse error: json: cannot unmarshal "
                f"{_json_kind(value)} into Go struct field .{key} of type string",
                key,
            )
    return doc.get("apiVersion") or "", doc.get("kind") or ""


def _registered(api_version: str, kind: str) -> bool:
    kinds = {KIND, *(name + "Args" for name in ARGS_TYPES)}
    return api_version == API_VERSION and kind in kinds


def _not_registered(api_version: str, kind: str) -> DecodeError:
    return DecodeError(f'no kind "{kind}" is registered for version "{api_version}" in scheme "{SCHEME}"')


def decode_args(name: str, raw: Any, where: str, at: str = "args") -> tuple[dict[str, Any], str | None]:
    """One in-tree plugin's args: (normalised args, strict error text or None); DecodeError otherwise.
    `at` is the args' own field path, for the errors."""
    prefix = f"{where}: decoding args for plugin {name}: "
    want = name + "Args"
    if raw is None:
        raw = {}
    try:
        api_version, kind = _type_meta(raw)
    except DecodeError as err:
        raise DecodeError(prefix + str(err), f"{at}.{err.field}" if err.field else at) from err
    api_version, kind = api_version or API_VERSION, kind or want
    if not _registered(api_version, kind):
        raise DecodeError(prefix + str(_not_registered(api_version, kind)), f"{at}.kind")
    if kind == KIND:
        raise DecodeError(
            f"{where}: args for plugin {name} were not of type {want}.{GROUP}, got {kind}.{GROUP}", f"{at}.kind"
        )
    model = ARGS_TYPES[kind[: -len("Args")]]
    state = _State()
    out = _Decoder(state).struct(raw, _struct(model), [], "")
    if state.type_error is not None:
        path = state.type_error_path
        raise DecodeError(prefix + state.type_error, f"{at}.{path}" if path else at)
    if kind != want:
        raise DecodeError(
            f"{where}: args for plugin {name} were not of type {want}.{GROUP}, got {kind}.{GROUP}", f"{at}.kind"
        )
    out["apiVersion"], out["kind"] = API_VERSION, want
    strict = None
    if state.unknown:
        unknown = _unknown_text(state.unknown)
        strict = f"{where}: strict decoding error: decoding args for plugin {name}: strict decoding error: {unknown}"
    return out, strict


def decode_configuration(doc: Any) -> dict[str, Any]:
    """The normalised v1 document, plugin args included; DecodeError with upstream's text if it cannot be."""
    api_version, kind = _type_meta(doc)
    if not kind:
        raise DecodeError("Object 'Kind' is missing in the configuration")
    if not api_version:
        raise DecodeError("Object 'apiVersion' is missing in the configuration")
    if not _registered(api_version, kind):
        raise _not_registered(api_version, kind)
    if kind != KIND:
        raise DecodeError(f"couldn't decode as {KIND}, got {api_version}, Kind={kind}: ")
    state = _State()
    out = _Decoder(state).struct(doc, _struct(KubeSchedulerConfiguration), [], "")
    if state.type_error is not None:
        raise DecodeError(state.type_error, state.type_error_path)
    strict: list[str] = [_unknown_text(state.unknown)] if state.unknown else []
    for i, prof in enumerate(out.get("profiles") or []):
        for j, pc in enumerate(prof.get("pluginConfig") or []):
            name = pc.get("name", "")
            if name not in ARGS_TYPES:
                continue  # out-of-tree or args-less: kept as given
            args, args_strict = decode_args(
                name,
                pc.get("args"),
                f"decoding .profiles[{i}].pluginConfig[{j}]",
                f"profiles[{i}].pluginConfig[{j}].args",
            )
            pc["args"] = args
            if args_strict is not None:
                strict.append(args_strict)
    if strict:
        raise DecodeError("strict decoding error: " + ", ".join(strict))
    return out
