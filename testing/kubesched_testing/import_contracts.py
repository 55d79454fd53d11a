"""import-linter contract types about the product alone, for pyproject's [tool.importlinter].

The tests beside the code (`test_*.py`, `*_test.py`) are modules of the kubesched package, so
import-linter sees them; they may import the test support package, and any plugin, which the
product may not. Each type here is a built-in contract checked on the graph less those modules:
a wildcard cannot say "every test module" (import-linter's `*` stands for whole names only).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from importlinter.contracts.forbidden import ForbiddenContract
from importlinter.contracts.independence import IndependenceContract
from importlinter.domain.contract import ContractCheck
from importlinter.domain.helpers import module_expressions_to_modules

if TYPE_CHECKING:
    from grimp import ImportGraph


def is_test_module(name: str) -> bool:
    """The rule setup.py leaves out of the wheel by (tests/test_packaging.py holds the two to it)."""
    return name.startswith("test_") or name.endswith("_test")


def without_tests(graph: ImportGraph) -> ImportGraph:
    """The graph less every module named as a test (import-linter hands each contract its own copy)."""
    for module in sorted(graph.modules):
        if is_test_module(module.rpartition(".")[2]):
            graph.remove_module(module)
    return graph


def _imports_of_tests(graph: ImportGraph, modules: set[str]) -> list[dict[str, Any]]:
    """Each import of a test module by one of `modules` that is not a test, as `forbidden` reports a chain."""
    found = []
    for importer in sorted(modules):
        if is_test_module(importer.rpartition(".")[2]):
            continue
        for imported in sorted(graph.find_modules_directly_imported_by(importer)):
            if is_test_module(imported.rpartition(".")[2]):
                details = graph.get_import_details(importer=importer, imported=imported)
                step = {"importer": importer, "imported": imported, "line_numbers": [d["line_number"] for d in details]}
                found.append({"upstream_module": imported, "downstream_module": importer, "chains": [[step]]})
    return found


class ProductForbiddenContract(ForbiddenContract):
    """`forbidden`, for the product's modules: the tests beside the code may import what it names.

    The product may not import those tests either (they are not in the wheel): such an import
    breaks the contract too, reported as a forbidden import of the test module.
    """

    def check(self, graph: ImportGraph, verbose: bool) -> ContractCheck:
        """The built-in check on the graph without the test modules, and no import of a test by the sources."""
        sources = {m.name for m in module_expressions_to_modules(graph, self.source_modules)}  # type: ignore[arg-type]
        within = sources | {d for m in sources for d in graph.find_descendants(m)}
        into_tests = _imports_of_tests(graph, within)
        check = super().check(without_tests(graph), verbose)
        if not into_tests:
            return check
        chains = sorted(
            [*check.metadata["invalid_chains"], *into_tests],
            key=lambda c: (c["upstream_module"], c["downstream_module"]),
        )
        return ContractCheck(
            kept=False,
            warnings=check.warnings,
            ignored_import_count=check.ignored_import_count,
            metadata={"invalid_chains": chains},
        )


class ProductIndependenceContract(IndependenceContract):
    """`independence`, for the product's modules: a plugin's tests may use other plugins."""

    def check(self, graph: ImportGraph, verbose: bool) -> ContractCheck:
        """The built-in check, on the graph without the test modules."""
        return super().check(without_tests(graph), verbose)
