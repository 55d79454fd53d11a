"""CEL device selectors (k8s.io/dynamic-resource-allocation/cel, v1.36), on cel-python (celpy).

A selector sees one variable, `device`, of upstream's type `kubernetes.DRADevice`:
`driver`, `allowMultipleAllocations` and two maps keyed by domain, then by name:
`attributes` (bool, int, string or semver values) and `capacity` (quantities). A name
without a domain takes the driver's. Looking up a domain the device lacks gives an
empty map, so `device.attributes["x.example.com"].model` fails with `no such key: model`
while `"x.example.com" in device.attributes` is false, as upstream.

celpy parses and evaluates. It has no type checker and no cost model, so this module
adds the part of cel-go's that the environment needs: it types the expression against
the DRA environment (undefined fields, undeclared references, overloads that do not
exist, and the result, which must be bool or the attribute's unknown type), and
estimates the worst-case cost as cel-go's estimator does with the sizes upstream
declares (at most 32 domains and names, names of 63 and 32 characters, values of 64).
Messages are cel-go's (`compilation failed: ERROR: <input>:1:7: undefined field
'foo'` and the caret lines). Each expression is compiled once (cached by text).

The Kubernetes libraries provided are the ones selectors use: quantity and semver
(`quantity("1Gi").isLessThan(...)`, `semver("1.2.3").major()`), `cel.bind`, the
strings extension's common functions (split, lowerAscii, upperAscii, trim, replace,
indexOf, lastIndexOf, substring, charAt, join) and the regex library's find/findAll.
Not provided (an expression using them is refused as an undeclared reference): URLs,
IP/CIDR, the lists and sets libraries, optional types, two-variable comprehensions.
"""

from __future__ import annotations

import enum
import functools
import logging
import math
import re
import sys
import threading
import time
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, field
from fractions import Fraction
from typing import Any, Final

import celpy
import celpy.celtypes as ct
import lark
import re2  # type: ignore[import-untyped]  # google-re2, cel-python's own regex engine, has no stubs
from celpy.celparser import CELParseError
from celpy.evaluation import CELEvalError, Evaluator, celbytes, celstr

from kubesched.api.quantity import QuantityError, parse_quantity

EXPRESSION_MAX_COST: Final = 1_000_000  # resourceapi.CELSelectorExpressionMaxCost, also the runtime limit
EXPRESSION_MAX_LENGTH: Final = 10 * 1024  # bytes of UTF-8, as the API server counts them
PARSER_RECURSION_LIMIT: Final = 250  # cel-go's parser default (maxRecursionDepth), which Kubernetes keeps
DRIVER_MAX: Final = 63
DOMAIN_MAX: Final = 63
ID_MAX: Final = 32
ATTRIBUTE_VALUE_MAX: Final = 64
ENTRIES_MAX: Final = 32  # attributes and capacities per device
STRING_TRAVERSAL: Final = 0.1
REGEX_LENGTH: Final = 0.25
UNKNOWN_SIZE: Final = 2**64 - 1

logging.getLogger("celpy").setLevel(logging.CRITICAL)  # celpy logs every evaluation error it returns


class ErrorKind(enum.Enum):
    REQUIRED = "Required"
    INVALID = "Invalid"
    INTERNAL = "Internal"


@dataclass(frozen=True)
class CELError:
    kind: ErrorKind
    detail: str

    def __str__(self) -> str:
        return self.detail


class EvalError(RuntimeError):
    """A selector failed on a device (a missing key, a type error): upstream's runtime errors."""


# Types, as cel-go names them.

BOOL, INT, UINT, DOUBLE, STRING, BYTES, NULL = "bool", "int", "uint", "double", "string", "bytes", "null_type"
DYN, ANY = "dyn", "any"  # any: an attribute value, whose type is known only at run time
TIMESTAMP, DURATION = "google.protobuf.Timestamp", "google.protobuf.Duration"
QUANTITY, SEMVER, DEVICE = "kubernetes.Quantity", "kubernetes.Semver", "kubernetes.DRADevice"
Type = str | tuple[str, ...]  # a name, ("list", elem), ("map", key, value) or ("type", t)


def list_of(t: Type) -> Type:
    return ("list", _name(t))


def map_of(k: Type, v: Type) -> Type:
    return ("map", _name(k), _name(v))


def _name(t: Type) -> str:
    if isinstance(t, str):
        return t
    if t[0] == "list":
        return f"list({t[1]})"
    if t[0] == "map":
        return f"map({t[1]}, {t[2]})"
    return f"type({t[1]})"


def _parse_type(name: str) -> Type:
    if name.startswith("list(") and name.endswith(")"):
        return ("list", name[5:-1])
    if name.startswith("map(") and name.endswith(")"):
        inner = name[4:-1]
        depth = 0
        for i, ch in enumerate(inner):
            depth += ch == "("
            depth -= ch == ")"
            if ch == "," and depth == 0:
                return ("map", inner[:i], inner[i + 2 :])
    return name


def _elem(t: Type) -> Type:
    return _parse_type(t[1]) if isinstance(t, tuple) and t[0] in ("list", "map") else DYN


def _value(t: Type) -> Type:
    return _parse_type(t[2]) if isinstance(t, tuple) and t[0] == "map" else DYN


def _unknown(t: Type) -> bool:
    return t in (DYN, ANY)


DEVICE_FIELDS: Final[dict[str, Type]] = {
    "driver": STRING,
    "allowMultipleAllocations": BOOL,
    "attributes": map_of(STRING, _name(map_of(STRING, ANY))),
    "capacity": map_of(STRING, _name(map_of(STRING, QUANTITY))),
}


def _assignable(param: Type, arg: Type) -> bool:
    if _unknown(param) or _unknown(arg) or param == arg:
        return True
    if isinstance(param, tuple) and isinstance(arg, tuple) and param[0] == arg[0]:
        return all(_assignable(_parse_type(p), _parse_type(a)) for p, a in zip(param[1:], arg[1:], strict=True))
    return False


# Overloads: name -> [(member, parameter types, result)]; "A" stands for any one type, "L" for list(A).

_NUM = (INT, UINT, DOUBLE)
_ORDERED = (*_NUM, STRING, BYTES, BOOL, TIMESTAMP, DURATION)
Overload = tuple[bool, tuple[Type, ...], Type]


