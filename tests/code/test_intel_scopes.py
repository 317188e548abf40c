"""Scopes in the syntactic graph of JavaScript and TypeScript, on real grammar output:
an anonymous function's parameters and locals hide the names around it inside it and
nowhere else."""

from __future__ import annotations

import pytest

from tests.code.test_intel import sites
from tests.conftest import MakeWorkspace

pytest.importorskip("cuedeck_code")

SERVER = {
    "src/request.ts": "export function request(url: string): string {\n  return url;\n}\n",
    "src/format.ts": "export function format(value: string): string {\n  return value;\n}\n",
    "src/app.ts": (
        "import { request } from './request';\n"  # 1
        "import { format } from './format';\n"  # 2
        "declare function serve(handler: (a: string, b: string) => void): void;\n"  # 3
        "serve((request, response) => pipeline(request, response));\n"  # 4
        "serve(function (request) { request.trim(); });\n"  # 5
        "request('x');\n"  # 6
        "export function main(names: string[]): string {\n"  # 7
        "  names.forEach((format) => format.trim());\n"  # 8
        "  names.forEach(function (format) { const request = format; request.trim(); });\n"
        "  request('y');\n"  # 10
        "  return format('z');\n"  # 11
        "}\n"
        "declare function pipeline(a: string, b: string): void;\n"
    ),
}


@pytest.mark.parametrize("suffix", [".ts", ".js"])
def test_an_anonymous_functions_parameters_are_its_own(
    make_workspace: MakeWorkspace, suffix: str
) -> None:
    files = {}
    for path, text in SERVER.items():
        if suffix == ".js":  # the same code without types or declarations
            text = "\n".join(
                "" if line.startswith("declare") else line for line in text.split("\n")
            )
            for typed in (": string[]", ": string", ": void"):
                text = text.replace(typed, "")
        files[path.replace(".ts", suffix)] = text
    root = make_workspace(files)
    app = f"src/app{suffix}"
    # A parameter named like an imported function is not that function inside...
    assert {line for path, line, _ in sites(root, "request") if path == app} == {1, 6, 10}
    # ...and hides nothing outside: main's own calls reach the imported functions.
    assert {line for path, line, _ in sites(root, "format") if path == app} == {2, 11}


def test_an_exported_default_declaration_is_no_reference(make_workspace: MakeWorkspace) -> None:
    root = make_workspace(
        {
            "src/options.ts": "export default class Options {\n  size = 1;\n}\n",
            "src/use.ts": (
                "import Settings from './options';\n"  # 1
                "export const made = new Settings();\n"  # 2
            ),
        }
    )
    # The importer still reaches the class through the default export; the
    # declaration's own name is no reference to it.
    assert sites(root, "Options") == {("src/use.ts", 1, "import"), ("src/use.ts", 2, "call")}
