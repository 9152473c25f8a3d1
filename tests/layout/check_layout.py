#!/usr/bin/env python3
"""check_layout.py — the project's layout rules, checked on the tree and the
built objects (issue "One room, one job").

    check_layout.py SOURCE_DIR BUILD_DIR

Rules (each violation is printed; exit 1 if any):
  1. no source file (.c/.h) over 800 lines in the modules or tests, but
     those LONG_FILES lists, each with the reason one concept needs more;
  2. collector/'s own root holds at most 15 files;
  3. linux/perf_event.h is included under collector/perf only; ELF headers
     (gelf.h, libelf.h, elf.h) under decode/ only, and so are libiberty's
     demangle.h and lzma.h; sqlite3.h under store/
     only; intel-pt.h under decode/ only; tracefs.h / event-parse.h under
     sched/ only (tests/ aside: white-box tests may include what they test);
  4. no SQL text (SELECT ... FROM, INSERT INTO, CREATE TABLE, UPDATE ... SET,
     DELETE FROM) in collector/ (a --help text starting "Usage:" may show a
     query as an example);
  5. no include circle among the project's headers;
  6. no call circle: among the object files of every library (a file that
     calls into another file that calls back), and among the libraries
     themselves (record -> derive -> record);
  7. no function without a caller: every sptd_ function a library defines
     is named somewhere in the sources (modules, tests, bench) other than
     its definition and prototypes (a call, or its address taken).

The call graph comes from `nm` on the objects CMake built, so it sees what
the compiler saw, macros and all.
"""
import os
import re
import subprocess
import sys

MODULES = ["collector", "sched", "decode", "store", "query"]
MAX_LINES = 800
# Files that may pass MAX_LINES: path -> why one concept needs more.  Keep
# it short: a file that grew by several jobs is cut, not listed.
LONG_FILES = {
    # the fake kernel's perf_event_open/mmap/ioctl/close: every call reads and
    # writes one table of fake events (their rings, groups, pause state and
    # clock), which a split would have to export to every piece
    "tests/fakepmu/fakepmu.c": "one fake syscall layer over one event table",
    # break= and watch=: one kind whose PID and /PATH forms share one state,
    # one decision, one hit log and the reading of a process's mappings; cut
    # in three, it needed a header of its own to pass them around (issue 30)
    "collector/record/trigger_bp.c": "one trigger kind (break=, watch=) over one state",
}
MAX_COLLECTOR_ROOT = 15
HEADER_HOMES = {
    "linux/perf_event.h": ["collector/perf/"],
    "gelf.h": ["decode/"],
    "libelf.h": ["decode/"],
    "elf.h": ["decode/"],
    "sqlite3.h": ["store/"],
    "intel-pt.h": ["decode/"],
    "libiberty/demangle.h": ["decode/"],
    "lzma.h": ["decode/"],
    "zlib.h": ["query/"],
    "elfutils/libdwfl.h": ["decode/"],
    "elfutils/libdw.h": ["decode/"],
    "dwarf.h": ["decode/"],
    "tracefs.h": ["sched/"],
    "event-parse.h": ["sched/"],
}
SQL_PATTERNS = [
    re.compile(r"\bSELECT\b[^;]*?\bFROM\b", re.S),
    re.compile(r"\bINSERT\s+(OR\s+\w+\s+)?INTO\b"),
    re.compile(r"\bCREATE\s+(TEMP\s+|TEMPORARY\s+)?(TABLE|INDEX|VIEW)\b"),
    re.compile(r"\bUPDATE\s+\w+\s+SET\b"),
    re.compile(r"\bDELETE\s+FROM\b"),
]

problems = []


def bad(msg):
    problems.append(msg)


def source_files(src, tops):
    for top in tops:
        for root, dirs, files in os.walk(os.path.join(src, top)):
            dirs[:] = [d for d in dirs if not d.startswith("build")]
            for f in files:
                if f.endswith((".c", ".h", ".cpp")):
                    path = os.path.join(root, f)
                    yield os.path.relpath(path, src), path


def strings_of(text):
    """The C string literals of @text, adjacent ones joined (SQL is often
    split over lines; a macro between them, such as a default path spliced
    into a --help text, joins them too)."""
    text = re.sub(r"/\*.*?\*/", " ", text, flags=re.S)
    text = re.sub(r"//[^\n]*", " ", text)
    joined, out = [], []
    pos = 0
    for m in re.finditer(r'"((?:[^"\\\n]|\\.)*)"', text):
        gap = text[pos:m.start()]
        if joined and re.fullmatch(r"\s*([A-Z][A-Z0-9_]*\s*)?", gap):
            joined.append(m.group(1))
        else:
            if joined:
                out.append("".join(joined))
            joined = [m.group(1)]
        pos = m.end()
    if joined:
        out.append("".join(joined))
    return out