def _overloads() -> dict[str, list[Overload]]:
    o: dict[str, list[Overload]] = {}

    def add(name: str, member: bool, params: tuple[Type, ...], result: Type) -> None:
        o.setdefault(name, []).append((member, params, result))

    for op in ("_<_", "_<=_", "_>_", "_>=_"):
        for a in _ORDERED:
            add(op, False, (a, a), BOOL)
        for a in _NUM:
            for b in _NUM:
                if a != b:
                    add(op, False, (a, b), BOOL)
    for a in (INT, UINT, DOUBLE, STRING, BYTES):
        add("_+_", False, (a, a), a)
    add("_+_", False, ("L", "L"), "L")
    add("_+_", False, (TIMESTAMP, DURATION), TIMESTAMP)
    add("_+_", False, (DURATION, DURATION), DURATION)
    for a in _NUM:
        add("_-_", False, (a, a), a)
        add("_*_", False, (a, a), a)
        add("_/_", False, (a, a), a)
    add("_-_", False, (TIMESTAMP, TIMESTAMP), DURATION)
    add("_-_", False, (TIMESTAMP, DURATION), TIMESTAMP)
    add("_%_", False, (INT, INT), INT)
    add("_%_", False, (UINT, UINT), UINT)
    add("-_", False, (INT,), INT)
    add("-_", False, (DOUBLE,), DOUBLE)
    add("!_", False, (BOOL,), BOOL)
    sized: tuple[Type, ...] = (STRING, BYTES, "L", ("map", DYN, DYN))
    for kind in sized:
        add("size", False, (kind,), INT)
        add("size", True, (kind,), INT)
    for fn in ("contains", "startsWith", "endsWith", "matches"):
        add(fn, True, (STRING, STRING), BOOL)
    add("matches", False, (STRING, STRING), BOOL)
    for t in (INT, UINT, DOUBLE, STRING, BYTES, BOOL):
        add(t, False, (DYN,), t)
    add("dyn", False, (DYN,), DYN)
    add("duration", False, (STRING,), DURATION)
    add("timestamp", False, (STRING,), TIMESTAMP)
    # Kubernetes quantity and semver libraries.
    add("quantity", False, (STRING,), QUANTITY)
    add("isQuantity", False, (STRING,), BOOL)
    for fn, result in (("sign", INT), ("isInteger", BOOL), ("asInteger", INT), ("asApproximateFloat", DOUBLE)):
        add(fn, True, (QUANTITY,), result)
    for t in (QUANTITY, SEMVER):
        add("isGreaterThan", True, (t, t), BOOL)
        add("isLessThan", True, (t, t), BOOL)
        add("compareTo", True, (t, t), INT)
    for fn in ("add", "sub"):
        add(fn, True, (QUANTITY, QUANTITY), QUANTITY)
        add(fn, True, (QUANTITY, INT), QUANTITY)
    add("semver", False, (STRING,), SEMVER)
    add("semver", False, (STRING, BOOL), SEMVER)
    add("isSemver", False, (STRING,), BOOL)
    add("isSemver", False, (STRING, BOOL), BOOL)
    for fn in ("major", "minor", "patch"):
        add(fn, True, (SEMVER,), INT)
    # Strings extension and regex library.
    for fn in ("lowerAscii", "upperAscii", "trim"):
        add(fn, True, (STRING,), STRING)
    add("split", True, (STRING, STRING), list_of(STRING))
    add("split", True, (STRING, STRING, INT), list_of(STRING))
    add("replace", True, (STRING, STRING, STRING), STRING)
    add("replace", True, (STRING, STRING, STRING, INT), STRING)
    add("indexOf", True, (STRING, STRING), INT)
    add("indexOf", True, (STRING, STRING, INT), INT)
    add("lastIndexOf", True, (STRING, STRING), INT)
    add("lastIndexOf", True, (STRING, STRING, INT), INT)
    add("substring", True, (STRING, INT), STRING)
    add("substring", True, (STRING, INT, INT), STRING)
    add("charAt", True, (STRING, INT), STRING)
    add("join", True, (list_of(STRING),), STRING)
    add("join", True, (list_of(STRING), STRING), STRING)
    add("find", True, (STRING, STRING), STRING)
    add("findAll", True, (STRING, STRING), list_of(STRING))
    add("findAll", True, (STRING, STRING, INT), list_of(STRING))
    return o


OVERLOADS: Final = _overloads()
_MACROS: Final = ("all", "exists", "exists_one", "map", "filter")


# The expression tree, built from celpy's parse tree.


@dataclass
class Node:
    kind: str  # lit, ident, select, call, list, map, comp, has, bind
    pos: tuple[int, int]  # line, column (1-based) of the token cel-go reports
    name: str = ""  # ident and field names, function names, macro names
    value: Any = None  # a literal's Python value
    target: Node | None = None
    args: list[Node] = field(default_factory=list)
    type: Type = DYN
    size: int | None = None  # worst-case size (strings, lists, maps), None when unknown
    path: tuple[str, ...] = ()  # field path from `device`, for sizes


class _Syntax(Exception):
    def __init__(self, pos: tuple[int, int], message: str) -> None:
        super().__init__(message)
        self.pos = pos


def _pos(tree: Any) -> tuple[int, int]:
    meta = getattr(tree, "meta", None)
    if meta is not None and not getattr(meta, "empty", True) and getattr(meta, "line", None) is not None:
        return meta.line, meta.column  # celpy gives `true`, `false` and `null` no position
    if isinstance(tree, lark.Token):
        return tree.line or 1, tree.column or 1
    return 1, 1


_BINARY_OPS: Final = {
    "relation_lt": "_<_",
    "relation_le": "_<=_",
    "relation_gt": "_>_",
    "relation_ge": "_>=_",
    "relation_eq": "_==_",
    "relation_ne": "_!=_",
    "relation_in": "@in",
    "addition_add": "_+_",
    "addition_sub": "_-_",
    "multiplication_mul": "_*_",
    "multiplication_div": "_/_",
    "multiplication_mod": "_%_",
}


def _build(tree: Any) -> Node:
    """celpy's parse tree as a CEL AST (calls, selects, comprehensions), keeping positions."""
    data = tree.data
    kids = tree.children
    if data in ("expr",):
        if len(kids) == 3:
            return Node("call", _pos(kids[1]), "_?_:_", args=[_build(k) for k in kids])
        return _build(kids[0])
    if data in ("conditionalor", "conditionaland"):
        if len(kids) == 2:
            op = "_||_" if data == "conditionalor" else "_&&_"
            return Node("call", _pos(kids[1]), op, args=[_build(kids[0]), _build(kids[1])])
        return _build(kids[0])
    if data in ("relation", "addition", "multiplication"):
        if len(kids) == 2:
            op_tree = kids[0]
            op = _BINARY_OPS[op_tree.data]
            return Node("call", _pos(kids[1]), op, args=[_build(op_tree.children[0]), _build(kids[1])])
        return _build(kids[0])
    if data == "unary":
        if len(kids) == 2:
            op = "!_" if kids[0].data == "unary_not" else "-_"
            return Node("call", _pos(kids[0]), op, args=[_build(kids[1])])
        return _build(kids[0])
    if data == "member":
        return _build(kids[0])
    if data == "member_dot":
        target, name = _build(kids[0]), kids[1]
        return Node("select", (name.line, name.column - 1), str(name), target=target)
    if data == "member_dot_arg":
        target, name = _build(kids[0]), kids[1]
        args = [_build(a) for a in kids[2].children] if len(kids) > 2 else []
        pos = (name.line, name.column + len(str(name)))
        if str(name) == "bind" and target.kind == "ident" and target.name == "cel":
            return Node("bind", pos, "bind", args=args)
        if str(name) in _MACROS and args and args[0].kind == "ident" and len(args) in (2, 3):
            return Node("comp", pos, str(name), target=target, args=args)
        return Node("call", pos, str(name), target=target, args=args)
    if data == "member_index":
        return Node("call", _pos(kids[1]), "_[_]", args=[_build(kids[0]), _build(kids[1])])
    if data == "member_object":
        raise _Syntax(_pos(tree), "message construction is not supported")
    if data == "primary":
        return _build(kids[0])
    if data == "paren_expr":
        return _build(kids[0])
    if data == "ident":
        return Node("ident", _pos(kids[0]), str(kids[0]))
    if data == "dot_ident" or data == "dot_ident_arg":
        raise _Syntax(_pos(tree), "leading-dot names are not supported")
    if data == "ident_arg":
        name = str(kids[0])
        args = [_build(a) for a in kids[1].children] if len(kids) > 1 else []
        pos = (kids[0].line, kids[0].column + len(name))
        if name == "has" and len(args) == 1 and args[0].kind == "select":
            return Node("has", pos, "has", args=args)
        return Node("call", pos, name, args=args)
    if data == "list_lit":
        items = [_build(a) for a in kids[0].children] if kids else []
        return Node("list", _pos(tree), args=items)
    if data == "map_lit":
        items = [_build(a) for a in kids[0].children] if kids else []
        return Node("map", _pos(tree), args=items)
    if data == "literal":
        return _literal(kids[0])
    raise _Syntax(_pos(tree), f"unsupported syntax: {data}")


