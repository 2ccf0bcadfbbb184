#!/usr/bin/env python3
"""Report C++ functions whose bodies are longer than a limit.

Usage: python3 scripts/check-function-length.py --max 120 lib apps python/src
       python3 scripts/check-function-length.py --report [--top 20] lib

A function's length runs from the line of its name to the line of its closing brace. The scanner
first blanks comments, string and character literals (raw strings included) and preprocessor lines,
keeping every newline, then matches braces: a brace that opens after a parameter list (`)` then
qualifiers, a trailing return type or a constructor's initialiser list) at namespace or class level
is a function body; namespace, class, struct, union, enum and `extern "C"` bodies are scopes searched
for functions; any other brace at that level (an initialiser) is skipped. Everything inside a function
body, lambdas and local classes included, counts as part of that function.

Prints `FILE:LINE name: N lines` for each function over --max (exit 1 if there is one, else 0);
--report lists the longest functions whatever their length (and still exits 1 on a violation).
"""

import argparse
import os
import re
import sys

SOURCE_SUFFIXES = (".cpp", ".cc", ".cxx", ".hpp", ".hh", ".hxx", ".h", ".ipp", ".tpp", ".inl")
SCOPE_KEYWORD = re.compile(r"\b(namespace|class|struct|union|enum|extern)\b")
NAME_BEFORE_PAREN = re.compile(r"(operator\s*(?:\(\s*\)|\[\s*\]|[^\s\w(]+|\w[\w\s:<>*&]*?)|~?[A-Za-z_]\w*"
                               r"(?:\s*<[^<>;{}]*>)?(?:\s*::\s*~?[A-Za-z_]\w*(?:\s*<[^<>;{}]*>)?)*)\s*$")
OPERATOR_TOKEN = re.compile(r"\boperator\s*(\(\s*\)|\[\s*\]|[^\s\w(]+)")


def strip_code(text):
    """Blanks comments, literals and preprocessor lines; newlines stay so offsets map to lines."""
    out = list(text)
    n = len(text)
    i = 0
    line_start = True  # only white space since the last newline

    def blank(a, b):
        for k in range(a, b):
            if out[k] != "\n":
                out[k] = " "

    def blank_quoted(i):
        """Blanks the literal opened by the quote at i (up to its closing quote, escapes skipped); returns the
        offset after it."""
        j = i + 1
        while j < n and text[j] != text[i] and text[j] != "\n":
            j += 2 if text[j] == "\\" else 1
        blank(i + 1, min(j, n))
        return j + 1

    while i < n:
        c = text[i]
        if c == "\n":
            line_start = True
            i += 1
            continue
        if line_start and c == "#":
            j = i
            while True:  # a directive runs to a newline that no backslash continues
                j = text.find("\n", j)
                if j < 0:
                    j = n
                    break
                if not text[i:j].rstrip(" \t\r").endswith("\\"):
                    break
                j += 1
            blank(i, j)
            i = j
            continue
        if not c.isspace():
            line_start = False
        if text.startswith("//", i):
            j = text.find("\n", i)
            j = n if j < 0 else j
            blank(i, j)
            i = j
            continue
        if text.startswith("/*", i):
            j = text.find("*/", i + 2)
            j = n if j < 0 else j + 2
            blank(i, j)
            i = j
            continue
        if c == '"':
            # Raw string: R"delim( ... )delim", with an optional encoding prefix before the R.
            k = i - 1
            while k >= 0 and (text[k].isalnum() or text[k] == "_"):
                k -= 1
            prefix = text[k + 1:i]
            if prefix.endswith("R") and prefix in ("R", "u8R", "uR", "UR", "LR"):
                open_paren = text.find("(", i + 1)
                delim = text[i + 1:open_paren] if open_paren >= 0 else ""
                end = text.find(")" + delim + '"', open_paren + 1) if open_paren >= 0 else -1
                j = n if end < 0 else end + len(delim) + 2
                blank(i + 1, j - 1)
                i = j
                continue
            i = blank_quoted(i)
            continue
        if c == "'":
            # A digit separator (1'000'000) sits inside a number: the token before it starts with a digit.
            k = i - 1
            while k >= 0 and (text[k].isalnum() or text[k] in "_."):
                k -= 1
            token = text[k + 1:i]
            if token and token[0].isdigit():
                i += 1
                continue
            i = blank_quoted(i)
            continue
        i += 1
    return "".join(out)


