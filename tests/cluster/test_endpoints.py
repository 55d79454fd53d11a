"""The secure port and --record-annotations, against the stand-in API server."""

from __future__ import annotations

import json
import ssl
import urllib.request

from tests.cluster.helpers import node, pod, wait_for

from kubesched.backend.kube import annotations as ann
from kubesched.delegation import DelegationOptions
from kubesched_testing.apiserver import FakeAPIServer


def fetch(port: int, path: str) -> tuple[int, str]:
    ctx = ssl.create_default_context()
    ctx.check_hostname = False
    ctx.verify_mode = ssl.CERT_NONE  # the self-signed certificate made at start
    try:
        with urllib.request.urlopen(f"https://127.0.0.1:{port}{path}", context=ctx, timeout=5) as resp:
            return resp.status, resp.read().decode()
    except urllib.error.HTTPError as err:
        return err.code, err.read().decode()


def test_health_metrics_and_configz_over_https(apiserver: FakeAPIServer, start_app) -> None:
    apiserver.create(node("n1", cpu="1"))
    apiserver.create(pod("fits", cpu="500m"))
    apiserver.create(pod("too-big", cpu="2"))
    served: list[int] = []
    anyone = DelegationOptions(always_allow_paths=("/*",))  # the stand-in has no TokenReview to ask
    start_app(
        secure_port=0, bind_address="127.0.0.1", on_serving=lambda host, port: served.append(port), delegation=anyone
    )
    port = wait_for(lambda: served, what="serving")[0]
    wait_for(lambda: (apiserver.get("Pod", "default", "fits") or {})["spec"].get("nodeName"), what="bound")
    for path in ("/healthz", "/livez", "/readyz"):
        assert fetch(port, path) == (200, "ok")
    status, verbose = fetch(port, "/readyz?verbose")
    assert status == 200 and "[+]informer-sync ok" in verbose
    assert fetch(port, "/nothing")[0] == 404

    def scraped() -> str:
        text = fetch(port, "/metrics")[1]
        return (
            text
            if 'scheduler_schedule_attempts_total{profile="default-scheduler",result="unschedulable"}' in text
            else ""
        )

    text = wait_for(scraped, what="metrics after both attempts")
    assert 'scheduler_schedule_attempts_total{profile="default-scheduler",result="scheduled"} 1.0' in text
    assert 'scheduler_pending_pods{queue="unschedulable"} 1.0' in text
    assert 'scheduler_pending_pods{queue="active"} 0.0' in text
    assert 'scheduler_pod_scheduling_sli_duration_seconds_bucket{attempts="1",le="0.01"}' in text
    profile = 'profile="default-scheduler"'
    assert (
        f'scheduler_scheduling_attempt_duration_seconds_bucket{{le="16.384",{profile},result="scheduled"}} 1.0' in text
    )
    point = f'extension_point="Bind",{profile},status="Success"'
    assert f"scheduler_framework_extension_point_duration_seconds_count{{{point}}} 1.0" in text
    assert 'scheduler_queue_incoming_pods_total{event="PodAdd",queue="active"} 2.0' in text
    assert "scheduler_preemption_attempts_total 1.0" in text
    assert 'scheduler_cache_size{type="nodes"} 1.0' in text
    configz = json.loads(fetch(port, "/configz")[1])
    assert configz["componentconfig"]["profiles"][0]["schedulerName"] == "default-scheduler"
    assert configz["componentconfig"]["leaderElection"]["leaseDuration"] == "15s"


def test_record_annotations_in_simulator_keys(apiserver: FakeAPIServer, start_app) -> None:
    apiserver.create(node("small", cpu="1"))
    apiserver.create(node("big", cpu="8"))
    apiserver.create(node("bigger", cpu="16"))
    apiserver.create(pod("web", cpu="2"))
    start_app(record_annotations=True)

    def annotations() -> dict:
        a = ((apiserver.get("Pod", "default", "web") or {}).get("metadata") or {}).get("annotations") or {}
        return a if ann.RESULT_HISTORY in a else {}

    a = wait_for(annotations, what="annotations written")
    assert a[ann.SELECTED_NODE] == "bigger"  # least allocated wins
    filt = json.loads(a[ann.FILTER_RESULT])
    assert filt["big"]["NodeResourcesFit"] == "passed"
    assert filt["small"]["NodeResourcesFit"] == "Insufficient cpu"
    score = json.loads(a[ann.SCORE_RESULT])
    final = json.loads(a[ann.FINAL_SCORE_RESULT])
    assert set(score) == set(final) == {"big", "bigger"}
    assert int(score["bigger"]["NodeResourcesFit"]) > int(score["big"]["NodeResourcesFit"])
    assert final["big"]["TaintToleration"] == "300"  # no taints: normalized 100, weight 3
    history = json.loads(a[ann.RESULT_HISTORY])
    assert len(history) == 1 and history[0][ann.SELECTED_NODE] == "bigger"


def test_result_history_is_trimmed_oldest_first() -> None:
    big = {ann.FILTER_RESULT: "x" * 100_000}
    existing: dict[str, str] = {}
    for i in range(5):
        existing = ann.with_history(existing, {**big, ann.SELECTED_NODE: f"n{i}"})
    history = json.loads(existing[ann.RESULT_HISTORY])
    assert [h[ann.SELECTED_NODE] for h in history] == ["n4"]
    assert len(existing[ann.RESULT_HISTORY]) + 100_000 < ann.TOTAL_ANNOTATION_SIZE_LIMIT
