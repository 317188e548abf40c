"""What kind of file a path names, by its folders and name alone: test files, stubs.

One rule for every plugin that treats tests apart (search demotes them, related code
and maps leave them out unless a card asks): a file is a **test** when a folder on its
path is a test folder (``tests/``, ``__tests__/``, ``testdata/``, ``spec/``, ``e2e/``,
Java's ``src/test/java``...) or its name is a test's (``test_x.py``, ``x_test.py``,
``conftest.py``, ``x_test.go``, ``x.test.ts``, ``x.spec.js``, ``XTest.java``,
``XTests.kt``, ``XTestCase.java``, ``x_spec.rb``, ``x_test.rb``).

A **stub** declares what a module beside it defines (``x.pyi`` for ``x.py``, ``x.d.ts``
for ``x.ts`` or ``x.js``): where both define a name, the module's definition is the one
a search for it answers with.
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


#: A stub's suffix -> the suffixes of the module it describes, in the order looked for.
STUB_SUFFIXES = {
    ".pyi": (".py",),
    ".d.ts": (".ts", ".tsx", ".js", ".jsx", ".mjs", ".cjs"),
    ".d.mts": (".mts", ".mjs"),
    ".d.cts": (".cts", ".cjs"),
}


def stub_modules(path: str) -> tuple[str, ...]:
    """The paths of the modules the stub at ``path`` may describe (none when it is no
    stub), in the order looked for."""
    for stub, modules in STUB_SUFFIXES.items():
        if path.endswith(stub):
            stem = path[: -len(stub)]
            return tuple(stem + suffix for suffix in modules)
    return ()
