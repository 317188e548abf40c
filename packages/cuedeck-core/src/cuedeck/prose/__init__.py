"""Prose formats other than markdown, read by line scanners: reStructuredText
(:mod:`~cuedeck.prose.rst`), AsciiDoc (:mod:`~cuedeck.prose.asciidoc`) and plain text
(:mod:`~cuedeck.prose.plaintext`), and what they share (:mod:`~cuedeck.prose.sections`)."""