def _literal(token: lark.Token) -> Node:
    kind, text = token.type, str(token)
    pos = (token.line or 1, token.column or 1)
    if kind == "INT_LIT":
        return Node("lit", pos, value=int(text, 0) if text.lower().startswith(("0x", "-0x")) else int(text), type=INT)
    if kind == "UINT_LIT":
        return Node("lit", pos, value=int(text[:-1], 0), type=UINT)
    if kind == "FLOAT_LIT":
        return Node("lit", pos, value=float(text), type=DOUBLE)
    if kind in ("BOOL_LIT",):
        return Node("lit", pos, value=text == "true", type=BOOL)
    if kind == "NULL_LIT":
        return Node("lit", pos, value=None, type=NULL)
    if kind in ("MLSTRING_LIT", "STRING_LIT"):
        body = str(celstr(token))
        return Node("lit", pos, value=body, type=STRING, size=len(body))
    if kind == "BYTES_LIT":
        data = bytes(celbytes(token))
        return Node("lit", pos, value=data, type=BYTES, size=len(data))
    raise _Syntax(pos, f"unsupported literal {text}")


# Type checking.


@dataclass
class _Issue:
    pos: tuple[int, int]
    message: str


class _Checker:
    def __init__(self) -> None:
        self.issues: list[_Issue] = []
        self.scopes: list[dict[str, Node]] = []
        self.bad_patterns: list[str] = []

    def error(self, node: Node, message: str) -> Type:
        self.issues.append(_Issue(node.pos, message))
        return DYN

    def local(self, name: str) -> Node | None:
        for scope in reversed(self.scopes):
            if name in scope:
                return scope[name]
        return None

    def check(self, n: Node) -> Type:
        n.type = self._check(n)
        return n.type

    def _check(self, n: Node) -> Type:
        if n.kind == "lit":
            return n.type
        if n.kind == "ident":
            bound = self.local(n.name)
            if bound is not None:
                n.size, n.path = bound.size, bound.path
                return bound.type
            if n.name == "device":
                n.path = ("device",)
                return DEVICE
            if n.name in _TYPE_NAMES:
                return ("type", n.name)
            return self.error(n, f"undeclared reference to '{n.name}' (in container '')")
        if n.kind == "select":
            assert n.target is not None
            t = self.check(n.target)
            n.path = (*n.target.path, n.name) if n.target.path else ()
            if t == DEVICE:
                if n.name not in DEVICE_FIELDS:
                    return self.error(n, f"undefined field '{n.name}'")
                return DEVICE_FIELDS[n.name]
            if isinstance(t, tuple) and t[0] == "map":
                return _value(t)
            if _unknown(t):
                return DYN
            return self.error(n, f"type '{_name(t)}' does not support field selection")
        if n.kind == "has":
            self.check(n.args[0])
            return BOOL
        if n.kind == "list":
            types = {_name(self.check(a)) for a in n.args}
            return list_of(types.pop()) if len(types) == 1 else list_of(DYN)
        if n.kind == "map":
            keys = {_name(self.check(a)) for a in n.args[0::2]}
            vals = {_name(self.check(a)) for a in n.args[1::2]}
            return map_of(keys.pop() if len(keys) == 1 else DYN, vals.pop() if len(vals) == 1 else DYN)
        if n.kind == "bind":
            var, init, body = n.args
            self.check(init)
            self.scopes.append({var.name: init})
            try:
                return self.check(body)
            finally:
                self.scopes.pop()
        if n.kind == "comp":
            return self._comprehension(n)
        return self._call(n)

    def _comprehension(self, n: Node) -> Type:
        assert n.target is not None
        rng = self.check(n.target)
        var = n.args[0]
        item = Node("ident", var.pos, var.name, type=_elem(rng))
        if isinstance(rng, tuple) or _unknown(rng):
            item.path = (*n.target.path, "@keys" if isinstance(rng, tuple) and rng[0] == "map" else "@items")
        else:
            self.error(n.target, f"expression of type '{_name(rng)}' cannot be range of a comprehension")
        self.scopes.append({var.name: item})
        try:
            bodies = [self.check(a) for a in n.args[1:]]
        finally:
            self.scopes.pop()
        if n.name in ("all", "exists", "exists_one"):
            return BOOL
        if n.name == "filter":
            return list_of(item.type)
        return list_of(bodies[-1])

    def _call(self, n: Node) -> Type:
        args = [self.check(a) for a in n.args]
        target = self.check(n.target) if n.target is not None else None
        name = n.name
        if name in ("_&&_", "_||_"):
            if any(not _unknown(t) and t != BOOL for t in args):
                return self._no_overload(n, name, None, args)
            return BOOL
        if name == "_?_:_":
            if not _unknown(args[0]) and args[0] != BOOL:
                return self._no_overload(n, name, None, args)
            return args[1] if _name(args[1]) == _name(args[2]) else DYN
        if name in ("_==_", "_!=_"):
            return BOOL
        if name == "@in":
            return BOOL
        if name == "_[_]":
            container, key = args
            n.path = (*n.args[0].path, "@values") if n.args[0].path else ()
            if isinstance(container, tuple) and container[0] == "list":
                return _elem(container) if _assignable(INT, key) else self._no_overload(n, name, None, args)
            if isinstance(container, tuple) and container[0] == "map":
                return _value(container)
            if _unknown(container):
                return DYN
            return self._no_overload(n, name, None, args)
        candidates = OVERLOADS.get(name)
        if candidates is None:
            return self.error(n, f"undeclared reference to '{name}' (in container '')")
        member = target is not None
        full = ([target] if target is not None else []) + args
        results: list[Type] = []
        for is_member, params, result in candidates:
            if is_member != member or len(params) != len(full):
                continue
            bound = self._bind(params, full)
            if bound is not None:
                results.append(bound if result == "L" else result)
        if not results:
            if not any(m == member for m, _, _ in candidates):
                return self.error(n, f"undeclared reference to '{name}' (in container '')")
            return self._no_overload(n, name, target, args)
        if name in ("matches", "find", "findAll"):
            self._constant_pattern(name, n.args[0] if target is not None else n.args[1])
        names = {_name(r) for r in results}
        return results[0] if len(names) == 1 else DYN

    def _constant_pattern(self, name: str, pattern: Node) -> None:
        """cel-go compiles constant patterns ahead: a bad one for `matches` is a check error, for the regex
        library's functions a failure to build the program."""
        if pattern.kind == "lit" and isinstance(pattern.value, str):
            try:
                _regex(pattern.value)
            except ValueError as err:
                if name == "matches":
                    self.error(pattern, "invalid matches argument")
                else:
                    self.bad_patterns.append(str(err))

    def _bind(self, params: tuple[Type, ...], args: list[Type]) -> Type | None:
        """The list type bound to "L" when the arguments fit the parameters (DYN when none); None when not."""
        bound: Type | None = None
        for p, a in zip(params, args, strict=True):
            if p == "L":
                if not (_unknown(a) or (isinstance(a, tuple) and a[0] == "list")):
                    return None
                if bound is None or _unknown(bound):
                    bound = a
            elif not _assignable(p, a):
                return None
        return bound if bound is not None else DYN

    def _no_overload(self, n: Node, name: str, target: Type | None, args: list[Type]) -> Type:
        shown = "(" + ", ".join(_name(a) for a in args) + ")"
        if target is not None:
            shown = f"{_name(target)}.{shown}"
        return self.error(n, f"found no matching overload for '{name}' applied to '{shown}'")


