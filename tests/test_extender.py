"""Extenders over real HTTP on loopback: filter, prioritize, bind, preempt, ignorable, managedResources."""

from __future__ import annotations

import json
import threading
from collections.abc import Callable, Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import pytest

from kubesched_testing.cluster import new_test_cluster
from kubesched_testing.wrappers import make_node, make_pod

Handler = Callable[[dict[str, Any]], Any]


class FakeExtender:
    """A web service answering POST /<verb> with the given functions; remembers every request."""

    def __init__(self) -> None:
        self.verbs: dict[str, Handler | int] = {}
        self.calls: list[tuple[str, dict[str, Any]]] = []
        ext = self

        class _H(BaseHTTPRequestHandler):
            def do_POST(self) -> None:  # noqa: N802 - http.server's naming
                verb = self.path.rsplit("/", 1)[-1]
                body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
                ext.calls.append((verb, body))
                answer = ext.verbs.get(verb, 404)
                if isinstance(answer, int):
                    self.send_response(answer)
                    self.end_headers()
                    return
                data = json.dumps(answer(body)).encode()
                self.send_response(200)
                self.send_header("Content-Type", "application/json")
                self.end_headers()
                self.wfile.write(data)

            def log_message(self, *args: Any) -> None:
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), _H)
        self.url = f"http://127.0.0.1:{self.server.server_port}/scheduler"
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    def config(self, **fields: Any) -> dict[str, Any]:
        return {
            "apiVersion": "kubescheduler.config.k8s.io/v1",
            "kind": "KubeSchedulerConfiguration",
            "extenders": [{"urlPrefix": self.url, **fields}],
        }


@pytest.fixture
def ext() -> Iterator[FakeExtender]:
    e = FakeExtender()
    yield e
    e.server.shutdown()
    e.server.server_close()


def nodes(*names: str) -> list[dict[str, Any]]:
    return [make_node(n).capacity({"cpu": "4", "memory": "8Gi"}).obj() for n in names]


def names_in(args: dict[str, Any]) -> list[str]:
    if args.get("NodeNames") is not None:
        return list(args["NodeNames"])
    return [n["metadata"]["name"] for n in args["Nodes"]["items"]]


def test_filter_rejects_nodes_and_the_record_says_why(ext):
    ext.verbs["filter"] = lambda a: {
        "Nodes": {"items": [n for n in a["Nodes"]["items"] if n["metadata"]["name"] != "a"]},
        "FailedNodes": {"a": "no GPU budget"},
    }
    tc = new_test_cluster(nodes("a", "b"), config=ext.config(filterVerb="filter"))
    tc.create(make_pod("p").req({"cpu": "1"}).obj())
    tc.sched.run()
    assert tc.get("Pod", "default", "p")["spec"]["nodeName"] == "b"
    verb, args = ext.calls[0]
    assert verb == "filter" and args["Pod"]["metadata"]["name"] == "p" and args["NodeNames"] is None
    record = tc.recorder.outcomes[-1].record
    assert record is not None
    assert record.filter["a"][f"Extender({ext.url})"] == "no GPU budget"
    assert record.filter["b"][f"Extender({ext.url})"] == "passed"


def test_all_nodes_rejected_is_a_fit_error_with_the_extender_reasons(ext):
    ext.verbs["filter"] = lambda a: {
        "NodeNames": [],
        "FailedNodes": {"a": "busy", "b": "busy"},
        "FailedAndUnresolvableNodes": {"b": "retired"},
    }
    tc = new_test_cluster(nodes("a", "b"), config=ext.config(filterVerb="filter", nodeCacheCapable=True))
    tc.create(make_pod("p").obj())
    tc.sched.run()
    out = tc.recorder.outcomes[-1]
    assert out.result == "Unschedulable"
    assert out.message.startswith("0/2 nodes are available: 1 busy, 1 retired.")
    assert ext.calls[0][1]["Nodes"] is None and sorted(ext.calls[0][1]["NodeNames"]) == ["a", "b"]
    assert "Extender" in tc.sched.queue.unschedulable_pods[out.pod.uid].unschedulable_plugins


