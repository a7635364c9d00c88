#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Checks the include graph of src/ against the allowed edges of docs/ARCHITECTURE.md.

The allowed edges are the block between `<!-- deps:begin -->` and `<!-- deps:end -->` of
docs/ARCHITECTURE.md, the one list of them (its syntax is described there). Every
`#include "..."` of every source file and generated-file template under src/ is mapped from
the part of the including file to the part of the included one; the check fails, listing each,
on:

- an include between two parts that the block does not allow;
- a file or folder of src/ that belongs to no part, or a part the prose of the document never
  names (`src/<part>`);
- a quoted include that names no file of src/ (nor a template `<file>.in` of one);
- a known exception that no longer matches an include, or that a rule already allows, and a
  header named in a rule that does not exist;
- a cycle between parts, in the includes found or in the edges the block allows.

Usage: check_includes.py [--root DIR] [--doc FILE] [--graph]
  --root   the repository (default: two folders above this script)
  --doc    the document (default: ROOT/docs/ARCHITECTURE.md)
  --graph  also print the include graph found, part -> parts (with counts)
Exit status: 0 when the code keeps to the document, 1 when it does not, 2 on a usage error.
"""
import argparse
import os
import re
import sys

BEGIN = "<!-- deps:begin -->"
END = "<!-- deps:end -->"
SOURCE_SUFFIXES = (".h", ".hpp", ".cc", ".cpp", ".c", ".cu", ".cuh", ".in")
INCLUDE = re.compile(r'^\s*#\s*include\s+"([^"]+)"')
PART_LINE = re.compile(r"^part\s+(\S+)\s+(\S+)\s*:\s*(.*)$")
EXCEPT_LINE = re.compile(r"^except\s+(\S+)\s*->\s*(\S+)\s*:\s*(.*)$")
ALLOW_ITEM = re.compile(r"^([A-Za-z0-9_/]+)(?:\{([^}]*)\})?$")


class Part:
    """One part of src/: a folder (or a file) and the parts and headers it may include."""

    def __init__(self, name, path, line):
        self.name = name
        self.path = path  # relative to the repository, e.g. "src/core/" or "src/main.cc"
        self.line = line
        self.whole = set()  # parts every header of which may be included
        self.headers = {}  # part -> headers (relative to src/) that alone may be included


class Rules:
    def __init__(self):
        self.parts = {}
        self.exceptions = {}  # (file relative to the repository, header) -> reason
        self.prose = ""  # the document outside the block


def parse_document(text):
    """The rules of the block, and the problems of the block itself."""
    rules, problems = Rules(), []
    lines = text.splitlines()
    try:
        begin = lines.index(BEGIN)
        end = lines.index(END, begin)
    except ValueError:
        return rules, [f"the document has no block between {BEGIN} and {END}"]
    rules.prose = "\n".join(lines[:begin] + lines[end + 1:])
    pending = []
    for number, raw in enumerate(lines[begin + 1:end], start=begin + 2):
        line = raw.strip()
        if not line or line.startswith("#") or line.startswith("```"):
            continue
        m = PART_LINE.match(line)
        if m:
            name, path, allowed = m.groups()
            if name in rules.parts:
                problems.append(f"line {number}: part {name} is declared twice")
            part = Part(name, path, number)
            rules.parts[name] = part
            for item in allowed.split():
                a = ALLOW_ITEM.match(item)
                if not a:
                    problems.append(f"line {number}: cannot read '{item}'")
                elif a.group(2) is None:
                    part.whole.add(a.group(1))
                else:
                    part.headers.setdefault(a.group(1), set()).update(
                        h.strip() for h in a.group(2).split(",") if h.strip())
                    pending.append((number, name, a.group(1)))
            for target in part.whole:
                pending.append((number, name, target))
            continue
        m = EXCEPT_LINE.match(line)
        if m:
            file, header, reason = m.groups()
            if not reason.strip():
                problems.append(f"line {number}: the exception {file} -> {header} gives no reason")
            rules.exceptions[(file, header)] = reason.strip()
            continue
        problems.append(f"line {number}: neither a part nor an exception: {raw.strip()}")
    for number, name, target in pending:
        if target not in rules.parts:
            problems.append(f"line {number}: part {name} names an unknown part {target}")
    return rules, problems


def part_of(rules, relpath):
    """The part a repository-relative path belongs to: the longest part path that holds it."""
    best = None
    for part in rules.parts.values():
        p = part.path
        if relpath == p or (p.endswith("/") and relpath.startswith(p)):
            if best is None or len(p) > len(best.path):
                best = part
    return best


def find_cycles(edges):
    """The strongly connected components with more than one part, each as a sorted list."""
    index, low, stack, on_stack, result = {}, {}, [], set(), []
    counter = [0]

    def visit(v):
        index[v] = low[v] = counter[0]
        counter[0] += 1
        stack.append(v)
        on_stack.add(v)
        for w in sorted(edges.get(v, ())):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            component = []
            while True:
                w = stack.pop()
                on_stack.discard(w)
                component.append(w)
                if w == v:
                    break
            if len(component) > 1:
                result.append(sorted(component))

    for v in sorted(edges):
        if v not in index:
            visit(v)
    return result


def source_files(root):
    """Every source file and generated-file template of src/, relative to the repository."""
    for folder, dirs, files in os.walk(os.path.join(root, "src")):
        dirs.sort()
        for name in sorted(files):
            if name.endswith(SOURCE_SUFFIXES):
                yield os.path.relpath(os.path.join(folder, name), root).replace(os.sep, "/")


def resolve(root, including, target):
    """The repository-relative file an include names (a header of src/, its template, or a
    file beside the including one), or None."""
    for base in ("src", os.path.dirname(including)):
        candidate = os.path.normpath(os.path.join(base, target)).replace(os.sep, "/")
        for path in (candidate, candidate + ".in"):
            if os.path.isfile(os.path.join(root, path)):
                return path
    return None


def check(root, doc_text):
    """Returns (problems, graph): the problems found, and the include graph between parts as
    {part: {part: count}}."""
    rules, problems = parse_document(doc_text)
    graph = {}
    if problems:
        return problems, graph

    # Every part is named by the prose; every folder and source file belongs to a part.
    for part in rules.parts.values():
        if part.path.rstrip("/") not in rules.prose:
            problems.append(f"part {part.name}: the document never describes {part.path}")
        if not os.path.exists(os.path.join(root, part.path)):
            problems.append(f"part {part.name}: {part.path} does not exist")
        for target, headers in part.headers.items():
            for header in sorted(headers):
                if not os.path.isfile(os.path.join(root, "src", header)):
                    problems.append(f"part {part.name}: the allowed header {header} does not exist")
                elif part_of(rules, "src/" + header) is not rules.parts[target]:
                    problems.append(f"part {part.name}: {header} is not a header of part {target}")
    src = os.path.join(root, "src")
    for name in sorted(os.listdir(src)) if os.path.isdir(src) else []:
        rel = "src/" + name
        if os.path.isdir(os.path.join(src, name)) and part_of(rules, rel + "/") is None:
            problems.append(f"{rel}/: a folder of src/ that the document does not describe")

    used_exceptions = set()
    for file in source_files(root):
        own = part_of(rules, file)
        if own is None:
            problems.append(f"{file}: belongs to no part the document describes")
            continue
        with open(os.path.join(root, file), encoding="utf-8", errors="replace") as f:
            lines = f.readlines()
        for number, line in enumerate(lines, start=1):
            m = INCLUDE.match(line)
            if not m:
                continue
            header = m.group(1)
            target_file = resolve(root, file, header)
            if target_file is None:
                problems.append(f"{file}:{number}: \"{header}\" names no file of src/")
                continue
            target = part_of(rules, target_file)
            if target is None:
                problems.append(f"{file}:{number}: \"{header}\" belongs to no part")
                continue
            if target is own:
                continue
            graph.setdefault(own.name, {}).setdefault(target.name, 0)
            graph[own.name][target.name] += 1
            header_key = target_file[len("src/"):].removesuffix(".in") \
                if target_file.startswith("src/") else target_file
            by_rule = target.name in own.whole or header_key in own.headers.get(target.name, ())
            if (file, header) in rules.exceptions:
                used_exceptions.add((file, header))
                if by_rule:
                    problems.append(f"known exception {file} -> {header}: a rule already allows it; "
                                    "remove the exception")
                continue
            if not by_rule:
                problems.append(f"{file}:{number}: part {own.name} may not include {header} "
                                f"(part {target.name})")
    for file, header in sorted(set(rules.exceptions) - used_exceptions):
        problems.append(f"known exception {file} -> {header}: no such include any more; "
                        "remove the exception")

    for cycle in find_cycles({p: set(t) for p, t in graph.items()}):
        problems.append("include cycle between parts: " + " <-> ".join(cycle))
    allowed = {p.name: p.whole | set(p.headers) for p in rules.parts.values()}
    for cycle in find_cycles(allowed):
        problems.append("the document allows a cycle between parts: " + " <-> ".join(cycle))
    return problems, graph


def main(argv):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    here = os.path.dirname(os.path.abspath(__file__))
    parser.add_argument("--root", default=os.path.normpath(os.path.join(here, "..", "..")))
    parser.add_argument("--doc")
    parser.add_argument("--graph", action="store_true")
    args = parser.parse_args(argv)
    doc = args.doc or os.path.join(args.root, "docs", "ARCHITECTURE.md")
    try:
        with open(doc, encoding="utf-8") as f:
            text = f.read()
    except OSError as e:
        print(f"check_includes: error: {doc}: {e.strerror}", file=sys.stderr)
        return 2
    problems, graph = check(args.root, text)
    if args.graph:
        for part in sorted(graph):
            targets = ", ".join(f"{t} ({n})" for t, n in sorted(graph[part].items()))
            print(f"{part} -> {targets}")
    for problem in problems:
        print(problem)
    if problems:
        print(f"check_includes: {len(problems)} problem(s) against {doc}", file=sys.stderr)
        return 1
    print(f"check_includes: the includes of src/ keep to {doc}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
