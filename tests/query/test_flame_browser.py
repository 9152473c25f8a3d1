#!/usr/bin/env python3
"""test_flame_browser.py — the flame graph SVG in a real browser (issue 31
item 5): Debian's chromium, headless.

    test_flame_browser.py SYSPTD MAKE_INCIDENT [SCREENSHOT]

1. A screenshot of the SVG of sptd_make_incident's sample incident: its
   frame rows are drawn (the warm colours across the width, dark text on
   them), nothing in the blank margin above the frames.
2. The DOM after the SVG's own script ran (chromium --dump-dom of an HTML
   page that frames the SVG and then scripts a click, as a user would):
   every frame has its name as its text and the width of its share; a
   click on "worker" zooms to it (its width becomes the whole, its callees
   spread in proportion, its callers stay at full width greyed, the other
   thread's frames hide); #search=REGEX colours the matches and says their
   share.
Exit 77 (skip) without chromium.  SCREENSHOT, when given, keeps the PNG.
"""
import os
import re
import shutil
import struct
import subprocess
import sys
import tempfile
import zlib

SYSPTD, MAKE = sys.argv[1], sys.argv[2]
KEEP = sys.argv[3] if len(sys.argv) > 3 else None
failed = []


def check(cond, what):
    if not cond:
        failed.append(what)
        print("FAIL:", what, file=sys.stderr)


def browser():
    for name in ("chromium", "chromium-browser"):
        path = shutil.which(name)
        if path:
            return path
    return None


