"""Markdown text into documents: headings and code blocks, frontmatter,
heading anchors, references, and the :class:`~cuedeck.models.Document` they make."""