def test_prioritize_scores_are_scaled_and_weighted(ext):
    ext.verbs["prioritize"] = lambda a: [{"Host": n, "Score": 10 if n == "b" else 0} for n in names_in(a)]
    tc = new_test_cluster(nodes("a", "b", "c"), config=ext.config(prioritizeVerb="prioritize", weight=2))
    tc.create(make_pod("p").obj())
    tc.sched.run()
    assert tc.get("Pod", "default", "p")["spec"]["nodeName"] == "b"
    record = tc.recorder.outcomes[-1].record
    assert record is not None
    key = f"Extender({ext.url})"
    assert record.score["b"][key] == 10 and record.final_score["b"][key] == 200 and record.final_score["a"][key] == 0


def test_binder_extender_takes_precedence_over_default_binder(ext):
    ext.verbs["bind"] = lambda a: {}
    tc = new_test_cluster(nodes("a"), config=ext.config(bindVerb="bind"))
    tc.create(make_pod("p").uid("uid-p").obj())
    tc.sched.run()
    assert ext.calls == [("bind", {"PodName": "p", "PodNamespace": "default", "PodUID": "uid-p", "Node": "a"})]
    assert tc.get("Pod", "default", "p")["spec"]["nodeName"] == "a"


def test_binding_error_from_the_extender_fails_the_binding_cycle(ext):
    ext.verbs["bind"] = lambda a: {"Error": "quota exceeded"}
    tc = new_test_cluster(nodes("a"), config=ext.config(bindVerb="bind"))
    tc.create(make_pod("p").obj())
    tc.sched.run(until=0.5)
    out = tc.recorder.outcomes[0]
    assert out.result == "Error" and "quota exceeded" in out.message
    assert "nodeName" not in tc.get("Pod", "default", "p")["spec"]


@pytest.mark.parametrize(("ignorable", "want"), [(True, "Scheduled"), (False, "Error")])
def test_failing_extender_is_skipped_only_when_ignorable(ext, ignorable, want):
    ext.verbs["filter"] = 500
    tc = new_test_cluster(nodes("a"), config=ext.config(filterVerb="filter", ignorable=ignorable))
    tc.create(make_pod("p").obj())
    tc.sched.run(until=0.5)
    out = tc.recorder.outcomes[0]
    assert out.result == want
    if want == "Error":
        assert "code 500" in out.message


def test_managed_resources_limit_which_pods_the_extender_sees(ext):
    ext.verbs["filter"] = lambda a: {"NodeNames": []}
    cfg = ext.config(filterVerb="filter", nodeCacheCapable=True, managedResources=[{"name": "example.com/gpu"}])
    tc = new_test_cluster(
        [make_node("a").capacity({"cpu": "4", "example.com/gpu": "1"}).obj()],
        config=cfg,
    )
    tc.create(make_pod("plain").req({"cpu": "1"}).obj(), make_pod("gpu").req({"example.com/gpu": "1"}).obj())
    tc.sched.run(until=0.5)
    assert tc.get("Pod", "default", "plain")["spec"]["nodeName"] == "a"
    assert [args["Pod"]["metadata"]["name"] for _, args in ext.calls] == ["gpu"]


def test_preempt_extender_narrows_candidates(ext):
    def preempt(args: dict[str, Any]) -> dict[str, Any]:
        meta = args["NodeNameToMetaVictims"]
        return {"NodeNameToMetaVictims": {n: v for n, v in meta.items() if n == "b"}}

    ext.verbs["preempt"] = preempt
    low = [make_pod(f"low-{n}").req({"cpu": "4"}).node(n).priority(0).obj() for n in ("a", "b")]
    tc = new_test_cluster(nodes("a", "b"), low, config=ext.config(preemptVerb="preempt", nodeCacheCapable=True))
    tc.create(make_pod("high").req({"cpu": "4"}).priority(100).obj())
    tc.sched.run()
    assert tc.get("Pod", "default", "high")["spec"]["nodeName"] == "b"
    assert tc.cluster.get("Pod", "default", "low-a") is not None and tc.cluster.get("Pod", "default", "low-b") is None
    sent = ext.calls[0][1]["NodeNameToMetaVictims"]
    assert sorted(sent) == ["a", "b"] and sent["a"]["Pods"][0]["UID"] and sent["a"]["NumPDBViolations"] == 0
