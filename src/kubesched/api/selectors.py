"""Label selectors and node selector terms.

Semantics follow apimachinery's `labels.Selector` and component-helpers'
`nodeaffinity`: a nil label selector matches nothing, an empty one everything;
node selector terms are ORed, a term with no requirements matches nothing, and an
unparseable term never matches (upstream's lazy-error selector).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from kubesched.api import field, names

Labels = Mapping[str, str]


class SelectorError(ValueError):
    """A selector that upstream's parser would reject."""


@dataclass(frozen=True, slots=True)
class Requirement:
    key: str
    operator: str  # In, NotIn, Exists, DoesNotExist, Gt, Lt
    values: frozenset[str]
    number: int = 0  # the bound for Gt/Lt

    def matches(self, labels: Labels) -> bool:
        op = self.operator
        if op == "In":
            v = labels.get(self.key)
            return v is not None and v in self.values
        if op == "NotIn":
            v = labels.get(self.key)
            return v is None or v not in self.values
        if op == "Exists":
            return self.key in labels
        if op == "DoesNotExist":
            return self.key not in labels
        v = labels.get(self.key)
        if v is None:
            return False
        try:
            n = int(v)
        except ValueError:
            return False
        return n > self.number if op == "Gt" else n < self.number


_LABEL_OPS = {"In", "NotIn", "Exists", "DoesNotExist"}
_NODE_OPS = _LABEL_OPS | {"Gt", "Lt"}


def _requirement(expr: Mapping[str, Any], allowed: set[str]) -> Requirement:
    if not isinstance(expr, Mapping):
        raise SelectorError("expression must be an object")
    key = expr.get("key")
    op = expr.get("operator")
    values = expr.get("values") or []
    if not isinstance(key, str) or not key:
        raise SelectorError("key must be a non-empty string")
    if op not in allowed:
        raise SelectorError(f'operator "{op}" is not supported')
    if not isinstance(values, list):
        raise SelectorError("values must be a list")
    values = [str(v) for v in values]
    if op in ("In", "NotIn") and not values:
        raise SelectorError(f"values must be non-empty for operator {op}")
    if op in ("Exists", "DoesNotExist") and values:
        raise SelectorError(f"values must be empty for operator {op}")
    number = 0
    if op in ("Gt", "Lt"):
        if len(values) != 1:
            raise SelectorError(f"exactly one value is required for operator {op}")
        try:
            number = int(values[0])
        except ValueError as err:
            raise SelectorError(f'value "{values[0]}" for operator {op} is not an integer') from err
    return Requirement(key, op, frozenset(values), number)


@dataclass(frozen=True, slots=True)
class LabelSelector:
    """A parsed metav1.LabelSelector; `None` requirements means "matches nothing"."""

    requirements: tuple[Requirement, ...] | None

    def matches(self, labels: Labels) -> bool:
        reqs = self.requirements
        if reqs is None:
            return False
        for r in reqs:
            if not r.matches(labels):
                return False
        return True

    @property
    def is_nothing(self) -> bool:
        return self.requirements is None

    @property
    def is_everything(self) -> bool:
        return self.requirements == ()


NOTHING = LabelSelector(None)
EVERYTHING = LabelSelector(())


def parse_label_selector(raw: Mapping[str, Any] | None) -> LabelSelector:
    if raw is None:
        return NOTHING
    if not isinstance(raw, Mapping):
        raise SelectorError("label selector must be an object")
    reqs: list[Requirement] = []
    for k, v in (raw.get("matchLabels") or {}).items():
        reqs.append(Requirement(str(k), "In", frozenset([str(v)])))
    for i, expr in enumerate(raw.get("matchExpressions") or []):
        try:
            reqs.append(_requirement(expr, _LABEL_OPS))
        except SelectorError as err:
            raise SelectorError(f"matchExpressions[{i}]: {err}") from err
    return LabelSelector(tuple(sorted(reqs, key=lambda r: r.key)))


def selector_from_set(labels: Labels) -> LabelSelector:
    return LabelSelector(tuple(Requirement(k, "In", frozenset([v])) for k, v in sorted(labels.items())))


@dataclass(frozen=True, slots=True)
class NodeSelectorTerm:
    expressions: tuple[Requirement, ...]
    fields: tuple[Requirement, ...]  # only metadata.name is supported, as upstream
    valid: bool = True

    def matches(self, labels: Labels, node_name: str) -> bool:
        if not self.valid or (not self.expressions and not self.fields):
            return False
        for r in self.expressions:
            if not r.matches(labels):
                return False
        if self.fields:
            fields = {"metadata.name": node_name}
            for r in self.fields:
                if not r.matches(fields):
                    return False
        return True


def parse_node_selector_term(raw: Mapping[str, Any], *, strict: bool = False) -> NodeSelectorTerm:
    """Parse one term; with `strict` errors raise, else the term is kept as never-matching."""
    try:
        exprs = tuple(_requirement(e, _NODE_OPS) for e in raw.get("matchExpressions") or [])
        fields = []
        for f in raw.get("matchFields") or []:
            r = _requirement(f, {"In", "NotIn"})
            if r.key != "metadata.name":
                raise SelectorError(f'field "{r.key}" is not supported, only metadata.name')
            if len(r.values) != 1:
                raise SelectorError("matchFields must have exactly one value")
            fields.append(r)
        return NodeSelectorTerm(exprs, tuple(fields))
    except SelectorError:
        if strict:
            raise
        return NodeSelectorTerm((), (), valid=False)


@dataclass(frozen=True, slots=True)
class NodeSelector:
    terms: tuple[NodeSelectorTerm, ...]

    def matches(self, labels: Labels, node_name: str) -> bool:
        for t in self.terms:
            if t.matches(labels, node_name):
                return True
        return False


