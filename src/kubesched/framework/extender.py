"""The Extender interface the cycle and preemption call (framework/extender.go).

Kept in the framework so that preemption and the queue depend on what an extender
does, not on the HTTP client that does it (kubesched.extender).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Protocol

from kubesched.framework.node_info import NodeInfo
from kubesched.framework.types import PodInfo

EXTENDER_NAME = "Extender"  # the pseudo-plugin named in UnschedulablePlugins when an extender rejects nodes


class ExtenderError(RuntimeError):
    """An extender could not be reached or answered with an error."""


@dataclass(slots=True)
class Victims:
    pods: list[PodInfo]
    num_pdb_violations: int


class Extender(Protocol):
    """What the scheduler asks of an extender; every call may raise ExtenderError."""

    @property
    def name(self) -> str: ...

    @property
    def record_key(self) -> str: ...

    @property
    def ignorable(self) -> bool: ...

    def is_binder(self) -> bool: ...

    def is_prioritizer(self) -> bool: ...

    def is_filter(self) -> bool: ...

    def supports_preemption(self) -> bool: ...

    def is_interested(self, pod: PodInfo) -> bool: ...

    def filter(
        self, pod: PodInfo, nodes: Sequence[NodeInfo]
    ) -> tuple[list[NodeInfo], dict[str, str], dict[str, str]]: ...

    def prioritize(self, pod: PodInfo, nodes: Sequence[NodeInfo]) -> tuple[list[tuple[str, int]], int]: ...

    def bind(self, pod: PodInfo, node: str) -> None: ...

    def process_preemption(
        self, pod: PodInfo, victims: dict[str, Victims], node_infos: Mapping[str, NodeInfo]
    ) -> dict[str, Victims]: ...
