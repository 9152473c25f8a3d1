#!/usr/bin/env python3
"""ctest_skips.py JUNIT_XML — the tests a ctest run skipped, one line each
with its reason (the last line of its output that says why), for the end of
scripts/test.sh's parts: a skip is never a pass, so it is named, not hidden
in ctest's list.  Prints nothing when no test was skipped."""
import re
import sys
import xml.etree.ElementTree as ET


def reason(out):
    lines = [l.strip() for l in (out or "").splitlines() if l.strip()]
    for l in reversed(lines):
        if re.search(r"skip|not run|needs |no such|cannot|absent|missing", l, re.I):
            return l
    return lines[-1] if lines else "(no output)"


def main():
    if len(sys.argv) != 2:
        print(__doc__.splitlines()[0], file=sys.stderr)
        return 2
    try:
        root = ET.parse(sys.argv[1]).getroot()
    except (OSError, ET.ParseError) as e:
        print(f"ctest_skips: {sys.argv[1]}: {e}", file=sys.stderr)
        return 1
    skipped = []
    for case in root.iter("testcase"):
        if case.get("status") == "notrun" or case.find("skipped") is not None:
            out = case.findtext("system-out")
            skipped.append((case.get("name"), reason(out)))
    if skipped:
        print(f"skipped {len(skipped)} test(s): " + ", ".join(n for n, _ in skipped))
        for name, why in skipped:
            print(f"  {name}: {why[:200]}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