_TYPE_NAMES: Final = frozenset({BOOL, INT, UINT, DOUBLE, STRING, BYTES, "list", "map", NULL, "type", DYN})


# Cost estimation (cel-go checker/cost.go with the Kubernetes library's estimates).


@dataclass
class _Cost:
    lo: int = 0
    hi: int = 0

    def __add__(self, other: _Cost) -> _Cost:
        return _Cost(_sat(self.lo + other.lo), _sat(self.hi + other.hi))

    def union(self, other: _Cost) -> _Cost:
        return _Cost(min(self.lo, other.lo), max(self.hi, other.hi))


def _sat(n: int) -> int:
    return min(n, UNKNOWN_SIZE)


def _factor(size: int, f: float) -> int:
    """multiplyByCostFactor: ceil(size * f), saturating."""
    if size >= UNKNOWN_SIZE:
        return UNKNOWN_SIZE
    product = size * f
    return UNKNOWN_SIZE if product >= UNKNOWN_SIZE else math.ceil(product)


_PATH_SIZES: Final[dict[tuple[str, ...], int]] = {
    ("driver",): DRIVER_MAX,
    ("allowMultipleAllocations",): 1,
    ("attributes",): ENTRIES_MAX,
    ("attributes", "@keys"): DOMAIN_MAX,
    ("attributes", "@values"): ENTRIES_MAX,
    ("attributes", "@values", "@keys"): ID_MAX,
    ("attributes", "@values", "@values"): ATTRIBUTE_VALUE_MAX,
    ("capacity",): ENTRIES_MAX,
    ("capacity", "@keys"): DOMAIN_MAX,
    ("capacity", "@values"): ENTRIES_MAX,
    ("capacity", "@values", "@keys"): ID_MAX,
}


def _declared_size(path: tuple[str, ...]) -> int | None:
    """The maximum size upstream declares for what `path` (from `device`) reaches; field names under a map are
    its values."""
    if not path or path[0] != "device":
        return None
    norm: list[str] = []
    for part in path[1:]:
        if part in ("@keys", "@values", "@items"):
            norm.append("@values" if part == "@items" else part)
        elif norm and norm[0] in ("attributes", "capacity"):
            norm.append("@values")
        else:
            norm.append(part)
    return _PATH_SIZES.get(tuple(norm))


_SCALARS: Final = frozenset({BOOL, INT, UINT, DOUBLE, TIMESTAMP, DURATION})


class _Coster:
    def size(self, n: Node) -> int:
        if n.size is not None:
            return n.size
        declared = _declared_size(n.path)
        if declared is not None:
            return declared
        if n.type in _SCALARS:
            return 1
        return UNKNOWN_SIZE

    def cost(self, n: Node) -> _Cost:
        kind = n.kind
        if kind == "lit":
            return _Cost()
        if kind == "ident":
            return _Cost(1, 1)
        if kind == "select":
            assert n.target is not None
            c = self.cost(n.target)
            t = n.target.type
            if t == DEVICE or _unknown(t) or (isinstance(t, tuple) and t[0] == "map"):
                c = c + _Cost(1, 1)
            return c
        if kind == "has":
            target = n.args[0].target
            assert target is not None
            return _Cost(1, 1) + self.cost(target)
        if kind == "list":
            total = _Cost(10, 10)
            for a in n.args:
                total = total + self.cost(a)
            n.size = len(n.args)
            return total
        if kind == "map":
            total = _Cost(30, 30)
            for a in n.args:
                total = total + self.cost(a)
            n.size = len(n.args) // 2
            return total
        if kind == "bind":
            var, init, body = n.args
            c = _Cost(10, 10) + self.cost(init) + self.cost(body)  # the empty iteration range, as cel-go counts it
            n.size = body.size
            return c
        if kind == "comp":
            return self._comprehension(n)
        return self._call(n)

    def _comprehension(self, n: Node) -> _Cost:
        assert n.target is not None
        rng = self.cost(n.target)
        count = self.size(n.target)
        body = [self.cost(a) for a in n.args[1:]]
        pred = body[0]
        acc = _Cost(1, 1)
        if n.name == "all":
            init, cond, step, result = _Cost(), _Cost(2, 2), _Cost(acc.lo, acc.hi + pred.hi), acc
        elif n.name == "exists":
            init, cond, step, result = _Cost(), _Cost(3, 3), _Cost(acc.lo, acc.hi + pred.hi), acc
        elif n.name == "exists_one":
            init, cond, step, result = _Cost(), _Cost(), pred + _Cost(1, 2), _Cost(2, 2)
        elif n.name == "filter":
            init, cond, step, result = _Cost(10, 10), _Cost(), pred + _Cost(1, 13), acc
        elif len(n.args) == 3:  # map with a filter
            mapped = body[1]
            init, cond, step, result = _Cost(10, 10), _Cost(), pred + _Cost(1, 12 + mapped.hi), acc
        else:
            init, cond, step, result = _Cost(10, 10), _Cost(), pred + _Cost(12, 12), acc
        per = step + cond
        loop = _Cost(0, _sat(count * per.hi) if count < UNKNOWN_SIZE else UNKNOWN_SIZE)
        if n.name in ("map", "filter"):
            n.size = count
        return rng + init + result + loop

    def _call(self, n: Node) -> _Cost:
        args = [self.cost(a) for a in n.args]
        total = _Cost()
        for a in args:
            total = total + a
        if n.target is not None:
            total = total + self.cost(n.target)
        name = n.name
        if name in ("_&&_", "_||_"):
            return _Cost(args[0].lo, args[0].hi + args[1].hi)
        if name == "_?_:_":
            n.size = _max_size(self.size(n.args[1]), self.size(n.args[2]))
            return args[0] + args[1].union(args[2])
        if name == "_[_]":
            container = n.args[0]
            if container.kind == "list" and container.args:
                n.size = max(self.size(a) for a in container.args)
            return total + _Cost(1, 1)
        if name in ("_==_", "_!=_", "_<_", "_<=_", "_>_", "_>=_"):
            lt, rt = n.args[0].type, n.args[1].type
            if name in ("_==_", "_!=_") and lt == rt and lt in (QUANTITY, SEMVER):
                return total + _Cost(1, 1)
            if name in ("_==_", "_!=_") or lt in (STRING, BYTES):
                smallest = min(self.size(n.args[0]), self.size(n.args[1]))
                return total + _Cost(1 if smallest > 0 else 0, _factor(smallest, STRING_TRAVERSAL))
            return total + _Cost(1, 1)
        if name == "@in":
            container = n.args[1]
            if isinstance(container.type, tuple) and container.type[0] == "list":
                return total + _Cost(0, self.size(container))
            return total + _Cost(1, 1)
        if name in ("startsWith", "endsWith") and n.target is not None:
            return total + _Cost(0, _factor(self.size(n.args[0]), STRING_TRAVERSAL))
        if name in ("matches", "find", "findAll"):
            subject = n.target if n.target is not None else n.args[0]
            pattern = n.args[0] if n.target is not None else n.args[1]
            if name != "matches":
                n.size = self.size(subject)
            s = _factor(_sat(self.size(subject) + 1), STRING_TRAVERSAL)
            r = _factor(self.size(pattern), REGEX_LENGTH)
            return total + _Cost(0, _sat(s * r))
        if name == "contains" and n.target is not None:
            s = _factor(self.size(n.target), STRING_TRAVERSAL)
            return total + _Cost(0, _sat(s * _factor(self.size(n.args[0]), STRING_TRAVERSAL)))
        if name in ("quantity", "isQuantity", "semver", "isSemver"):
            return total + _Cost(0, _factor(self.size(n.args[0]), STRING_TRAVERSAL))
        if name in ("split", "replace", "lowerAscii", "upperAscii", "trim", "substring") and n.target is not None:
            size = self.size(n.target)
            n.size = size
            return total + _Cost(0, _factor(size, 2 * STRING_TRAVERSAL if name in ("split", "replace") else 0.1))
        if name == "_+_" and n.type in (STRING, BYTES):
            n.size = _sat(self.size(n.args[0]) + self.size(n.args[1]))
            return total + _Cost(0, _factor(n.size, STRING_TRAVERSAL))
        if name == "_+_" and isinstance(n.type, tuple):
            n.size = _sat(self.size(n.args[0]) + self.size(n.args[1]))
        if name == "dyn":
            n.size, n.path = n.args[0].size, n.args[0].path
        return total + _Cost(1, 1)


