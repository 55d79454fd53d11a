"""Recognising a Helm chart given where rendered manifests belong, to say how to render it.

A chart's Chart.yaml has no `kind` and its templates do not parse as YAML (or parse
into something that is no object), so without this the loader's answer would be a
`kind: Required value` or a YAML syntax error that says nothing about the real mistake.
"""

from __future__ import annotations

import re
import shlex
from pathlib import Path

CHART_FILE = "Chart.yaml"
# Helm's actions: `{{ .Values.x }}`, `{{- include "x" . }}`, `{{ end }}`... but not the `{{ $labels.x }}`
# of Prometheus rules or Alertmanager templates, which ConfigMaps carry as plain strings.
_ACTION = re.compile(
    r"\{\{-?\s*(?:\.|/\*|(?:include|if|else|end|range|with|template|define|toYaml|tpl|required|default|quote|"
    r"printf|nindent|indent|block|fail|lookup)\b)"
)
_MAX_PARENTS = 8  # how far up from a template to look for its chart's Chart.yaml


def render_command(chart: Path | None) -> str:
    """The command line that renders the chart and simulates what it makes."""
    target = shlex.quote(str(chart)) if chart is not None else "CHART"
    return f"run `kubesched simulate <(helm template {target})`"


def chart_message(chart: Path) -> str:
    """What to say for a chart directory (one holding Chart.yaml) given as manifests."""
    return f"{chart}: looks like a Helm chart ({chart / CHART_FILE}): {render_command(chart)}"


def template_message(source: str, text: str) -> str:
    """What to say for a text that failed to load, when it holds Helm template actions; '' when it holds none."""
    found = _ACTION.search(text)
    if found is None:
        return ""
    line = text.count("\n", 0, found.start()) + 1
    return (
        f'{source}: looks like a Helm chart template ("{{{{" on line {line}), not a manifest: '
        f"{render_command(_chart_of(source))}"
    )


def _chart_of(source: str) -> Path | None:
    """The nearest folder above a template file that holds Chart.yaml (None for stdin, or none found)."""
    if source.startswith("<"):  # <stdin>, <text>: no folder to look in
        return None
    path = Path(source)
    for parent in list(path.parents)[:_MAX_PARENTS]:
        try:
            if (parent / CHART_FILE).is_file():
                return parent
        except OSError:
            return None
    return None
