"""Reading YAML and JSON streams into plain documents, safely, as kubectl would send them.

PyYAML's own composer and constructor recurse once per nesting level (deep input
crashes the interpreter) and share aliased nodes (an alias bomb is cheap to write and
explodes when walked). Documents are built here from PyYAML's event stream instead,
without recursion and with limits, giving what kubectl's YAML-to-JSON step gives the
API server:

- nesting deeper than MAX_DEPTH levels is refused;
- an alias is a copy of what its anchor holds, and copies are counted: more than
  MAX_ALIAS_NODES copied nodes is "excessive aliasing", as go-yaml says;
- a key set twice in one mapping is refused (sigs.k8s.io/yaml: "key already set in map");
- map keys are strings (YAML 1.1 `yes: x` or `1: x` give "true" and "1");
- timestamps stay strings; NaN and infinities, which JSON cannot carry, are refused;
- only the YAML core tags are understood;
- values are counted as they come (mappings, lists and scalars, alias copies too): one
  object (a document, or an item of a List) may hold MAX_OBJECT_NODES of them, one
  input one per BYTES_PER_NODE bytes of its byte budget, so a compact file of millions
  of `{}` stops at the first value over instead of filling memory.

JSON input takes Python's JSON parser (much faster) when it cannot hold more values than
one object may; larger JSON goes through the YAML parser, which counts as it goes.
Block-style YAML (what kubectl, Helm and PyYAML write) is read line by line while every line
keeps to the simple forms `_block_documents` knows, about twice as fast as PyYAML's events;
the first document that does not goes, with the rest, through PyYAML, the plain twin.
Inputs are read to at most their byte budget (DEFAULT_MAX_INPUT_BYTES unless raised).

Text is Unicode as Go's decoders see it: a `\\uD800`-style JSON escape of a lone
surrogate becomes U+FFFD (encoding/json does that, and kube-apiserver stores U+FFFD),
as does a surrogate code point in text handed over as a Python string; YAML refuses
surrogate escapes, as go-yaml does. So no string that cannot be written as UTF-8 gets
past loading, and every output (JSON, table, report, UI) can print what it holds.
"""

from __future__ import annotations

import json
import math
import os
import re
import stat
from collections.abc import Iterator
from pathlib import Path
from typing import Any, BinaryIO

import yaml
from yaml import events as ev
from yaml.constructor import SafeConstructor
from yaml.nodes import ScalarNode
from yaml.resolver import Resolver

try:
    _Loader: type = yaml.CSafeLoader
except AttributeError:  # PyYAML built without libyaml
    _Loader = yaml.SafeLoader

MAX_DEPTH = 100
MAX_ALIAS_NODES = 1_000_000
MAX_OBJECT_NODES = 1_000_000
"""Values one object may hold: the API server stores none near this large (etcd takes at most 1.5 MiB an object)."""
DEFAULT_MAX_INPUT_BYTES = 256 * 1024 * 1024
"""Bytes one input (a file, a pipe, standard input, a UI edit) may hold unless raised (--max-input-bytes)."""
BYTES_PER_NODE = 8
"""Manifests take 6 to 10 bytes a value; `{}` in flow style takes 3, and 60 or more of memory."""
MIN_INPUT_NODES = 100_000
"""Values any input may hold, however small its byte budget: a few megabytes of memory at most."""

_TAG = "tag:yaml.org,2002:"
_STR, _MERGE, _TIMESTAMP = _TAG + "str", _TAG + "merge", _TAG + "timestamp"
_CONSTRUCTED = {_TAG + "int", _TAG + "float", _TAG + "bool", _TAG + "null"}
_COLLECTION_TAGS = {None, "!", _TAG + "map", _TAG + "seq"}
_resolver = Resolver()
_constructor = SafeConstructor()
_MISSING = object()


_SURROGATE = re.compile("[\ud800-\udfff]")
_SURROGATE_ESCAPE = re.compile(r"\\u[dD][89abcdefABCDEF]")


def valid_unicode(text: str) -> str:
    """`text` with every surrogate code point (a half of a UTF-16 pair, alone) as U+FFFD, as Go decodes it."""
    if text.isascii() or not _SURROGATE.search(text):  # isascii: one fast pass over most inputs
        return text
    return _SURROGATE.sub("\ufffd", text)


