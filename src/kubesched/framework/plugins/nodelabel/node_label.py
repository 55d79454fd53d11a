"""NodeLabel: require or prefer nodes by the presence of labels (legacy, removed in 1.23).

The Policy's CheckNodeLabelPresence predicate and LabelPreference priority: a
label's value does not matter, only whether the node has it.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Final

from kubesched.config import names
from kubesched.config.types import NodeLabelArgs
from kubesched.framework.cycle_state import CycleState
from kubesched.framework.interface import MAX_NODE_SCORE, FilterPlugin, Handle, ScorePlugin
from kubesched.framework.node_info import NodeInfo
from kubesched.framework.status import Code, Status
from kubesched.framework.types import PodInfo

NAME: Final = names.NODE_LABEL
ERR_REASON_PRESENCE_VIOLATED: Final = "node(s) didn't have the requested labels"


def _all_as_wanted(labels: Mapping[str, str], keys: Iterable[str], *, present: bool) -> bool:
    return all((k in labels) == present for k in keys)


class NodeLabel(FilterPlugin, ScorePlugin):
    NAME = NAME

    def __init__(self, args: NodeLabelArgs) -> None:
        self.args = args

    def filter(self, state: CycleState, pod: PodInfo, node_info: NodeInfo) -> Status | None:
        if node_info.node is None:
            return Status(Code.ERROR, "node not found")
        labels = node_info.labels
        if _all_as_wanted(labels, self.args.presentLabels, present=True) and _all_as_wanted(
            labels, self.args.absentLabels, present=False
        ):
            return None
        return Status(Code.UNSCHEDULABLE_AND_UNRESOLVABLE, ERR_REASON_PRESENCE_VIOLATED)

    def score(self, state: CycleState, pod: PodInfo, node_info: NodeInfo) -> tuple[int, Status | None]:
        """The mean over the preferred labels, each worth MaxNodeScore when as wanted."""
        if node_info.node is None:
            return 0, Status(Code.ERROR, f'getting node "{node_info.name}" from Snapshot: node is nil')
        present, absent = self.args.presentLabelsPreference, self.args.absentLabelsPreference
        if not present and not absent:
            return 0, None
        labels = node_info.labels
        hits = sum(1 for k in present if k in labels) + sum(1 for k in absent if k not in labels)
        return hits * MAX_NODE_SCORE // (len(present) + len(absent)), None


def new(args: NodeLabelArgs | None, handle: Handle) -> NodeLabel:
    return NodeLabel(args if args is not None else NodeLabelArgs())
