"""The types of raw Kubernetes objects: manifests as decoded from YAML or JSON, or as the API server sends them.

One definition for the whole project, so that a signature says the same thing everywhere.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

Obj = dict[str, Any]  # an object we may change (a copy we own)
ObjView = Mapping[str, Any]  # an object we only read (a lister's, shared)