def check_files(src):
    for rel, path in source_files(src, MODULES + ["tests", "bench"]):
        with open(path, errors="replace") as f:
            text = f.read()
        n = text.count("\n")
        if n > MAX_LINES and rel not in LONG_FILES:
            bad(f"{rel}: {n} lines (at most {MAX_LINES}; or list it in LONG_FILES with a reason)")
        if rel.startswith("tests/") or rel.startswith("bench/"):
            continue
        for inc in re.findall(r'^\s*#\s*include\s*<([^>]+)>', text, re.M):
            homes = HEADER_HOMES.get(inc)
            if homes and not any(rel.startswith(h) for h in homes):
                bad(f"{rel}: includes <{inc}>, which only {', '.join(homes)} may include")
        if rel.startswith("collector/"):
            for s in strings_of(text):
                if s.startswith("Usage:"):
                    continue    # --help may show a query as an example
                for pat in SQL_PATTERNS:
                    if pat.search(s):
                        bad(f"{rel}: SQL text in collector/ (store/ owns every statement): "
                            f"\"{s[:70]}\"")
                        break
    root = os.path.join(src, "collector")
    files = [f for f in os.listdir(root) if os.path.isfile(os.path.join(root, f))]
    if len(files) > MAX_COLLECTOR_ROOT:
        bad(f"collector/ root holds {len(files)} files (at most {MAX_COLLECTOR_ROOT}): "
            + " ".join(sorted(files)))


def sccs(graph):
    """Strongly connected components with more than one node (Tarjan)."""
    index, low, stack, on, out = {}, {}, [], set(), []
    counter = [0]
    sys.setrecursionlimit(100000)

    def visit(v):
        index[v] = low[v] = counter[0]
        counter[0] += 1
        stack.append(v)
        on.add(v)
        for w in graph.get(v, ()):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                on.discard(w)
                comp.append(w)
                if w == v:
                    break
            if len(comp) > 1:
                out.append(sorted(comp))

    for v in list(graph):
        if v not in index:
            visit(v)
    return out


def check_includes(src):
    headers = {}
    for rel, path in source_files(src, MODULES):
        if rel.endswith(".h"):
            headers.setdefault(os.path.basename(rel), rel)
    graph = {}
    for rel, path in source_files(src, MODULES):
        if not rel.endswith(".h"):
            continue
        with open(path, errors="replace") as f:
            incs = re.findall(r'^\s*#\s*include\s*"([^"]+)"', f.read(), re.M)
        graph[rel] = [headers[os.path.basename(i)] for i in incs
                      if os.path.basename(i) in headers and headers[os.path.basename(i)] != rel]
    for comp in sccs(graph):
        bad("include circle: " + " <-> ".join(comp))


def library_of(obj_dir):
    m = re.search(r"CMakeFiles/([^/]+)\.dir", obj_dir)
    return m.group(1) if m else None


def check_calls(src, build):
    objs = {}   # object path -> (library, source name)
    for root, dirs, files in os.walk(build):
        if "/tests" in root or "/bench" in root:
            continue
        lib = library_of(root)
        if not lib or not lib.startswith("sptd_"):
            continue
        for f in files:
            if f.endswith(".o"):
                objs[os.path.join(root, f)] = (lib, f[:-2])
    if not objs:
        bad(f"no objects of the project's libraries under {build}: build it first")
        return
    defs, uses = {}, {}
    for obj, (lib, name) in objs.items():
        node = f"{lib}:{name}"
        out = subprocess.run(["nm", obj], capture_output=True, text=True, check=True).stdout
        uses[node] = set()
        for line in out.splitlines():
            parts = line.split()
            if len(parts) == 3 and parts[1] in "TDBR" and parts[2].startswith("sptd_"):
                defs[parts[2]] = node
            elif len(parts) == 2 and parts[0] == "U" and parts[1].startswith("sptd_"):
                uses[node].add(parts[1])
    graph = {n: set() for n in uses}
    libgraph = {}
    for node, syms in uses.items():
        for s in syms:
            target = defs.get(s)
            if target and target != node:
                graph[node].add(target)
                a, b = node.split(":")[0], target.split(":")[0]
                if a != b:
                    libgraph.setdefault(a, set()).add(b)
    for comp in sccs(graph):
        bad("call circle among files: " + " <-> ".join(comp))
    for comp in sccs(libgraph):
        bad("call circle among libraries: " + " <-> ".join(comp))
    check_uncalled(src, defs)


# a definition or prototype: a type (and qualifiers) before the name
DECL_HEAD = re.compile(r"\s*((static|extern|inline|const|unsigned|signed|struct|enum)\s+)*"
                       r"\w+[\s*]+(\w+[\s*]+)?")


def check_uncalled(src, defs):
    """Rule 7: @defs (symbol -> object) against every mention in the
    sources that is not a definition or a prototype."""
    used = set()
    for rel, path in source_files(src, MODULES + ["tests", "bench"]):
        with open(path, errors="replace") as f:
            text = f.read()
        text = re.sub(r"/\*.*?\*/", " ", text, flags=re.S)
        text = re.sub(r"//[^\n]*", " ", text)
        for m in re.finditer(r"\bsptd_\w+", text):
            head = text[text.rfind("\n", 0, m.start()) + 1:m.start()]
            words = head.split()
            if (DECL_HEAD.fullmatch(head) and
                    words[0] not in ("return", "else", "case", "goto", "sizeof")):
                continue
            used.add(m.group(0))
    for sym in sorted(set(defs) - used):
        bad(f"{sym} ({defs[sym].split(':')[0]}) has no caller: remove it")


def main():
    if len(sys.argv) != 3:
        print(__doc__.splitlines()[2].strip(), file=sys.stderr)
        return 2
    src, build = sys.argv[1], sys.argv[2]
    check_files(src)
    check_includes(src)
    check_calls(src, build)
    for p in problems:
        print("layout: " + p)
    print(f"layout: {len(problems)} problem(s)")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
