"""config/names.py is the one home of the plugin names and the extension points: the guards that keep it so."""

from __future__ import annotations

import ast
from pathlib import Path

from kubesched.config import names
from kubesched.config.load import _IN_TREE, UPSTREAM_ONLY_PLUGINS
from kubesched.config.types import Plugins
from kubesched.framework.plugins.registry import new_in_tree_registry
from kubesched.framework.runtime.framework import POINT_TYPES

PACKAGE = Path(names.__file__).resolve().parents[1]
PLUGIN_NAMES = {v for k, v in vars(names).items() if k.isupper() and isinstance(v, str) and v[:1].isupper()}
# Also the name of a NodeResourcesFit scoring strategy and of a Policy priority argument, which are not plugins;
# and the names of two feature gates (release.py spells the gates, below config).
SHARED_WORDS = {names.REQUESTED_TO_CAPACITY_RATIO, names.GANG_SCHEDULING, names.NODE_DECLARED_FEATURES}


def _product_modules() -> list[Path]:
    """The shipped modules: not the test harness, not the tests beside the code."""
    return [
        f
        for f in sorted(PACKAGE.rglob("*.py"))
        if "testing" not in f.relative_to(PACKAGE).parts
        and not f.name.startswith("test_")
        and not f.name.endswith("_test.py")
    ]


def test_the_plugin_sets_are_v1_plugins_fields_in_order() -> None:
    """A rendered configuration prints the sets in PLUGIN_SETS' order, which must be v1.Plugins' own."""
    assert tuple(Plugins.model_fields) == names.PLUGIN_SETS
    assert names.ALL_POINTS == (names.MULTI_POINT, *names.EXTENSION_POINTS, *names.PLACEMENT_POINTS)
    assert sorted(names.ALL_POINTS) == sorted(names.PLUGIN_SETS)


def test_the_build_order_and_the_framework_cover_each_cycle_point_once() -> None:
    assert sorted(names.BUILD_ORDER) == sorted(names.EXTENSION_POINTS)
    assert names.FRAMEWORK_POINT_ORDER == (*names.BUILD_ORDER, *names.PLACEMENT_POINTS)
    assert tuple(POINT_TYPES) == (*names.EXTENSION_POINTS, *names.PLACEMENT_POINTS)


def test_every_named_plugin_is_registered_or_known_to_be_upstream_only() -> None:
    registered = set(new_in_tree_registry())
    assert registered | UPSTREAM_ONLY_PLUGINS == PLUGIN_NAMES
    assert not registered & UPSTREAM_ONLY_PLUGINS
    assert registered >= _IN_TREE


def test_no_shipped_module_spells_a_plugin_name() -> None:
    """Outside config/names.py, a plugin name is the constant, never the string (that is how names drift)."""
    home = Path(names.__file__).resolve()
    gates = {PACKAGE / "release.py", PACKAGE / "release_gates.py"}  # feature gates, some named as plugins are
    found = [
        f"{f.relative_to(PACKAGE)}:{node.lineno}: {node.value!r}"
        for f in _product_modules()
        if f != home and f not in gates
        for node in ast.walk(ast.parse(f.read_text(), str(f)))
        if isinstance(node, ast.Constant) and node.value in PLUGIN_NAMES - SHARED_WORDS
    ]
    assert not found, "use kubesched.config.names instead of:\n" + "\n".join(found)
