"""docs/architecture.md stays a true map: its package table matches the tree, and what it cites exists.

A newcomer reads that page first, and a map that names moved or missing modules misleads
more than no map. So the table under "## Packages and modules" must list every package
(a folder with an `__init__.py`) and every top-level module of src/kubesched, nothing else,
with line counts within a quarter of the truth; and every path (`simulator/run.py`,
`docs/output.md`, `backend/kube/`), `path.py:Name.attr` and `Class.member` the page
cites in code spans must exist. Each failure says which row or citation to add, remove
or fix.
"""

from __future__ import annotations

import ast
import re
from collections.abc import Iterator
from functools import cache
from pathlib import Path

from hypothesis import given
from hypothesis import strategies as st

ROOT = Path(__file__).resolve().parents[1]
SRC = ROOT / "src" / "kubesched"
DOC = ROOT / "docs" / "architecture.md"
DOC_NAME = "docs/architecture.md"
TABLE_HEADING = "## Packages and modules"
# Code spans that name upstream's tree, not ours.
UPSTREAM_PREFIXES = ("pkg/", "cmd/", "staging/")

_ROW = re.compile(r"^\|\s*`(?P<path>[^`]+)`\s*\|\s*(?P<lines>[\d,]+)\s*\|")
_SPAN = re.compile(r"`([^`\n]+)`")
_CITATION = re.compile(r"^(?P<file>[\w/]+\.py):(?P<name>[A-Za-z_]\w*(?:\.\w+)*)$")
_FILE = re.compile(r"^[\w./-]+\.(?:py|md)$")
_FOLDER = re.compile(r"^[\w./-]+/$")
_MEMBER = re.compile(r"^(?P<cls>[A-Z]\w*)\.(?P<member>\w+)$")


def _lines(path: Path) -> int:
    return len(path.read_text(encoding="utf-8").splitlines())


def tree_entries(src: Path) -> dict[str, int]:
    """Every package (as `a/b/`) and top-level module (as `m.py`) with its own line count.

    A package counts its own modules, not its sub-packages' (they have rows of their own)
    and not the `test_*.py` modules kept beside the code.
    """
    entries = {p.name: _lines(p) for p in src.glob("*.py")}
    for init in src.rglob("__init__.py"):
        folder = init.parent
        if folder == src:
            continue
        own = sum(_lines(p) for p in folder.glob("*.py") if not p.name.startswith("test_"))
        entries[folder.relative_to(src).as_posix() + "/"] = own
    return entries


def table_rows(doc: str) -> dict[str, int]:
    """The rows of the table under TABLE_HEADING: path -> line count as written."""
    rows: dict[str, int] = {}
    lines = iter(doc.splitlines())
    for line in lines:
        if line.strip() == TABLE_HEADING:
            break
    else:
        return rows
    in_table = False
    for line in lines:
        if line.startswith("|"):
            in_table = True
            m = _ROW.match(line)
            if m:
                rows[m["path"]] = int(m["lines"].replace(",", ""))
        elif in_table or line.startswith("## "):
            break
    return rows


def table_problems(doc: str, src: Path) -> list[str]:
    """What the package table gets wrong about the tree at `src`, one message each."""
    rows = table_rows(doc)
    if not rows:
        return [f"{DOC_NAME}: no table under {TABLE_HEADING!r} (rows look like: | `cli.py` | 969 | what it owns |)"]
    tree = tree_entries(src)
    problems = [
        f"{DOC_NAME}: add a row for `{path}` ({lines:,} lines) to the table under {TABLE_HEADING!r}"
        for path, lines in sorted(tree.items())
        if path not in rows
    ]
    problems += [
        f"{DOC_NAME}: remove the row for `{path}` (not in src/kubesched), or correct its path"
        for path in sorted(rows)
        if path not in tree
    ]
    for path, written in sorted(rows.items()):
        actual = tree.get(path)
        if actual is not None and abs(written - actual) > max(100, actual // 4):
            problems.append(f"{DOC_NAME}: the row for `{path}` says {written:,} lines; the tree has {actual:,}")
    return problems


def _defined(body: list[ast.stmt]) -> dict[str, ast.stmt]:
    """Names a module or class body binds: functions, classes, assignments (annotated or not)."""
    names: dict[str, ast.stmt] = {}
    for node in body:
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
            names[node.name] = node
        elif isinstance(node, ast.Assign):
            for target in node.targets:
                if isinstance(target, ast.Name):
                    names[target.id] = node
        elif isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name):
            names[node.target.id] = node
    return names


