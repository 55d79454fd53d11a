"""ImageLocality: favours nodes that already hold the pod's images (imagelocality/image_locality.go).

Since v1.36 the images of image volumes (`spec.volumes[].image.reference`) count too; the
score's ceiling still grows with the number of containers only.
"""

from __future__ import annotations

from typing import Any, Final

import numpy as np

from kubesched.config import names
from kubesched.framework import signers
from kubesched.framework.cycle_state import CycleState
from kubesched.framework.interface import MAX_NODE_SCORE, Handle, IntArray, ScorePlugin, SignFragment
from kubesched.framework.node_info import ImageStateSummary, NodeInfo
from kubesched.framework.node_table import NodeTable
from kubesched.framework.status import Status
from kubesched.framework.types import PodInfo

NAME: Final = names.IMAGE_LOCALITY
MB: Final = 1024 * 1024
MIN_THRESHOLD: Final = 23 * MB
MAX_CONTAINER_THRESHOLD: Final = 1000 * MB


def normalized_image_name(name: str) -> str:
    if name.rfind(":") <= name.rfind("/"):
        return name + ":latest"
    return name


def pod_image_references(pod: PodInfo) -> tuple[str, ...]:
    """Container and init container images, then image volume references, duplicates kept as upstream sums them."""
    volumes = (pod.obj.get("spec") or {}).get("volumes") or ()
    refs = tuple(str(v["image"].get("reference") or "") for v in volumes if v.get("image") is not None)
    return pod.images + refs if refs else pod.images


def scaled_image_score(state: ImageStateSummary, total_num_nodes: int) -> int:
    return int(state.size * (state.num_nodes / total_num_nodes))


def calculate_priority(sum_scores: int, num_containers: int) -> int:
    max_threshold = MAX_CONTAINER_THRESHOLD * num_containers
    if sum_scores < MIN_THRESHOLD:
        sum_scores = MIN_THRESHOLD
    elif sum_scores > max_threshold:
        sum_scores = max_threshold
    return MAX_NODE_SCORE * (sum_scores - MIN_THRESHOLD) // (max_threshold - MIN_THRESHOLD)


class ImageLocality(ScorePlugin):
    NAME = NAME

    def sign_pod(self, pod: PodInfo) -> tuple[list[SignFragment], Status | None]:
        return [(signers.IMAGE_NAMES, signers.image_names(pod, normalized_image_name))], None

    def __init__(self, handle: Handle) -> None:
        self._handle = handle

    def score(self, state: CycleState, pod: PodInfo, node_info: NodeInfo) -> tuple[int, Status | None]:
        return self._score(pod_image_references(pod), _num_containers(pod), node_info), None

    def score_batch(self, state: CycleState, pod: PodInfo, table: NodeTable, positions: IntArray) -> IntArray:
        if table.image_nodes == 0:
            return np.zeros(len(positions), dtype=np.int64)
        nodes = table.node_infos
        images = pod_image_references(pod)
        num_containers = _num_containers(pod)
        return np.fromiter(
            (self._score(images, num_containers, nodes[p]) for p in positions), dtype=np.int64, count=len(positions)
        )

    def _score(self, images: tuple[str, ...], num_containers: int, node_info: NodeInfo) -> int:
        total = len(self._handle.shared_lister().node_info_list)
        states = node_info.image_states
        total_score = 0
        for image in images:
            s = states.get(normalized_image_name(image))
            if s is not None:
                total_score += scaled_image_score(s, total)
        return calculate_priority(total_score, num_containers)


def _num_containers(pod: PodInfo) -> int:
    spec = pod.obj.get("spec") or {}
    return len(spec.get("initContainers") or ()) + len(spec.get("containers") or ())


def new(args: Any, handle: Handle) -> ImageLocality:
    return ImageLocality(handle)
