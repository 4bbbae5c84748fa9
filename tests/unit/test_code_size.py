"""Size limits on the application code: no file over 400 lines without a reason, no function over 60 lines.

What counts as application code: the Python in ``app.py``, ``engine/``, ``livescoring/``,
``explainers/``, ``widgetkit/``, ``content/`` and ``benchmarks/``, and the site's own JavaScript in
``static/js/`` (not ``tests/``, ``bench/``, ``tools/`` or ``node_modules``).

* A file may run past 400 lines only when its opening docstring (Python) or its opening comment
  (JavaScript, the comment lines before the first statement) holds a line that starts
  ``Long because:`` and says why splitting it would cost more than it saves.
* A function may not run past 60 lines, from its ``def`` (or ``function``) line to its last line,
  nested functions included. There is no marker for functions: split them.

Python is read with ``ast``. JavaScript has no parser here, so a small scanner blanks its comments,
strings, template literals and regular-expression literals, then finds each function body: the
``{`` after ``function name(...)``, after ``=>``, or after a method's ``name(...)`` (not ``if``,
``for``, ``while``, ``switch`` or ``catch``), and matches its braces. The scan is checked on every
file: a file whose braces do not balance after blanking fails, so a misread file is reported rather
than passed. Each file is its own test case, so a failure names the file and its breaches.
"""
from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
PYTHON_ROOTS = ("app.py", "engine", "livescoring", "explainers", "widgetkit", "content", "benchmarks")
JS_ROOT = "static/js"
MAX_FILE_LINES = 400
MAX_FUNCTION_LINES = 60
MARKER = "Long because:"


def python_files() -> list[Path]:
    found = []
    for name in PYTHON_ROOTS:
        path = ROOT / name
        found += [path] if path.is_file() else sorted(p for p in path.rglob("*.py") if "__pycache__" not in p.parts)
    return found


def js_files() -> list[Path]:
    return sorted((ROOT / JS_ROOT).rglob("*.js"))


def has_marker(opening: str) -> bool:
    return any(line.strip().lstrip("/* ").startswith(MARKER) for line in opening.splitlines())


def python_breaches(source: str) -> list[str]:
    """The size rules ``source`` (one Python file) breaks, one line each."""
    found = []
    tree = ast.parse(source)
    lines = len(source.splitlines())
    if lines > MAX_FILE_LINES and not has_marker(ast.get_docstring(tree) or ""):
        found.append(f"{lines} lines and no '{MARKER}' line in its docstring")
    for node in ast.walk(tree):
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
            length = node.end_lineno - node.lineno + 1
            if length > MAX_FUNCTION_LINES:
                found.append(f"function {node.name} (line {node.lineno}) is {length} lines")
    return found


# A '/' starts a regular expression where a value cannot end just before it.
REGEX_AFTER = set("(,=:[!&|?{};+-*%<>~^") | {""}
REGEX_AFTER_WORDS = {"return", "typeof", "case", "do", "else", "in", "of", "new", "delete", "void", "throw", "yield", "await"}


def _quoted_end(source: str, i: int) -> int:
    """The index just past the string or template literal that opens at ``i``."""
    quote, j, depth = source[i], i + 1, 0  # depth: inside a template literal's ${...}
    while j < len(source):
        if source[j] == "\\":
            j += 2
            continue
        if quote == "`" and source.startswith("${", j):
            depth += 1
        elif quote == "`" and depth and source[j] == "}":
            depth -= 1
        elif (source[j] == quote and not depth) or (source[j] == "\n" and quote != "`"):
            break
        j += 1
    return j + 1


def _regex_end(source: str, i: int) -> int:
    """The index just past the regular-expression literal that opens at ``i`` (a ``/`` in a class is not its end)."""
    j, in_class = i + 1, False
    while j < len(source) and source[j] != "\n":
        if source[j] == "\\":
            j += 2
            continue
        if source[j] in "[]":
            in_class = source[j] == "["
        elif source[j] == "/" and not in_class:
            break
        j += 1
    return j + 1


def _token_before(code: str, at: int) -> str:
    """The token that ends just before ``at`` (a word, or one character; "" at the start)."""
    words = re.search(r"([\w$]+|\S)\s*$", code[:at])
    return words.group(1) if words else ""


def _found_or_end(source: str, text: str, start: int) -> int:
    found = source.find(text, start)
    return len(source) if found < 0 else found


def blank_js(source: str) -> str:
    """``source`` with comments, strings, template literals and regex literals replaced by spaces
    (newlines kept, so line numbers hold). A template literal's ``${...}`` is blanked too: its code
    is an expression, never a function body worth measuring."""
    out, i = [], 0
    while i < len(source):
        if source.startswith("//", i):
            end = _found_or_end(source, "\n", i)
        elif source.startswith("/*", i):
            end = _found_or_end(source, "*/", i + 2) + 2
        elif source[i] in "'\"`":
            end = _quoted_end(source, i)
        elif source[i] == "/" and (_token_before("".join(out), i) in REGEX_AFTER | REGEX_AFTER_WORDS):
            end = _regex_end(source, i)
        else:
            out.append(source[i])
            i += 1
            continue
        out.append(re.sub(r"[^\n]", " ", source[i:end]))
        i = end
    return "".join(out)[:len(source)]