@cache
def _parsed(path: Path) -> ast.Module:
    return ast.parse(path.read_text(encoding="utf-8"), filename=str(path))


def _resolves(path: Path, dotted: str) -> bool:
    body = _parsed(path).body
    for part in dotted.split("."):
        node = _defined(body).get(part)
        if node is None:
            return False
        body = node.body if isinstance(node, ast.ClassDef) else []
    return True


def _classes(src: Path) -> dict[str, list[ast.ClassDef]]:
    """Every class of the package by name (a name may be used in more than one module)."""
    found: dict[str, list[ast.ClassDef]] = {}
    for path in src.rglob("*.py"):
        for node in ast.walk(_parsed(path)):
            if isinstance(node, ast.ClassDef):
                found.setdefault(node.name, []).append(node)
    return found


def _has_member(
    classes: dict[str, list[ast.ClassDef]], cls: str, member: str, seen: frozenset[str] = frozenset()
) -> bool:
    """Whether some class named `cls`, or a base it names, defines `member`."""
    for node in classes.get(cls, []):
        if member in _defined(node.body):
            return True
        bases = {b.id for b in node.bases if isinstance(b, ast.Name)} - seen - {cls}
        if any(_has_member(classes, base, member, seen | {cls}) for base in bases):
            return True
    return False


def _spans(doc: str) -> Iterator[str]:
    for m in _SPAN.finditer(doc):
        yield m.group(1).strip()


def citation_problems(doc: str, src: Path, repo: Path) -> list[str]:
    """Paths, `path.py:Name` and `Class.member` code spans of `doc` that name nothing in the tree."""
    problems: list[str] = []
    classes: dict[str, list[ast.ClassDef]] | None = None

    def exists(rel: str) -> bool:
        return (src / rel).exists() or (repo / rel).exists()

    for span in dict.fromkeys(_spans(doc)):
        if span.startswith(UPSTREAM_PREFIXES) or "<" in span:
            continue
        if m := _CITATION.match(span):
            path = src / m["file"]
            if not path.is_file():
                problems.append(f"{DOC_NAME} cites `{span}`, but src/kubesched/{m['file']} does not exist")
            elif not _resolves(path, m["name"]):
                problems.append(f"{DOC_NAME} cites `{span}`, but {m['file']} does not define {m['name']}")
        elif _FILE.match(span) or _FOLDER.match(span):
            if not exists(span):
                problems.append(f"{DOC_NAME} names `{span}`, which is neither in src/kubesched nor in the repository")
        elif m := _MEMBER.match(span):
            classes = classes if classes is not None else _classes(src)
            if m["cls"] not in classes:
                problems.append(f"{DOC_NAME} cites `{span}`, but src/kubesched has no class {m['cls']}")
            elif not _has_member(classes, m["cls"], m["member"]):
                problems.append(f"{DOC_NAME} cites `{span}`, but no class {m['cls']} defines {m['member']}")
    return problems


def _report(problems: list[str]) -> str:
    return "\n".join(problems)


def test_the_package_table_lists_the_tree() -> None:
    problems = table_problems(DOC.read_text(encoding="utf-8"), SRC)
    assert not problems, _report(problems)


def test_everything_the_doc_cites_exists() -> None:
    problems = citation_problems(DOC.read_text(encoding="utf-8"), SRC, ROOT)
    assert not problems, _report(problems)


def test_the_readme_points_to_the_map() -> None:
    assert DOC_NAME in (ROOT / "README.md").read_text(encoding="utf-8")


