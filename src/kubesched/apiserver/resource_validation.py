"""The API server's validation of `resource.k8s.io/v1` objects (pkg/apis/resource/validation, v1.36).

DeviceClass, ResourceClaim, ResourceClaimTemplate and ResourceSlice are checked as
kube-apiserver checks them on create, for everything the DRA allocator reads: driver,
pool, device and request names, node selection of slices, attributes (one value each,
semver versions, C-identifier names), capacities and their request policies, counter
sets and what devices consume from them, device taints and tolerations, binding
conditions, requests (`exactly` or `firstAvailable`, allocation mode and count),
constraints and configs naming requests, CEL selectors (compiled as upstream compiles
them, with its cost limit) and a claim's status as a snapshot holds it. Messages are the
API server's; errors of one object come in upstream's order.

Fields that only alpha features read (list-valued attributes, node allocatable resource
mappings) are dropped before this, by resource_defaulting.py, as the API server drops them
on create with those gates off.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Iterable, Mapping, Sequence
from fractions import Fraction
from typing import Any

from kubesched.api import field, names
from kubesched.api.object import Obj
from kubesched.api.quantity import QuantityError, parse_quantity
from kubesched.api.selectors import validate_label_name, validate_node_selector
from kubesched.dra import cel

Errors = list[str]

DRIVER_NAME_MAX = 63
POOL_NAME_MAX = 253
DEVICE_MAX_DOMAIN_LENGTH = 63
DEVICE_MAX_ID_LENGTH = 32
ATTRIBUTE_VALUE_MAX_LENGTH = 64
ATTRIBUTES_AND_CAPACITIES_MAX = 32
ATTRIBUTE_VALUES_MAX = 48
SLICE_MAX_DEVICES = 128
SLICE_MAX_DEVICES_ADVANCED = 64
SLICE_MAX_COUNTER_SETS = 8
COUNTERS_PER_SET_MAX = 32
COUNTER_CONSUMPTIONS_PER_DEVICE_MAX = 2
COUNTERS_PER_CONSUMPTION_MAX = 32
DEVICE_TAINTS_MAX = 16
BINDING_CONDITIONS_MAX = 4
REQUESTS_MAX = 32
CONSTRAINTS_MAX = 32
CONFIG_MAX = 32
SELECTORS_MAX = 32
FIRST_AVAILABLE_MAX = 8
RESERVED_FOR_MAX = 256
OPAQUE_PARAMETERS_MAX = 10 * 1024
REQUEST_POLICY_VALID_VALUES_MAX = 10
ADMIN_NAMESPACE_LABEL = "resource.kubernetes.io/admin-access"
ALLOCATION_MODES = ("All", "ExactCount")
TAINT_EFFECTS = ("NoExecute", "NoSchedule", "None")
TOLERATION_OPERATORS = ("Equal", "Exists")
CONFIG_SOURCES = ("FromClaim", "FromClass")
# Go's field names of DeviceAttribute, in declaration order, for the "exactly one value" error.
_ATTRIBUTE_GO_FIELDS = (
    ("IntValue", "int"),
    ("BoolValue", "bool"),
    ("StringValue", "string"),
    ("VersionValue", "version"),
    ("IntValues", "ints"),
    ("BoolValues", "bools"),
    ("StringValues", "strings"),
    ("VersionValues", "versions"),
)
LIST_ATTRIBUTES = ("bools", "ints", "strings", "versions")
_NUMERIC = r"(0|[1-9]\d*)"
_PRERELEASE = r"(0|[1-9]\d*|\d*[a-zA-Z-][0-9a-zA-Z-]*)"
_BUILD = r"[0-9a-zA-Z-]+"
_SEMVER = re.compile(
    rf"^{_NUMERIC}\.{_NUMERIC}\.{_NUMERIC}(-{_PRERELEASE}(\.{_PRERELEASE})*)?(\+{_BUILD}(\.{_BUILD})*)?$"
)
_C_IDENTIFIER = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")
_C_IDENTIFIER_MSG = (
    "a valid C identifier must start with alphabetic character or '_', followed by a string of alphanumeric "
    "characters or '_' (e.g. 'my_name',  or 'MY_NAME',  or 'MyName', regex used for validation is "
    "'[A-Za-z_][A-Za-z0-9_]*')"
)
_REQUEST_REF = "must be the name of a request in the claim or the name of a request and a subrequest separated by '/'"
_UUID = re.compile(r"^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$")


def _list(value: Any) -> list[Any]:
    return value if isinstance(value, list) else []


def _map(value: Any) -> Mapping[str, Any]:
    return value if isinstance(value, Mapping) else {}


def _quantity(value: Any) -> Fraction | None:
    try:
        return parse_quantity(value)
    except QuantityError:
        return None


def _too_many(path: str, count: int, limit: int) -> str:
    return f"{path}: Too many: {count}: must have at most {limit} items"


def _seq(
    items: Sequence[Any],
    limit: int,
    check: Callable[[Any, str], Errors],
    path: str,
    key: Callable[[Any], Any] | None = None,
) -> Errors:
    """validateSlice / validateSet: at most `limit` items (that alone when exceeded), each checked, keys unique."""
    if 0 <= limit < len(items):
        return [_too_many(path, len(items), limit)]
    errs: Errors = []
    for i, item in enumerate(items):
        errs += check(item, f"{path}[{i}]")
    if key is not None:
        seen: set[Any] = set()
        for i, item in enumerate(items):
            k = key(item)
            if k in seen:
                errs.append(field.duplicate(f"{path}[{i}]", k))
            seen.add(k)
    return errs


def _truncated_key(key: str, limit: int) -> str:
    limit = max(limit, 16)
    if len(key) <= limit:
        return key
    remaining = limit - 3
    return key[: (remaining + 1) // 2] + "..." + key[len(key) - remaining // 2 :]


# Names.


def validate_driver_name(name: str, path: str) -> Errors:
    """ValidateCSIDriverName: required, at most 63 characters, a DNS subdomain once lowercased."""
    if not name:
        return [field.required(path)]
    errs: Errors = []
    if len(name) > DRIVER_NAME_MAX:
        errs.append(field.too_long(path, DRIVER_NAME_MAX))
    errs += [field.invalid(path, name, m) for m in names.is_dns1123_subdomain(name.lower())]
    return errs


def _dns_label(name: str, path: str) -> Errors:
    return [field.invalid(path, name, m) for m in names.is_dns1123_label(name)]


def _dns_subdomain(name: str, path: str) -> Errors:
    return [field.invalid(path, name, m) for m in names.is_dns1123_subdomain(name)]


def validate_pool_name(name: str, path: str) -> Errors:
    if not name:
        return [field.required(path)]
    errs: Errors = []
    if len(name) > POOL_NAME_MAX:
        errs.append(field.too_long(path, POOL_NAME_MAX))
    for part in name.split("/"):
        errs += _dns_subdomain(part, path)
    return errs


def _c_identifier(name: str, path: str) -> Errors:
    errs: Errors = []
    if len(name) > DEVICE_MAX_ID_LENGTH:
        errs.append(field.too_long(path, DEVICE_MAX_ID_LENGTH))
    if not _C_IDENTIFIER.match(name):
        errs.append(field.invalid(path, name, _C_IDENTIFIER_MSG))
    return errs


def validate_qualified_name(name: str, path: str) -> Errors:
    """An attribute or capacity name: a C identifier, optionally after a driver-name domain and '/'."""
    parts = name.split("/")
    if len(parts) == 1:
        return _c_identifier(parts[0], path)
    errs: Errors = []
    if len(parts) == 2:
        if not parts[0]:
            errs.append(field.invalid(path, "", "the domain must not be empty"))
        else:
            errs += validate_driver_name(parts[0], path)
        if not parts[1]:
            errs.append(field.invalid(path, "", "the name must not be empty"))
        else:
            errs += _c_identifier(parts[1], path)
    return errs


def validate_fully_qualified_name(name: str, path: str) -> Errors:
    errs = validate_qualified_name(name, path)
    if "/" not in name:
        detail = "a fully qualified name must be a domain and a name separated by a slash"
        errs.append(field.invalid(path, name, detail))
    return errs


# Device taints and tolerations, binding conditions.


def validate_device_taint(taint: Mapping[str, Any], path: str) -> Errors:
    errs = validate_label_name(str(taint.get("key", "")), f"{path}.key")
    value = str(taint.get("value") or "")
    if value:
        errs += [field.invalid(f"{path}.value", value, m) for m in names.is_valid_label_value(value)]
    effect = str(taint.get("effect") or "")
    if not effect:
        errs.append(field.required(f"{path}.effect"))
    elif effect not in TAINT_EFFECTS:
        errs.append(field.not_supported(f"{path}.effect", effect, TAINT_EFFECTS))
    return errs


def validate_device_toleration(tol: Mapping[str, Any], path: str) -> Errors:
    errs: Errors = []
    key = str(tol.get("key") or "")
    if key:
        errs += validate_label_name(key, f"{path}.key")
    op, value = str(tol.get("operator") or ""), str(tol.get("value") or "")
    if op == "Exists":
        if value:
            errs.append(field.invalid(f"{path}.value", value, "must be empty for operator `Exists`"))
    elif op == "Equal":
        errs += [field.invalid(f"{path}.value", value, m) for m in names.is_valid_label_value(value)]
    elif not op:
        errs.append(field.required(f"{path}.operator"))
    else:
        errs.append(field.not_supported(f"{path}.operator", op, TOLERATION_OPERATORS))
    effect = str(tol.get("effect") or "")
    if effect and effect not in TAINT_EFFECTS:
        errs.append(field.not_supported(f"{path}.effect", effect, TAINT_EFFECTS))
    return errs


def validate_binding_conditions(obj: Mapping[str, Any], path: str) -> Errors:
    conditions = [str(c) for c in _list(obj.get("bindingConditions"))]
    failures = [str(c) for c in _list(obj.get("bindingFailureConditions"))]
    errs = _seq(conditions, BINDING_CONDITIONS_MAX, validate_label_name, f"{path}.bindingConditions")
    errs += _seq(failures, BINDING_CONDITIONS_MAX, validate_label_name, f"{path}.bindingFailureConditions")
    for i, c in enumerate(conditions):
        if c in conditions[:i]:
            errs.append(field.duplicate(f"{path}.bindingConditions[{i}]", c))
    for i, c in enumerate(failures):
        if c in failures[:i]:
            errs.append(field.duplicate(f"{path}.bindingFailureConditions[{i}]", c))
        if c in conditions:
            errs.append(
                field.invalid(
                    f"{path}.bindingFailureConditions[{i}]",
                    c,
                    "bindingFailureConditions must not overlap with bindingConditions",
                )
            )
    if not conditions and failures:
        errs.append(
            field.invalid(
                f"{path}.bindingConditions", None, "bindingConditions are required to use bindingFailureConditions"
            )
        )
    if not failures and conditions:
        detail = "bindingFailureConditions are required to use bindingConditions"
        errs.append(field.invalid(f"{path}.bindingFailureConditions", None, detail))
    return errs


# CEL selectors and opaque configuration.


def validate_selectors(selectors: Any, path: str) -> Errors:
    def one(selector: Any, p: str) -> Errors:
        sel = _map(selector)
        if sel.get("cel") is None:
            return [field.required(f"{p}.cel")]
        expression = str(_map(sel["cel"]).get("expression") or "")
        ep = f"{p}.cel.expression"
        if len(expression.encode("utf-8", "surrogatepass")) > cel.EXPRESSION_MAX_LENGTH:
            return [f"{ep}: Too long: may not be more than {cel.EXPRESSION_MAX_LENGTH} bytes"]
        result = cel.compile_expression(expression)
        if result.error is not None:
            if result.error.kind == cel.ErrorKind.REQUIRED:
                return [field.required(ep, result.error.detail)]
            if result.error.kind == cel.ErrorKind.INVALID:
                return [field.invalid(ep, expression, result.error.detail)]
            return [f"{ep}: Internal error: {result.error.detail}"]
        if result.max_cost > cel.EXPRESSION_MAX_COST:
            return [field.forbidden(ep, "too complex, exceeds cost limit")]
        return []

    return _seq(_list(selectors), SELECTORS_MAX, one, path)


def _validate_opaque(config: Mapping[str, Any], path: str) -> Errors:
    opaque = config.get("opaque")
    if opaque is None:
        return [field.required(f"{path}.opaque")]
    opaque = _map(opaque)
    p = f"{path}.opaque"
    errs = validate_driver_name(str(opaque.get("driver") or ""), f"{p}.driver")
    params = opaque.get("parameters")
    if params is None:
        errs.append(field.required(f"{p}.parameters"))
    elif len(json.dumps(params, separators=(",", ":"))) > OPAQUE_PARAMETERS_MAX:
        errs.append(field.too_long(f"{p}.parameters", OPAQUE_PARAMETERS_MAX))
    elif not isinstance(params, dict):
        errs.append(field.invalid(f"{p}.parameters", "<value omitted>", "must be a valid JSON object"))
    return errs


# Claims and templates.


class _RequestNames:
    """The names a claim's constraints, configs and results may refer to: `request` or `request/subrequest`."""

    def __init__(self, devices: Mapping[str, Any]) -> None:
        self.names: dict[str, set[str] | None] = {}
        for request in _list(devices.get("requests")):
            request = _map(request)
            subs = _list(request.get("firstAvailable"))
            self.names[str(request.get("name") or "")] = (
                {str(_map(s).get("name") or "") for s in subs} if subs else None
            )

    def has(self, ref: str) -> bool:
        parts = ref.split("/")
        if len(parts) > 2 or parts[0] not in self.names:
            return False
        if len(parts) == 1:
            return True
        subs = self.names[parts[0]]
        return subs is not None and parts[1] in subs

    def check(self, ref: Any, path: str) -> Errors:
        ref = str(ref)
        parts = ref.split("/")
        if len(parts) > 2:
            return [field.invalid(path, ref, _REQUEST_REF)]
        errs: Errors = []
        for part in parts:
            errs += _dns_label(part, path)
        if not self.has(ref):
            errs.append(field.invalid(path, ref, _REQUEST_REF))
        return errs