def matching(code, i, opener, closer):
    """Index of the bracket closing the one at i (len(code) if unbalanced)."""
    depth = 0
    for j in range(i, len(code)):
        ch = code[j]
        if ch == opener:
            depth += 1
        elif ch == closer:
            depth -= 1
            if depth == 0:
                return j
    return len(code)


def top_level(head, predicate):
    """Positions in head at parenthesis/bracket depth 0 where predicate(head, k) holds."""
    depth = 0
    hits = []
    for k, ch in enumerate(head):
        if ch in "([":
            depth += 1
        elif ch in ")]":
            depth -= 1
        elif depth == 0 and predicate(head, k):
            hits.append(k)
    return hits


NOT_A_NAME = {"decltype", "noexcept", "alignas", "throw", "requires", "sizeof", "alignof", "__attribute__",
              "__declspec", "if", "for", "while", "switch", "return"}


def param_paren(head):
    """Offset in head of the `(` that opens the parameter list, or -1.

    Candidates are the parentheses at depth 0 outside template brackets that follow a name; a keyword such as
    decltype or noexcept is no name, and an all-capitals macro call (BOOST_AUTO_TEST_SUITE_END()) gives way to a
    later candidate. The first remaining candidate opens the parameter list (later ones belong to a constructor's
    initialiser list or to qualifiers)."""
    masked = OPERATOR_TOKEN.sub(lambda m: "operator" + "_" * (len(m.group(0)) - 8), head).replace("->", "  ")
    candidates = []
    paren = angle = 0
    for k, ch in enumerate(masked):
        if ch == "(":
            if paren == 0 and angle == 0:
                m = re.search(r"(~?[A-Za-z_][\w]*)\s*$", masked[:k])
                if m and m.group(1) not in NOT_A_NAME:
                    candidates.append((k, m.group(1)))
            paren += 1
        elif ch == ")":
            paren = max(0, paren - 1)
        elif paren == 0 and ch == "<":
            angle += 1
        elif paren == 0 and ch == ">":
            angle = max(0, angle - 1)
    while len(candidates) > 1 and re.fullmatch(r"[A-Z][A-Z0-9]*_[A-Z0-9_]*", candidates[0][1]):
        candidates.pop(0)
    return candidates[0][0] if candidates else -1


def function_name(head):
    """(name, offset of the name in head) of a function head, or None."""
    m = re.search(r"([A-Za-z_]\w*)\s*=\s*\[(?!\[)", head)
    if m:  # a lambda held by a variable
        return m.group(1), m.start(1)
    p = param_paren(head)
    if p < 0:
        return None
    m = NAME_BEFORE_PAREN.search(head[:p])
    if not m:
        return None
    name = re.sub(r"\s+", "", m.group(1)) if not m.group(1).startswith("operator") else m.group(1).strip()
    if re.fullmatch(r"[A-Z][A-Z0-9]*_[A-Z0-9_]*", name):  # a macro such as a test case: keep its arguments
        close = matching(head, p, "(", ")")
        name += re.sub(r"\s+", " ", head[p:close + 1])
    return name, m.start(1)


def is_function_head(head):
    """True if a brace after `head` (text since the last ; { or } at this level) opens a function body."""
    if ")" not in head:
        return False
    if SCOPE_KEYWORD.search(head[head.rindex(")"):]):
        return False  # a namespace or class after a macro call with no semicolon (BOOST_AUTO_TEST_SUITE_END())
    eq = top_level(OPERATOR_TOKEN.sub(lambda m: "operator" + " " * (len(m.group(0)) - 8), head),
                   lambda h, k: h[k] == "=" and h[k + 1:k + 2] != "=" and h[k - 1:k] not in ("=", "!", "<", ">"))
    if eq and "[" not in head[eq[0]:]:
        return False  # a variable initialised by a call or a braced list
    return True


