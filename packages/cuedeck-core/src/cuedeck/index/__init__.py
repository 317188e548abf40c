"""The index: which files are read (walk), which parser reads each (parsers),
their bytes parsed (reader), kept in SQLite (store) and in memory (rows), the
:class:`~cuedeck.index.parsed.Index` over them, and the reference graph built from
their documents (graph)."""