class DocumentError(ValueError):
    """Input that is not a stream of JSON-compatible documents; the message says where (line, column)."""


def input_nodes_allowed(max_input_bytes: int) -> int:
    """The values one input may hold under a byte budget: one per BYTES_PER_NODE bytes (at least MIN_INPUT_NODES)."""
    return max(max_input_bytes // BYTES_PER_NODE, MIN_INPUT_NODES)


def _where(mark: Any) -> str:
    return f"line {mark.line + 1}, column {mark.column + 1}: " if mark is not None else ""


def parse_documents(text: str, *, max_nodes: int | None = None) -> list[Any]:
    """The documents of a YAML (or JSON) stream, empty ones as None, in order; at most `max_nodes` values
    (default: what the default byte budget allows)."""
    return list(iter_documents(text, max_nodes=max_nodes))


def iter_documents(text: str, *, max_nodes: int | None = None) -> Iterator[Any]:
    """`parse_documents`, each document as it ends: a stream of millions of bad documents stops at the first
    its reader refuses, and a problem later in the text is raised (DocumentError) when it is reached."""
    text = valid_unicode(text)
    limit = input_nodes_allowed(DEFAULT_MAX_INPUT_BYTES) if max_nodes is None else max_nodes
    head = text.lstrip()[:1]
    if head in ("{", "[") and _json_values_bound(text) <= min(MAX_OBJECT_NODES, limit):
        try:
            doc = _json_document(text)
        except json.JSONDecodeError:
            pass  # not plain JSON: YAML flow style, or broken; the YAML parser says which
        else:
            yield doc
            return
    yield from _block_documents(text, limit)


def _json_values_bound(text: str) -> int:
    """More than the values a JSON text can hold: each needs a bracket, a comma or a colon (or is the only one)."""
    return 1 + sum(text.count(c) for c in "{[,:")


def _json_document(text: str) -> Any:
    escapes = _SURROGATE_ESCAPE.search(text) is not None  # only then can a string hold a lone surrogate

    def pairs(items: list[tuple[str, Any]]) -> dict[str, Any]:
        out: dict[str, Any] = {}
        for k, v in items:
            if escapes:
                k, v = valid_unicode(k), _valid_strings(v)
            if k in out:
                raise DocumentError(f'duplicate field "{k}"')
            out[k] = v
        return out

    def constant(name: str) -> Any:
        raise DocumentError(f"{name} is not a valid JSON number")

    try:
        doc = json.loads(text, object_pairs_hook=pairs, parse_constant=constant)
    except RecursionError as err:
        raise DocumentError(f"nesting deeper than {MAX_DEPTH} levels") from err
    except json.JSONDecodeError:
        raise
    except ValueError as err:  # an integer too long to convert
        if isinstance(err, DocumentError):
            raise
        raise DocumentError(f"invalid JSON: {err}") from err
    if _depth(doc) > MAX_DEPTH:
        raise DocumentError(f"nesting deeper than {MAX_DEPTH} levels")
    return _valid_strings(doc) if escapes else doc


def _valid_strings(value: Any) -> Any:
    """A JSON value's strings through valid_unicode, down through lists (objects were done by their own hook)."""
    return valid_strings(value, objects=False)


def valid_strings(value: Any, objects: bool = True) -> Any:
    """Every string in a decoded JSON value (keys too) through valid_unicode, in place and without recursion;
    `objects=False` leaves objects alone."""
    if isinstance(value, str):
        return valid_unicode(value)
    stack = [value]
    while stack:
        top = stack.pop()
        if isinstance(top, list):
            for i, item in enumerate(top):
                if isinstance(item, str):
                    top[i] = valid_unicode(item)
                elif isinstance(item, list | dict):
                    stack.append(item)
        elif isinstance(top, dict) and objects:
            entries = list(top.items())
            top.clear()
            for k, v in entries:
                top[valid_unicode(k) if isinstance(k, str) else k] = valid_unicode(v) if isinstance(v, str) else v
                if isinstance(v, list | dict):
                    stack.append(v)
    return value


def _depth(root: Any) -> int:
    """How deeply collections nest in `root` (a scalar is 0), without recursion."""
    deepest = 0
    todo: list[tuple[Any, int]] = [(root, 0)]
    while todo:
        node, depth = todo.pop()
        if isinstance(node, dict):
            children: Any = node.values()
        elif isinstance(node, list):
            children = node
        else:
            continue
        depth += 1
        deepest = max(deepest, depth)
        if depth > MAX_DEPTH:
            return depth
        todo.extend((c, depth) for c in children)
    return deepest


class _Frame:
    __slots__ = ("value", "anchor", "depth", "key", "key_mark", "merges")

    def __init__(self, value: dict[str, Any] | list[Any], anchor: str | None) -> None:
        self.value = value
        self.anchor = anchor
        self.depth = 1  # how deeply collections nest in value, itself included
        self.key: Any = _MISSING
        self.key_mark: Any = None
        self.merges: list[tuple[Any, Any]] = []


class _Builder:
    """Turns one stream's events into documents, without recursion.

    A mapping holds only its own keys until it ends (merged entries are added then), so
    a key already in it was set twice. Plain scalars are resolved once per distinct text:
    manifests repeat `v1`, `Pod`, `100m` thousands of times, and the same str objects are
    then shared by every document that holds them.
    """

    def __init__(self, max_nodes: int) -> None:
        self.max_nodes = max_nodes
        self.nodes = 0  # values so far, in this input
        self.object_start = 0  # self.nodes when the current object (document or List item) began
        self.limit = min(MAX_OBJECT_NODES, max_nodes)  # the count at which one more value is too many
        self.docs: list[Any] = []
        self.stack: list[_Frame] = []
        self.anchors: dict[str, tuple[Any, int]] = {}  # anchor -> (value, nesting depth of value)
        self.open_anchors: set[str] = set()
        self.copied = 0
        self.root: Any = None
        self.plain: dict[str, Any] = {}  # plain scalar text -> its value

    def documents(self, get_event: Any) -> Iterator[Any]:
        """Each document of the stream as it ends, from `get_event` (the loader's; None after the last).

        The events most documents are made of (an unanchored scalar or collection inside a
        collection) are handled here, inline: a method call per event costs as much as the
        work. Everything else goes through `feed`, which handles every event in general.
        """
        stack, plain, docs = self.stack, self.plain, self.docs
        scalar_event, mapping_start, sequence_start = ev.ScalarEvent, ev.MappingStartEvent, ev.SequenceStartEvent
        mapping_end, sequence_end = ev.MappingEndEvent, ev.SequenceEndEvent
        while True:
            try:
                event = get_event()
            except yaml.YAMLError as err:
                raise _syntax_error(err) from err
            if event is None:
                return
            cls = event.__class__
            if cls is scalar_event and stack and event.anchor is None:
                self.nodes += 1
                if self.nodes > self.limit:
                    self._too_many(event.start_mark)
                if event.tag is None and event.implicit[0]:
                    value = plain.get(event.value, _MISSING)
                    if value is _MISSING:
                        value = plain[event.value] = self._scalar(event)
                else:
                    value = self._scalar(event)
                top = stack[-1]
                if top.value.__class__ is list:
                    top.value.append(value)
                elif top.key is _MISSING:
                    top.key = value if value.__class__ is str else _key(value, event.start_mark)
                    top.key_mark = event.start_mark
                else:
                    self._set(top, value)
            elif (cls is mapping_start or cls is sequence_start) and 2 < len(stack) < MAX_DEPTH:
                if event.tag not in _COLLECTION_TAGS:
                    raise DocumentError(f"{_where(event.start_mark)}unsupported tag {event.tag}")
                self.nodes += 1
                if self.nodes > self.limit:
                    self._too_many(event.start_mark)
                if event.anchor:
                    self.open_anchors.add(event.anchor)
                stack.append(_Frame({} if cls is mapping_start else [], event.anchor))
            elif (cls is mapping_end or cls is sequence_end) and len(stack) > 1 and stack[-1].anchor is None:
                frame = stack.pop()
                if frame.merges:
                    self._merge(frame)
                value, depth, top = frame.value, frame.depth, stack[-1]
                if top.depth <= depth:
                    top.depth = depth + 1
                if top.value.__class__ is list:
                    top.value.append(value)
                elif top.key is _MISSING:
                    top.key, top.key_mark = _key(value, event.start_mark), event.start_mark
                else:
                    self._set(top, value)
            else:
                self.feed(event)
                if docs:
                    yield docs.pop()

    def feed(self, event: Any) -> None:
        """Any one event, in general (`documents` handles the common ones itself)."""
        cls = event.__class__
        if cls is ev.ScalarEvent:
            self.nodes += 1
            if self.nodes > self.limit:
                self._too_many(event.start_mark)
            self._add(self._scalar(event), event.anchor, 0, event.start_mark)
        elif cls is ev.MappingStartEvent or cls is ev.SequenceStartEvent:
            if event.tag not in _COLLECTION_TAGS:
                raise DocumentError(f"{_where(event.start_mark)}unsupported tag {event.tag}")
            if len(self.stack) >= MAX_DEPTH:
                raise DocumentError(f"{_where(event.start_mark)}nesting deeper than {MAX_DEPTH} levels")
            if self._starts_object(cls):
                self._object_begins()
            self.nodes += 1
            if self.nodes > self.limit:
                self._too_many(event.start_mark)
            if event.anchor:
                self.open_anchors.add(event.anchor)
            container: Any = {} if cls is ev.MappingStartEvent else []
            self.stack.append(_Frame(container, event.anchor))
        elif cls is ev.MappingEndEvent or cls is ev.SequenceEndEvent:
            frame = self.stack.pop()
            if frame.merges:
                self._merge(frame)
            if frame.anchor:
                self.open_anchors.discard(frame.anchor)
            self._add(frame.value, frame.anchor, frame.depth, event.start_mark)
        elif cls is ev.AliasEvent:
            self._add(*self._alias(event), event.start_mark)
        elif cls is ev.DocumentStartEvent:
            self.anchors, self.root = {}, None
            self._object_begins()
        elif cls is ev.DocumentEndEvent:
            self.docs.append(self.root)

    def _starts_object(self, cls: type) -> bool:
        """A document's root, or an item of a List (a mapping in the root mapping's `items`)."""
        stack = self.stack
        if not stack:
            return True
        return (
            len(stack) == 2
            and cls is ev.MappingStartEvent
            and stack[0].key == "items"
            and stack[0].value.__class__ is dict
            and stack[1].value.__class__ is list
        )

    def _object_begins(self) -> None:
        self.object_start = self.nodes
        self.limit = min(self.object_start + MAX_OBJECT_NODES, self.max_nodes)

    def _too_many(self, mark: Any, aliasing: bool = False) -> None:
        """Over the input's values or the object's; an object grown so by copies of anchors is go-yaml's case."""
        if self.nodes > self.max_nodes:
            raise DocumentError(
                f"{_where(mark)}more than {self.max_nodes:,} YAML values (mappings, lists, scalars) in one input, "
                f"over the budget of one per {BYTES_PER_NODE} bytes of --max-input-bytes; "
                "raise it with --max-input-bytes N"
            )
        if aliasing:
            raise DocumentError(f"{_where(mark)}document contains excessive aliasing")
        raise DocumentError(
            f"{_where(mark)}an object of more than {MAX_OBJECT_NODES:,} YAML values (mappings, lists, scalars); "
            "the API server stores no object that large"
        )

    def _scalar(self, event: Any) -> Any:
        value = event.value
        if _SURROGATE.search(value):  # only PyYAML without libyaml lets a `"\\ud800"` escape through
            raise DocumentError(f"{_where(event.start_mark)}found invalid Unicode character escape code")
        tag = event.tag
        if tag is None or tag == "!":
            if not event.implicit[0]:
                return value  # quoted, literal or folded: a string
            tag = _resolver.resolve(ScalarNode, value, event.implicit)
        return _tagged(value, tag, event.start_mark)

    def _alias(self, event: Any) -> tuple[Any, None, int]:
        name = event.anchor
        if name in self.open_anchors:
            raise DocumentError(f"{_where(event.start_mark)}anchor '{name}' value contains itself")
        if name not in self.anchors:
            raise DocumentError(f"{_where(event.start_mark)}unknown anchor '{name}' referenced")
        value, depth = self.anchors[name]
        self.nodes += 1
        if self.nodes > self.limit:
            self._too_many(event.start_mark)
        if not isinstance(value, dict | list):
            return value, None, 0
        if len(self.stack) + depth > MAX_DEPTH:
            raise DocumentError(f"{_where(event.start_mark)}nesting deeper than {MAX_DEPTH} levels")
        return self._copy(value, event.start_mark), None, depth

    def _copy(self, value: Any, mark: Any) -> Any:
        """A deep copy of an anchored collection, counting every node against the alias budget."""
        out: Any = {} if isinstance(value, dict) else []
        todo = [(value, out)]
        while todo:
            src, dst = todo.pop()
            self.copied += len(src)
            if self.copied > MAX_ALIAS_NODES:
                raise DocumentError(f"{_where(mark)}document contains excessive aliasing")
            self.nodes += len(src)
            if self.nodes > self.limit:
                self._too_many(mark, aliasing=True)
            items = src.items() if isinstance(src, dict) else enumerate(src)
            for k, v in items:
                if isinstance(v, dict | list):
                    child: Any = {} if isinstance(v, dict) else []
                    todo.append((v, child))
                    v = child
                if isinstance(dst, dict):
                    dst[k] = v
                else:
                    dst.append(v)
        return out

    def _add(self, value: Any, anchor: str | None, depth: int, mark: Any) -> None:
        if len(self.stack) + depth > MAX_DEPTH:
            raise DocumentError(f"{_where(mark)}nesting deeper than {MAX_DEPTH} levels")
        if anchor:
            self.anchors[anchor] = (value, depth)
        if not self.stack:
            self.root = value
            return
        top = self.stack[-1]
        top.depth = max(top.depth, depth + 1)
        if isinstance(top.value, list):
            top.value.append(value)
            return
        if top.key is _MISSING:
            top.key, top.key_mark = _key(value, mark), mark
            return
        self._set(top, value)

    @staticmethod
    def _set(top: _Frame, value: Any) -> None:
        """The value for the mapping's pending key."""
        key, top.key = top.key, _MISSING
        if key is _MERGE_KEY:
            top.merges.append((value, top.key_mark))
            return
        target = top.value
        assert isinstance(target, dict)
        if key in target:
            raise DocumentError(f'{_where(top.key_mark)}key "{key}" already set in map')
        target[key] = value

    def _merge(self, frame: _Frame) -> None:
        """YAML merge keys: entries of the merged mappings that the mapping does not set itself."""
        target = frame.value
        assert isinstance(target, dict)
        explicit = set(target)
        for value, mark in frame.merges:
            sources = value if isinstance(value, list) else [value]
            for src in sources:
                if not isinstance(src, dict):
                    raise DocumentError(f"{_where(mark)}expected a mapping or a list of mappings for merging")
                for k, v in src.items():
                    if k not in explicit:
                        target.setdefault(k, v)


class _MergeKey:
    def __repr__(self) -> str:
        return "<<"


_MERGE_KEY = _MergeKey()


def _key(value: Any, mark: Any) -> Any:
    """A mapping key as JSON needs it: a string (or the merge marker)."""
    if isinstance(value, str) or value is _MERGE_KEY:
        return value
    if isinstance(value, bool):
        return "true" if value else "false"
    if value is None:
        return "null"
    if isinstance(value, int | float):
        return str(value)
    raise DocumentError(f"{_where(mark)}a mapping key must be a string, not a {type(value).__name__}")


def _tagged(value: str, tag: str, mark: Any) -> Any:
    """A scalar's value under its resolved tag, as JSON holds it."""
    if tag in (_STR, _TIMESTAMP):
        return value
    if tag == _MERGE:
        return _MERGE_KEY
    if tag not in _CONSTRUCTED:
        raise DocumentError(f"{_where(mark)}unsupported tag {tag}")
    try:
        out = _constructor.construct_object(ScalarNode(tag, value, mark, mark))
    except (ValueError, yaml.YAMLError) as err:
        shown = value if len(value) <= 40 else value[:37] + "..."
        raise DocumentError(f"{_where(mark)}cannot read {shown!r} as {tag[len(_TAG) :]}") from err
    if isinstance(out, float) and not math.isfinite(out):
        raise DocumentError(f'{_where(mark)}"{value}": NaN and infinities are not valid JSON numbers')
    return out


def _yaml_documents(text: str, max_nodes: int, nodes: int = 0) -> Iterator[Any]:
    """The documents through PyYAML's events; `nodes`: values already read from the same input."""
    builder = _Builder(max_nodes)
    builder.nodes = nodes
    loader = _Loader(text)
    try:
        yield from builder.documents(loader.get_event)
    finally:
        loader.dispose()


_BLOCK_LINE = re.compile(r"( *)(- )?(?:([A-Za-z0-9_][A-Za-z0-9_./-]*):(?: (.*))?|(.*))")
_PLAIN_START = re.compile(r"[A-Za-z0-9_./+~=(]|-[A-Za-z0-9.]")
_BLOCK_MAX_DEPTH = MAX_DEPTH // 2
_EMPTY_MAP, _EMPTY_LIST, _UNSURE, _BLANK, _PENDING = object(), object(), object(), object(), object()
MAX_SEEN_LINES = 500_000
"""Lines and scalars whose reading is remembered (all forgotten when full): a few tens of MB at most."""


def _block_documents(text: str, max_nodes: int) -> Iterator[Any]:
    """The documents of a stream, read line by line while they keep to the block style kubectl, Helm and
    PyYAML write; from the first document that does not, PyYAML's events read the rest.

    Every line must be `key: value`, `key:`, `- key: value`, `- key:` or `- value` at an
    indentation that YAML would read the same way, a value being one line: a plain scalar
    (resolved as PyYAML resolves it), a quoted string without escapes, `{}` or `[]`, all
    printable ASCII; documents are split by `---` lines. Anything else (anchors, tags,
    flow collections, block scalars, several lines to one value, a duplicate key, a
    document near a limit) leaves the document to PyYAML. A document PyYAML reads alone as
    one is taken as read (the lines after it start the next document); one it refuses, or
    reads as several, leaves the rest of the stream to PyYAML, which gives the same values
    and says what is wrong, with the same line numbers.
    """
    seen: dict[str, Any] = {}
    nodes, start, line, size = 0, 0, 0, len(text)  # line: the line breaks before start
    while start < size:
        if text.startswith("---\n", start) or (start + 3 == size and text.endswith("---")):
            body = min(start + 4, size)
        elif start:
            break
        else:
            body = start
        marker = text.find("\n---\n", max(body - 1, 0))
        if marker < 0 and text.endswith("\n---") and size - 4 >= max(body - 1, 0):
            marker = size - 4
        end = size if marker < 0 else marker + 1
        doc, doc_nodes = _block_document(text[body:end].split("\n"), seen)
        if doc is _UNSURE or doc_nodes > MAX_OBJECT_NODES or nodes + doc_nodes > max_nodes:
            chunk = text[start:end]
            alone = None if _LINE_BREAKS.search(chunk) else _one_document(chunk, max_nodes, nodes)
            if alone is None:
                break
            doc, nodes = alone
        else:
            nodes += doc_nodes
        yield doc
        line += text.count("\n", start, end)
        start = end
    if start < size:
        yield from _yaml_documents("\n" * line + text[start:], max_nodes, nodes)


_LINE_BREAKS = re.compile("[\r\x85\u2028\u2029]")
"""Line breaks PyYAML counts besides \\n: a document holding one is not read apart from the rest."""


def _one_document(text: str, max_nodes: int, nodes: int) -> tuple[Any, int] | None:
    """The one document of `text` through PyYAML's events and the values counted with it, or None when it is
    not exactly one document within the budget (the caller then reads the stream from there)."""
    builder = _Builder(max_nodes)
    builder.nodes = nodes
    loader = _Loader(text)
    try:
        docs = list(builder.documents(loader.get_event))
    except DocumentError:
        return None
    finally:
        loader.dispose()
    return (docs[0], builder.nodes) if len(docs) == 1 else None


def _block_document(lines: list[str], seen: dict[str, Any]) -> tuple[Any, int]:
    """The document of these lines and the values it holds as PyYAML counts them; _UNSURE when it is
    not in the block style `_block_documents` reads. `seen`: what each line says, by its text
    (manifests repeat most lines: `    cpu: '8'`, `  - name: main`)."""
    root: Any = None
    stack: list[tuple[int, Any, bool]] = []  # (column, collection, is a sequence)
    pending: tuple[dict[str, Any], str, int] | None = None  # a `key:` whose value the next line tells
    nodes = 0
    for line in lines:
        said = seen.get(line)
        if said is None:
            if len(seen) >= MAX_SEEN_LINES:
                seen.clear()
            said = seen[line] = _block_line(line, seen)
        if said is _BLANK:
            continue
        if said is _UNSURE:
            return _UNSURE, 0
        col, in_sequence, name, value = said
        if pending is not None:
            into, pending_key, pending_col = pending
            pending = None
            if col > pending_col or (col == pending_col and in_sequence):
                child: Any = [] if in_sequence else {}
                into[pending_key] = child
                stack.append((col, child, in_sequence))
        while stack and (stack[-1][0] > col or (stack[-1][0] == col and stack[-1][2] and not in_sequence)):
            stack.pop()
        if not stack:
            if root is not None or col:
                return _UNSURE, 0
            root = [] if in_sequence else {}
            nodes += 1
            stack.append((0, root, in_sequence))
        top_col, top, is_sequence = stack[-1]
        if top_col != col or is_sequence is not in_sequence or len(stack) > _BLOCK_MAX_DEPTH:
            return _UNSURE, 0
        if name is None:
            top.append({} if value is _EMPTY_MAP else [] if value is _EMPTY_LIST else value)
            nodes += 1
            continue
        if in_sequence:
            item: dict[str, Any] = {}
            top.append(item)
            nodes += 1
            col += 2
            stack.append((col, item, False))
            top = item
        if name in top:
            return _UNSURE, 0
        nodes += 2
        if value is _PENDING:
            top[name] = None
            pending = (top, name, col)
        else:
            top[name] = {} if value is _EMPTY_MAP else [] if value is _EMPTY_LIST else value
    if root is None:
        return _UNSURE, 0
    return root, nodes


def _block_line(line: str, seen: dict[str, Any]) -> Any:
    """What one line says: _BLANK (nothing: blank or a comment), _UNSURE, or (column, whether it is a
    sequence item, key or None, value or _PENDING for `key:`); scalars are resolved once per text, in
    `seen` under a key no line has (a newline first)."""
    m = _BLOCK_LINE.fullmatch(line)
    if m is None:
        return _UNSURE
    indent, dash, key, text, alone = m.groups()
    if key is None and dash is None:  # only a blank line or a comment may stand alone here
        if not alone.strip(" ") or (alone.startswith("#") and alone.isascii() and alone.isprintable()):
            return _BLANK
        return _UNSURE
    if key is None:
        value = _block_value(alone, seen)
        return _UNSURE if value is _UNSURE else (len(indent), dash is not None, None, value)
    resolved = _block_value(key, seen)
    if resolved is _UNSURE or resolved is _EMPTY_MAP or resolved is _EMPTY_LIST:
        return _UNSURE
    value = _PENDING if text is None else _block_value(text, seen)
    return _UNSURE if value is _UNSURE else (len(indent), dash is not None, _key(resolved, None), value)


def _block_value(text: str, seen: dict[str, Any]) -> Any:
    """A one-line scalar's value (_EMPTY_MAP, _EMPTY_LIST for `{}`, `[]`), or _UNSURE; remembered by text."""
    key = "\n" + text
    value = seen.get(key, _MISSING)
    if value is _MISSING:
        value = seen[key] = _one_line_scalar(text)
    return value


def _one_line_scalar(text: str) -> Any:
    if not text or not text.isascii() or not text.isprintable() or text[-1] == " ":
        return _UNSURE
    if text == "{}":
        return _EMPTY_MAP
    if text == "[]":
        return _EMPTY_LIST
    first, inner = text[0], text[1:-1]
    if first == "'":
        if len(text) < 2 or text[-1] != "'" or "'" in inner.replace("''", ""):
            return _UNSURE
        return inner.replace("''", "'")
    if first == '"':
        if len(text) < 2 or text[-1] != '"' or '"' in inner or "\\" in inner:
            return _UNSURE
        return inner
    if not _PLAIN_START.match(text) or ": " in text or " #" in text or text[-1] == ":" or text.startswith("..."):
        return _UNSURE
    try:
        value = _tagged(text, _resolver.resolve(ScalarNode, text, (True, False)), None)
    except DocumentError:
        return _UNSURE
    return _UNSURE if value is _MERGE_KEY else value


def _syntax_error(err: yaml.YAMLError) -> DocumentError:
    """PyYAML's refusal of the text, with the line and column it names."""
    mark = getattr(err, "problem_mark", None)
    problem = getattr(err, "problem", None) or str(err).splitlines()[0]
    return DocumentError(f"invalid YAML: {_where(mark)}{problem}")


class LoadError(ValueError):
    """Unusable input; the message names file, document, object and field."""


class BudgetError(LoadError):
    """Input or a simulation over one of its budgets (simulator/budget.py); the message says how to raise it."""


def over_bytes(source: str, limit: int) -> BudgetError:
    return BudgetError(
        f"{source}: over the input budget of {limit:,} bytes (--max-input-bytes); raise it with --max-input-bytes N"
    )


def check_text_size(source: str, text: str, limit: int) -> None:
    """Text given as a string (the Python API's `text`, a UI edit) within the byte budget, as UTF-8."""
    if len(text) > limit or (len(text) * 4 > limit and len(text.encode("utf-8", "surrogatepass")) > limit):
        raise over_bytes(source, limit)


def read_bytes(stream: BinaryIO, source: str, limit: int) -> bytes:
    """At most `limit` bytes of a stream (standard input, a pipe, a file), or a BudgetError naming it."""
    data = stream.read(limit + 1)
    if len(data) > limit:
        raise over_bytes(source, limit)
    return data


def is_stream(path: str) -> bool:
    """A pipe or socket (`<(helm template ...)`, /dev/stdin from a pipe): readable once, like standard input."""
    try:
        mode = os.stat(path).st_mode
    except OSError:
        return False
    return stat.S_ISFIFO(mode) or stat.S_ISSOCK(mode)


def read_text(path: Path, limit: int = DEFAULT_MAX_INPUT_BYTES) -> str:
    """A file's text, which must be UTF-8 (a BOM is dropped) and at most `limit` bytes, or a LoadError naming it.

    A regular file's size is looked at first; a pipe is read to one byte past the limit."""
    try:
        with path.open("rb") as f:
            info = os.fstat(f.fileno())
            if stat.S_ISREG(info.st_mode) and info.st_size > limit:
                raise over_bytes(str(path), limit)
            data = read_bytes(f, str(path), limit)
    except OSError as err:
        raise LoadError(f"{path}: cannot read: {err.strerror or err}") from err
    return decode_text(str(path), data)


def read_object_file(path: str, kind: str = "KubeSchedulerConfiguration") -> dict[str, Any]:
    """The one object of a configuration file (YAML or JSON), read with the same limits as manifests."""
    try:
        docs = [d for d in parse_documents(read_text(Path(path))) if d is not None]
    except DocumentError as err:
        raise LoadError(f"{path}: {err}") from err
    if len(docs) != 1 or not isinstance(docs[0], dict):
        found = "no document" if not docs else f"{len(docs)} documents" if len(docs) > 1 else type(docs[0]).__name__
        raise LoadError(f"{path}: expected one {kind} object, found {found}")
    return docs[0]


def decode_text(source: str, data: bytes) -> str:
    try:
        return data.decode("utf-8-sig")
    except UnicodeDecodeError as err:
        raise LoadError(f"{source}: not UTF-8 text (byte {err.start}: {data[err.start]:#04x})") from err
