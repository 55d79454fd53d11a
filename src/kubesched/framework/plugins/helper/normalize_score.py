"""DefaultNormalizeScore (plugins/helper/normalize_score.go), in place on a score array."""

from __future__ import annotations

import math

import numpy as np

from kubesched.framework.interface import IntArray


def default_normalize_score(max_priority: int, reverse: bool, scores: IntArray) -> None:
    """Scale to [0, max_priority] by the highest score; `reverse` flips so low raw scores win."""
    if not len(scores):
        return
    m = int(scores.max())
    if m == 0:
        if reverse:
            scores[:] = max_priority
        return
    scaled = max_priority * scores // m  # scores are non-negative: floor equals Go's truncation
    scores[:] = max_priority - scaled if reverse else scaled


def go_round(x: float) -> int:
    """Go's math.Round: halves away from zero (Python's round() takes halves to even)."""
    return int(math.copysign(math.floor(abs(x) + 0.5), x)) if abs(x) % 1 == 0.5 else round(x)


def div_trunc(a: int, b: int) -> int:
    """Integer division rounding toward zero, as Go's `/` on int64."""
    q = abs(a) // abs(b)
    return q if (a >= 0) == (b > 0) else -q


def trunc_div_array(a: IntArray, b: IntArray | int) -> IntArray:
    return np.trunc(np.asarray(a, dtype=np.float64) / b).astype(np.int64)