def _tree(tmp: Path) -> Path:
    src = tmp / "src" / "kubesched"
    (src / "core" / "inner").mkdir(parents=True)
    (src / "__init__.py").write_text("")
    (src / "cli.py").write_text("def main() -> int:\n    return 0\n")
    (src / "core" / "__init__.py").write_text("")
    engine = "class Engine:\n    speed: int = 1\n\n    def run(self) -> None:\n        pass\n"
    (src / "core" / "engine.py").write_text(engine + "\n\nclass Turbo(Engine):\n    pass\n")
    (src / "core" / "test_engine.py").write_text("\n" * 500)
    (src / "core" / "inner" / "__init__.py").write_text("x = 1\n")
    return src


def _doc(*rows: str, body: str = "") -> str:
    return "\n".join(["# Map", "", TABLE_HEADING, "", "| Path | Lines | Owns |", "|---|---:|---|", *rows, "", body])


def test_tree_entries_count_own_modules_but_not_tests_or_subpackages(tmp_path: Path) -> None:
    assert tree_entries(_tree(tmp_path)) == {"__init__.py": 0, "cli.py": 2, "core/": 9, "core/inner/": 1}


def test_a_missing_row_a_stale_row_and_a_wrong_count_are_each_named(tmp_path: Path) -> None:
    src = _tree(tmp_path)
    doc = _doc("| `__init__.py` | 0 | x |", "| `cli.py` | 2 | x |", "| `core/` | 900 | x |", "| `gone.py` | 5 | x |")
    problems = table_problems(doc, src)
    assert any("add a row for `core/inner/`" in p for p in problems), problems
    assert any("remove the row for `gone.py`" in p for p in problems), problems
    assert any("`core/` says 900 lines; the tree has 9" in p for p in problems), problems
    assert len(problems) == 3, problems


def test_a_table_that_matches_passes_and_one_that_is_absent_fails(tmp_path: Path) -> None:
    src = _tree(tmp_path)
    rows = ("| `__init__.py` | 0 | x |", "| `cli.py` | 2 | x |", "| `core/` | 9 | x |", "| `core/inner/` | 1 | x |")
    assert table_problems(_doc(*rows), src) == []
    assert table_problems("# Map\n\nno table here\n", src) != []


def test_stale_citations_are_named_and_live_ones_pass(tmp_path: Path) -> None:
    src = _tree(tmp_path)
    live = "`cli.py:main`, `core/engine.py:Engine.run`, `core/engine.py:Engine.speed`, `Turbo.run`, `core/inner/`"
    upstream = " `pkg/scheduler/schedule_one.go`, `framework/plugins/<name>/`"
    assert citation_problems(_doc(body=live + upstream), src, tmp_path) == []
    stale = "`cli.py:gone`, `core/engine.py:Engine.stop`, `nowhere.py:f`, `core/old.py`, `Engine.fly`, `Ghost.run`"
    stale += ", `x/`"
    problems = citation_problems(_doc(body=stale), src, tmp_path)
    assert len(problems) == 7, _report(problems)
    assert "cli.py does not define gone" in problems[0]


_REAL_TREE = tree_entries(SRC)
_ROW_TEXT = "| `{}` | {} | what it owns |"


@given(
    dropped=st.sets(st.sampled_from(sorted(_REAL_TREE))),
    extra=st.sets(st.from_regex(r"\Azz_[a-z]{1,8}(/|\.py)\Z"), max_size=3),
)
def test_every_dropped_or_invented_row_is_named_and_nothing_else(dropped: set[str], extra: set[str]) -> None:
    """Whatever rows a table lacks or invents, the check names exactly those, one message each."""
    kept = [_ROW_TEXT.format(path, lines) for path, lines in _REAL_TREE.items() if path not in dropped]
    invented = [_ROW_TEXT.format(path, 10) for path in extra]
    problems = table_problems(_doc(*kept, *invented), SRC)
    if not kept and not invented:
        assert len(problems) == 1 and "no table" in problems[0], problems
        return
    assert len(problems) == len(dropped) + len(extra), _report(problems)
    for path in dropped:
        assert any(f"add a row for `{path}`" in p for p in problems), problems
    for path in extra:
        assert any(f"remove the row for `{path}`" in p for p in problems), problems
