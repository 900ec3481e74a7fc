#!/usr/bin/env bash
# folder-deps.sh — which folder of Sources/Soundmark uses which other folder's names, and whether
# those uses go in a circle. Prints one line per folder ("A -> B, C") and exits 1 on a cycle,
# listing each cycle with the names that make its edges. `make test` runs it before `swift test`.
#
# Usage: scripts/folder-deps.sh [--why] [SOURCE_DIR]   (default Sources/Soundmark)
#   --why   also print, for every edge, the names used and one file that uses each.
#
# How it reads the code (a lexical scan, not the compiler; python3, no packages):
# - A folder is the first path component under SOURCE_DIR; files directly in it form "(root)".
#   Formats/Shazam/… counts as Formats.
# - Comments (//, /* */, doc comments) and string literals are blanked before reading; code in a
#   string interpolation \( … ) is kept. So a name in a doc comment (``Matcher/x``) is no edge.
# - Declared names: every top-level class/struct/enum/protocol/actor/typealias/func/let/var
#   (brace depth 0) belongs to its file's folder. Members declared at depth 1 of an
#   `extension T` belong to the extension's folder as the qualified name T.member.
# - Uses: an identifier that is a top-level name declared in another folder, not after a dot
#   (or after `Soundmark.`) and not right after let/var/func/case (a local declaration); a
#   top-level function counts only when called, `name(`; `T.member` where an extension in
#   another folder declares that member of T; `extension T` names T's folder; in the folder
#   that declares T, a call `member(` or `self.member(` of a member that an extension of T in
#   another folder declares (when this folder declares no name `member` itself).
# Precision: it over-reports where a local name, or a type nested in a library type (PeakEdge.Peak),
# has the name of another folder's top-level type or constant (Matching -> Fingerprint lists
# `Peak` for that reason, besides its real uses). It misses what it cannot see lexically: an
# extension member reached on a value without its type name (`x.member` where x is a library
# value outside the type's own folder, or an implicit `.member` of an inferred type, such as
# `.sorted` for a JSONEncoder), protocol witnesses, and operators. So an extension that adds
# members to another folder's type shows up where they are called as T.member or, in T's own
# folder, on self. Every edge it prints is a name it found: check one with --why.
set -euo pipefail
cd "$(dirname "$0")/.."
exec python3 - "$@" <<'PY'
import os, re, sys
from collections import defaultdict

args = sys.argv[1:]
why = "--why" in args
args = [a for a in args if a != "--why"]
root = args[0] if args else "Sources/Soundmark"

def blank(src):
    """Comments and string literals become spaces (newlines kept); code in \\( ) stays."""
    out, i, n = [], 0, len(src)
    # stack of contexts: 'code' (with paren depth) inside interpolations, or string kinds
    stack = [["code", 0]]
    while i < n:
        top = stack[-1]
        c = src[i]
        if top[0] == "code":
            if src.startswith("//", i):
                j = src.find("\n", i)
                j = n if j < 0 else j
                out.append(" " * (j - i)); i = j; continue
            if src.startswith("/*", i):
                depth, j = 1, i + 2
                while j < n and depth:
                    if src.startswith("/*", j): depth += 1; j += 2
                    elif src.startswith("*/", j): depth -= 1; j += 2
                    else: j += 1
                out.append(re.sub(r"[^\n]", " ", src[i:j])); i = j; continue
            m = re.match(r'(#*)("""|")', src[i:i + 8])
            if m and (m.group(1) == "" or src[i + len(m.group(1))] == '"'):
                hashes, quote = m.group(1), m.group(2)
                stack.append(["str", quote, hashes])
                out.append(" " * len(m.group(0))); i += len(m.group(0)); continue
            if c == "(":
                top[1] += 1
            elif c == ")":
                if top[1] == 0 and len(stack) > 1:   # end of an interpolation
                    stack.pop(); out.append(" "); i += 1; continue
                top[1] -= 1
            out.append(c); i += 1; continue
        # inside a string
        _, quote, hashes = top
        if c == "\\" and src.startswith(hashes, i + 1):
            k = i + 1 + len(hashes)
            if k < n and src[k] == "(":
                stack.append(["code", 0]); out.append(" " * (k + 1 - i)); i = k + 1; continue
            out.append(" " * min(k + 1 - i, n - i)); i = k + 1; continue
        if src.startswith(quote + hashes, i):
            stack.pop(); L = len(quote + hashes); out.append(" " * L); i += L; continue
        out.append("\n" if c == "\n" else " "); i += 1
    return "".join(out)

DECL = re.compile(r"\b(class|struct|enum|protocol|actor|typealias|func|let|var|extension|case)\s+([A-Za-z_][A-Za-z0-9_]*)")
IDENT = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")

files = []
for dp, _, fs in os.walk(root):
    for f in sorted(fs):
        if f.endswith(".swift"):
            p = os.path.join(dp, f)
            rel = os.path.relpath(p, root)
            folder = rel.split(os.sep)[0] if os.sep in rel else "(root)"
            files.append((folder, p, blank(open(p, encoding="utf-8").read())))