def png_pixels(path):
    """(width, height, rows of (r, g, b)) of an 8-bit RGB or RGBA PNG."""
    data = open(path, "rb").read()
    assert data[:8] == b"\x89PNG\r\n\x1a\n"
    pos, idat, width = 8, b"", 0
    while pos < len(data):
        n, kind = struct.unpack(">I4s", data[pos:pos + 8])
        body = data[pos + 8:pos + 8 + n]
        if kind == b"IHDR":
            width, height, depth, ctype = struct.unpack(">IIBB", body[:10])
            assert depth == 8 and ctype in (2, 6), (depth, ctype)
            bpp = 3 if ctype == 2 else 4
        elif kind == b"IDAT":
            idat += body
        pos += 12 + n
    raw, rows, prev = zlib.decompress(idat), [], bytearray(width * bpp)
    stride = width * bpp
    for y in range(height):
        f, line = raw[y * (stride + 1)], bytearray(raw[y * (stride + 1) + 1:(y + 1) * (stride + 1)])
        for i in range(stride):
            a = line[i - bpp] if i >= bpp else 0
            b, c = prev[i], prev[i - bpp] if i >= bpp else 0
            if f == 1:
                line[i] = (line[i] + a) & 255
            elif f == 2:
                line[i] = (line[i] + b) & 255
            elif f == 3:
                line[i] = (line[i] + (a + b) // 2) & 255
            elif f == 4:
                p = a + b - c
                pa, pb, pc = abs(p - a), abs(p - b), abs(p - c)
                line[i] = (line[i] + (a if pa <= pb and pa <= pc else b if pb <= pc else c)) & 255
        rows.append([tuple(line[x * bpp:x * bpp + 3]) for x in range(width)])
        prev = line
    return width, height, rows


def run_chromium(exe, args, timeout=90):
    base = [exe, "--headless", "--no-sandbox", "--disable-gpu", "--hide-scrollbars",
            "--no-first-run", "--disable-extensions", "--mute-audio"]
    return subprocess.run(base + args, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                          timeout=timeout, text=True)


WRAPPER = """<!DOCTYPE html><html><body><pre id="out">pending</pre>
<iframe id="f" src="%s" width="1200" height="300"></iframe>
<script>
document.getElementById('f').addEventListener('load', function () {
  var d = this.contentDocument, out = [];
  function state() {
    var gs = d.getElementsByClassName('f'), r = [];
    for (var i = 0; i < gs.length; i++) {
      var g = gs[i], rc = g.getElementsByTagName('rect')[0];
      r.push(['F', g.getAttribute('data-n'), (+rc.getAttribute('x')).toFixed(2),
              (+rc.getAttribute('width')).toFixed(2), g.getAttribute('class'),
              g.getElementsByTagName('text')[0].textContent, rc.getAttribute('fill')].join('|'));
    }
    r.push('M|' + d.getElementById('matched').textContent);
    return r;
  }
  out.push('BEFORE'); out = out.concat(state());
  if (%s) {
    var gs = d.getElementsByClassName('f');
    for (var i = 0; i < gs.length; i++)
      if (gs[i].getAttribute('data-n') == 'worker')
        gs[i].getElementsByTagName('rect')[0].dispatchEvent(
          new MouseEvent('click', {bubbles: true, cancelable: true, view: window}));
    out.push('AFTER'); out = out.concat(state());
  }
  document.getElementById('out').textContent = out.join('\\n');
});
</script></body></html>
"""


def dom_state(exe, work, src, click):
    page = os.path.join(work, "check%d.html" % click)
    with open(page, "w") as f:
        f.write(WRAPPER % (src, "true" if click else "false"))
    r = run_chromium(exe, ["--allow-file-access-from-files", "--virtual-time-budget=5000",
                           "--dump-dom", "file://" + page])
    m = re.search(r'<pre id="out">(.*?)</pre>', r.stdout, re.S)
    check(m and m.group(1) != "pending", "the page's script did not run: %s" % r.stderr[-500:])
    states, cur = {}, None
    for line in (m.group(1) if m else "").replace("&amp;", "&").splitlines():
        if line in ("BEFORE", "AFTER"):
            cur = states.setdefault(line, {"frames": [], "matched": ""})
        elif line.startswith("F|") and cur is not None:
            _, name, x, w, cls, text, fill = line.split("|")
            cur["frames"].append({"name": name, "x": float(x), "w": float(w),
                                  "cls": cls.split(), "text": text, "fill": fill})
        elif line.startswith("M|") and cur is not None:
            cur["matched"] = line[2:]
    return states


def frame(state, name, nth=0):
    found = [f for f in state["frames"] if f["name"] == name]
    return found[nth] if len(found) > nth else None


def main():
    exe = browser()
    if not exe:
        print("SKIP: no chromium (scripts/install-deps.sh installs it for the tests)")
        return 77
    work = tempfile.mkdtemp(prefix="sptd-flamebr-")
    os.chmod(work, 0o755)
    try:
        inc, svg = os.path.join(work, "s.db"), os.path.join(work, "flame.svg")
        subprocess.run([MAKE, inc, "sample"], check=True)
        os.chmod(inc, 0o644)
        subprocess.run([SYSPTD, "flamegraph", inc, "-o", svg], check=True)
        os.chmod(svg, 0o644)

        # 1. the screenshot
        shot = os.path.join(work, "shot.png")
        r = run_chromium(exe, ["--window-size=1200,200", "--screenshot=" + shot, "file://" + svg])
        check(os.path.exists(shot), "no screenshot: %s" % r.stderr[-500:])
        if os.path.exists(shot):
            if KEEP:
                shutil.copy(shot, KEEP)
            width, height, rows = png_pixels(shot)
            # the frames' rows: the SVG draws 6 levels from y = 60, 16 px each
            warm = sum(1 for y in range(62, 156) for (r_, g, b) in rows[y] if r_ > 190 and b < 90)
            dark = sum(1 for y in range(62, 156) for (r_, g, b) in rows[y] if r_ < 80 and g < 80 and b < 80)
            blank = sum(1 for y in range(48, 58) for (r_, g, b) in rows[y] if r_ > 190 and b < 90)
            print("screenshot %dx%d: %d warm pixels, %d dark (text) pixels in the frames" %
                  (width, height, warm, dark))
            check(warm > 0.5 * 1180 * 16 * 3, "the frames are not drawn (%d warm pixels)" % warm)
            check(dark > 200, "no text on the frames (%d dark pixels)" % dark)
            check(blank == 0, "frames drawn above the top level")

        # 2. the DOM: names, widths, a click that zooms
        st = dom_state(exe, work, "flame.svg", 1)
        before, after = st.get("BEFORE"), st.get("AFTER")
        check(before and after, "no DOM state read back")
        if before and after:
            names = sorted({f["name"] for f in before["frames"]})
            check(names == ["[unknown]", "all", "handle", "main", "parse", "server", "worker"],
                  "frames: %s" % names)
            for f in before["frames"]:
                check(f["text"] == f["name"] or f["w"] < 30,
                      "frame %s shows '%s'" % (f["name"], f["text"]))
            w, s = frame(before, "worker"), frame(before, "server")
            # 5 of the 8 samples are the worker's, 3 the server's; 1180 px in all
            check(w and abs(w["w"] - 1180 * 5 / 8) < 0.1, "worker's width %s" % (w and w["w"]))
            check(s and abs(s["w"] - 1180 * 3 / 8) < 0.1, "server's width %s" % (s and s["w"]))
            w, s, a = frame(after, "worker"), frame(after, "server"), frame(after, "all")
            check(w and abs(w["w"] - 1180) < 0.1 and abs(w["x"] - 10) < 0.1,
                  "the click did not zoom to worker: %s" % w)
            check(s and "hide" in s["cls"], "the server's frames stay after the zoom: %s" % s)
            check(a and "parent" in a["cls"] and abs(a["w"] - 1180) < 0.1,
                  "the root is not kept greyed at full width: %s" % a)
            # worker;main;handle holds 3 of the worker's 5 samples
            handles = [f for f in after["frames"] if f["name"] == "handle" and "hide" not in f["cls"]]
            check(any(abs(f["w"] - 1180 * 3 / 5) < 0.1 for f in handles),
                  "the callees did not spread: %s" % handles)
        # search from the address: parse holds 4 of 8 samples
        st = dom_state(exe, work, "flame.svg#search=%5Eparse%24", 0)
        b = st.get("BEFORE")
        check(b and b["matched"] == "Matched: 50.00%", "search: %s" % (b and b["matched"]))
        check(b and all(f["fill"] == "rgb(230,0,230)" for f in b["frames"] if f["name"] == "parse"),
              "search did not colour the matches")
    finally:
        shutil.rmtree(work, ignore_errors=True)
    print("%d failed" % len(failed))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