def init_list_brace(head):
    """True if the brace after `head` is a member's braced initialiser in a constructor's initialiser list."""
    p = param_paren(head)
    if p < 0:
        return False
    close = matching(head, p, "(", ")")
    rest = head[close + 1:]
    if not re.search(r"(?<!:):(?!:)", rest):
        return False
    return bool(re.search(r"[\w>]\s*$", rest))


def scan(code):
    """Yields (name, name_offset, close_offset) for every function body in stripped code."""
    n = len(code)
    i = 0
    head_start = 0
    paren = 0
    while i < n:
        ch = code[i]
        if ch in "([":
            paren += 1
        elif ch in ")]":
            paren = max(0, paren - 1)
        elif ch == ";" and paren == 0:
            head_start = i + 1
        elif ch == "}":
            head_start = i + 1  # the end of a scope
        elif ch == "{":
            if paren > 0:  # a braced default argument inside a parameter list
                i = matching(code, i, "{", "}") + 1
                continue
            head = code[head_start:i]
            if init_list_brace(head):
                i = matching(code, i, "{", "}") + 1
                continue
            if is_function_head(head):
                named = function_name(head)
                close = matching(code, i, "{", "}")
                if named:
                    yield named[0], head_start + named[1], close
                i = close + 1
                head_start = i
                continue
            if SCOPE_KEYWORD.search(head) and not re.search(r"=\s*$", head):
                head_start = i + 1  # descend into the namespace or class
                i += 1
                continue
            i = matching(code, i, "{", "}") + 1  # an initialiser
            continue
        i += 1


def functions(path):
    with open(path, encoding="utf-8", errors="replace") as f:
        text = f.read()
    code = strip_code(text)
    line_of = []
    line = 1
    for ch in code:
        line_of.append(line)
        if ch == "\n":
            line += 1
    line_of.append(line)
    for name, at, close in scan(code):
        first = line_of[at]
        last = line_of[min(close, len(code))]
        yield first, name, last - first + 1


def source_files(paths):
    for path in paths:
        if os.path.isfile(path):
            yield path
            continue
        if not os.path.isdir(path):
            raise FileNotFoundError(path)
        for root, dirs, files in os.walk(path):
            dirs[:] = sorted(d for d in dirs if not d.startswith("."))
            for name in sorted(files):
                if name.endswith(SOURCE_SUFFIXES):
                    yield os.path.join(root, name)


def main(argv):
    parser = argparse.ArgumentParser(description="Report C++ functions longer than a limit.")
    parser.add_argument("paths", nargs="+", help="files or folders to scan")
    parser.add_argument("--max", type=int, default=120, help="longest allowed function in lines (default 120)")
    parser.add_argument("--report", action="store_true", help="list the longest functions whatever their length")
    parser.add_argument("--top", type=int, default=20, help="how many --report lists (default 20)")
    args = parser.parse_args(argv)
    if args.max < 1 or args.top < 1:
        parser.error("--max and --top take a positive number")
    found = []
    try:
        for path in source_files(args.paths):
            for line, name, length in functions(path):
                found.append((length, path, line, name))
    except (FileNotFoundError, OSError) as e:
        print(f"check-function-length: cannot read {e}", file=sys.stderr)
        return 2
    over = sorted((f for f in found if f[0] > args.max), key=lambda f: (f[1], f[2]))
    for length, path, line, name in over:
        print(f"{path}:{line} {name}: {length} lines")
    if args.report:
        print(f"longest of {len(found)} functions:")
        for length, path, line, name in sorted(found, key=lambda f: (-f[0], f[1], f[2]))[:args.top]:
            print(f"  {path}:{line} {name}: {length} lines")
    if over:
        print(f"{len(over)} function(s) over {args.max} lines", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
