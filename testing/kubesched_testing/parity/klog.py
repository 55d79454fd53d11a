"""Reading kube-scheduler's klog text lines: `I1123 22:53:59.898317 3060 file.go:982] "msg" key=value ...`."""

from __future__ import annotations

import re
from dataclasses import dataclass

_HEADER = re.compile(r"^([IWEF])(\d{4} \d\d:\d\d:\d\d\.\d+)\s+\d+ ([^\]]+)\] ")
_ESCAPES = {"n": "\n", "t": "\t", '"': '"', "\\": "\\", "r": "\r"}


@dataclass(slots=True)
class Line:
    severity: str
    time: str
    source: str
    msg: str
    values: dict[str, str]


def _quoted(text: str, i: int) -> tuple[str, int]:
    """A Go-quoted string starting at text[i] == '"'; returns the value and the index after it."""
    out: list[str] = []
    i += 1
    while i < len(text):
        c = text[i]
        if c == "\\" and i + 1 < len(text):
            nxt = text[i + 1]
            if nxt in _ESCAPES:
                out.append(_ESCAPES[nxt])
                i += 2
                continue
            if nxt == "u" and i + 5 < len(text):
                out.append(chr(int(text[i + 2 : i + 6], 16)))
                i += 6
                continue
            out.append(nxt)
            i += 2
            continue
        if c == '"':
            return "".join(out), i + 1
        out.append(c)
        i += 1
    return "".join(out), i


def _bare(text: str, i: int) -> tuple[str, int]:
    """An unquoted value: up to the next space outside brackets."""
    depth = 0
    start = i
    while i < len(text):
        c = text[i]
        if c in "[{(":
            depth += 1
        elif c in "]})":
            depth -= 1
        elif c == " " and depth <= 0:
            break
        i += 1
    return text[start:i], i


def parse_line(raw: str) -> Line | None:
    """One structured log line, or None for anything else (continuation lines, plain text)."""
    m = _HEADER.match(raw)
    if m is None:
        return None
    rest = raw[m.end() :].rstrip("\n")
    if not rest.startswith('"'):
        return Line(m.group(1), m.group(2), m.group(3), rest, {})
    msg, i = _quoted(rest, 0)
    values: dict[str, str] = {}
    while i < len(rest):
        while i < len(rest) and rest[i] == " ":
            i += 1
        eq = rest.find("=", i)
        if eq < 0:
            break
        key = rest[i:eq]
        i = eq + 1
        if i < len(rest) and rest[i] == '"':
            value, i = _quoted(rest, i)
        else:
            value, i = _bare(rest, i)
        values[key] = value
    return Line(m.group(1), m.group(2), m.group(3), msg, values)


class LogFollower:
    """Reads a growing log file line by line, remembering where it stopped."""

    def __init__(self, path: str) -> None:
        self.path = path
        self._offset = 0
        self._partial = ""

    def read(self) -> list[Line]:
        try:
            with open(self.path, encoding="utf-8", errors="replace") as f:
                f.seek(self._offset)
                chunk = f.read()
                self._offset = f.tell()
        except FileNotFoundError:
            return []
        text = self._partial + chunk
        lines = text.split("\n")
        self._partial = lines.pop()
        out = []
        for raw in lines:
            parsed = parse_line(raw)
            if parsed is not None:
                out.append(parsed)
        return out
