"""api/kinds.py is the one registry of stored kinds: what else knows about kinds must agree with it."""

from __future__ import annotations

from kubesched.api.kinds import CLUSTER_SCOPED, KINDS, NAMESPACED, SCALED_KINDS, WORKLOAD_KINDS
from kubesched.apiserver.schema import KINDS as SCHEMA_KINDS
from kubesched.backend.kube.resources import WATCHED
from kubesched.backend.store import ObjectStore, object_key


def test_a_kind_is_namespaced_or_cluster_scoped_not_both() -> None:
    assert not NAMESPACED & CLUSTER_SCOPED
    assert KINDS == NAMESPACED | CLUSTER_SCOPED


def test_workloads_are_namespaced_stored_kinds() -> None:
    assert set(SCALED_KINDS) <= set(WORKLOAD_KINDS) <= NAMESPACED


def test_the_real_api_servers_resources_agree_on_scope() -> None:
    """A kind watched in a real cluster is stored, and keyed by namespace exactly when the API server scopes it so."""
    for kind, resource in WATCHED.items():
        assert kind in KINDS, kind
        assert resource.namespaced == (kind in NAMESPACED), kind


def test_the_api_server_stand_in_has_a_schema_for_every_stored_kind() -> None:
    assert KINDS <= set(SCHEMA_KINDS)


def test_the_store_keys_by_the_registry() -> None:
    store = ObjectStore()
    assert set(store.objects) == KINDS
    for kind in sorted(KINDS):
        key = object_key({"kind": kind, "metadata": {"name": "a"}})
        assert key == (("default", "a") if kind in NAMESPACED else ("", "a")), kind
