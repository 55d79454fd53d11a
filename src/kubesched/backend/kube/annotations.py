"""--record-annotations: each attempt's per-plugin results written onto the pod, as kube-scheduler-simulator does.

Keys and JSON shapes follow the simulator's result store (prefix
`kube-scheduler-simulator.sigs.k8s.io/`): values are JSON text, scores are
strings, and `result-history` keeps every attempt's map, oldest first, trimmed
from the front to stay under the API server's 256 KiB annotation limit.
"""

from __future__ import annotations

import json
from typing import Any

from kubesched.backend.kube.api import MERGE_PATCH, KubeAPI
from kubesched.backend.kube.dispatcher import APICall, APIDispatcher
from kubesched.backend.kube.resources import BY_KIND
from kubesched.framework.outcome import Outcome, SchedulerEvent
from kubesched.framework.types import AttemptRecord

PREFIX = "kube-scheduler-simulator.sigs.k8s.io/"
FILTER_RESULT = PREFIX + "filter-result"
SCORE_RESULT = PREFIX + "score-result"
FINAL_SCORE_RESULT = PREFIX + "finalscore-result"
SELECTED_NODE = PREFIX + "selected-node"
RESULT_HISTORY = PREFIX + "result-history"
TOTAL_ANNOTATION_SIZE_LIMIT = 256 * 1024
ANNOTATION_CALL = "pod_annotation_patch"


def _compact(value: Any) -> str:
    return json.dumps(value, separators=(",", ":"))


def attempt_annotations(record: AttemptRecord | None, node: str | None) -> dict[str, str]:
    """One attempt's results in the simulator's keys and shapes."""
    rec = record or AttemptRecord()
    out = {
        FILTER_RESULT: _compact(rec.filter),
        SCORE_RESULT: _compact({n: {p: str(v) for p, v in s.items()} for n, s in rec.score.items()}),
        FINAL_SCORE_RESULT: _compact({n: {p: str(v) for p, v in s.items()} for n, s in rec.final_score.items()}),
    }
    if node:
        out[SELECTED_NODE] = node
    return out


def with_history(existing: dict[str, str], attempt: dict[str, str]) -> dict[str, str]:
    """The attempt's keys plus result-history with it appended, oldest entries dropped to fit the limit."""
    try:
        history = json.loads(existing.get(RESULT_HISTORY) or "[]")
    except ValueError:
        history = []
    if not isinstance(history, list):
        history = []
    history.append(attempt)
    others = sum(len(k) + len(v) for k, v in existing.items() if not k.startswith(PREFIX))
    budget = TOTAL_ANNOTATION_SIZE_LIMIT - others - sum(len(k) + len(v) for k, v in attempt.items())
    text = _compact(history)
    while len(history) > 1 and len(RESULT_HISTORY) + len(text) > budget:
        history.pop(0)
        text = _compact(history)
    return {**attempt, RESULT_HISTORY: text}


class AnnotationRecorder:
    """A scheduler observer that patches each finished attempt's results onto its pod."""

    def __init__(self, api: KubeAPI, dispatcher: APIDispatcher) -> None:
        self.api = api
        self.dispatcher = dispatcher

    def on_event(self, event: SchedulerEvent) -> None:
        return

    def on_outcome(self, outcome: Outcome) -> None:
        pod = outcome.pod
        attempt = attempt_annotations(outcome.record, outcome.node)
        path = BY_KIND["Pod"].path(pod.namespace, pod.name)

        def run(_: dict[str, Any]) -> None:
            current = self.api.request("GET", path)
            existing = (current.get("metadata") or {}).get("annotations") or {}
            patch = {"metadata": {"annotations": with_history(existing, attempt)}}
            self.api.request("PATCH", path, body=patch, content_type=MERGE_PATCH)

        self.dispatcher.add(APICall(ANNOTATION_CALL, f"{pod.uid}/{outcome.attempts}", run))