def _validate_allocation_mode(request: Mapping[str, Any], path: str) -> Errors:
    mode, count = request.get("allocationMode", ""), request.get("count", 0)
    if mode == "All":
        if count:
            return [field.invalid(f"{path}.count", count, "must not be specified when allocationMode is 'All'")]
    elif mode == "ExactCount":
        if count <= 0:
            return [field.invalid(f"{path}.count", count, "must be greater than zero")]
    else:
        return [field.not_supported(f"{path}.allocationMode", mode, ALLOCATION_MODES)]
    return []


def _validate_device_class_name(request: Mapping[str, Any], path: str) -> Errors:
    name = str(request.get("deviceClassName") or "")
    return [field.required(path)] if not name else _dns_subdomain(name, path)


def _validate_request_body(request: Mapping[str, Any], path: str) -> Errors:
    """What an `exactly` request and a `firstAvailable` subrequest share: class, selectors, mode, tolerations."""
    errs = _validate_device_class_name(request, f"{path}.deviceClassName")
    errs += validate_selectors(request.get("selectors"), f"{path}.selectors")
    errs += _validate_allocation_mode(request, path)
    for i, tol in enumerate(_list(request.get("tolerations"))):
        errs += validate_device_toleration(_map(tol), f"{path}.tolerations[{i}]")
    return errs


