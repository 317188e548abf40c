"""A small real workspace for the search tests: docs and cards with frontmatter."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.conftest import MakeWorkspace

FILES: dict[str, str] = {
    ".cuedeck/docs/auth.md": """---
title: Authentication
tags: [security, api]
---
# Authentication

Passwords are hashed with argon2id before they are stored.

## Login flow

A client posts its email and password to /v1/login and receives a bearer token.

## Token refresh

Call `refresh_access_token()` with the refresh token to get a new access token.
""",
    ".cuedeck/docs/deploy.md": """# Deployment

## Containers

The service ships as a Docker image built by the release pipeline.

## Rolling restarts

Kubernetes replaces the pods one at a time, so the service never goes down.
""",
    ".cuedeck/docs/billing.md": """---
tags: [payments]
---
# Billing

Invoices are generated on the first day of every month.

## Refunds

A refund returns money to the customer's card within five business days.
""",
    ".cuedeck/cards/a1b2c3.md": """---
title: Cache the exchange rates
status: todo
priority: High
assignee: Alice
tags: [payments]
---
# Cache the exchange rates

Currency conversion calls the rates provider on every request; cache the rates hourly.
""",
    ".cuedeck/cards/d4e5f6.md": """---
title: Speed up the test suite
status: todo
priority: low
assignee: bob
tags: [ci]
---
# Speed up the test suite

The integration tests take twenty minutes; run them in parallel.
""",
    "notes/cooking.md": """# Sourdough

Feed the starter with flour and water, then let the dough rise overnight before baking.
""",
}


@pytest.fixture
def small_workspace(make_workspace: MakeWorkspace) -> Path:
    """Six files on unrelated topics, two of them cards with priority and assignee;
    searches wait for embeddings (``[search] wait``), so results are complete."""
    return make_workspace(FILES, config="[search]\nwait = true\n")