def _max_size(a: int, b: int) -> int:
    return max(a, b)


# Runtime values: quantities, semantic versions, the device.


@functools.total_ordering
class Quantity:
    """A resource.Quantity in CEL: compared by value (`1` equals `1000m`), printed as written."""

    def __init__(self, text: str, value: Fraction) -> None:
        self.text, self.value = text, value

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Quantity) and self.value == other.value

    def __lt__(self, other: Quantity) -> bool:
        return self.value < other.value

    def __hash__(self) -> int:
        return hash(self.value)

    def __repr__(self) -> str:
        return f"Quantity({self.text})"


_SEMVER_STRICT = re.compile(
    r"^(0|[1-9]\d*)\.(0|[1-9]\d*)\.(0|[1-9]\d*)"
    r"(?:-((?:0|[1-9]\d*|\d*[a-zA-Z-][0-9a-zA-Z-]*)(?:\.(?:0|[1-9]\d*|\d*[a-zA-Z-][0-9a-zA-Z-]*))*))?"
    r"(?:\+([0-9a-zA-Z-]+(?:\.[0-9a-zA-Z-]+)*))?$"
)


class Semver:
    """A semantic version (blang/semver): ordered by major, minor, patch, then pre-release; build ignored."""

    def __init__(self, major: int, minor: int, patch: int, pre: tuple[str, ...] = ()) -> None:
        self.major, self.minor, self.patch, self.pre = major, minor, patch, pre

    def _key(self) -> tuple[Any, ...]:
        pre: tuple[Any, ...] = tuple((0, int(p), "") if p.isdigit() else (1, 0, p) for p in self.pre)
        return (self.major, self.minor, self.patch, 0 if self.pre else 1, pre)

    def compare(self, other: Semver) -> int:
        a, b = self._key(), other._key()
        return (a > b) - (a < b)

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Semver) and self.compare(other) == 0

    def __hash__(self) -> int:
        return hash(self._key())

    def __repr__(self) -> str:
        return f"Semver({self.major}.{self.minor}.{self.patch})"


def parse_semver(text: str, normalize: bool = False) -> Semver:
    """semver.Parse; with `normalize`, a leading v, missing minor or patch and leading zeros are accepted, as
    Kubernetes' normalizing form of semver() does."""
    if normalize:
        text = text.removeprefix("v")
        m = re.match(r"^(\d+)(?:\.(\d+))?(?:\.(\d+))?(.*)$", text)
        if m:
            parts = [str(int(p)) if p else "0" for p in m.group(1, 2, 3)]
            text = ".".join(parts) + m.group(4)
    m = _SEMVER_STRICT.match(text)
    if not m:
        raise ValueError(f"invalid semver: {text}")
    pre = tuple(m.group(4).split(".")) if m.group(4) else ()
    return Semver(int(m.group(1)), int(m.group(2)), int(m.group(3)), pre)


class _DomainMap(ct.MapType):
    """`device.attributes` and `device.capacity`: a missing domain reads as an empty map; `in` sees only what is
    there (upstream's mapper with a default value)."""

    def __getitem__(self, key: Any) -> Any:
        try:
            return super().__getitem__(key)
        except KeyError:
            return ct.MapType({})

    def get(self, key: Any, default: Any = None) -> Any:
        return self[key]


@dataclass(frozen=True)
class Device:
    """The input of a selector: a ResourceSlice device as the allocator sees it."""

    driver: str
    attributes: Mapping[str, Mapping[str, Any]] = field(default_factory=dict)  # qualified name -> DeviceAttribute
    capacity: Mapping[str, Mapping[str, Any]] = field(default_factory=dict)  # qualified name -> DeviceCapacity
    allow_multiple_allocations: bool = False


def _split_name(name: str, driver: str) -> tuple[str, str]:
    domain, sep, ident = name.partition("/")
    return (domain, ident) if sep else (driver, name)


def _attribute_value(name: str, attr: Mapping[str, Any]) -> Any:
    if "int" in attr:
        return ct.IntType(attr["int"])
    if "bool" in attr:
        return ct.BoolType(attr["bool"])
    if "string" in attr:
        return ct.StringType(attr["string"])
    if "version" in attr:
        try:
            return parse_semver(str(attr["version"]))
        except ValueError as err:
            raise EvalError(f"attribute {name}: parse semantic version: {err}") from None
    raise EvalError(f"attribute {name}: unsupported attribute value")


def device_activation(device: Device) -> dict[str, Any]:
    attributes: dict[Any, Any] = {}
    for name, attr in device.attributes.items():
        domain, ident = _split_name(name, device.driver)
        attributes.setdefault(ct.StringType(domain), {})[ct.StringType(ident)] = _attribute_value(name, attr)
    capacity: dict[Any, Any] = {}
    for name, cap in device.capacity.items():
        domain, ident = _split_name(name, device.driver)
        raw = cap.get("value", 0)
        try:
            value = parse_quantity(raw)
        except QuantityError as err:
            raise EvalError(f"capacity {name}: {err}") from None
        capacity.setdefault(ct.StringType(domain), {})[ct.StringType(ident)] = Quantity(str(raw), value)
    return {
        "device": ct.MapType(
            {
                ct.StringType("driver"): ct.StringType(device.driver),
                ct.StringType("allowMultipleAllocations"): ct.BoolType(device.allow_multiple_allocations),
                ct.StringType("attributes"): _DomainMap({k: ct.MapType(v) for k, v in attributes.items()}),
                ct.StringType("capacity"): _DomainMap({k: ct.MapType(v) for k, v in capacity.items()}),
            }
        )
    }


# Function implementations for celpy (member functions get their target first).


def _fail(message: str) -> CELEvalError:
    return CELEvalError(message)


def _quantity(text: Any) -> Any:
    try:
        return Quantity(str(text), parse_quantity(str(text)))
    except QuantityError as err:
        return _fail(f"quantity: {err}")


def _is_quantity(text: Any) -> Any:
    try:
        parse_quantity(str(text))
    except QuantityError:
        return ct.BoolType(False)
    return ct.BoolType(True)


def _semver(text: Any, normalize: Any = False) -> Any:
    try:
        return parse_semver(str(text), bool(normalize))
    except ValueError as err:
        return _fail(str(err))


def _is_semver(text: Any, normalize: Any = False) -> Any:
    try:
        parse_semver(str(text), bool(normalize))
    except ValueError:
        return ct.BoolType(False)
    return ct.BoolType(True)


def _compare(a: Any, b: Any) -> int:
    if isinstance(a, Semver) and isinstance(b, Semver):
        return a.compare(b)
    if isinstance(a, Quantity) and isinstance(b, Quantity):
        return (a.value > b.value) - (a.value < b.value)
    raise TypeError(f"no such overload: {type(a).__name__}.compareTo({type(b).__name__})")