NOT_METHODS = {"if", "for", "while", "switch", "catch", "with", "function"}
FUNCTION_HEAD = re.compile(r"\bfunction\b\s*\*?\s*([\w$]*)\s*\(|([\w$]+)\s*\(|=>\s*\{")


def matching(text: str, start: int, opening: str, closing: str) -> int:
    """The index of the bracket that closes the one at ``start``, or -1."""
    depth = 0
    for k in range(start, len(text)):
        if text[k] == opening:
            depth += 1
        elif text[k] == closing:
            depth -= 1
            if depth == 0:
                return k
    return -1


def js_functions(code: str) -> list[tuple[str, int, int]]:
    """(name, first line, last line) of each function body in blanked JavaScript ``code``."""
    found = []
    for head in FUNCTION_HEAD.finditer(code):
        if head.group(0).startswith("=>"):
            name, body = "(arrow)", head.end() - 1
        else:
            name = head.group(1) if head.group(1) is not None else head.group(2)
            if head.group(1) is None and name in NOT_METHODS:
                continue
            close = matching(code, head.end() - 1, "(", ")")
            after = re.compile(r"\s*\{").match(code, close + 1) if close >= 0 else None
            if not after:
                continue  # a call, not a definition
            body = after.end() - 1
            name = name or "(anonymous)"
        end = matching(code, body, "{", "}")
        if end >= 0:
            found.append((name, code.count("\n", 0, head.start()) + 1, code.count("\n", 0, end) + 1))
    return found


def js_opening_comment(source: str) -> str:
    """The comment lines at the top of ``source``, before its first statement."""
    lines = []
    for line in source.splitlines():
        if line.strip().startswith(("//", "/*", "*")) or not line.strip():
            lines.append(line)
        else:
            break
    return "\n".join(lines)


def js_breaches(source: str) -> list[str]:
    """The size rules ``source`` (one JavaScript file) breaks, one line each."""
    found = []
    lines = len(source.splitlines())
    if lines > MAX_FILE_LINES and not has_marker(js_opening_comment(source)):
        found.append(f"{lines} lines and no '{MARKER}' line in its opening comment")
    code = blank_js(source)
    if code.count("{") != code.count("}") or code.count("(") != code.count(")"):
        found.append("the scanner could not balance its brackets: read it by hand and fix the scanner")
    for name, first, last in js_functions(code):
        if last - first + 1 > MAX_FUNCTION_LINES:
            found.append(f"function {name} (line {first}) is {last - first + 1} lines")
    return found


def relative(path: Path) -> str:
    return path.relative_to(ROOT).as_posix()


@pytest.mark.parametrize("path", python_files(), ids=relative)
def test_python_file_keeps_the_size_limits(path):
    breaches = python_breaches(path.read_text(encoding="utf-8"))
    assert breaches == []


@pytest.mark.parametrize("path", js_files(), ids=relative)
def test_javascript_file_keeps_the_size_limits(path):
    breaches = js_breaches(path.read_text(encoding="utf-8"))
    assert breaches == []


def test_the_checker_catches_a_long_function_and_a_long_file():
    """The rules are not vacuous: a 61-line function and a 401-line file without the marker are each
    reported, in Python and in JavaScript, and the marker excuses the file but not the function."""
    body = "".join(f"    x{i} = {i}\n" for i in range(60))
    long_function = f"def planted():\n{body}"
    assert python_breaches(long_function) == ["function planted (line 1) is 61 lines"]
    assert python_breaches(long_function.replace("x59 = 59\n", "")) == []
    long_file = '"""A module."""\n' + "x = 1\n" * 400
    assert python_breaches(long_file) == [f"401 lines and no '{MARKER}' line in its docstring"]
    assert python_breaches(f'"""A module.\n\n{MARKER} one table of forty rules.\n"""\n' + "x = 1\n" * 400) == []
    assert python_breaches(f'"""A module.\n\n{MARKER} a reason.\n"""\n' + long_function + "x = 1\n" * 400) == [
        "function planted (line 5) is 61 lines"]

    js_body = "".join(f"  const s{i} = '{{ not a brace }}'; // }}\n" for i in range(59))
    js_function = f"export function planted(a = f(1)) {{\n{js_body}}}\n"
    assert js_breaches(js_function) == ["function planted (line 1) is 61 lines"]
    assert js_breaches(js_function.replace("  const s58 = '{ not a brace }'; // }\n", "")) == []
    method = "class A {\n  planted(x) {\n" + js_body.replace("const", "let") + "  }\n}\n"
    assert js_breaches(method) == ["function planted (line 2) is 61 lines"]
    arrow = "const planted = (x) => {\n" + js_body + "};\n"
    assert js_breaches(arrow) == ["function (arrow) (line 1) is 61 lines"]
    assert js_breaches("// A script.\n" + "let x = 1;\n" * 400) == [
        f"401 lines and no '{MARKER}' line in its opening comment"]
    assert js_breaches(f"// A script.\n// {MARKER} a reason.\n" + "let x = /[}]/;\n" * 400) == []