def _validate_request(request: Any, path: str) -> Errors:
    request = _map(request)
    errs = _dns_label(str(request.get("name") or ""), f"{path}.name")
    subs, exactly = _list(request.get("firstAvailable")), request.get("exactly")
    if not subs and exactly is None:
        errs.append(field.required(path, "exactly one of `exactly` or `firstAvailable` is required"))
    elif subs and exactly is not None:
        errs.append(
            field.invalid(
                path, None, "exactly one of `exactly` or `firstAvailable` is required, but multiple fields are set"
            )
        )
    elif subs:

        def sub(item: Any, p: str) -> Errors:
            item = _map(item)
            return _dns_label(str(item.get("name") or ""), f"{p}.name") + _validate_request_body(item, p)

        errs += _seq(
            subs, FIRST_AVAILABLE_MAX, sub, f"{path}.firstAvailable", key=lambda s: str(_map(s).get("name") or "")
        )
    else:
        errs += _validate_request_body(_map(exactly), f"{path}.exactly")
    return errs


def _validate_constraint(constraint: Any, path: str, refs: _RequestNames) -> Errors:
    constraint = _map(constraint)
    errs = _seq(
        [str(r) for r in _list(constraint.get("requests"))], REQUESTS_MAX, refs.check, f"{path}.requests", key=str
    )
    if constraint.get("matchAttribute") is not None:
        errs += validate_fully_qualified_name(str(constraint["matchAttribute"]), f"{path}.matchAttribute")
    elif constraint.get("distinctAttribute") is not None:
        errs += validate_fully_qualified_name(str(constraint["distinctAttribute"]), f"{path}.distinctAttribute")
    else:
        errs.append(
            field.required(
                path, 'exactly one of "matchAttribute" or "distinctAttribute" is required, but multiple fields are set'
            )
        )
    return errs


