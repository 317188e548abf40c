"""CueDeck tasks: registered with CueDeck through the ``cuedeck`` entry-point group."""
