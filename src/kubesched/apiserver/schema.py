"""Strict decoding of manifests, as kube-apiserver decodes what `kubectl apply` sends.

The API server turns JSON into Go structs: a string where a bool belongs, a list where
a map belongs, a fraction in an int32 field are errors, and with kubectl's default
strict field validation so is every field the type does not have (`reqeusts`,
`nodeselector`). The field types come from v1.36's OpenAPI (openapi_v1_36.py). Messages
are the API server's: `json: cannot unmarshal ...`, `strict decoding error: unknown
field "spec.nodeselector"`, and Quantity's own parse errors.

Decoding also does what Go's zero values do to nulls: a null field is left out, a null
list item or map value becomes its type's zero value, so later stages read plain data.
"""

from __future__ import annotations

import functools
import re
from typing import Any

from kubesched.apiserver.memo import ContentMemo, pinned_shape
from kubesched.apiserver.openapi_v1_36 import SCHEMA
from kubesched.apiserver.openapi_v1alpha2 import SCHEMA as ALPHA_SCHEMA

_KIND_ROOTS = {**SCHEMA["kinds"], **ALPHA_SCHEMA["kinds"]}  # the alpha kinds' gates are checked after loading
KINDS: dict[str, str] = {kind: gv for kind, (gv, _) in _KIND_ROOTS.items()}
_STRUCTS: dict[str, dict[str, str]] = {**SCHEMA["structs"], **ALPHA_SCHEMA["structs"]}
_ROOTS: dict[str, str] = {kind: struct for kind, (_, struct) in _KIND_ROOTS.items()}

QUANTITY_REGEX = "^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$"
QUANTITY_SYNTAX_ERROR = f"quantities must match the regular expression '{QUANTITY_REGEX}'"
QUANTITY_SUFFIX_ERROR = "unable to parse quantity's suffix"
_QUANTITY = re.compile(QUANTITY_REGEX)
_SUFFIX = re.compile(r"^(|[numkMGTPE]|[KMGTPE]i|[eE][-+]?[0-9]+)$")
_TIME = re.compile(r"^\d{4}-\d{2}-\d{2}[Tt ]\d{2}:\d{2}:\d{2}(\.\d+)?([Zz]|[+-]\d{2}:\d{2})$")
_INT_RANGE = {"int32": (-(2**31), 2**31 - 1), "int64": (-(2**63), 2**63 - 1)}
_ZERO: dict[str, Any] = {"string": "", "bool": False, "int32": 0, "int64": 0, "double": 0, "quantity": "0"}


def quantity_syntax_error(value: Any) -> str:
    """Why Quantity's JSON decoding refuses `value` ('' when it parses)."""
    if isinstance(value, bool) or not isinstance(value, str | int | float):
        return QUANTITY_SYNTAX_ERROR
    if not isinstance(value, str):
        return ""
    return _quantity_text_error(value)


@functools.lru_cache(maxsize=4096)
def _quantity_text_error(value: str) -> str:
    """quantity_syntax_error of a string; manifests repeat a few quantities many times."""
    text = value.strip()
    m = _QUANTITY.match(text)
    if not m or text.count(".") > 1 or not any(c.isdigit() for c in m.group(1)):
        return QUANTITY_SYNTAX_ERROR
    return "" if _SUFFIX.match(m.group(2)) else QUANTITY_SUFFIX_ERROR


def _json_type(value: Any) -> str:
    if isinstance(value, bool):
        return "bool"
    if isinstance(value, int | float):
        return "number"
    if isinstance(value, str):
        return "string"
    return "array" if isinstance(value, list) else "object"


def _go_type(t: str) -> str:
    if t.startswith("[]"):
        return "[]" + _go_type(t[2:])
    if t.startswith("map[string]"):
        return "map[string]" + _go_type(t[11:])
    if t.startswith("&"):
        return "v1." + t.rsplit(".", 1)[-1]
    return {"double": "float64", "quantity": "resource.Quantity", "int-or-string": "intstr.IntOrString"}.get(t, t)


_EXACT = {"string": str, "bool": bool}


def _fine(value: Any, t: str) -> bool:
    """A quick yes for the common scalars that decode as they are; False means: take the full check."""
    cls = value.__class__
    exact = _EXACT.get(t)
    if exact is not None:
        return cls is exact
    if t in _INT_RANGE:
        lo, hi = _INT_RANGE[t]
        return cls is int and lo <= value <= hi
    return t == "quantity" and cls is str and not _quantity_text_error(value)


