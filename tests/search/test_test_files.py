"""One rule says which files are tests: search's demotion and code's related code agree.

The paths are real ones, from the repositories of benchmarks/code_cases.py (click,
typer, alembic, axios, express, got, zod, cobra, gin, ripgrep, axum, gson,
commons-lang) and a React project's ``__tests__`` folder.
"""

from __future__ import annotations

import pytest

from cuedeck.index.file_kinds import is_test_path
from tests.conftest import needs

#: (path, whether it is a test file).
PATHS = [
    # Python
    ("tests/test_context.py", True),
    ("tests/typing/typing_progressbar.py", True),
    ("tests/__init__.py", True),
    ("tests/conftest.py", True),
    ("src/click/core.py", False),
    ("src/click/testing.py", False),  # a module named testing is the library's own code
    ("typer/main.py", False),
    ("alembic/autogenerate/render.py", False),
    # JavaScript and TypeScript
    ("test/specs/core/settle.spec.js", True),
    ("test/specs/cancel/CancelToken.spec.js", True),
    ("test/module/ts-require-default/index.ts", True),
    ("test/Router.js", True),
    ("test/acceptance/auth.js", True),
    ("packages/docs/content/api.test.ts", True),
    ("src/components/__tests__/Button.tsx", True),
    ("src/components/Button.test.jsx", True),
    ("lib/core/Axios.spec.mts", True),
    ("lib/response.js", False),
    ("source/as-promise/index.ts", False),
    ("packages/zod/src/v4/classic/schemas.ts", False),
    # Go
    ("cobra_test.go", True),
    ("doc/md_docs_test.go", True),
    ("testdata/certificate/cert.pem", True),
    ("command.go", False),
    ("context.go", False),
    # Rust
    ("tests/util.rs", True),
    ("axum-macros/tests/debug_handler/fail/generics.rs", True),
    ("crates/searcher/src/testutil.rs", False),
    ("axum-macros/src/axum_test.rs", False),  # a module of the crate, not a test target
    ("crates/core/flags/defs.rs", False),
    # Java (Maven's src/test/java; JUnit's names)
    ("gson/src/test/java/com/google/gson/functional/VersioningTest.java", True),
    ("src/test/java/org/apache/commons/lang3/AbstractLangTest.java", True),
    ("src/main/java/org/apache/commons/lang3/StringUtilsTests.java", True),
    ("src/main/java/org/apache/commons/lang3/SomethingTestCase.java", True),
    ("gson/src/main/java/com/google/gson/Gson.java", False),
    ("src/main/java/org/apache/commons/lang3/StringUtils.java", False),
]


@pytest.mark.parametrize(("path", "test"), PATHS)
def test_core_knows_a_test_file_by_its_path(path: str, test: bool) -> None:
    assert is_test_path(path) is test


@needs("cuedeck_search", "cuedeck_code")
def test_search_and_code_use_the_same_rule() -> None:
    from cuedeck_code.file_kinds import is_test
    from cuedeck_search.code_files import TEST_FACTOR, path_factor

    demoted = {path for path, _ in PATHS if path_factor(path) == TEST_FACTOR}
    left_out = {path for path, _ in PATHS if is_test(path, "top_level")}
    assert demoted == left_out == {path for path, test in PATHS if test}