def validate_device_claim(devices: Mapping[str, Any], path: str) -> Errors:
    refs = _RequestNames(devices)
    errs = _seq(
        _list(devices.get("requests")),
        REQUESTS_MAX,
        _validate_request,
        f"{path}.requests",
        key=lambda r: str(_map(r).get("name") or ""),
    )
    errs += _seq(
        _list(devices.get("constraints")),
        CONSTRAINTS_MAX,
        lambda c, p: _validate_constraint(c, p, refs),
        f"{path}.constraints",
    )

    def config(item: Any, p: str) -> Errors:
        item = _map(item)
        out = _seq([str(r) for r in _list(item.get("requests"))], REQUESTS_MAX, refs.check, f"{p}.requests", key=str)
        return out + _validate_opaque(item, p)

    errs += _seq(_list(devices.get("config")), CONFIG_MAX, config, f"{path}.config")
    return errs


def _validate_allocation(allocation: Mapping[str, Any], path: str, refs: _RequestNames) -> Errors:
    devices = _map(allocation.get("devices"))
    p = f"{path}.devices"

    def result(item: Any, rp: str) -> Errors:
        item = _map(item)
        errs = refs.check(item.get("request", ""), f"{rp}.request")
        errs += validate_driver_name(str(item.get("driver") or ""), f"{rp}.driver")
        errs += validate_pool_name(str(item.get("pool") or ""), f"{rp}.pool")
        errs += _dns_label(str(item.get("device") or ""), f"{rp}.device")
        errs += validate_binding_conditions(item, rp)
        share = item.get("shareID")
        if share is not None and not _UUID.match(str(share)):
            errs.append(
                field.invalid(
                    f"{rp}.shareID",
                    share,
                    "uid must be in RFC 4122 normalized form, `xxxxxxxx-xxxx-xxxx-xxxx-xxxxxxxxxxxx` with lowercase "
                    "hexadecimal characters",
                )
            )
        return errs

    def config(item: Any, cp: str) -> Errors:
        item = _map(item)
        source = str(item.get("source") or "")
        out: Errors = []
        if not source:
            out.append(field.required(f"{cp}.source"))
        elif source not in CONFIG_SOURCES:
            out.append(field.not_supported(f"{cp}.source", source, CONFIG_SOURCES))
        out += _seq([str(r) for r in _list(item.get("requests"))], REQUESTS_MAX, refs.check, f"{cp}.requests", key=str)
        return out + _validate_opaque(item, cp)

    errs = _seq(_list(devices.get("results")), REQUESTS_MAX, result, f"{p}.results")
    errs += _seq(_list(devices.get("config")), 2 * CONFIG_MAX, config, f"{p}.config")
    if allocation.get("nodeSelector") is not None:
        errs += validate_node_selector(_map(allocation["nodeSelector"]), f"{path}.nodeSelector")
    return errs


