"""The workspace's edges: where its root is, and which paths a tool may reach."""
