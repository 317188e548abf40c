"""The plugin host: entry points, loading and guarding plugins, the typed
registries of what their ``register_*`` hooks gave, and the tool type (tools): what
``register_tools`` makes of a function."""