def validate_claim_status(status: Mapping[str, Any], devices: Mapping[str, Any]) -> Errors:
    """A claim's status as a snapshot carries it: the checks of a status update from an empty status."""
    refs = _RequestNames(devices)

    def consumer(ref: Any, p: str) -> Errors:
        ref = _map(ref)
        return [field.required(f"{p}.{k}") for k in ("resource", "name", "uid") if not ref.get(k)]

    reserved = _list(status.get("reservedFor"))
    errs = _seq(reserved, RESERVED_FOR_MAX, consumer, "status.reservedFor", key=lambda r: str(_map(r).get("uid")))
    if reserved and status.get("allocation") is None:
        errs.append(field.forbidden("status.reservedFor", "may not be specified when `allocated` is not set"))
    if status.get("allocation") is not None:
        errs += _validate_allocation(_map(status["allocation"]), "status.allocation", refs)
    return errs


def _spec(obj: Obj) -> Mapping[str, Any]:
    return _map(obj.get("spec"))


def validate_resource_claim(claim: Obj) -> Errors:
    devices = _map(_spec(claim).get("devices"))
    return validate_device_claim(devices, "spec.devices") + validate_claim_status(_map(claim.get("status")), devices)


def validate_resource_claim_template(template: Obj) -> Errors:
    spec = _spec(template)
    meta = _map(spec.get("metadata"))
    errs: Errors = []
    for key in ("name", "namespace", "generateName"):
        if meta.get(key):
            errs.append(field.forbidden(f"spec.metadata.{key}", "cannot be set"))
    return errs + validate_device_claim(_map(_map(spec.get("spec")).get("devices")), "spec.spec.devices")


def admin_access_problems(requests: Iterable[Any], path: str, namespace_labels: Mapping[str, str] | None) -> Errors:
    """AuthorizedForAdmin: an `exactly` request with adminAccess needs the admin-access label on its namespace."""
    for i, request in enumerate(requests):
        exactly = _map(request).get("exactly")
        if exactly is not None and _map(exactly).get("adminAccess") is True:
            if (namespace_labels or {}).get(ADMIN_NAMESPACE_LABEL) == "true":
                return []
            return [
                field.forbidden(
                    f"{path}[{i}].adminAccess",
                    f"admin access to devices requires the `{ADMIN_NAMESPACE_LABEL}: true` label on the containing "
                    "namespace",
                )
            ]
    return []


# Device classes.


def validate_device_class(dc: Obj) -> Errors:
    spec = _spec(dc)
    errs = validate_selectors(spec.get("selectors"), "spec.selectors")
    errs += _seq(_list(spec.get("config")), CONFIG_MAX, lambda c, p: _validate_opaque(_map(c), p), "spec.config")
    name = spec.get("extendedResourceName")
    if name is not None and not _is_extended_resource_name(str(name)):
        errs.append(field.invalid("spec.extendedResourceName", name, "must be a valid extended resource name"))
    return errs


def _is_extended_resource_name(name: str) -> bool:
    """IsExtendedResourceName: not native (no `kubernetes.io/` domain, has one), and `requests.<name>` qualifies."""
    if "/" not in name or "kubernetes.io/" in name or name.startswith("requests."):
        return False
    return not names.is_qualified_name("requests." + name)


# Resource slices.


def _attribute_go_value(attr: Mapping[str, Any]) -> str:
    """The attribute as the API server prints the internal struct in "exactly one value" errors."""
    return json.dumps({go: attr.get(key) for go, key in _ATTRIBUTE_GO_FIELDS}, separators=(",", ":"))


def validate_device_attribute(attr: Mapping[str, Any], path: str) -> Errors:
    errs: Errors = []
    count = 0
    for key in ("bool", "int"):
        count += key in attr
    if "string" in attr:
        count += 1
        if len(str(attr["string"])) > ATTRIBUTE_VALUE_MAX_LENGTH:
            errs.append(field.too_long(f"{path}.string", ATTRIBUTE_VALUE_MAX_LENGTH))
    if "version" in attr:
        count += 1
        errs += _validate_version(str(attr["version"]), f"{path}.version")
    for key in LIST_ATTRIBUTES:
        if key in attr:
            count += 1
            if not attr[key]:
                errs.append(field.invalid(f"{path}.{key}", [], "must not be empty if specified"))
    if count == 0:
        errs.append(field.invalid(path, "", "exactly one value must be specified"))
    elif count > 1:
        errs.append(f"{path}: Invalid value: {_attribute_go_value(attr)}: exactly one value must be specified")
    return errs


