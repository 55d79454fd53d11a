"""AssumeCache: API objects overlaid with the scheduler's assumed (not yet written) versions (assume_cache.go).

Reserve assumes a PV's claimRef or a claim's selected-node annotation before PreBind
writes them, so that the next pod's cycle already sees those volumes as taken. An
assumed version lasts until the API object moves past the version it was based on
(the write arrived, or someone else changed it) or until it is restored.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from kubesched.api import volumes as vol
from kubesched.api.object import Obj


class AssumeError(ValueError):
    pass


@dataclass(slots=True)
class _Assumed:
    obj: Obj
    base_version: str  # resourceVersion of the API object it was assumed on


class AssumeCache:
    def __init__(self, lister: Any, kind: str) -> None:
        self.lister = lister
        self.kind = kind
        self.namespaced = kind == "PersistentVolumeClaim"
        self._assumed: dict[str, _Assumed] = {}
        self._by_class: dict[str, list[Obj]] = {}
        self._indexed_version = -1

    def _split(self, key: str) -> tuple[str, str]:
        if self.namespaced:
            ns, _, name = key.partition("/")
            return ns, name
        return "", key

    def get_api(self, key: str) -> Obj | None:
        return self.lister.get(self.kind, *self._split(key))

    def get(self, key: str) -> Obj | None:
        api = self.get_api(key)
        a = self._assumed.get(key)
        if a is None:
            return api
        if api is None or vol.meta(api).get("resourceVersion") != a.base_version:
            del self._assumed[key]  # the informer has moved on: its version wins
            return api
        return a.obj

    def assume(self, obj: Obj) -> None:
        key = self._key(obj)
        api = self.get_api(key)
        if api is None:
            raise AssumeError(f"{self.kind} {key} not found")
        current = self.get(key)
        if (
            current is not None
            and current is not api
            and vol.meta(obj).get("resourceVersion") != vol.meta(current).get("resourceVersion")
        ):
            raise AssumeError(f"{self.kind} {key} was changed by another assumption")
        self._assumed[key] = _Assumed(obj, str(vol.meta(api).get("resourceVersion") or ""))

    def restore(self, key: str) -> None:
        self._assumed.pop(key, None)

    def _key(self, obj: Obj) -> str:
        return vol.key_of(obj) if self.namespaced else str(vol.meta(obj).get("name", ""))

    def list_by_class(self, class_name: str) -> list[Obj]:
        """PVs of a storage class with assumed versions in place (pvCache.ListPVs), indexed once per change."""
        version = self.lister.kind_version(self.kind)
        if version != self._indexed_version:
            index: dict[str, list[Obj]] = {}
            for pv in self.lister.list(self.kind):
                index.setdefault(vol.volume_class(pv), []).append(pv)
            self._by_class = index
            self._indexed_version = version
        if not self._assumed:
            return list(self._by_class.get(class_name, ()))
        out = [self.get(self._key(pv)) for pv in self._by_class.get(class_name, ())]
        return [pv for pv in out if pv is not None]
