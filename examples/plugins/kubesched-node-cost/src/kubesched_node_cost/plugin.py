"""NodeCost: nodes carry an hourly price in a label; pods may cap it, and cheaper nodes score higher.

Filter: a pod annotated `example.com/max-node-cost: "<price>"` does not go to a node
whose price label is higher (or missing, when `requirePrice` is set).
Score: 100 for the cheapest price in the cluster's range `[0, maxCost]`, down to 0 at
`maxCost`, linearly; a node without the label scores `defaultScore`.
"""

from __future__ import annotations

from typing import Any, Final

from pydantic import BaseModel, ConfigDict, Field

from kubesched.framework import events
from kubesched.framework.cycle_state import CycleState
from kubesched.framework.interface import (
    MAX_NODE_SCORE,
    ClusterEventWithHint,
    EnqueueExtensions,
    FilterPlugin,
    Handle,
    ScorePlugin,
)
from kubesched.framework.node_info import NodeInfo
from kubesched.framework.status import Code, Status
from kubesched.framework.types import PodInfo

NAME: Final = "NodeCost"
MAX_COST_ANNOTATION: Final = "example.com/max-node-cost"
ERR_TOO_EXPENSIVE: Final = "node(s) cost more than the pod allows"
ERR_NO_PRICE: Final = "node(s) had no price label"


class NodeCostArgs(BaseModel):
    """pluginConfig args; unknown fields are errors, as for in-tree args."""

    model_config = ConfigDict(extra="forbid")

    labelKey: str = "example.com/hourly-cost"
    maxCost: float = Field(default=10.0, gt=0)
    defaultScore: int = Field(default=0, ge=0, le=MAX_NODE_SCORE)
    requirePrice: bool = False


def node_price(node_info: NodeInfo, key: str) -> float | None:
    raw = node_info.labels.get(key)
    try:
        return float(raw) if raw is not None else None
    except ValueError:
        return None


class NodeCost(FilterPlugin, ScorePlugin, EnqueueExtensions):
    NAME = NAME

    def __init__(self, args: NodeCostArgs) -> None:
        self.args = args

    def events_to_register(self) -> list[ClusterEventWithHint]:
        # Only a new node or a relabelled one can change a price.
        return [events.event(events.NODE, events.ADD | events.UPDATE_NODE_LABEL)]

    def filter(self, state: CycleState, pod: PodInfo, node_info: NodeInfo) -> Status | None:
        cap = (pod.obj.get("metadata", {}).get("annotations") or {}).get(MAX_COST_ANNOTATION)
        price = node_price(node_info, self.args.labelKey)
        if price is None:
            return Status(Code.UNSCHEDULABLE_AND_UNRESOLVABLE, ERR_NO_PRICE) if self.args.requirePrice else None
        if cap is not None and price > float(cap):
            return Status(Code.UNSCHEDULABLE_AND_UNRESOLVABLE, ERR_TOO_EXPENSIVE)
        return None

    def score(self, state: CycleState, pod: PodInfo, node_info: NodeInfo) -> tuple[int, Status | None]:
        price = node_price(node_info, self.args.labelKey)
        if price is None:
            return self.args.defaultScore, None
        cheapness = max(0.0, 1.0 - min(price, self.args.maxCost) / self.args.maxCost)
        return int(cheapness * MAX_NODE_SCORE), None


def new(args: Any, handle: Handle) -> NodeCost:
    """The factory kubesched calls; `args` arrives already validated into NodeCostArgs."""
    return NodeCost(args if args is not None else NodeCostArgs())


new.ARGS = NodeCostArgs  # type: ignore[attr-defined]
