"""--record-annotations: each attempt's per-plugin results written onto the pod, as kube-scheduler-simulator does.

Keys and JSON shapes follow the simulator's result store (prefix
`kube-scheduler-simulator.sigs.k8s.io/`): values are JSON text, scores are
strings, and `result-history` keeps every attempt's map, oldest first, trimmed
from the front to stay under the API server's 256 KiB annotation limit.

Patching pods is a right kube-scheduler does not have, so deploy/rbac.yaml does not
grant it: the optional ClusterRole in deploy/optional/record-annotations.yaml does.
`kubesched run` asks the API server up front whether it may (`missing_right`) and
refuses to start without it; a right lost later stops the recording with one line.
"""

from __future__ import annotations

import json
import logging
import threading
from typing import Any

from kubesched.backend.kube.api import MERGE_PATCH, APIError, KubeAPI
from kubesched.backend.kube.dispatcher import APICall, APIDispatcher
from kubesched.backend.kube.resources import BY_KIND
from kubesched.framework.outcome import Outcome, SchedulerEvent
from kubesched.framework.types import AttemptRecord
from kubesched.klog import Message

log = logging.getLogger(__name__)

PREFIX = "kube-scheduler-simulator.sigs.k8s.io/"
FILTER_RESULT = PREFIX + "filter-result"
SCORE_RESULT = PREFIX + "score-result"
FINAL_SCORE_RESULT = PREFIX + "finalscore-result"
SELECTED_NODE = PREFIX + "selected-node"
RESULT_HISTORY = PREFIX + "result-history"
TOTAL_ANNOTATION_SIZE_LIMIT = 256 * 1024
ANNOTATION_CALL = "pod_annotation_patch"
OPTIONAL_ROLE = "kubesched:record-annotations"
OPTIONAL_MANIFEST = "deploy/optional/record-annotations.yaml"
HOW_TO_GRANT = f"bind ClusterRole {OPTIONAL_ROLE} ({OPTIONAL_MANIFEST}) or drop --record-annotations"


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


def _username(api: KubeAPI) -> str:
    """Who the API server takes us for (SelfSubjectReview), for the error message; "" when it will not say."""
    body = {"apiVersion": "authentication.k8s.io/v1", "kind": "SelfSubjectReview"}
    try:
        review = api.request("POST", "/apis/authentication.k8s.io/v1/selfsubjectreviews", body=body, retries=0)
    except APIError:
        return ""
    return str(((review.get("status") or {}).get("userInfo") or {}).get("username") or "")


def missing_right(api: KubeAPI) -> str:
    """Why --record-annotations cannot work with these credentials, or "" when it can (or the API cannot tell).

    A SelfSubjectAccessReview for patching pods in every namespace, which any authenticated user may ask.
    """
    body = {
        "apiVersion": "authorization.k8s.io/v1",
        "kind": "SelfSubjectAccessReview",
        "spec": {"resourceAttributes": {"group": "", "resource": "pods", "verb": "patch"}},
    }
    try:
        review = api.request("POST", "/apis/authorization.k8s.io/v1/selfsubjectaccessreviews", body=body, retries=0)
    except APIError:
        return ""  # no answer: the recorder still stops at its first 403
    if (review.get("status") or {}).get("allowed"):
        return ""
    user = _username(api)
    who = f"which {user} lacks" if user else "which these credentials lack"
    return f"--record-annotations needs the right to patch pods in all namespaces, {who}: {HOW_TO_GRANT}"


class AnnotationRecorder:
    """A scheduler observer that patches each finished attempt's results onto its pod.

    The first 403 stops it, with one error line: a right revoked while running must not cost
    a failed request and a log line per scheduling attempt.
    """

    def __init__(self, api: KubeAPI, dispatcher: APIDispatcher) -> None:
        self.api = api
        self.dispatcher = dispatcher
        self.forbidden = False
        self._once = threading.Lock()  # the dispatcher's workers may meet the 403 at once: one line

    def on_event(self, event: SchedulerEvent) -> None:
        return

    def on_outcome(self, outcome: Outcome) -> None:
        if self.forbidden:
            return
        pod = outcome.pod
        attempt = attempt_annotations(outcome.record, outcome.node)
        path = BY_KIND["Pod"].path(pod.namespace, pod.name)

        def run(_: dict[str, Any]) -> None:
            if self.forbidden:
                return
            try:
                current = self.api.request("GET", path)
                existing = (current.get("metadata") or {}).get("annotations") or {}
                patch = {"metadata": {"annotations": with_history(existing, attempt)}}
                if self.forbidden:  # another call met the 403 while this one read the pod
                    return
                self.api.request("PATCH", path, body=patch, content_type=MERGE_PATCH)
            except APIError as err:
                if err.status != 403:
                    raise
                self._stop(err)

        self.dispatcher.add(APICall(ANNOTATION_CALL, f"{pod.uid}/{outcome.attempts}", run))

    def _stop(self, err: APIError) -> None:
        with self._once:
            if self.forbidden:
                return
            self.forbidden = True
        log.error(Message("--record-annotations stopped: " + HOW_TO_GRANT, err=err.message))