class _Decoder:
    """Paths are written out only where something is wrong or a collection is entered: a manifest's
    fields are nearly all plain strings, numbers and booleans that decode as they are."""

    def __init__(self) -> None:
        self.type_errors: list[tuple[str, str]] = []  # (path, message)
        self.unknown: list[str] = []
        self.changed = False  # a null was normalised: the value is not what was read

    def mismatch(self, value: Any, path: str, go_path: str, struct: str, t: str) -> None:
        got = _json_type(value)
        if got == "number" and t in _INT_RANGE:
            got = f"number {value}"
        self.type_errors.append(
            (path, f"json: cannot unmarshal {got} into Go struct field {struct}.{go_path} of type {_go_type(t)}")
        )

    def value(self, value: Any, t: str, path: str, go_path: str, struct: str) -> Any:
        """Check `value` against type `t`; returns it with nulls turned into what Go would hold."""
        if t == "any" or value is None:
            return value
        if t.startswith("&"):
            if not isinstance(value, dict):
                self.mismatch(value, path, go_path, struct, t)
                return value
            self.struct(value, t[1:], path, go_path)
            return value
        if t.startswith("[]"):
            if not isinstance(value, list):
                self.mismatch(value, path, go_path, struct, t)
                return value
            elem = t[2:]
            for i, item in enumerate(value):
                if item is None:
                    value[i] = _zero(elem)
                    self.changed = True
                elif not _fine(item, elem):
                    value[i] = self.value(item, elem, f"{path}[{i}]", go_path, struct)
            return value
        if t.startswith("map[string]"):
            if not isinstance(value, dict):
                self.mismatch(value, path, go_path, struct, t)
                return value
            elem = t[11:]
            for k, item in value.items():
                if item is None:
                    value[k] = _zero(elem)
                    self.changed = True
                elif not _fine(item, elem):
                    value[k] = self.value(item, elem, f"{path}[{k}]", go_path, struct)
            return value
        self.scalar(value, t, path, go_path, struct)
        return value

    def scalar(self, value: Any, t: str, path: str, go_path: str, struct: str) -> None:
        if t == "quantity":
            problem = quantity_syntax_error(value)
            if problem:
                shown = f'Invalid value: "{value}": ' if isinstance(value, str | int | float) else ""
                self.type_errors.append((path, shown + problem))
            return
        ok = {
            "string": isinstance(value, str),
            "time": isinstance(value, str),
            "bool": isinstance(value, bool),
            "double": isinstance(value, int | float) and not isinstance(value, bool),
            "int-or-string": isinstance(value, str) or (isinstance(value, int) and not isinstance(value, bool)),
        }.get(t)
        if t in _INT_RANGE:
            lo, hi = _INT_RANGE[t]
            ok = isinstance(value, int) and not isinstance(value, bool) and lo <= value <= hi
        if not ok:
            self.mismatch(value, path, go_path, struct, t)
        elif t == "time" and not _TIME.match(value):
            self.type_errors.append((path, f'parsing time "{value}" as "2006-01-02T15:04:05Z07:00": cannot parse'))

    def struct(self, obj: dict[str, Any], name: str, path: str, go_path: str) -> None:
        fields = _STRUCTS[name]
        go_name = name.rsplit(".", 1)[-1]
        for key in list(obj):
            t = fields.get(key)
            item = obj[key]
            if t is not None and item is not None and _fine(item, t):
                continue
            sub = f"{path}.{key}" if path else key
            if t is None:
                self.unknown.append(sub)
                continue
            if item is None:
                del obj[key]
                self.changed = True
                continue
            if not path and key == "spec" and item.__class__ is dict and t.startswith("&"):
                self._spec(item, t, go_name)
                continue
            obj[key] = self.value(item, t, sub, f"{go_path}.{key}" if go_path else key, go_name)

    def _spec(self, spec: dict[str, Any], t: str, struct: str) -> None:
        """A root's spec, decoded once per distinct content: one that decoded as it was read is remembered.
        A pinned pod's node name is a string either way, so its spec is remembered by its shape."""
        pinned = pinned_shape(spec)
        key = ContentMemo.key(t, spec if pinned is None else pinned[0])
        if _CLEAN_SPECS.get(key):
            return
        inner = _Decoder()
        inner.struct(spec, t[1:], "spec", "spec")
        self.type_errors += inner.type_errors
        self.unknown += inner.unknown
        self.changed = self.changed or inner.changed
        if not (inner.type_errors or inner.unknown or inner.changed):
            _CLEAN_SPECS.put(key, True)


_CLEAN_SPECS: ContentMemo[bool] = ContentMemo()


def _zero(t: str) -> Any:
    if t.startswith("&") or t.startswith("map[string]"):
        return {}
    if t.startswith("[]"):
        return []
    return _ZERO.get(t)


def decode_errors(obj: dict[str, Any]) -> list[str]:
    """What the API server's strict decoding says about a manifest of a known kind ([] when it decodes).

    Type errors come first and alone (Go stops at the first); unknown fields are listed
    together, as kubectl's strict validation reports them. Nulls are normalised in place.
    """
    kind = obj.get("kind")
    if not isinstance(kind, str) or kind not in _ROOTS:
        return []
    api = obj.get("apiVersion")
    if api is not None and api != KINDS[kind]:
        return [f'no matches for kind "{kind}" in version "{api}"']
    d = _Decoder()
    d.struct(obj, _ROOTS[kind], "", "")
    if d.type_errors:
        path, message = d.type_errors[0]
        return [f"{path}: {message}"]
    if d.unknown:
        return ["strict decoding error: " + ", ".join(f'unknown field "{u}"' for u in d.unknown)]
    return []