def _guard(fn: Callable[..., Any]) -> Callable[..., Any]:
    """Turn a Python error into a CEL error value, as celpy expects from functions."""

    @functools.wraps(fn)
    def call(*args: Any) -> Any:
        try:
            return fn(*args)
        except (TypeError, ValueError, IndexError, OverflowError) as err:
            return _fail(str(err))

    return call


def _arith(sign: int) -> Callable[[Any, Any], Any]:
    def op(q: Any, other: Any) -> Any:
        if not isinstance(q, Quantity):
            raise TypeError("no such overload")
        delta = other.value if isinstance(other, Quantity) else Fraction(int(other))
        value = q.value + sign * delta
        return Quantity(_format_fraction(value), value)

    return op


def _format_fraction(value: Fraction) -> str:
    return str(value.numerator) if value.denominator == 1 else f"{math.ceil(value * 1000)}m"


def _as_integer(q: Any) -> Any:
    if q.value.denominator != 1:
        raise ValueError("cannot convert value to integer")
    return ct.IntType(int(q.value))


_RE2_OPTIONS: Final = re2.Options()
_RE2_OPTIONS.log_errors = False  # a bad pattern is the expression's error, not a line on stderr


@functools.lru_cache(maxsize=256)
def _regex(pattern: str) -> Any:
    """RE2, as cel-go's regex functions use: linear time, so no pattern can backtrack for hours on a device."""
    try:
        return re2.compile(pattern, _RE2_OPTIONS)
    except re2.error as err:
        detail = err.args[0] if err.args else ""
        text = detail.decode("utf-8", "replace") if isinstance(detail, bytes) else str(detail)
        raise ValueError(f"error parsing regexp: {text}") from None


def _indexed(text: str, sub: str, start: int, last: bool) -> int:
    if start < 0 or start > len(text):
        raise IndexError(f"index out of range: {start}")
    if last:
        return text.rfind(sub, 0, start + len(sub)) if start else text.rfind(sub)
    return text.find(sub, start)


_IMPLEMENTATIONS: dict[str, Callable[..., Any]] = {
    "quantity": _quantity,
    "isQuantity": _is_quantity,
    "semver": _semver,
    "isSemver": _is_semver,
    "isGreaterThan": lambda a, b: ct.BoolType(_compare(a, b) > 0),
    "isLessThan": lambda a, b: ct.BoolType(_compare(a, b) < 0),
    "compareTo": lambda a, b: ct.IntType(_compare(a, b)),
    "sign": lambda q: ct.IntType((q.value > 0) - (q.value < 0)),
    "isInteger": lambda q: ct.BoolType(q.value.denominator == 1),
    "asInteger": _as_integer,
    "asApproximateFloat": lambda q: ct.DoubleType(float(q.value)),
    "add": _arith(1),
    "sub": _arith(-1),
    "major": lambda v: ct.IntType(v.major),
    "minor": lambda v: ct.IntType(v.minor),
    "patch": lambda v: ct.IntType(v.patch),
    "lowerAscii": lambda s: ct.StringType("".join(c.lower() if c.isascii() else c for c in s)),
    "upperAscii": lambda s: ct.StringType("".join(c.upper() if c.isascii() else c for c in s)),
    "trim": lambda s: ct.StringType(s.strip()),
    "split": lambda s, sep, n=-1: ct.ListType(
        [ct.StringType(p) for p in (s.split(sep, n - 1 if n > 0 else -1) if n != 0 else [])]
    ),
    "replace": lambda s, a, b, n=-1: ct.StringType(s.replace(a, b, n)),
    "indexOf": lambda s, sub, start=0: ct.IntType(_indexed(s, sub, start, False)),
    "lastIndexOf": lambda s, sub, start=0: ct.IntType(_indexed(s, sub, start, True)),
    "substring": lambda s, a, b=None: ct.StringType(s[a : len(s) if b is None else b]),
    "charAt": lambda s, i: ct.StringType(s[i] if i < len(s) else ""),
    "join": lambda items, sep="": ct.StringType(sep.join(items)),
    "matches": lambda s, pattern: ct.BoolType(_regex(pattern).search(s) is not None),
    "find": lambda s, pattern: ct.StringType((lambda m: m.group(0) if m else "")(_regex(pattern).search(s))),
    "findAll": lambda s, pattern, n=-1: ct.ListType(
        [ct.StringType(m.group(0)) for m in list(_regex(pattern).finditer(s))[: None if n < 0 else n]]
    ),
}
FUNCTIONS: Final[dict[str, Callable[..., Any]]] = {name: _guard(fn) for name, fn in _IMPLEMENTATIONS.items()}


# Compilation.


@dataclass
class CompilationResult:
    expression: str
    error: CELError | None = None
    max_cost: int = UNKNOWN_SIZE
    output_type: str = ""
    program: Any = None  # a celpy runner
    height: int = 0  # of the parse tree, for the recursion room evaluation needs

    def device_matches(self, device: Device, deadline: float | None = None) -> bool:
        """Evaluate the selector for one device; EvalError carries upstream's runtime error. Past `deadline` (a
        time.monotonic() value) the evaluation stops with "operation interrupted", as cel-go's does when its
        context ends."""
        if self.program is None:
            raise EvalError(str(self.error) if self.error else "not compiled")
        if self.max_cost > EXPRESSION_MAX_COST:
            # No runtime cost tracking here: an expression whose worst case exceeds the limit is stopped before it
            # runs (the API server refuses such selectors on create, so only stored ones could get here).
            raise EvalError("operation cancelled: actual cost limit exceeded")
        try:
            with _StackRoom(self.height):
                result = self.program.evaluate_until(device_activation(device), deadline)
        except CELEvalError as err:
            raise EvalError(_eval_message(err)) from None
        except _Interrupted:
            raise EvalError("operation interrupted") from None
        except (AttributeError, TypeError, ValueError, KeyError, IndexError, ArithmeticError) as err:
            # celpy failing on something it did not foresee: this device does not match, with the reason
            raise EvalError(f"{type(err).__name__}: {err}") from None
        except RecursionError:  # more room needed than estimated: stopped, as a cost limit would stop it
            raise EvalError("operation cancelled: actual cost limit exceeded") from None
        if isinstance(result, CELEvalError):
            raise EvalError(_eval_message(result))
        if not isinstance(result, ct.BoolType | bool):
            raise EvalError(f"CEL result of type {_runtime_type(result)} could not be converted to bool")
        return bool(result)


def _runtime_type(value: Any) -> str:
    names = {ct.IntType: INT, ct.UintType: UINT, ct.DoubleType: DOUBLE, ct.StringType: STRING, ct.BytesType: BYTES}
    for cls, name in names.items():
        if isinstance(value, cls):
            return name
    if isinstance(value, Quantity):
        return QUANTITY
    if isinstance(value, Semver):
        return SEMVER
    if isinstance(value, ct.ListType):
        return "list"
    return "map" if isinstance(value, ct.MapType) else type(value).__name__


def _innermost(err: BaseException) -> tuple[str, tuple[Any, ...]]:
    args: tuple[Any, ...] = err.args
    while len(args) == 3 and isinstance(args[2], tuple) and args[2] and isinstance(args[2][0], str):
        if args[1] is KeyError or args[1] is ZeroDivisionError:
            return str(args[0]), tuple(args[2])
        args = args[2]
    return (str(args[0]) if args else str(err)), args


def _eval_message(err: BaseException) -> str:
    message, args = _innermost(err)
    m = re.match(r"no such (?:member in mapping|key): (.*)$", message)
    if m or message == "no such key":
        key = m.group(1) if m else (args[0] if args else "")
        key = str(key)
        inner = re.match(r"^StringType\('(.*)'\)$", key)
        key = inner.group(1) if inner else key.strip("'")
        return f"no such key: {key}"
    if message.startswith("divide by zero"):
        return "division by zero"
    return message