def _validate_version(value: str, path: str) -> Errors:
    errs: Errors = []
    if not _SEMVER.match(value):
        errs.append(field.invalid(path, value, "must be a string compatible with semver.org spec 2.0.0"))
    if len(value) > ATTRIBUTE_VALUE_MAX_LENGTH:
        errs.append(field.too_long(path, ATTRIBUTE_VALUE_MAX_LENGTH))
    return errs


def _validate_request_policy(capacity: Fraction | None, policy: Mapping[str, Any], path: str) -> Errors:
    values, valid_range, default = _list(policy.get("validValues")), policy.get("validRange"), policy.get("default")
    if values and valid_range is not None:
        detail = 'exactly one policy can be specified, cannot specify "validValues" and "validRange" at the same time'
        return [field.forbidden(path, detail)]
    top = capacity if capacity is not None else Fraction(0)
    errs: Errors = []
    if values:
        if default is None:
            return [field.required(f"{path}.default", "required when validValues is defined")]
        parsed = [_quantity(v) for v in values]
        vp = f"{path}.validValues"
        for i in range(len(parsed) - 1):
            a, b = parsed[i], parsed[i + 1]
            if a is not None and b is not None and a > b:
                detail = "values must be sorted in ascending order"
                errs.append(field.invalid(f"{vp}[{i + 1}]", str(values[i + 1]), detail))
        if len(values) > REQUEST_POLICY_VALID_VALUES_MAX:
            return errs + [_too_many(vp, len(values), REQUEST_POLICY_VALID_VALUES_MAX)]
        want = _quantity(default)
        for i, q in enumerate(parsed):
            if q is not None and q > top:
                errs.append(field.invalid(f"{vp}[{i}]", str(values[i]), f"option is larger than capacity value: {top}"))
            if q is not None and parsed[:i].count(q):
                errs.append(field.duplicate(f"{vp}[{i}]", str(int(q))))
        if want not in parsed:
            errs.append(field.invalid(vp, str(default), "default value is not valid according to the requestPolicy"))
    elif valid_range is not None:
        if default is None:
            return [field.required(f"{path}.default", "required when validRange is defined")]
        errs += _validate_request_range(top, _quantity(default), _map(valid_range), f"{path}.validRange")
    return errs


def _validate_request_range(top: Fraction, default: Fraction | None, rng: Mapping[str, Any], path: str) -> Errors:
    low = _quantity(rng["min"]) if rng.get("min") is not None else None
    if low is None:
        return [field.required(f"{path}.min", "required when validRange is defined")]
    errs: Errors = []
    if low > top:
        errs.append(field.invalid(f"{path}.min", str(rng["min"]), "min is larger than capacity value"))
    if default is not None and default < low:
        errs.append(field.invalid(f"{path}.min", str(default), f"default is less than min: {rng['min']}"))
    high = _quantity(rng["max"]) if rng.get("max") is not None else None
    if high is not None:
        if low > high:
            errs.append(field.invalid(f"{path}.max", str(rng["min"]), f"min is larger than max: {rng['max']}"))
        if high > top:
            errs.append(field.invalid(f"{path}.max", str(rng["max"]), "max is larger than capacity value"))
        if default is not None and default > high:
            errs.append(field.invalid(f"{path}.max", str(default), f"default is more than max: {rng['max']}"))
    step = _quantity(rng["step"]) if rng.get("step") is not None else None
    if step is not None and step > 0:
        if low + step > top:
            errs.append(field.invalid(f"{path}.step", str(rng["step"]), "one step is larger than capacity value"))
        for value in (default, high):
            if value is not None and (int(value) - int(low)) % int(step) != 0:
                errs.append(
                    field.invalid(
                        f"{path}.step",
                        str(value),
                        f"value is not a multiple of a given step ({rng['step']}) from ({rng['min']})",
                    )
                )
    return errs


def _named_counters(name_key: str, limit: int) -> Callable[[Any, str], Errors]:
    """A counter set of a slice (`name`) or a device's consumption of one (`counterSet`): the name, its counters."""

    def check(item: Any, path: str) -> Errors:
        item = _map(item)
        name = str(item.get(name_key) or "")
        errs = [field.required(f"{path}.{name_key}")] if not name else _dns_label(name, f"{path}.{name_key}")
        return errs + _validate_counters(item.get("counters"), limit, f"{path}.counters")

    return check


def _validate_counters(counters: Any, limit: int, path: str) -> Errors:
    counters = _map(counters)
    if not counters:
        return [field.required(path)]
    if len(counters) > limit:
        return [_too_many(path, len(counters), limit)]
    errs: Errors = []
    for name in counters:
        errs += _dns_label(str(name), path)
    return errs


