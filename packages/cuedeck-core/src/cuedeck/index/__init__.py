"""The index: which files are read (walk), which parser reads each (parsers),
their bytes parsed (reader), kept in SQLite (store) and in memory (rows), and the
:class:`~cuedeck.index.parsed.Index` over them."""