top = {}                      # name -> folder declaring it at top level
funcs = set()                 # the top-level names that are functions
members = defaultdict(set)    # (Type, member) -> folders whose extension declares it
extensions = []               # (folder, path, Type)
for folder, path, code in files:
    depth, ext = 0, None
    pos = 0
    for m in re.finditer(r"[{}]|" + DECL.pattern, code):
        tok = m.group(0)
        if tok == "{": depth += 1; continue
        if tok == "}":
            depth -= 1
            if depth == 0: ext = None
            continue
        kind, name = m.group(1), m.group(2)
        if depth == 0:
            if kind == "extension":
                ext = name; extensions.append((folder, path, name))
            elif kind != "case":
                top.setdefault(name, folder)
                if kind == "func": funcs.add(name)
        elif depth == 1 and ext and kind not in ("extension", "case"):
            members[(ext, name)].add(folder)

DECLARERS = {"let", "var", "func", "case", "class", "struct", "enum", "protocol", "actor", "typealias"}

# Names each folder declares anywhere (any depth), and the methods that an extension in another
# folder adds to a type of this folder: called without a receiver inside the type's own folder
# (`removeMarker(id:)` in Catalog.swift), they are a use of that other folder.
declared_in = defaultdict(set)
for folder, path, code in files:
    for m in DECL.finditer(code): declared_in[folder].add(m.group(2))
self_calls = defaultdict(set)
for (t, mname), fs in members.items():
    if t in top:
        for f in fs:
            if f != top[t]: self_calls[(top[t], mname)].add(f)

edges = defaultdict(lambda: defaultdict(set))   # A -> B -> {(name, path)}
def edge(a, b, name, path):
    if a != b: edges[a][b].add((name, path))

for folder, path, t in extensions:
    if t in top: edge(folder, top[t], "extension " + t, path)

for folder, path, code in files:
    toks = [(m.group(0), m.start()) for m in IDENT.finditer(code)]
    for k, (name, at) in enumerate(toks):
        j = at - 1
        while j >= 0 and code[j] in " \t\n": j -= 1
        dotted = j >= 0 and code[j] == "." and (j == 0 or code[j - 1] != ".")
        prev = toks[k - 1][0] if k else ""
        if dotted:
            if prev == "Soundmark":
                pass                              # module-qualified: a top-level name
            else:
                qualified = k and code[toks[k - 1][1] + len(prev):at].strip() == "."
                if qualified:
                    for f in members.get((prev, name), ()):
                        edge(folder, f, prev + "." + name, path)
                    if prev == "self" and code[at + len(name):at + len(name) + 1] == "(" \
                            and name not in declared_in[folder]:
                        for f in self_calls.get((folder, name), ()):
                            edge(folder, f, "self." + name, path)
                continue
        if prev in DECLARERS:
            continue                              # the declaration of a local name
        if code[at + len(name):at + len(name) + 1] == "(" and name not in declared_in[folder]:
            for f in self_calls.get((folder, name), ()):
                edge(folder, f, "self." + name, path)   # an extension's method called on self
        if name in top and (name not in funcs or code[at + len(name):at + len(name) + 1] == "("):
            edge(folder, top[name], name, path)

folders = sorted({f for f, _, _ in files})
print("folder graph of %s (A -> folders whose names A uses):" % root)
for a in folders:
    targets = sorted(edges[a])
    print("  %-12s -> %s" % (a, ", ".join(targets) if targets else "(none)"))
    if why:
        for b in targets:
            names = defaultdict(set)
            for name, p in edges[a][b]: names[name].add(os.path.relpath(p, root))
            print("      %s: %s" % (b, "; ".join("%s (%s)" % (n, sorted(ps)[0]) for n, ps in sorted(names.items()))))

sys.setrecursionlimit(10000)
def components(graph):
    index, low, on, stack, out, counter = {}, {}, set(), [], [], [0]
    def strong(v):
        index[v] = low[v] = counter[0]; counter[0] += 1; stack.append(v); on.add(v)
        for w in graph[v]:
            if w not in index: strong(w); low[v] = min(low[v], low[w])
            elif w in on: low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop(); on.discard(w); comp.append(w)
                if w == v: break
            out.append(sorted(comp))
    for v in folders:
        if v not in index: strong(v)
    return [c for c in out if len(c) > 1]

def show(comp, graph):
    print("CYCLE among %s:" % ", ".join(comp))
    inside = set(comp)
    for a in comp:
        for b in sorted(graph[a]):
            if b in inside:
                names = sorted({n for n, _ in edges[a][b]})
                shown = ", ".join(names[:8]) + (", …" if len(names) > 8 else "")
                print("    %s -> %s: %s" % (a, b, shown))

cycles = components(edges)
if not cycles:
    print("no folder cycle")
    sys.exit(0)
for comp in cycles: show(comp, edges)
sys.exit(1)
PY
