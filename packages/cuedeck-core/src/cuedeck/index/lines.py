"""Plain lines: the document of a file no parser claims that a reference brings in
(:meth:`~cuedeck.index.parsed.Index.adopt`), so that it can be cited by line range."""

from __future__ import annotations

import hashlib
import posixpath
from typing import TYPE_CHECKING

from cuedeck.models import Document, document_kind, replaced_bytes
from cuedeck.text import decode, split_lines

if TYPE_CHECKING:
    from cuedeck.index.parsers import ParseContext


def parse_lines(path: str, data: bytes, context: ParseContext) -> Document:
    """``path``'s lines, without sections (language ``text``; cited by line range)."""
    text, replaced = decode(data)
    return Document(
        path=path,
        kind=document_kind(path),
        sha256=hashlib.sha256(data).hexdigest(),
        size=len(data),
        line_count=len(split_lines(text)),
        tokens=context.count_tokens(text),
        title=posixpath.splitext(posixpath.basename(path))[0],
        references=(),
        problems=(replaced_bytes(path),) if replaced else (),
        language="text",
    )