def _validate_node_selection(spec: Mapping[str, Any], path: str, *, slice_level: bool) -> tuple[Errors, int]:
    """nodeName, nodeSelector and allNodes of a slice or of one device; returns the errors and how many are set."""
    errs: Errors = []
    chosen = 0
    if spec.get("nodeName") is not None:
        node = str(spec["nodeName"])
        if node:
            chosen += 1
            errs += _dns_subdomain(node, f"{path}.nodeName")
        else:
            detail = "must be either unset or set to a non-empty string" if slice_level else "must not be empty"
            errs.append(field.invalid(f"{path}.nodeName", node, detail))
    if spec.get("nodeSelector") is not None:
        chosen += 1
        selector = _map(spec["nodeSelector"])
        errs += validate_node_selector(selector, f"{path}.nodeSelector")
        if slice_level and len(_list(selector.get("nodeSelectorTerms"))) != 1:
            errs.append(
                f"{path}.nodeSelector.nodeSelectorTerms: Invalid value: "
                f"{json.dumps(_list(selector.get('nodeSelectorTerms')), separators=(',', ':'))}: "
                "must have exactly one node selector term"
            )
    if spec.get("allNodes") is not None:
        if spec["allNodes"] is True:
            chosen += 1
        else:
            errs.append(field.invalid(f"{path}.allNodes", False, "must be either unset or set to true"))
    return errs, chosen


def _validate_device(device: Any, path: str, per_device: bool) -> Errors:
    device = _map(device)
    errs = _dns_label(str(device.get("name") or ""), f"{path}.name")
    attributes, capacity = _map(device.get("attributes")), _map(device.get("capacity"))
    if len(attributes) + len(capacity) > ATTRIBUTES_AND_CAPACITIES_MAX:
        errs.append(
            field.invalid(
                path,
                len(attributes) + len(capacity),
                f"the total number of attributes and capacities must not exceed {ATTRIBUTES_AND_CAPACITIES_MAX}",
            )
        )
    values = sum(
        sum(len(_list(a.get(k))) for k in LIST_ATTRIBUTES) or 1 for a in (_map(x) for x in attributes.values())
    )
    if values > ATTRIBUTE_VALUES_MAX:
        errs.append(
            field.invalid(path, values, f"the total number of attribute values must not exceed {ATTRIBUTE_VALUES_MAX}")
        )
    key_max = DEVICE_MAX_DOMAIN_LENGTH + 1 + DEVICE_MAX_ID_LENGTH
    for name, attr in attributes.items():
        errs += validate_qualified_name(str(name), f"{path}.attributes")
        errs += validate_device_attribute(_map(attr), f"{path}.attributes[{_truncated_key(str(name), key_max)}]")
    multi = device.get("allowMultipleAllocations") is True
    for name, cap in capacity.items():
        errs += validate_qualified_name(str(name), f"{path}.capacity")
        cap = _map(cap)
        policy = cap.get("requestPolicy")
        cp = f"{path}.capacity[{_truncated_key(str(name), key_max)}].requestPolicy"
        if policy is not None and not multi:
            errs.append(field.forbidden(cp, "allowMultipleAllocations must be true"))
        elif policy is not None:
            errs += _validate_request_policy(_quantity(cap.get("value", 0)), _map(policy), cp)
    errs += _seq(
        _list(device.get("taints")), DEVICE_TAINTS_MAX, lambda t, p: validate_device_taint(_map(t), p), f"{path}.taints"
    )
    errs += _seq(
        _list(device.get("consumesCounters")),
        COUNTER_CONSUMPTIONS_PER_DEVICE_MAX,
        _named_counters("counterSet", COUNTERS_PER_CONSUMPTION_MAX),
        f"{path}.consumesCounters",
        key=lambda c: str(_map(c).get("counterSet") or ""),
    )
    selection = "`nodeName`, `nodeSelector`, or `allNodes` is required when `perDeviceNodeSelection` is set to true"
    if per_device:
        node_errs, chosen = _validate_node_selection(device, path, slice_level=False)
        errs += node_errs
        if chosen == 0:
            errs.append(field.required(path, f"exactly one of {selection} in the ResourceSlice spec"))
        elif chosen > 1:
            set_fields = [f"`{k}`" for k in ("nodeName", "nodeSelector", "allNodes") if device.get(k) is not None]
            shown = "{" + ", ".join(set_fields) + "}"
            errs.append(field.invalid(path, shown, f"exactly one of {selection} in the ResourceSlice spec"))
    elif any(device.get(k) is not None for k in ("nodeName", "nodeSelector", "allNodes")):
        errs.append(
            field.invalid(
                path,
                None,
                "`nodeName`, `nodeSelector` and `allNodes` can only be set if `perDeviceNodeSelection` is set to true "
                "in the ResourceSlice spec",
            )
        )
    errs += validate_binding_conditions(device, path)
    return errs


