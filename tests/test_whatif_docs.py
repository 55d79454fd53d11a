"""docs/whatif.md runs as written: its commands, the output it shows, its example spec."""

from __future__ import annotations

import json
import re
import shlex
from pathlib import Path

import pytest
import yaml

from kubesched.cli import main

ROOT = Path(__file__).resolve().parents[1]
DOC = ROOT / "docs" / "whatif.md"
TIMINGS = ("wallSeconds", "cpuSeconds")


def _blocks() -> list[tuple[str, str]]:
    return re.findall(r"```(\w*)\n(.*?)```", DOC.read_text(), re.S)


def test_every_command_runs_and_prints_what_the_doc_shows(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(ROOT)
    blocks = _blocks()
    commands = 0
    for i, (lang, body) in enumerate(blocks):
        if lang != "sh":
            continue
        shown_lang, shown = blocks[i + 1] if i + 1 < len(blocks) else ("", "")
        for line in body.splitlines():
            if not line.startswith("kubesched "):
                continue
            commands += 1
            assert main(shlex.split(line)[1:]) == 0, line
            out = capsys.readouterr().out
            if shown_lang == "text":
                assert [s.rstrip() for s in out.splitlines()] == [s.rstrip() for s in shown.splitlines()], line
            elif shown_lang == "json":
                point = json.loads(shown)
                printed = next(p for p in json.loads(out)["points"] if p["index"] == point["index"])
                for key in TIMINGS:
                    assert printed.pop(key) > 0 and point.pop(key) > 0
                assert printed == point, line
    assert commands == 6


def test_the_spec_shown_is_the_example_spec() -> None:
    shown = [body for lang, body in _blocks() if lang == "yaml"]
    assert len(shown) == 1
    assert yaml.safe_load(shown[0]) == yaml.safe_load((ROOT / "examples/whatif/sweep.yaml").read_text())


def test_the_readme_links_the_doc() -> None:
    assert "docs/whatif.md" in (ROOT / "README.md").read_text()
