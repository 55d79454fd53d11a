"""Vectorised node selector matching over a NodeTable's label columns."""

from __future__ import annotations

import numpy as np

from kubesched.api.selectors import NodeSelector, NodeSelectorTerm, Requirement
from kubesched.framework.interface import BoolArray
from kubesched.framework.node_table import ABSENT, NodeTable


def requirement_mask(table: NodeTable, r: Requirement) -> BoolArray:
    col = table.label_column(r.key)
    op = r.operator
    if op == "Exists":
        return col != ABSENT
    if op == "DoesNotExist":
        return col == ABSENT
    if op in ("In", "NotIn"):
        codes = table.value_codes(r.key, r.values)
        hit = np.isin(col, codes) if len(codes) != 1 else col == codes[0]
        return hit if op == "In" else ~hit
    return np.array([r.matches(ni.labels) for ni in table.node_infos], dtype=bool)


def term_mask(table: NodeTable, term: NodeSelectorTerm) -> BoolArray:
    if not term.valid or (not term.expressions and not term.fields):
        return np.zeros(table.n, dtype=bool)
    mask = np.ones(table.n, dtype=bool)
    for r in term.expressions:
        mask &= requirement_mask(table, r)
    for r in term.fields:
        hit = np.fromiter((n in r.values for n in table.names), dtype=bool, count=table.n)
        mask &= hit if r.operator == "In" else ~hit
    return mask


def selector_mask(table: NodeTable, selector: NodeSelector) -> BoolArray:
    mask = np.zeros(table.n, dtype=bool)
    for t in selector.terms:
        mask |= term_mask(table, t)
    return mask


def labels_mask(table: NodeTable, labels: dict[str, str]) -> BoolArray:
    """All of `labels` present with equal values (a pod's nodeSelector)."""
    mask = np.ones(table.n, dtype=bool)
    for k, v in labels.items():
        mask &= table.label_column(k) == table.value_code(k, v)
    return mask
