"""Tools and how they are served: the tool type, serving a call (validate,
call, mask), tool references and guides, confirmations, paging, HTTP guards and
ports, and core's own tools (``read_doc``, the file tools)."""
