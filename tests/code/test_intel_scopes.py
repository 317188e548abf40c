"""Scopes and names in the syntactic graph of JavaScript, TypeScript and Python, on real
grammar output: an anonymous function's (or a lambda's) parameters and locals hide the
names around it inside it and nowhere else; ``export default class A`` is no reference
to A; ``const {a} = x`` is ``x.a``; ``new A()`` reaches A's constructor, as
scip-typescript's index (whose accessors and constructors are now matched to the graph's
definitions) says."""

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


def test_a_python_lambdas_parameters_are_its_own(make_workspace: MakeWorkspace) -> None:
    root = make_workspace(
        {
            "shop/fetch.py": "def request(url):\n    return url\n",
            "app.py": (
                "from shop.fetch import request\n"  # 1
                "\n"
                "\n"
                "def main(urls):\n"  # 4
                "    urls.sort(key=lambda request: request.lower())\n"  # 5
                "    return request(urls[0])\n"  # 6
                "\n"
                "\n"
                "handlers = [lambda request: request.upper()]\n"  # 9
                "request('x')\n"  # 10
            ),
        }
    )
    # The lambdas' parameter is not the imported function inside them, and hides it
    # nowhere else: main's own call and the module's reach it.
    assert {line for path, line, _ in sites(root, "request") if path == "app.py"} == {1, 6, 10}


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


REQUEST = {
    "src/options.ts": (
        "export class Options {\n"  # 1
        "  constructor(url: string) {}\n"  # 2
        "  clearBody(): void {}\n"  # 3
        "  get url(): string { return ''; }\n"  # 4
        "}\n"
        "export class Plain {}\n"  # 6
    ),
    "src/request.ts": (
        "import { Options, Plain } from './options';\n"  # 1
        "export class Request {\n"  # 2
        "  options: Options = new Options('x');\n"  # 3
        "  send(): void {\n"  # 4
        "    const {options, options: renamed} = this;\n"  # 5
        "    options.clearBody();\n"  # 6
        "    renamed.clearBody();\n"  # 7
        "    const made = new Plain();\n"  # 8
        "  }\n"
        "}\n"
    ),
}


def test_unpacked_names_and_constructors(make_workspace: MakeWorkspace) -> None:
    root = make_workspace(REQUEST)
    # const {options, options: renamed} = this: both are this.options, an Options.
    assert {line for _, line, _ in sites(root, "Options.clearBody")} == {6, 7}
    # new Options(...) runs its constructor; a class without one is called itself.
    assert ("src/request.ts", 3, "call") in sites(root, "Options.constructor")
    assert ("src/request.ts", 8, "call") in sites(root, "Plain")


def test_accessors_and_constructors_of_a_scip_typescript_index() -> None:
    from cuedeck_code.intel.scip_wire import descriptor_name

    # Symbols as scip-typescript 0.4.0 writes them (got's index).
    head = "scip-typescript npm got 15.0.5 source/core/`options.ts`/"
    assert descriptor_name(head + "Options#`<get>url`().") == "url"
    assert descriptor_name(head + "Options#`<set>url`().") == "url"
    assert descriptor_name(head + "Options#`<constructor>`().") == "constructor"
    assert descriptor_name(head + "Options#merge().") == "merge"


def test_a_namespaces_names_are_its_members(make_workspace: MakeWorkspace) -> None:
    root = make_workspace(
        {
            "src/util.ts": (
                "export namespace util {\n"  # 1
                "  export function joinValues(values: string[]): string {\n"  # 2
                "    return values.join(',');\n"
                "  }\n"
                "  export const listed = (values: string[]) => joinValues(values);\n"  # 5
                "}\n"
            ),
            "src/use.ts": (
                "import { util } from './util';\n"  # 1
                "export const text = util.joinValues(['a']);\n"  # 2
            ),
        }
    )
    # Bare inside the namespace, a member of it outside, through the import.
    assert sites(root, "util.joinValues") == {
        ("src/util.ts", 5, "call"),
        ("src/use.ts", 2, "call"),
    }
