"""Code intelligence: definitions, references, callers, call chains and impact.

Two sources fill one graph (:mod:`.store`), behind the ``register_code_indexers`` hook:
the syntactic graph, read from each file's tree-sitter parse (:mod:`.extract` and the
walkers) and resolved through imports and scopes (:mod:`.resolve`), and precise SCIP
indexes made by the official indexers (:mod:`.scip_run`, :mod:`.scip_load`). The
``scip_*`` tools (:mod:`.tools`) answer from it.
"""
