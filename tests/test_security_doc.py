"""docs/security.md names, for every promise, the test that holds it: each one it names
exists (a renamed or removed test would leave a promise without one)."""

from __future__ import annotations

import re

from tests.conftest import REPO

NAMED = re.compile(r"`(tests/[\w/]+\.py)(?:::(\w+))?`")


def test_every_test_the_security_page_names_exists() -> None:
    page = (REPO / "docs" / "security.md").read_text(encoding="utf-8")
    named = NAMED.findall(page)
    assert len(named) >= 30
    missing = []
    for path, function in named:
        file = REPO / path
        if not file.is_file():
            missing.append(path)
        elif function and not re.search(
            rf"^(?:async )?def {function}\(", file.read_text(encoding="utf-8"), re.MULTILINE
        ):
            missing.append(f"{path}::{function}")
    assert missing == []