def _caret(expression: str, line: int, column: int, message: str) -> str:
    text = expression.split("\n")[line - 1] if expression else ""
    return f"ERROR: <input>:{line}:{column}: {message}\n | {text}\n | {'.' * (column - 1)}^"


def _parse_error_message(err: CELParseError) -> tuple[int, int, str]:
    """Where parsing stopped and what it found, worded as ANTLR's errors in cel-go (`mismatched input '+'`)."""
    line = getattr(err, "line", None) or 1
    column = getattr(err, "column", None) or 1
    cause = err.__cause__ or err.__context__
    token = getattr(cause, "token", None)
    if token is not None:
        shown = "<EOF>" if token.type == "$END" else str(token)
        return line, column, f"Syntax error: mismatched input '{shown}'"
    char = getattr(cause, "char", None)
    if char is not None:
        return line, column, f"Syntax error: token recognition error at: '{char}'"
    return line, column, "Syntax error"


# Nesting limits. cel-go stops a parse in two places, both at PARSER_RECURSION_LIMIT: while ANTLR parses, a listener
# counts, per grammar rule, how many of that rule are open ("expression recursion limit exceeded: 250"); afterwards,
# building the AST, it counts the open ternaries, relations, arithmetic operations, field selections, indexes and
# method calls ("max recursion depth exceeded"). Both are computed here on celpy's parse tree, whose rules map onto
# cel-go's: a bracket (parentheses, list, map, call arguments, index) or a ternary's else branch opens every rule
# again; the right operand of a relation or of arithmetic opens that rule once more; left operands, `&&`, `||` and
# repeated `!` or `-` open nothing.

_EXPR, _OR, _AND, _REL, _CALC, _UNARY, _MEMBER, _PRIMARY = range(8)
_CHAIN_CONTINUES: Final = {
    "conditionalor": ("conditionalor",),
    "conditionaland": ("conditionaland",),
    "relation": tuple(f"relation_{op}" for op in ("lt", "le", "gt", "ge", "eq", "ne", "in")),
    "addition": ("addition_add", "addition_sub"),
    "multiplication": ("multiplication_mul", "multiplication_div", "multiplication_mod"),
    "unary": ("unary",),
    "member": ("member_dot", "member_dot_arg", "member_index", "member_object"),
}
_VISITED: Final = frozenset({"member_dot", "member_dot_arg", "member_index"})
_RULES_TOO_DEEP: Final = f"expression recursion limit exceeded: {PARSER_RECURSION_LIMIT}"
_AST_TOO_DEEP: Final = "max recursion depth exceeded"


def _opened(parent: Any, node: Any) -> tuple[int, ...]:
    """The grammar rules of cel-go's parser that `node` opens below `parent` (indexes into the depth counters)."""
    data = node.data
    if parent is not None and parent.data in _CHAIN_CONTINUES.get(data, ()):
        return ()  # the left operand of an operator, or the next `!`: the same rule, still open
    right = parent is not None and len(parent.children) == 2 and parent.children[1] is node
    if data == "expr":
        return (_EXPR,)
    if data == "conditionalor":
        return (_OR,)
    if data == "conditionaland":
        return (_AND,)
    if data == "relation":
        return (_REL,)
    if data == "addition":
        return (_REL, _CALC) if right and parent.data == "relation" else (_CALC,)
    if data == "multiplication":
        return (_CALC,) if right and parent.data == "addition" else ()
    if data == "unary":
        return (_CALC, _UNARY) if right and parent.data == "multiplication" else (_UNARY,)
    if data == "member":
        return (_MEMBER,)
    if data == "primary":
        return (_PRIMARY,)
    return ()


def _visits(node: Any) -> int:
    data = node.data
    if data in _VISITED:
        return 1
    if data in ("relation", "addition", "multiplication"):
        return int(len(node.children) == 2)
    return int(data == "expr" and len(node.children) == 3)


def _nesting_error(tree: Any) -> str | None:
    """cel-go's message when the expression nests deeper than its parser allows, else None (iterative: the tree
    may be thousands of levels deep)."""
    limit = PARSER_RECURSION_LIMIT
    too_deep = False
    stack: list[tuple[Any, Any, tuple[int, ...], int]] = [(tree, None, (0,) * 8, 0)]
    while stack:
        node, parent, depths, visits = stack.pop()
        opened = _opened(parent, node)
        if opened:
            counts = list(depths)
            for rule in opened:
                counts[rule] += 1
            if max(counts) > limit:
                return _RULES_TOO_DEEP
            depths = tuple(counts)
        visits += _visits(node)
        too_deep = too_deep or visits > limit
        stack.extend((child, node, depths, visits) for child in node.children if isinstance(child, lark.Tree))
    return _AST_TOO_DEEP if too_deep else None


def _height(tree: Any) -> int:
    """The parse tree's height, which bounds how deep celpy's evaluator and the builders here recurse."""
    height = 0
    stack = [(tree, 1)]
    while stack:
        node, level = stack.pop()
        height = max(height, level)
        stack.extend((child, level + 1) for child in node.children if isinstance(child, lark.Tree))
    return height


def _simplify(tree: Any) -> Any:
    """Shape the tree as cel-go does before anything recurses over it: a run of the same unary operator keeps its
    parity (`!!!x` is `!x`, `--x` is `x`), and a chain of `&&` or `||`, which cel-go's parser balances, becomes a
    balanced tree, so a thousand-term conjunction is ten levels deep rather than a thousand."""
    made: set[int] = set()
    for node in _subtrees(tree):
        while node.data == "unary" and len(node.children) == 2:
            op, inner, run = node.children[0].data, node.children[1], 1
            while inner.data == "unary" and len(inner.children) == 2 and inner.children[0].data == op:
                inner, run = inner.children[1], run + 1
            if run % 2:
                node.children = [node.children[0], inner]
                break
            node.children = list(inner.children)
        if node.data in ("conditionalor", "conditionaland") and len(node.children) == 2 and id(node) not in made:
            operands = []
            left = node
            while left.data == node.data and len(left.children) == 2:
                operands.append(left.children[1])
                left = left.children[0]
            operands.append(left.children[0])
            if len(operands) > 2:
                node.children = _balanced(node, operands[::-1], made).children
    return tree


_WRAPPERS: Final = ("expr", "paren_expr", "primary", "member", "unary", "multiplication", "addition", "relation")


def _balanced(chain: Any, operands: list[Any], made: set[int]) -> Any:
    """`operands` joined by the chain's operator as a balanced tree; a right half is parenthesised back into an
    operand (celpy's grammar keeps right operands one level below the operator)."""
    cls, data = type(chain), chain.data
    operand = "conditionaland" if data == "conditionalor" else "relation"
    if len(operands) == 1:
        return cls(data, [operands[0]], meta=operands[0].meta)
    mid = len(operands) // 2
    right = _balanced(chain, operands[mid:], made)
    meta = operands[mid].meta
    if len(operands) - mid > 1:
        wrapped = cls("conditionalor", [right], meta=meta) if data == "conditionaland" else right
        for wrapper in _WRAPPERS:
            wrapped = cls(wrapper, [wrapped], meta=meta)
            if wrapper == operand:
                break
        else:
            wrapped = cls(operand, [wrapped], meta=meta)
        right = wrapped
    else:
        right = operands[mid]
    joined = cls(data, [_balanced(chain, operands[:mid], made), right], meta=chain.meta)
    made.add(id(joined))
    return joined


