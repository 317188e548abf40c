"""The machine under CueDeck: SQLite files, the user cache, forked workers."""
