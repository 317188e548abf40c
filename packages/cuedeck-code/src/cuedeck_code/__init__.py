"""Code in CueDeck: tree-sitter parsers and the code search and navigation tools."""