# Each level of the parse tree costs celpy's evaluator a few Python frames; an expression within the nesting limits
# can be a few thousand levels high. The interpreter's recursion limit is raised for as long as such an expression
# is compiled or evaluated, and put back afterwards: a high limit would let C code elsewhere (json, yaml, repr of a
# hostile document) recurse past the end of the C stack instead of raising RecursionError.
_FRAMES_PER_LEVEL: Final = 8  # measured: 3 to 6 for the deepest shapes the limits let through
_room_lock = threading.Lock()
_room_users = 0
_room_saved = 0


class _StackRoom:
    def __init__(self, height: int) -> None:
        self.frames = height * _FRAMES_PER_LEVEL + 200
        self.raised = False

    def __enter__(self) -> None:
        global _room_users, _room_saved
        if self.frames + 200 <= sys.getrecursionlimit():
            return
        with _room_lock:
            if _room_users == 0:
                _room_saved = sys.getrecursionlimit()
            _room_users += 1
            self.raised = True
            sys.setrecursionlimit(max(sys.getrecursionlimit(), _room_saved + self.frames))

    def __exit__(self, *exc: object) -> None:
        global _room_users
        if not self.raised:
            return
        with _room_lock:
            _room_users -= 1
            if _room_users == 0:
                sys.setrecursionlimit(_room_saved)


# Interruption. cel-go evaluates DRA selectors with the Filter call's context and checks it as it goes, so the
# DynamicResources filterTimeout stops even an expression within the cost limit; celpy is some thousand times slower
# than cel-go (an accepted selector of estimated cost 455,551 takes 5.5 s), so the same check matters more here.

INTERRUPT_CHECK_STEPS: Final = 256  # evaluation steps (parse-tree nodes) between looks at the clock


class _Interrupted(Exception):
    """The deadline passed during an evaluation."""


class _Clock:
    """Shared by an evaluation and the sub-evaluations of its macros."""

    __slots__ = ("deadline", "steps")

    def __init__(self, deadline: float) -> None:
        self.deadline, self.steps = deadline, 0


class _DeadlineEvaluator(Evaluator):
    """celpy's tree-walking evaluator, looking at a clock every few steps."""

    def __init__(self, ast: Any, activation: Any, clock: _Clock) -> None:
        super().__init__(ast, activation)
        self.clock = clock

    def visit_children(self, tree: Any) -> Any:
        # celpy's own adds a nesting level for its trace log only; lark's is this list.
        clock = self.clock
        clock.steps += 1
        if clock.steps % INTERRUPT_CHECK_STEPS == 0 and time.monotonic() >= clock.deadline:
            raise _Interrupted
        return [self.visit(child) if isinstance(child, lark.Tree) else child for child in tree.children]

    def sub_evaluator(self, ast: Any) -> Any:
        return _DeadlineEvaluator(ast, self.activation, self.clock)


class _Runner(celpy.InterpretedRunner):
    """celpy's interpreter runner that can be given a deadline."""

    def evaluate_until(self, context: Any, deadline: float | None) -> Any:
        if deadline is None:
            return self.evaluate(context)
        return _DeadlineEvaluator(self.ast, self.new_activation(), _Clock(deadline)).evaluate(context)


_ENV: dict[str, Any] = {}


def _environment() -> Any:
    env = _ENV.get("env")
    if env is None:
        limit = sys.getrecursionlimit()
        env = _ENV["env"] = celpy.Environment(runner_class=_Runner)
        sys.setrecursionlimit(limit)  # celpy sets 2,500 for the whole process; _StackRoom gives room where needed
    return env


@functools.lru_cache(maxsize=4096)
def compile_expression(expression: str) -> CompilationResult:
    """CompileCELExpression: parse, check against the DRA environment, estimate the cost, build the program."""

    def failed(detail: str, kind: ErrorKind = ErrorKind.INVALID) -> CompilationResult:
        return CompilationResult(expression, CELError(kind, detail))

    env = _environment()
    try:
        tree = env.compile(expression)
    except CELParseError as err:
        line, column, message = _parse_error_message(err)
        return failed("compilation failed: " + _caret(expression, line, column, message))
    except RecursionError:
        return failed(f"compilation failed: ERROR: <input>:-1:0: {_RULES_TOO_DEEP}")
    too_deep = _nesting_error(tree)
    if too_deep is not None:
        return failed(f"compilation failed: ERROR: <input>:-1:0: {too_deep}")
    tree = _simplify(tree)
    try:
        with _StackRoom(_height(tree)):
            return _checked(expression, tree, env)
    except RecursionError:  # more room needed than estimated: refused as cel-go refuses what nests too deep
        return failed(f"compilation failed: ERROR: <input>:-1:0: {_AST_TOO_DEEP}")


def _checked(expression: str, tree: Any, env: Any) -> CompilationResult:
    """Type check, cost estimate and program of a parsed expression within the nesting limits."""

    def failed(detail: str, kind: ErrorKind = ErrorKind.INVALID) -> CompilationResult:
        return CompilationResult(expression, CELError(kind, detail))

    try:
        ast = _build(tree)
    except _Syntax as err:
        return failed("compilation failed: " + _caret(expression, err.pos[0], err.pos[1], f"Syntax error: {err}"))
    checker = _Checker()
    out = checker.check(ast)
    if checker.issues:
        shown = (_caret(expression, i.pos[0], i.pos[1], i.message) for i in checker.issues)
        return failed("compilation failed: " + "\n".join(shown))
    if out not in (BOOL, ANY):
        return failed(f"must evaluate to bool or the unknown type, not {_name(out)}")
    cost = _Coster().cost(ast)
    if checker.bad_patterns:
        return failed(f"program instantiation failed: {checker.bad_patterns[0]}", ErrorKind.INTERNAL)
    rewritten = _rewrite_binds(tree)
    height = _height(rewritten)  # each cel.bind adds a few levels
    try:
        with _StackRoom(height):
            program = env.program(rewritten, functions=FUNCTIONS)
    except (CELEvalError, lark.exceptions.LarkError, ValueError, TypeError) as err:
        return failed(f"program instantiation failed: {err}", ErrorKind.INTERNAL)
    return CompilationResult(expression, None, cost.hi, _name(out), program, height)


def _subtrees(tree: Any) -> Iterator[Any]:
    stack = [tree]
    while stack:
        node = stack.pop()
        if isinstance(node, lark.Tree):
            yield node
            stack.extend(node.children)


def _rewrite_binds(tree: Any) -> Any:
    """celpy has no `cel.bind`: `cel.bind(v, init, body)` becomes `[init].map(v, body)[0]`, which binds v to init
    once and evaluates body, as the bind macro does."""
    cls = type(tree)
    zero = _environment().compile("0")
    for node in list(_subtrees(tree)):
        for i, child in enumerate(node.children):
            if not (isinstance(child, lark.Tree) and child.data == "member_dot_arg" and len(child.children) == 3):
                continue
            target, name, exprlist = child.children
            if str(name) != "bind" or not _is_ident(target, "cel") or len(exprlist.children) != 3:
                continue
            var, init, body = exprlist.children
            meta = child.meta  # celpy's errors read the position of the node they fail on
            listed = cls("exprlist", [init], meta)
            for wrapper in ("list_lit", "primary", "member"):
                listed = cls(wrapper, [listed], meta)
            args = cls("exprlist", [var, body], meta)
            mapped = cls("member_dot_arg", [listed, lark.Token("IDENT", "map"), args], meta)
            node.children[i] = cls("member_index", [cls("member", [mapped], meta), zero], meta)
    return tree


def _is_ident(tree: Any, name: str) -> bool:
    while isinstance(tree, lark.Tree) and tree.data in ("member", "primary") and len(tree.children) == 1:
        tree = tree.children[0]
    return isinstance(tree, lark.Tree) and tree.data == "ident" and str(tree.children[0]) == name
