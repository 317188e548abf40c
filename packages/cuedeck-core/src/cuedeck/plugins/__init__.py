"""The plugin host: entry points, loading and guarding plugins, and the
typed registries of what their ``register_*`` hooks gave."""
