"""The seam between the allocator and CEL device selectors.

The allocator (allocator.py) decides which devices a claim gets; whether one device
satisfies one selector expression is CEL's business (cel.py). This module is all the
allocator knows about CEL: the device as the expression sees it, the evaluator Protocol
and the two ways evaluation fails, mirroring upstream's split between "CEL compile error"
and "CEL runtime error" (structured/internal/*/allocator_*.go, selectorsMatch), and
CELSelectors, the evaluator on cel.py.
"""

from __future__ import annotations

from collections.abc import Mapping
from contextvars import ContextVar
from dataclasses import dataclass
from typing import Any, Protocol

# A time.monotonic() value past which an evaluation stops ("operation interrupted"): the allocator puts its Filter
# deadline here while it searches, as upstream hands the Filter's context to cel-go. A context variable, so that
# concurrent searches (one per node) each have their own and the SelectorEvaluator protocol stays as it is.
EVALUATION_DEADLINE: ContextVar[float | None] = ContextVar("kubesched_dra_selector_deadline", default=None)


@dataclass(frozen=True, slots=True, eq=False)
class DeviceView:
    """One device as a selector sees it: upstream's cel.Device.

    The maps are the ResourceSlice's own JSON (``attributes``: name -> ``{"int"|"bool"|
    "string"|"version": value}``, ``capacity``: name -> ``{"value": quantity, ...}``);
    names without a domain belong to ``driver``. Upstream converts every attribute before
    evaluating, so an attribute of no known type fails every expression at run time
    ("attribute NAME: unsupported attribute value"). One view is built per device and
    reused for every expression, so an evaluator may cache per view (by identity).
    """

    driver: str
    attributes: Mapping[str, Mapping[str, Any]]
    capacity: Mapping[str, Mapping[str, Any]]
    allow_multiple_allocations: bool


class SelectorError(Exception):
    """A selector that could not be evaluated; the text is the CEL library's."""


class SelectorCompileError(SelectorError):
    """The expression does not compile (upstream: "CEL compile error: ...")."""


class SelectorRuntimeError(SelectorError):
    """Evaluation failed for this device, e.g. a missing map key or the cost limit (upstream: "CEL runtime error")."""


class SelectorEvaluator(Protocol):
    """Evaluates one DRA CEL selector expression against one device."""

    def matches(self, expression: str, device: DeviceView) -> bool:
        """True when the expression selects the device.

        Raises SelectorCompileError when the expression does not compile and
        SelectorRuntimeError when it fails for this device.
        """
        ...


class CELSelectors:
    """The evaluator the scheduler uses: cel.py's DRA environment, each expression compiled once."""

    def matches(self, expression: str, device: DeviceView) -> bool:
        # Imported here: cel.py and its parser (celpy, lark) cost a tenth of `kubesched run`'s start, and most
        # clusters never evaluate a selector; after the first call this is a lookup in sys.modules.
        from kubesched.dra import cel

        compiled = cel.compile_expression(expression)
        if compiled.error is not None:
            raise SelectorCompileError(str(compiled.error))
        try:
            return compiled.device_matches(
                cel.Device(device.driver, device.attributes, device.capacity, device.allow_multiple_allocations),
                EVALUATION_DEADLINE.get(),
            )
        except cel.EvalError as err:
            raise SelectorRuntimeError(str(err)) from err
