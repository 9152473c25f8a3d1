#!/usr/bin/env python3
"""ctest_alone.py BUILD_DIR — a ctest regex (^(a|b|...)$) naming the tests
of BUILD_DIR that must not run beside others under the sanitizers: those
that take the recording lock (RESOURCE_LOCK sysptd_recording: they compare
what sysptd saw with perf, ftrace or the clock on the same moment) or run
alone anyway (RUN_SERIAL).  scripts/test.sh's part 2 runs the rest in
parallel and these one at a time.  Prints ^$ (matches no test) when there
are none."""
import json
import re
import subprocess
import sys


def main():
    if len(sys.argv) != 2:
        print(__doc__.splitlines()[0], file=sys.stderr)
        return 2
    try:
        out = subprocess.run(["ctest", "--show-only=json-v1"], cwd=sys.argv[1],
                             check=True, capture_output=True, text=True).stdout
        tests = json.loads(out)["tests"]
    except (OSError, subprocess.CalledProcessError, ValueError, KeyError) as e:
        print(f"ctest_alone: {sys.argv[1]}: {e}", file=sys.stderr)
        return 1
    alone = []
    for t in tests:
        props = {p["name"]: p["value"] for p in t.get("properties", [])}
        if "sysptd_recording" in (props.get("RESOURCE_LOCK") or []) or props.get("RUN_SERIAL"):
            alone.append(re.escape(t["name"]))
    print("^(" + "|".join(alone) + ")$" if alone else "^$")
    return 0


if __name__ == "__main__":
    sys.exit(main())
