"""A small reader of SCIP indexes: the protobuf wire format, decoded by hand.

Only what the graph uses is read, by the field numbers of ``scip.proto`` (the SCIP
specification): an ``Index`` (1 metadata, 2 documents), its ``Metadata`` (2 tool info:
1 name, 2 version; 3 project root), each ``Document`` (1 relative path, 2 occurrences,
4 language) and each ``Occurrence`` (1 range: 3 or 4 int32s, packed or not; 2 symbol;
3 symbol roles). Any other field is skipped by its wire type, so an index written by a
newer indexer still reads. A truncated or malformed index raises :class:`ScipError`.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import attrs

if TYPE_CHECKING:
    from collections.abc import Iterator

#: SymbolRole bits (scip.proto).
DEFINITION = 0x1
IMPORT = 0x2


class ScipError(ValueError):
    """The bytes are not a SCIP index this reader understands."""


@attrs.frozen
class Occurrence:
    """A symbol at a range of a document (0-based lines and columns)."""

    line: int
    column: int
    end_line: int
    end_column: int
    symbol: str
    roles: int


@attrs.frozen
class Document:
    """One file of the index."""

    path: str
    language: str
    occurrences: list[Occurrence]


@attrs.frozen
class ScipIndex:
    """What was read of an index."""

    tool: str
    version: str
    project_root: str
    documents: list[Document]


def _varint(data: bytes, position: int) -> tuple[int, int]:
    result = shift = 0
    while True:
        if position >= len(data):
            raise ScipError("truncated varint")
        byte = data[position]
        position += 1
        result |= (byte & 0x7F) << shift
        if not byte & 0x80:
            return result, position
        shift += 7
        if shift > 70:
            raise ScipError("varint too long")


def fields(
    data: bytes, start: int = 0, end: int | None = None
) -> Iterator[tuple[int, int, int, int]]:
    """``(field, wire type, value, end)`` of each field of the message in
    ``data[start:end]``: a varint's value, or a length-delimited field's start (its end
    in ``end``)."""
    stop = len(data) if end is None else end
    position = start
    while position < stop:
        key, position = _varint(data, position)
        field, wire = key >> 3, key & 7
        if wire == 0:
            value, position = _varint(data, position)
            yield field, wire, value, position
        elif wire == 2:
            length, position = _varint(data, position)
            if position + length > stop:
                raise ScipError("a field runs past its message")
            yield field, wire, position, position + length
            position += length
        elif wire == 1:
            position += 8
        elif wire == 5:
            position += 4
        else:
            raise ScipError(f"unsupported wire type {wire}")
    if position != stop:
        raise ScipError("a field runs past its message")


def _text(data: bytes, start: int, end: int) -> str:
    return data[start:end].decode("utf-8", errors="replace")


def _signed(value: int) -> int:
    """An int32 written as a varint (negatives take ten bytes)."""
    value &= 0xFFFFFFFFFFFFFFFF
    return value - (1 << 64) if value >> 63 else value


def read_index(data: bytes) -> ScipIndex:
    """The index in ``data`` (the bytes of a ``.scip`` file)."""
    tool = version = root = ""
    documents = []
    for field, wire, value, end in fields(data):
        if field == 1 and wire == 2:
            for sub, sub_wire, sub_value, sub_end in fields(data, value, end):
                if sub == 2 and sub_wire == 2:
                    for info, info_wire, start, stop in fields(data, sub_value, sub_end):
                        if info == 1 and info_wire == 2:
                            tool = _text(data, start, stop)
                        elif info == 2 and info_wire == 2:
                            version = _text(data, start, stop)
                elif sub == 3 and sub_wire == 2:
                    root = _text(data, sub_value, sub_end)
        elif field == 2 and wire == 2:
            documents.append(_document(data, value, end))
    return ScipIndex(tool, version, root, documents)


def _document(data: bytes, start: int, end: int) -> Document:
    path = language = ""
    occurrences = []
    for field, wire, value, stop in fields(data, start, end):
        if field == 1 and wire == 2:
            path = _text(data, value, stop)
        elif field == 4 and wire == 2:
            language = _text(data, value, stop)
        elif field == 2 and wire == 2:
            found = _occurrence(data, value, stop)
            if found is not None:
                occurrences.append(found)
    return Document(path, language, occurrences)


def _occurrence(data: bytes, start: int, end: int) -> Occurrence | None:
    numbers: list[int] = []
    symbol = ""
    roles = 0
    for field, wire, value, stop in fields(data, start, end):
        if field == 1 and wire == 2:  # packed
            position = value
            while position < stop:
                number, position = _varint(data, position)
                numbers.append(_signed(number))
        elif field == 1 and wire == 0:
            numbers.append(_signed(value))
        elif field == 2 and wire == 2:
            symbol = _text(data, value, stop)
        elif field == 3 and wire == 0:
            roles = _signed(value)
    if len(numbers) == 3:
        line, column, end_column = numbers
        return Occurrence(line, column, line, end_column, symbol, roles)
    if len(numbers) == 4:
        line, column, end_line, end_column = numbers
        return Occurrence(line, column, end_line, end_column, symbol, roles)
    return None


def descriptor_name(symbol: str) -> str:
    """The name of a SCIP symbol's last descriptor (``invoke`` of
    ``scip-python python click 1 click.core/Command#invoke().``); ``""`` for a local."""
    if not symbol or symbol.startswith("local "):
        return ""
    parts = symbol.split(" ", 4)
    descriptors = parts[4] if len(parts) == 5 else symbol
    text = descriptors.rstrip(".#:!/")
    for opening, closing in (("(", ")"), ("[", "]")):
        if text.endswith(closing):
            cut = text.rfind(opening)
            if cut > 0 and text[cut - 1] in "./#":  # a parameter (x) or type parameter [T]
                return text[cut + 1 : -1].strip("`")
            text = text[:cut]
    if text.endswith("`"):
        return _accessor(text[text.rfind("`", 0, len(text) - 1) + 1 : -1])
    cut = max(text.rfind(mark) for mark in "/#.:!")
    return text[cut + 1 :]


def _accessor(name: str) -> str:
    """scip-typescript's names of accessors and constructors as the code writes them:
    ``<get>url`` and ``<set>url`` are ``url``, ``<constructor>`` is ``constructor``."""
    if name == "<constructor>":
        return "constructor"
    for mark in ("<get>", "<set>"):
        if name.startswith(mark):
            return name[len(mark) :]
    return name
