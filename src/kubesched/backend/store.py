"""Objects by kind and key, and the listers plugins read through their Handle.

Both backends keep one: the embedded cluster is the store itself, and in a real
cluster the informers fill one from list and watch, as client-go's indexers back
the listers kube-scheduler's plugins call.
"""

from __future__ import annotations

import builtins
from collections.abc import Callable, Iterator

from kubesched.api.kinds import KINDS, NAMESPACED
from kubesched.api.object import Obj
from kubesched.api.selectors import LabelSelector

Listener = Callable[[str, str, Obj | None, Obj | None], None]  # kind, ADDED|MODIFIED|DELETED, old, new


def object_key(obj: Obj) -> tuple[str, str]:
    meta = obj.get("metadata") or {}
    ns = str(meta.get("namespace") or "default") if obj.get("kind") in NAMESPACED else ""
    return ns, str(meta.get("name") or "")


class ObjectStore:
    def __init__(self) -> None:
        self.objects: dict[str, dict[tuple[str, str], Obj]] = {k: {} for k in KINDS}
        self.versions: dict[str, int] = dict.fromkeys(KINDS, 0)  # per kind: bumped on every change
        self._listeners: list[Listener] = []

    def subscribe(self, listener: Listener) -> None:
        self._listeners.append(listener)

    def _notify(self, kind: str, event: str, old: Obj | None, new: Obj | None) -> None:
        """A change made to `objects`: bump the kind's version and tell the subscribers."""
        self.versions[kind] += 1
        for listener in self._listeners:
            listener(kind, event, old, new)

    def kind_version(self, kind: str) -> int:
        """Changes so far to objects of a kind: lets readers rebuild an index only when it moved."""
        return self.versions[kind]

    def list(self, kind: str) -> Iterator[Obj]:
        return iter(list(self.objects[kind].values()))

    def get(self, kind: str, namespace: str, name: str) -> Obj | None:
        return self.objects[kind].get((namespace if kind in NAMESPACED else "", name))

    def services(self, namespace: str) -> builtins.list[Obj]:
        return [o for (ns, _), o in self.objects["Service"].items() if ns == namespace]

    def namespace_labels(self, namespace: str) -> dict[str, str] | None:
        ns = self.objects["Namespace"].get(("", namespace))
        if ns is None:
            return None
        return dict((ns.get("metadata") or {}).get("labels") or {})

    def namespaces_matching(self, selector: LabelSelector) -> builtins.list[str]:
        return [
            name
            for (_, name), ns in self.objects["Namespace"].items()
            if selector.matches((ns.get("metadata") or {}).get("labels") or {})
        ]