def validate_resource_slice(rs: Obj) -> Errors:
    spec = _spec(rs)
    errs = validate_driver_name(str(spec.get("driver") or ""), "spec.driver")
    pool = _map(spec.get("pool"))
    errs += validate_pool_name(str(pool.get("name") or ""), "spec.pool.name")
    count, generation = pool.get("resourceSliceCount", 0), pool.get("generation", 0)
    if count <= 0:
        errs.append(field.invalid("spec.pool.resourceSliceCount", count, "must be greater than zero"))
    if generation < 0:
        errs.append(field.invalid("spec.pool.generation", generation, "must be greater than or equal to zero"))
    node_errs, chosen = _validate_node_selection(spec, "spec", slice_level=True)
    errs += node_errs
    per_device = spec.get("perDeviceNodeSelection")
    if per_device is not None:
        if per_device is True:
            chosen += 1
        else:
            errs.append(field.invalid("spec.perDeviceNodeSelection", False, "must be either unset or set to true"))
    which = "exactly one of `nodeName`, `nodeSelector`, `allNodes`, `perDeviceNodeSelection` is required"
    if chosen == 0:
        errs.append(field.required("spec", which))
    elif chosen > 1:
        set_fields = [
            f"`{k}`"
            for k in ("nodeName", "nodeSelector", "allNodes", "perDeviceNodeSelection")
            if spec.get(k) not in (None, "", False)
        ]
        errs.append(field.invalid("spec", "{" + ", ".join(set_fields) + "}", which + ", but multiple fields are set"))
    devices = spec.get("devices")
    if spec.get("sharedCounters") is not None and devices is not None:
        errs.append(field.invalid("spec", "", "only one of `sharedCounters` or `devices` is allowed"))
    device_list = _list(devices)
    advanced = any(
        _map(d).get("taints") or _map(d).get("consumesCounters") or _has_list_attributes(_map(d)) for d in device_list
    )
    errs += _seq(
        device_list,
        SLICE_MAX_DEVICES_ADVANCED if advanced else SLICE_MAX_DEVICES,
        lambda d, p: _validate_device(d, p, per_device is True),
        "spec.devices",
        key=lambda d: str(_map(d).get("name") or ""),
    )
    errs += _seq(
        _list(spec.get("sharedCounters")),
        SLICE_MAX_COUNTER_SETS,
        _named_counters("name", COUNTERS_PER_SET_MAX),
        "spec.sharedCounters",
        key=lambda c: str(_map(c).get("name") or ""),
    )
    return errs


def _has_list_attributes(device: Mapping[str, Any]) -> bool:
    return any(any(k in _map(a) for k in LIST_ATTRIBUTES) for a in _map(device.get("attributes")).values())


# Pods' references to claims (core validation, validatePodResourceClaims and the containers' claims).


def validate_pod_resource_claims(spec: Mapping[str, Any]) -> Errors:
    errs: Errors = []
    seen: set[str] = set()
    claims = _list(spec.get("resourceClaims"))
    for i, entry in enumerate(claims):
        entry = _map(entry)
        path = f"spec.resourceClaims[{i}]"
        name = str(entry.get("name") or "")
        errs += _dns_label(name, f"{path}.name")
        if name in seen:
            errs.append(field.duplicate(f"{path}.name", name))
        seen.add(name)
        by_name, by_template = entry.get("resourceClaimName"), entry.get("resourceClaimTemplateName")
        shown = json.dumps(
            {"Name": name, "ResourceClaimName": by_name, "ResourceClaimTemplateName": by_template},
            separators=(",", ":"),
        )
        if by_name is None and by_template is None:
            errs.append(
                f"{path}: Invalid value: {shown}: must specify one of: `resourceClaimName`, `resourceClaimTemplateName`"
            )
        elif by_name is not None and by_template is not None:
            errs.append(
                f"{path}: Invalid value: {shown}: at most one of `resourceClaimName` or `resourceClaimTemplateName` "
                "may be specified"
            )
        elif by_name is not None:
            errs += _dns_subdomain(str(by_name), f"{path}.resourceClaimName")
        else:
            errs += _dns_subdomain(str(by_template), f"{path}.resourceClaimTemplateName")
    known = ", ".join(str(_map(c).get("name") or "") for c in claims)
    for group in ("containers", "initContainers"):
        for i, container in enumerate(_list(spec.get(group))):
            used: set[tuple[str, str]] = set()
            for j, ref in enumerate(_list(_map(_map(container).get("resources")).get("claims"))):
                ref = _map(ref)
                path = f"spec.{group}[{i}].resources.claims[{j}]"
                name, request = str(ref.get("name") or ""), str(ref.get("request") or "")
                if not name:
                    errs.append(field.required(f"{path}.name"))
                elif name not in seen:
                    errs.append(
                        f'{path}: Not found: "{name}": must be one of the names in pod.spec.resourceClaims'
                        + (f": {known}" if known else " which is empty")
                    )
                if (name, request) in used:
                    errs.append(field.duplicate(path, name if not request else f"{name}/{request}"))
                used.add((name, request))
    return errs


VALIDATORS: dict[str, Callable[[Obj], Errors]] = {
    "DeviceClass": validate_device_class,
    "ResourceClaim": validate_resource_claim,
    "ResourceClaimTemplate": validate_resource_claim_template,
    "ResourceSlice": validate_resource_slice,
}