def parse_node_selector(raw: Mapping[str, Any]) -> NodeSelector:
    return NodeSelector(tuple(parse_node_selector_term(t) for t in raw.get("nodeSelectorTerms") or []))


def validate_node_selector_terms(terms: Sequence[Mapping[str, Any]]) -> None:
    for i, t in enumerate(terms):
        try:
            parse_node_selector_term(t, strict=True)
        except SelectorError as err:
            raise SelectorError(f"nodeSelectorTerms[{i}]: {err}") from err


# Validation as the API server does it (field paths and wording of apimachinery and core/v1 validation),
# on decoded manifests; each function returns the field errors, empty when the value is valid.


def validate_labels(labels: Mapping[str, Any] | None, path: str) -> list[str]:
    """ValidateLabels: qualified-name keys and label values, all reported at the map's path."""
    errs: list[str] = []
    for k, v in (labels or {}).items():
        errs.extend(field.invalid(path, k, msg) for msg in names.is_qualified_name(str(k)))
        errs.extend(field.invalid(path, v, msg) for msg in names.is_valid_label_value(str(v)))
    return errs


def validate_label_name(key: str, path: str) -> list[str]:
    return [field.invalid(path, key, msg) for msg in names.is_qualified_name(key)]


def validate_label_selector(
    raw: Mapping[str, Any] | None, path: str, *, allow_invalid_values: bool = False
) -> list[str]:
    """ValidateLabelSelector: matchLabels as labels, each expression's operator, key and values."""
    if raw is None:
        return []
    errs = validate_labels(raw.get("matchLabels"), f"{path}.matchLabels")
    for i, expr in enumerate(raw.get("matchExpressions") or ()):
        p = f"{path}.matchExpressions[{i}]"
        op, values = expr.get("operator", ""), expr.get("values") or []
        if op in ("In", "NotIn"):
            if not values:
                errs.append(field.required(f"{p}.values", "must be specified when `operator` is 'In' or 'NotIn'"))
        elif op in ("Exists", "DoesNotExist"):
            if values:
                errs.append(
                    field.forbidden(f"{p}.values", "may not be specified when `operator` is 'Exists' or 'DoesNotExist'")
                )
        else:
            errs.append(field.invalid(f"{p}.operator", op, "not a valid selector operator"))
        errs.extend(validate_label_name(str(expr.get("key", "")), f"{p}.key"))
        if not allow_invalid_values:
            for j, v in enumerate(values):
                errs.extend(field.invalid(f"{p}.values[{j}]", v, msg) for msg in names.is_valid_label_value(str(v)))
    return errs


def validate_node_selector_requirement(raw: Mapping[str, Any], path: str, *, allow_invalid_values: bool) -> list[str]:
    errs: list[str] = []
    op, values = raw.get("operator", ""), raw.get("values") or []
    if op in ("In", "NotIn"):
        if not values:
            errs.append(field.required(f"{path}.values", "must be specified when `operator` is 'In' or 'NotIn'"))
    elif op in ("Exists", "DoesNotExist"):
        if values:
            errs.append(
                field.forbidden(f"{path}.values", "may not be specified when `operator` is 'Exists' or 'DoesNotExist'")
            )
    elif op in ("Gt", "Lt"):
        if len(values) != 1:
            errs.append(
                field.required(f"{path}.values", "must be specified single value when `operator` is 'Lt' or 'Gt'")
            )
    else:
        errs.append(field.invalid(f"{path}.operator", op, "not a valid selector operator"))
    errs.extend(validate_label_name(str(raw.get("key", "")), f"{path}.key"))
    if not allow_invalid_values:
        for j, v in enumerate(values):
            errs.extend(field.invalid(f"{path}.values[{j}]", v, msg) for msg in names.is_valid_label_value(str(v)))
    return errs


def validate_node_selector_term(raw: Mapping[str, Any], path: str, *, allow_invalid_values: bool = False) -> list[str]:
    errs: list[str] = []
    for j, req in enumerate(raw.get("matchExpressions") or ()):
        errs.extend(
            validate_node_selector_requirement(
                req, f"{path}.matchExpressions[{j}]", allow_invalid_values=allow_invalid_values
            )
        )
    for j, req in enumerate(raw.get("matchFields") or ()):
        p = f"{path}.matchFields[{j}]"
        op, values = req.get("operator", ""), req.get("values") or []
        if op in ("In", "NotIn"):
            if len(values) != 1:
                errs.append(
                    field.required(
                        f"{p}.values",
                        "must be only one value when `operator` is 'In' or 'NotIn' for node field selector",
                    )
                )
        else:
            errs.append(field.invalid(f"{p}.operator", op, "not a valid selector operator"))
        if req.get("key") != "metadata.name":
            errs.append(field.invalid(f"{p}.key", req.get("key", ""), "not a valid field selector key"))
        else:
            for i, v in enumerate(values):
                errs.extend(field.invalid(f"{p}.values[{i}]", v, msg) for msg in names.is_dns1123_subdomain(str(v)))
    return errs


def validate_node_selector(raw: Mapping[str, Any], path: str) -> list[str]:
    """ValidateNodeSelector: at least one term, each term's requirements."""
    terms = raw.get("nodeSelectorTerms") or []
    if not terms:
        return [field.required(f"{path}.nodeSelectorTerms", "must have at least one node selector term")]
    errs: list[str] = []
    for i, term in enumerate(terms):
        errs.extend(validate_node_selector_term(term, f"{path}.nodeSelectorTerms[{i}]"))
    return errs
