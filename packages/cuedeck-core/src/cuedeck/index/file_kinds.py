"""What kind of file a path names, by its folders and name alone: test files.

One rule for every plugin that treats tests apart (search demotes them, related code
and maps leave them out unless a card asks): a file is a **test** when a folder on its
path is a test folder (``tests/``, ``__tests__/``, ``testdata/``, ``spec/``, ``e2e/``,
Java's ``src/test/java``...) or its name is a test's (``test_x.py``, ``x_test.py``,
``conftest.py``, ``x_test.go``, ``x.test.ts``, ``x.spec.js``, ``XTest.java``,
``XTests.kt``, ``XTestCase.java``, ``x_spec.rb``, ``x_test.rb``).
"""

from __future__ import annotations

import re

#: Folders whose files are tests.
TEST_FOLDERS = frozenset(
    {"test", "tests", "testing", "testdata", "__tests__", "spec", "specs", "fixtures", "e2e"}
)
_TEST_NAME = re.compile(
    r"^(?:test_.*\.py|.*_test\.py|conftest\.py|.*_test\.go|.*\.(?:test|spec)\.[cm]?[jt]sx?"
    r"|.*Tests?\.(?:java|kt|scala|cs)|.*TestCase\.java|.*_spec\.rb|.*_test\.rb)$"
)


def is_test_path(path: str) -> bool:
    """Whether the workspace-relative ``path`` (``/``-separated) is a test file."""
    *folders, name = path.split("/")
    return bool(_TEST_NAME.match(name)) or not TEST_FOLDERS.isdisjoint(folders)
