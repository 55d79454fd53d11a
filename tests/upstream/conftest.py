"""A real v1.36 control plane (etcd, kube-apiserver; kube-scheduler on demand) for the tests here.

The binaries come from KUBESCHED_K8S_ASSETS (`.ci/run` sets it from ../shared/k8s/install.sh
where that exists). Without them every test here is skipped, saying why.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from kubesched.backend.kube.api import KubeAPI, load_configuration
from kubesched_testing.controlplane import ControlPlane, assets_dir, missing_assets_reason

HERE = Path(__file__).parent


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """Under pytest-xdist, every test here runs on one worker: one control plane for them all, not one each."""
    for item in items:
        if item.path.is_relative_to(HERE):
            item.add_marker(pytest.mark.xdist_group("control-plane"))


@pytest.fixture(scope="session")
def control_plane(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ControlPlane]:
    assets = assets_dir()
    if assets is None:
        pytest.skip(missing_assets_reason())
    cp = ControlPlane(assets, tmp_path_factory.mktemp("control-plane"))
    try:
        yield cp.start()
    finally:
        cp.stop()


@pytest.fixture(scope="session")
def admin_api(control_plane: ControlPlane) -> KubeAPI:
    return KubeAPI(load_configuration(str(control_plane.kubeconfig_path)), qps=0)


@pytest.fixture
def kubeconfig(control_plane: ControlPlane) -> Path:
    return control_plane.kubeconfig_path
