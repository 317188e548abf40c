"""Core's own plugins: thin @hookimpl modules that import the domain inside each hook."""
