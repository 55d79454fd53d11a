"""Cases from image_locality_test.go (v1.36: image volumes count); case names unchanged."""

import hashlib

import pytest

from kubesched.framework.plugins.imagelocality.image_locality import MAX_NODE_SCORE, new, normalized_image_name
from kubesched_testing.framework import build_snapshot, new_plugin, score_nodes
from kubesched_testing.wrappers import make_node, make_pod

MB = 1024 * 1024


def pod_spec(*images, init=(), image_volumes=()):
    w = make_pod()
    for image in images:
        w.container(image)
    obj = w.obj()
    if init:
        obj["spec"]["initContainers"] = [{"name": f"i{i}", "image": image} for i, image in enumerate(init)]
    if image_volumes:
        obj["spec"]["volumes"] = [{"name": "imageVolume", "image": {"reference": ref}} for ref in image_volumes]
    return obj


def image_node(name, *images):
    """`images`: (names, size in MB) per node status image, as upstream's NodeStatus literals."""
    obj = make_node(name).obj()
    obj["status"]["images"] = [{"names": list(names), "sizeBytes": size * MB} for names, size in images]
    return obj


NODE_40_300_2000 = (
    (("gcr.io/40:latest", "gcr.io/40:v1", "gcr.io/40:v1"), 40),
    (("gcr.io/300:latest", "gcr.io/300:v1"), 300),
    (("gcr.io/2000:latest",), 2000),
)
NODE_250_10 = ((("gcr.io/250:latest",), 250), (("gcr.io/10:latest", "gcr.io/10:v1"), 10))
NODE_600_40_900 = ((("gcr.io/600:latest",), 600), (("gcr.io/40:latest",), 40), (("gcr.io/900:latest",), 900))
NODE_300_600_900 = ((("gcr.io/300:latest",), 300), (("gcr.io/600:latest",), 600), (("gcr.io/900:latest",), 900))
NODE_4000_30 = ((("gcr.io/4000:latest",), 4000), (("gcr.io/30:latest",), 30))
NODE_20_30_40 = ((("gcr.io/20:latest",), 20), (("gcr.io/30:latest",), 30), (("gcr.io/40:latest",), 40))

CASES = [
    pytest.param(
        pod_spec("gcr.io/40", "gcr.io/250"),
        [image_node("node1", *NODE_40_300_2000), image_node("node2", *NODE_250_10)],
        [0, 5],
        id="two images spread on two nodes, prefer the larger image one",
    ),
    pytest.param(
        pod_spec("gcr.io/40", "gcr.io/300"),
        [image_node("node1", *NODE_40_300_2000), image_node("node2", *NODE_250_10)],
        [7, 0],
        id="two images on one node, prefer this node",
    ),
    pytest.param(
        pod_spec("gcr.io/10", "gcr.io/4000"),
        [image_node("node1", *NODE_4000_30), image_node("node2", *NODE_250_10)],
        [MAX_NODE_SCORE, 0],
        id="if exceed limit, use limit",
    ),
    pytest.param(
        pod_spec("gcr.io/10", "gcr.io/4000"),
        [image_node("node1", *NODE_4000_30), image_node("node2", *NODE_250_10), image_node("node3")],
        [66, 0, 0],
        id="if exceed limit, use limit (with node which has no images present)",
    ),
    pytest.param(
        pod_spec("gcr.io/300", "gcr.io/600", "gcr.io/900"),
        [image_node("node1", *NODE_600_40_900), image_node("node2", *NODE_300_600_900), image_node("node3")],
        [32, 36, 0],
        id="pod with multiple large images, node2 is preferred",
    ),
    pytest.param(
        pod_spec("gcr.io/30", "gcr.io/40"),
        [image_node("node1", *NODE_20_30_40), image_node("node2", *NODE_4000_30)],
        [1, 0],
        id="pod with multiple small images",
    ),
    pytest.param(
        pod_spec("gcr.io/30", image_volumes=["gcr.io/300"]),
        [image_node("node1", *NODE_300_600_900), image_node("node2", *NODE_4000_30)],
        [12, 0],
        id="pod with ImageVolume",
    ),
    pytest.param(
        pod_spec("gcr.io/30", init=["gcr.io/300"]),
        [image_node("node1", *NODE_40_300_2000), image_node("node2", *NODE_20_30_40)],
        [6, 0],
        id="include InitContainers: two images spread on two nodes, prefer the larger image one",
    ),
]


@pytest.mark.parametrize(("pod", "nodes", "expected"), CASES)
def test_image_locality_priority(pod, nodes, expected, batch):
    snap = build_snapshot(nodes)
    plugin = new_plugin(new, None, snap)
    assert score_nodes(plugin, pod, snap, batch=batch) == (expected, None)


def test_image_volume_without_matching_image_scores_nothing(batch):
    """kubesched: an image volume whose image no node holds adds nothing; it does not raise the ceiling either."""
    nodes = [image_node("node1", *NODE_300_600_900), image_node("node2", *NODE_4000_30)]
    snap = build_snapshot(nodes)
    plugin = new_plugin(new, None, snap)
    pod = pod_spec("gcr.io/300", image_volumes=["gcr.io/unknown", "gcr.io/600"])
    # node1: (300 + 600) * 1/2 = 450MB over one container's 1000MB ceiling -> 100 * (450-23) / (1000-23) = 43
    assert score_nodes(plugin, pod, snap, batch=batch) == ([43, 0], None)


def _fake_digest(content):
    return "sha256:" + hashlib.sha256(content.encode()).hexdigest()


@pytest.mark.parametrize(
    ("name", "want"),
    [
        pytest.param("root", "root:latest", id="add :latest postfix 1"),
        pytest.param("gcr.io:5000/root", "gcr.io:5000/root:latest", id="add :latest postfix 2"),
        pytest.param("root:tag", "root:tag", id="keep it as is 1"),
        pytest.param("root@" + _fake_digest("root"), "root@" + _fake_digest("root"), id="keep it as is 2"),
    ],
)
def test_normalized_image_name(name, want):
    assert normalized_image_name(name) == want
