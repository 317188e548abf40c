"""Serving tools: a call validated, run and masked (calls), tool references
and guides, confirmations of destructive calls, paging, HTTP guards and ports, and
core's own tools (``read_doc``, the file tools, ``build_scene``)."""
