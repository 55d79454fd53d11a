"""Quantities, pod requests, selectors and tolerations."""

import pytest

from kubesched.api.quantity import QuantityError, format_quantity, milli_value, value
from kubesched.api.resources import NON_ZERO_DEFAULTS, pod_requests
from kubesched.api.selectors import parse_label_selector, parse_node_selector_term
from kubesched.api.taints import Taint, Toleration


@pytest.mark.parametrize(
    ("text", "milli", "whole"),
    [
        ("1", 1000, 1),
        ("250m", 250, 1),
        ("0.5", 500, 1),
        ("1.5Gi", 1610612736000, 1610612736),
        ("1k", 1000000, 1000),
        ("1Ki", 1024000, 1024),
        ("1e3", 1000000, 1000),
        ("1E-3", 1, 1),
        ("0.1m", 1, 1),
        ("100Mi", 104857600000, 104857600),
        ("2M", 2000000000, 2000000),
        ("1E", 2**63 - 1, 10**18),  # 10**21 millis saturate at int64's bound
        ("8Ei", 2**63 - 1, 2**63 - 1),
        ("1e999999999", 2**63 - 1, 2**63 - 1),
        ("1e-5000", 1, 1),
        ("+3", 3000, 3),
        ("-1", -1000, -1),
        (".5", 500, 1),
    ],
)
def test_quantities(text, milli, whole):
    assert milli_value(text) == milli
    assert value(text) == whole


@pytest.mark.parametrize("bad", ["2x", "", "1.2.3", "Mi", "1 Gi", "1ki", "abc"])
def test_invalid_quantities(bad):
    with pytest.raises(QuantityError):
        value(bad)


def test_format_quantity():
    assert format_quantity("cpu", 1500) == "1500m"
    assert format_quantity("cpu", 2000) == "2"
    assert format_quantity("memory", 3 * 2**30) == "3Gi"
    assert format_quantity("memory", 1000) == "1000"


def c(cpu=None, mem=None, **extra):
    reqs = {}
    if cpu is not None:
        reqs["cpu"] = cpu
    if mem is not None:
        reqs["memory"] = mem
    return {"name": "c", "resources": {"requests": reqs}, **extra}


def test_pod_requests_take_max_of_init_and_sum_of_containers():
    spec = {"containers": [c("1", "1Gi"), c("500m", "1Gi")], "initContainers": [c("2", "512Mi")]}
    assert pod_requests({"spec": spec}) == {"cpu": 2000, "memory": 2 * 2**30}


def test_sidecars_add_to_containers_and_to_later_init_containers():
    spec = {
        "containers": [c("1", "1Gi")],
        "initContainers": [c("500m", "100Mi", restartPolicy="Always"), c("2", "100Mi")],
    }
    # regular: 1 + 0.5 sidecar = 1.5; init peak: 2 + 0.5 sidecar = 2.5
    assert pod_requests({"spec": spec})["cpu"] == 2500


def test_overhead_and_non_zero_defaults():
    spec = {"containers": [c(), c("200m")], "overhead": {"cpu": "10m"}}
    assert pod_requests({"spec": spec}) == {"cpu": 210}
    nz = pod_requests({"spec": spec}, non_missing=NON_ZERO_DEFAULTS)
    assert nz["cpu"] == 100 + 200 + 10
    assert nz["memory"] == 2 * 200 * 1024 * 1024


def test_label_selector_semantics():
    assert not parse_label_selector(None).matches({"a": "b"})
    assert parse_label_selector({}).matches({"a": "b"})
    sel = parse_label_selector(
        {"matchLabels": {"a": "b"}, "matchExpressions": [{"key": "c", "operator": "NotIn", "values": ["d"]}]}
    )
    assert sel.matches({"a": "b"}) and sel.matches({"a": "b", "c": "e"}) and not sel.matches({"a": "b", "c": "d"})


def test_node_selector_term_gt_lt_and_fields():
    term = parse_node_selector_term({"matchExpressions": [{"key": "n", "operator": "Gt", "values": ["5"]}]})
    assert term.matches({"n": "6"}, "x") and not term.matches({"n": "5"}, "x") and not term.matches({"n": "a"}, "x")
    fields = parse_node_selector_term({"matchFields": [{"key": "metadata.name", "operator": "In", "values": ["n1"]}]})
    assert fields.matches({}, "n1") and not fields.matches({}, "n2")
    assert not parse_node_selector_term({}).matches({"a": "b"}, "n1")


def test_toleration_matching():
    taint = Taint("k", "v", "NoSchedule")
    assert Toleration("k", "Equal", "v", "NoSchedule").tolerates(taint)
    assert Toleration("k", "", "v", "").tolerates(taint)
    assert Toleration("", "Exists", "", "").tolerates(taint)
    assert not Toleration("k", "Equal", "w", "NoSchedule").tolerates(taint)
    assert not Toleration("k", "Exists", "", "NoExecute").tolerates(taint)
