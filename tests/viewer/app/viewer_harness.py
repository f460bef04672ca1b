"""Shared by the flopline-view tests: an Xvfb display, a PNG reader, fixture traces.

Tests exit 77 (ctest SKIP_RETURN_CODE) only when Xvfb is missing; scripts/test.sh
installs it, so CI runs them. Everything else that goes wrong is a failure.
"""
import json
import os
import shutil
import struct
import subprocess
import sys
import tempfile
import time
import zlib

SKIP = 77


def viewer_env(base=None):
    """The environment the viewer runs in. Mesa's drivers are not built with the
    sanitizers and keep a few allocations until exit, which LeakSanitizer reports as
    leaks of the viewer (from an "<unknown module>": the unloaded driver), so leak
    checking is off for the viewer's processes only; other ASan reports stay fatal, and
    every other flopline test keeps leak checking."""
    e = dict(os.environ if base is None else base)
    opts = [o for o in e.get("ASAN_OPTIONS", "").split(":") if o and not o.startswith("detect_leaks=")]
    e["ASAN_OPTIONS"] = ":".join(opts + ["detect_leaks=0"])
    return e


class Xvfb:
    """A private X display: Xvfb picks a free display number (-displayfd)."""

    def __init__(self, width=1920, height=1200):
        self.width, self.height = width, height
        self.proc = None
        self.display = None

    def __enter__(self):
        exe = shutil.which("Xvfb")
        if exe is None:
            print("SKIPPED: Xvfb not found (Debian package xvfb; scripts/test.sh installs it)")
            sys.exit(SKIP)
        r, w = os.pipe()
        self.proc = subprocess.Popen(
            # -noreset: by default Xvfb resets when its last client leaves, and a client
            # that connects during the reset is refused (seen between a screenshot and
            # the next viewer start).
            [exe, "-displayfd", str(w), "-screen", "0", f"{self.width}x{self.height}x24", "-nolisten", "tcp",
             "-noreset"],
            pass_fds=(w,), stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        os.close(w)
        data = b""
        deadline = time.time() + 20
        while not data.endswith(b"\n") and time.time() < deadline:
            chunk = os.read(r, 16)
            if not chunk:
                break
            data += chunk
        os.close(r)
        if not data.strip():
            self.proc.kill()
            raise RuntimeError("Xvfb did not report a display")
        self.display = ":" + data.decode().strip()
        return self

    def env(self, extra=None):
        e = viewer_env()
        e["DISPLAY"] = self.display
        # Mesa's software rasteriser: the same pixels on every machine, no GPU needed.
        e["LIBGL_ALWAYS_SOFTWARE"] = "1"
        e.pop("WAYLAND_DISPLAY", None)
        if extra:
            e.update(extra)
        return e

    def __exit__(self, *exc):
        if self.proc:
            self.proc.terminate()
            try:
                self.proc.wait(10)
            except subprocess.TimeoutExpired:
                self.proc.kill()


def run(cmd, env=None, timeout=120):
    p = subprocess.run(cmd, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, timeout=timeout)
    return p.returncode, p.stdout.decode(errors="replace"), p.stderr.decode(errors="replace")


# --- PNG -------------------------------------------------------------------------

def _paeth(a, b, c):
    p = a + b - c
    pa, pb, pc = abs(p - a), abs(p - b), abs(p - c)
    if pa <= pb and pa <= pc:
        return a
    return b if pb <= pc else c


def read_png(path):
    """Returns (width, height, rows) with rows[y][x] = (r, g, b). 8-bit RGB/RGBA only."""
    with open(path, "rb") as f:
        data = f.read()
    if data[:8] != b"\x89PNG\r\n\x1a\n":
        raise ValueError(f"{path}: not a PNG")
    pos, idat, w = 8, b"", None
    while pos < len(data):
        (length,) = struct.unpack(">I", data[pos:pos + 4])
        kind = data[pos + 4:pos + 8]
        body = data[pos + 8:pos + 8 + length]
        pos += 12 + length
        if kind == b"IHDR":
            w, h, depth, ctype = struct.unpack(">IIBB", body[:10])
            if depth != 8 or ctype not in (2, 6):
                raise ValueError(f"{path}: unsupported PNG (depth {depth}, colour type {ctype})")
            bpp = 4 if ctype == 6 else 3
        elif kind == b"IDAT":
            idat += body
        elif kind == b"IEND":
            break
    raw = zlib.decompress(idat)
    stride = w * bpp
    rows, prev = [], bytearray(stride)
    for y in range(h):
        ft = raw[y * (stride + 1)]
        line = bytearray(raw[y * (stride + 1) + 1:(y + 1) * (stride + 1)])
        if ft == 1:
            for i in range(bpp, stride):
                line[i] = (line[i] + line[i - bpp]) & 255
        elif ft == 2:
            for i in range(stride):
                line[i] = (line[i] + prev[i]) & 255
        elif ft == 3:
            for i in range(stride):
                left = line[i - bpp] if i >= bpp else 0
                line[i] = (line[i] + ((left + prev[i]) >> 1)) & 255
        elif ft == 4:
            for i in range(stride):
                left = line[i - bpp] if i >= bpp else 0
                up_left = prev[i - bpp] if i >= bpp else 0
                line[i] = (line[i] + _paeth(left, prev[i], up_left)) & 255
        rows.append([tuple(line[x * bpp:x * bpp + 3]) for x in range(w)])
        prev = line
    return w, h, rows


def saturated(c, min_spread=40):
    """Slice colours are saturated mid-tones; UI greys, black text and white are not."""
    return max(c) - min(c) >= min_spread


def column_runs(rows, x, y0, y1, keep=saturated):
    """Vertical runs of one colour at column x in [y0, y1) whose colour passes `keep`:
    a list of (y_start, height, colour)."""
    runs = []
    y = y0
    while y < y1:
        c = rows[y][x]
        start = y
        while y < y1 and rows[y][x] == c:
            y += 1
        if keep(c):
            runs.append((start, y - start, c))
    return runs


# --- fixture traces ---------------------------------------------------------------

def x_event(name, cat, pid, tid, ts_us, dur_us, args=None):
    e = {"ph": "X", "name": name, "cat": cat, "pid": pid, "tid": tid, "ts": ts_us, "dur": dur_us}
    if args is not None:
        e["args"] = args
    return e


def meta(kind, pid, tid, name):
    return {"ph": "M", "name": kind, "pid": pid, "tid": tid, "args": {"name": name}}


def write_trace(path, events, **top):
    doc = dict(top)
    doc["traceEvents"] = events
    with open(path, "w") as f:
        json.dump(doc, f)


def read_state(path):
    """The viewer's --dump-state JSON, or None while it is missing or half-written."""
    try:
        with open(path) as f:
            return json.load(f)
    except (OSError, ValueError):
        return None


def wait_state(path, pred, timeout=20.0):
    """The dump once `pred` holds for it, or the last one seen (pred false) at timeout."""
    deadline = time.time() + timeout
    st = None
    while time.time() < deadline:
        st = read_state(path)
        if st is not None and pred(st):
            return st
        time.sleep(0.05)
    return st


def tmpdir(base, name):
    os.makedirs(base, exist_ok=True)
    return tempfile.mkdtemp(prefix=name + "-", dir=base)


class Checks:
    """Collects failures so one run reports all of them; prints 'N passed, N failed'."""

    def __init__(self):
        self.passed = 0
        self.failed = 0

    def check(self, cond, what):
        if cond:
            self.passed += 1
            print(f"ok: {what}")
        else:
            self.failed += 1
            print(f"FAIL: {what}")
        return cond

    def finish(self):
        print(f"{self.passed} passed, {self.failed} failed")
        sys.exit(1 if self.failed else 0)
