"""NodeTree against a plain model: zones as lists searched name by name (the set of members is only an index)."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from kubesched.api.topology import get_zone_key
from kubesched.cache.node_tree import NodeTree

ZONE = "topology.kubernetes.io/zone"
ops = st.lists(
    st.tuples(
        st.sampled_from(("add", "remove", "update")), st.sampled_from("abcde"), st.sampled_from(("", "z1", "z2"))
    ),
    max_size=40,
)


@given(ops=ops)
def test_the_tree_lists_what_a_list_per_zone_lists(ops: list[tuple[str, str, str]]) -> None:
    tree = NodeTree()
    model: dict[str, list[str]] = {}
    zones: list[str] = []
    where: dict[str, dict[str, str]] = {}  # the labels each node was last added with
    for op, name, zone in ops:
        labels = {ZONE: zone} if zone else {}
        key = get_zone_key(labels)
        if op == "add":
            tree.add_node(name, labels)
            if name not in model.get(key, []):
                if key not in model:
                    model[key] = []
                    zones.append(key)
                model[key].append(name)
            where[name] = labels
        elif op == "remove":
            removed = tree.remove_node(name, labels)
            assert removed == (name in model.get(key, []))
            if removed:
                model[key].remove(name)
                if not model[key]:
                    del model[key]
                    zones.remove(key)
        elif name in where:
            old = where[name]
            tree.update_node(name, old, labels)
            if get_zone_key(old) != key:
                if name in model.get(get_zone_key(old), []):
                    model[get_zone_key(old)].remove(name)
                    if not model[get_zone_key(old)]:
                        del model[get_zone_key(old)]
                        zones.remove(get_zone_key(old))
                if name not in model.get(key, []):
                    model.setdefault(key, [])
                    if key not in zones:
                        zones.append(key)
                    model[key].append(name)
            where[name] = labels
        assert tree.tree == model
        assert tree.zones == zones
        assert tree.num_nodes == sum(len(v) for v in model.values())
