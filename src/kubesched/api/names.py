"""Name, label and key syntax as apimachinery's util/validation checks it, with its messages.

Each check returns the problems (none when the value is fine; cached, as the same keys
recur across thousands of objects); callers wrap them as field errors
(`Invalid value: "x": <problem>`).
"""

from __future__ import annotations

import re
from functools import lru_cache

_QNAME_FMT = "([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]"
_QNAME = re.compile(f"^{_QNAME_FMT}$")
_LABEL_VALUE_FMT = "(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?"
_LABEL_VALUE = re.compile(f"^{_LABEL_VALUE_FMT}$")
_DNS1123_LABEL_FMT = "[a-z0-9]([-a-z0-9]*[a-z0-9])?"
_DNS1123_LABEL = re.compile(f"^{_DNS1123_LABEL_FMT}$")
_DNS1123_SUBDOMAIN_FMT = _DNS1123_LABEL_FMT + "(\\." + _DNS1123_LABEL_FMT + ")*"
_DNS1123_SUBDOMAIN = re.compile(f"^{_DNS1123_SUBDOMAIN_FMT}$")

QUALIFIED_NAME_MAX = 63
LABEL_VALUE_MAX = 63
DNS1123_LABEL_MAX = 63
DNS1123_SUBDOMAIN_MAX = 253


def _regex_error(what: str, fmt: str, *examples: str) -> str:
    shown = ",  or ".join(f"'{e}'" for e in examples)
    return f"{what} (e.g. {shown}, regex used for validation is '{fmt}')"


_QNAME_MSG = _regex_error(
    "must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character",
    _QNAME_FMT,
    "MyName",
    "my.name",
    "123-abc",
)
_LABEL_VALUE_MSG = "a valid label must be an empty string or " + _regex_error(
    "consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character",
    _LABEL_VALUE_FMT,
    "MyValue",
    "my_value",
    "12345",
)
_DNS1123_LABEL_MSG = "a lowercase RFC 1123 label " + _regex_error(
    "must consist of lower case alphanumeric characters or '-', and must start and end with an alphanumeric character",
    _DNS1123_LABEL_FMT,
    "my-name",
    "123-abc",
)
_DNS1123_SUBDOMAIN_MSG = "a lowercase RFC 1123 subdomain " + _regex_error(
    "must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric "
    "character",
    _DNS1123_SUBDOMAIN_FMT,
    "example.com",
)


@lru_cache(maxsize=65536)
def is_dns1123_subdomain(value: str) -> tuple[str, ...]:
    errs = []
    if len(value) > DNS1123_SUBDOMAIN_MAX:
        errs.append(f"must be no more than {DNS1123_SUBDOMAIN_MAX} characters")
    if not _DNS1123_SUBDOMAIN.match(value):
        errs.append(_DNS1123_SUBDOMAIN_MSG)
    return tuple(errs)


@lru_cache(maxsize=65536)
def is_dns1123_label(value: str) -> tuple[str, ...]:
    errs = []
    if len(value) > DNS1123_LABEL_MAX:
        errs.append(f"must be no more than {DNS1123_LABEL_MAX} characters")
    if not _DNS1123_LABEL.match(value):
        errs.append(_DNS1123_LABEL_MSG)
    return tuple(errs)


@lru_cache(maxsize=65536)
def is_qualified_name(value: str) -> tuple[str, ...]:
    """An optional DNS subdomain prefix and '/', then a name part: label keys, taint keys, resource names."""
    parts = value.split("/")
    errs: list[str] = []
    if len(parts) > 2:
        return (
            "a valid label key "
            + _QNAME_MSG
            + " with an optional DNS subdomain prefix and '/' (e.g. 'example.com/MyName')",
        )
    name = parts[-1]
    if len(parts) == 2:
        prefix = parts[0]
        if not prefix:
            errs.append("prefix part must be non-empty")
        else:
            if len(prefix.encode()) > DNS1123_SUBDOMAIN_MAX:
                errs.append(f"prefix part must be no more than {DNS1123_SUBDOMAIN_MAX} bytes")
            if not _DNS1123_SUBDOMAIN.match(prefix):
                errs.append("prefix part " + _DNS1123_SUBDOMAIN_MSG)
    if not name:
        errs.append("name part must be non-empty")
    elif len(name.encode()) > QUALIFIED_NAME_MAX:
        errs.append(f"name part must be no more than {QUALIFIED_NAME_MAX} bytes")
    if not _QNAME.match(name):
        errs.append("name part " + _QNAME_MSG)
    return tuple(errs)


@lru_cache(maxsize=65536)
def is_valid_label_value(value: str) -> tuple[str, ...]:
    errs = []
    if len(value.encode()) > LABEL_VALUE_MAX:
        errs.append(f"must be no more than {LABEL_VALUE_MAX} bytes")
    if not _LABEL_VALUE.match(value):
        errs.append(_LABEL_VALUE_MSG)
    return tuple(errs)
