"""CueDeck search: registered with CueDeck through the ``cuedeck`` entry-point group."""
