"""Claim constraints across the devices of one claim (incubating: matchAttribute, distinctAttribute).

Both are checked as each device is tentatively added and undone when the search
backtracks; both assume monotonicity (once a device is refused, more devices will not
help). A constraint naming requests applies to those requests and, for a request with
alternatives, to the chosen "request/subrequest".
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Protocol

from kubesched.dra.model import DeviceID

Attribute = Mapping[str, Any]
_KINDS = ("string", "int", "bool", "version")


def lookup_attribute(attributes: Mapping[str, Attribute], device_id: DeviceID, name: str) -> Attribute | None:
    """The attribute by its fully qualified name, or by its short name when the domain is the driver's."""
    attr = attributes.get(name)
    if attr is not None:
        return attr
    domain, sep, short = name.partition("/")
    if not sep or domain != device_id.driver:
        return None
    return attributes.get(short)


class Constraint(Protocol):
    def add(self, request: str, subrequest: str, attributes: Mapping[str, Attribute], device_id: DeviceID) -> bool:
        """Whether the device may join; if it may, it is counted in."""
        ...

    def remove(self, request: str, subrequest: str, attributes: Mapping[str, Attribute], device_id: DeviceID) -> None:
        """Undo one successful add with the same arguments."""
        ...


def _applies(names: frozenset[str], request: str, subrequest: str) -> bool:
    if not names:
        return True
    if not subrequest:
        return request in names
    return request in names or f"{request}/{subrequest}" in names


class _AttributeConstraint:
    """What both constraints share: the requests they apply to and the attribute they look at.

    A device of a request the constraint does not name always may join; one without the
    attribute never may.
    """

    __slots__ = ("names", "attribute", "count")

    def __init__(self, names: frozenset[str], attribute: str) -> None:
        self.names = names
        self.attribute = attribute
        self.count = 0

    def add(self, request: str, subrequest: str, attributes: Mapping[str, Attribute], device_id: DeviceID) -> bool:
        if not _applies(self.names, request, subrequest):
            return True
        attr = lookup_attribute(attributes, device_id, self.attribute)
        return attr is not None and self._add(request, attr)

    def remove(self, request: str, subrequest: str, attributes: Mapping[str, Attribute], device_id: DeviceID) -> None:
        if _applies(self.names, request, subrequest):
            self._remove(request)

    def _add(self, request: str, attr: Attribute) -> bool:
        raise NotImplementedError

    def _remove(self, request: str) -> None:
        raise NotImplementedError


class MatchAttribute(_AttributeConstraint):
    """All devices share one value of the attribute (the first device's)."""

    __slots__ = ("value",)

    def __init__(self, names: frozenset[str], attribute: str) -> None:
        super().__init__(names, attribute)
        self.value: Attribute = {}

    def _add(self, request: str, attr: Attribute) -> bool:
        if self.count == 0:
            self.value = attr
            self.count = 1
            return True
        for kind in _KINDS:
            if kind in attr:
                if kind not in self.value or attr[kind] != self.value[kind]:
                    return False
                self.count += 1
                return True
        return False  # a value of no known type matches nothing

    def _remove(self, request: str) -> None:
        self.count -= 1


class DistinctAttribute(_AttributeConstraint):
    """No two devices share a value of the attribute.

    As upstream, values are remembered per request name, so a later device of the same
    request replaces the earlier one's value, and removing either forgets it.
    """

    __slots__ = ("values",)

    def __init__(self, names: frozenset[str], attribute: str) -> None:
        super().__init__(names, attribute)
        self.values: dict[str, Attribute] = {}

    def _add(self, request: str, attr: Attribute) -> bool:
        if self.count and not self._distinct(attr):
            return False
        self.values[request] = attr
        self.count += 1
        return True

    def _distinct(self, attr: Attribute) -> bool:
        kind = next((k for k in _KINDS if k in attr), None)
        for other in self.values.values():
            if kind is None:
                return False
            if kind in other and other[kind] == attr[kind]:
                return False
        return True

    def _remove(self, request: str) -> None:
        self.values.pop(request, None)
        self.count -= 1
