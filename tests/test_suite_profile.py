"""What `uv run pytest` runs by default and what CI adds: the slow tests, never skipped."""

from __future__ import annotations

import tomllib

from tests.conftest import REPO


def test_the_default_run_leaves_slow_tests_to_ci() -> None:
    config = tomllib.loads((REPO / "pyproject.toml").read_text(encoding="utf-8"))
    addopts = config["tool"]["pytest"]["ini_options"]["addopts"]
    assert addopts[addopts.index("-m") + 1] == "not slow"
    ci = (REPO / ".ci" / "run").read_text(encoding="utf-8").splitlines()
    steps = [line.split("#")[0].strip() for line in ci]
    assert "uv run pytest" in steps and "uv run pytest -m slow" in steps
    readme = (REPO / "README.md").read_text(encoding="utf-8")
    assert "uv run pytest -m slow" in readme  # says what CI adds
