#!/usr/bin/env python3
"""`flopline stats` against hostile input and failing output, as a user runs it.

Checked: output that cannot be written (/dev/full) is an error with its reason; the
peak memory of a 10-byte .gz and of gzip bombs (zeros: stops at once; JSON padding:
proportional to what inflated, which --json reports); paths that are not trace files
(a directory, /dev/zero, a pipe of endless zeros, /proc files) end quickly with a
message saying what the path is; a syntax error mid-file costs one event and the
counts cover the whole file; most of a file unreadable is exit 1; a .gz cut in half
loads its first half with a warning; numbers out of range follow one rule in the
table, CSV and JSON.
"""
import csv
import gzip
import io
import json
import os
import subprocess
import sys
import zlib

from cli_checker import Checker, script_args


def run(flopline, *args, stdin=None, stdout=subprocess.PIPE, timeout=120):
    """(exit code, stdout, stderr)."""
    p = subprocess.Popen([flopline, *args], stdin=stdin, stdout=stdout, stderr=subprocess.PIPE)
    out, err = p.communicate(timeout=timeout)
    return (p.returncode, (out or b"").decode("utf-8", "replace"), err.decode("utf-8", "replace"))


def peak_mb(flopline, *args):
    """Runs flopline and returns (exit code, stderr, peak RSS in MB), the peak from
    wait4's rusage of that one child (ru_maxrss, VmHWM at its exit)."""
    with subprocess.Popen([flopline, *args], stdout=subprocess.DEVNULL, stderr=subprocess.PIPE) as p:
        err = p.stderr.read().decode("utf-8", "replace")
        _, status, usage = os.wait4(p.pid, 0)
        p.returncode = os.waitstatus_to_exitcode(status)
    return p.returncode, err, usage.ru_maxrss / 1024.0


def kernels(n, first=0):
    return [{"ph": "X", "cat": "kernel", "name": f"k{i % 7}", "pid": 0, "tid": 7, "ts": 10 * i, "dur": 2}
            for i in range(first, first + n)]


def trace_text(events):
    return '{"traceEvents":[\n' + ",\n".join(json.dumps(e, separators=(",", ":")) for e in events) + "\n]}\n"


def gzip_stream(pieces, level=6):
    """One gzip member of the concatenated pieces (bytes, or (byte, count) runs), made
    in steps so large inputs never sit in memory."""
    z = zlib.compressobj(level, zlib.DEFLATED, 31)
    out = [z.compress(p) if isinstance(p, bytes) else b"".join(z.compress(p[0] * (1 << 20)) for _ in range(p[1]))
           for p in pieces]
    out.append(z.flush())
    return b"".join(out)


def check_output_errors(c, flopline, tmp):
    path = os.path.join(tmp, "small.json")
    with open(path, "w") as f:
        f.write(trace_text(kernels(50)))
    for fmt in ([], ["--csv"], ["--json"]):
        with open("/dev/full", "wb") as full:
            rc, _, err = run(flopline, "stats", path, *fmt, stdout=full)
        c.check(rc == 1, f"stats {fmt} > /dev/full: exit {rc}")
        c.check("flopline stats: cannot write the output: No space left on device" in err,
                f"stats {fmt} > /dev/full: reason in {err!r}")


def check_memory(c, flopline, tmp):
    tiny = os.path.join(tmp, "tiny.gz")
    with open(tiny, "wb") as f:  # a gzip header and nothing else; no size trailer to trust
        f.write(b"\x1f\x8b\x08\x00\x00\x00\x00\x00\x00\xff")
    rc, err, mb = peak_mb(flopline, "stats", tiny)
    c.check(rc == 1, f"10-byte .gz: exit {rc}")
    c.check(tiny in err and "cut off at compressed byte 10" in err, f"10-byte .gz: message {err!r}")
    c.check(mb < 50, f"10-byte .gz: peak {mb:.1f} MB, expected under 50 MB")

    liar = os.path.join(tmp, "liar.gz")
    member = gzip.compress(b"garbage" * 100)
    with open(liar, "wb") as f:  # the size trailer claims 4 GB
        f.write(member[:-4] + b"\xff\xff\xff\xff")
    rc, err, mb = peak_mb(flopline, "stats", liar)
    c.check(rc == 1 and mb < 50, f"lying trailer: exit {rc}, peak {mb:.1f} MB")

    zeros = os.path.join(tmp, "zeros.gz")
    with open(zeros, "wb") as f:  # 200 MB of zeros in about 200 KB
        f.write(gzip_stream([(b"\0", 200)], level=9))
    rc, err, mb = peak_mb(flopline, "stats", zeros)
    c.check(rc == 1 and "binary data" in err and zeros in err, f"zero bomb: exit {rc}, {err!r}")
    c.check(mb < 50, f"zero bomb: peak {mb:.1f} MB, expected under 50 MB (it stops at its first bytes)")

    padded = os.path.join(tmp, "padded.json.gz")
    head = trace_text(kernels(100))[:-3].encode() + b",\n"
    pad_mb = 48
    with open(padded, "wb") as f:  # valid JSON: 100 kernels, then 48 MB of spaces
        f.write(gzip_stream([head, (b" ", pad_mb), b"]}\n"], level=9))
    inflated = len(head) + (pad_mb << 20) + 3
    rc, err, mb = peak_mb(flopline, "stats", padded, "--json")
    c.check(rc == 0, f"padded bomb: exit {rc}, {err!r}")
    # Proportional to what inflated: the text once, plus what growing it costs (the
    # sanitizers keep freed blocks a while), far from the size a trailer could claim.
    c.check(mb < 4 * inflated / 2**20 + 64, f"padded bomb: peak {mb:.1f} MB for {inflated >> 20} MB inflated")
    rc, out, err = run(flopline, "stats", padded, "--json")
    doc = json.loads(out) if rc == 0 else {}
    c.check(doc.get("text_bytes") == inflated, f"--json text_bytes {doc.get('text_bytes')} != {inflated}")


def check_special_paths(c, flopline, tmp):
    # A directory stands for its trace files (the files of one run); one with none is an
    # error that names it.
    empty = os.path.join(tmp, "empty_dir")
    os.makedirs(empty, exist_ok=True)
    rc, _, err = run(flopline, "stats", empty, timeout=30)
    c.check(rc == 1 and f"{empty}: a directory with no trace files" in err, f"directory: exit {rc}, {err!r}")
    rc, _, err = run(flopline, "stats", "/dev/zero", timeout=30)
    c.check(rc == 1 and "character device" in err and "NUL byte" in err, f"/dev/zero: exit {rc}, {err!r}")
    rc, _, err = run(flopline, "stats", "/proc/self/status", timeout=30)
    c.check(rc == 1 and "found 'N'" in err and "size reads as 0" in err, f"/proc/self/status: {rc}, {err!r}")
    with subprocess.Popen(["cat", "/dev/zero"], stdout=subprocess.PIPE) as zero:
        rc, _, err = run(flopline, "stats", "/dev/stdin", stdin=zero.stdout, timeout=30)
        zero.kill()
    c.check(rc == 1 and "a pipe, read as a stream" in err, f"cat /dev/zero | stats /dev/stdin: {rc}, {err!r}")
    text = trace_text(kernels(500))
    with subprocess.Popen(["cat"], stdin=subprocess.PIPE, stdout=subprocess.PIPE) as cat:
        p = subprocess.Popen([flopline, "stats", "/dev/stdin", "--csv"], stdin=cat.stdout,
                             stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        cat.stdin.write(gzip.compress(text.encode()))
        cat.stdin.close()
        out, err = p.communicate(timeout=60)
    rows = list(csv.reader(io.StringIO(out.decode())))[1:]
    c.check(p.returncode == 0 and sum(int(r[1]) for r in rows) == 500,
            f"gzip through /dev/stdin: exit {p.returncode}, {err!r}")


def check_damage(c, flopline, tmp):
    # "ts":0x10 in event 2 of 100,002.
    lines = [json.dumps(e, separators=(",", ":")) for e in kernels(100002)]
    lines[1] = lines[1].replace('"ts":10,', '"ts":0x10,')
    path = os.path.join(tmp, "hex.json")
    with open(path, "w") as f:
        f.write('{"traceEvents":[\n' + ",\n".join(lines) + "\n]}\n")
    rc, out, err = run(flopline, "stats", path, "--json")
    doc = json.loads(out) if rc == 0 else {}
    c.check(rc == 0, f"hex number: exit {rc}, {err!r}")
    c.check(doc.get("events_total") == 100002 and doc.get("events_skipped") == 1,
            f"hex number: events_total {doc.get('events_total')}, skipped {doc.get('events_skipped')}")
    c.check(doc.get("slices") == 100001, f"hex number: slices {doc.get('slices')}")
    c.check("syntax error at byte" in err and "reading went on at the next event" in err,
            f"hex number: warning {err[:300]!r}")

    mostly_bad = os.path.join(tmp, "mostly_bad.json")
    with open(mostly_bad, "w") as f:
        f.write(trace_text(kernels(20))[:-4] + ',\n{"ph":"X","ts":1,"args":[' + "@" * 20000 + "]}]}")
    rc, out, err = run(flopline, "stats", mostly_bad, "--json")
    c.check(rc == 1 and out == "" and "could not be read" in err, f"mostly unreadable: exit {rc}, {err!r}")

    half = os.path.join(tmp, "half.json.gz")
    whole = gzip.compress(trace_text(kernels(20000)).encode())
    with open(half, "wb") as f:
        f.write(whole[: len(whole) // 2])
    rc, out, err = run(flopline, "stats", half, "--json")
    doc = json.loads(out) if rc == 0 else {}
    c.check(rc == 0 and 5000 < doc.get("slices", 0) < 20000, f".gz cut in half: exit {rc}, {err!r}")
    c.check("cut off at compressed byte" in err and "warning" in err, f".gz cut in half: warning {err!r}")


def check_number_rule(c, flopline, tmp):
    # Two kernels of 1e308 FLOPs each: the sum is past the range of a double.
    events = [{"ph": "X", "cat": "kernel", "name": "huge", "pid": 0, "tid": 7, "ts": 10 * i, "dur": 1,
               "args": {"flops": 1e308}} for i in range(2)]
    path = os.path.join(tmp, "huge.json")
    with open(path, "w") as f:
        f.write(trace_text(events))
    rc, out, _ = run(flopline, "stats", path, "--csv")
    row = list(csv.reader(io.StringIO(out)))[1] if rc == 0 else []
    c.check(rc == 0 and row[9:12] == ["", "", ""], f"CSV flops/bytes/tflops past double: {row}")
    rc, out, _ = run(flopline, "stats", path, "--json")
    r = json.loads(out)["rows"][0] if rc == 0 else {}
    c.check(r.get("flops", 0) is None and r.get("tflops", 0) is None, f"JSON past double: {r}")
    rc, out, _ = run(flopline, "stats", path)
    c.check(rc == 0 and "inf" not in out, f"table past double shows no inf: {out}")

    with open(path, "w") as f:
        f.write('{"traceEvents":[{"ph":"X","cat":"kernel","name":"k","ts":1,"dur":1,"args":{"flops":1e400}},'
                '{"ph":"X","cat":"kernel","name":"k","ts":5,"dur":1e18},{"ph":"X","cat":"kernel","name":"k",'
                '"ts":9,"dur":1e400}]}')
    rc, out, err = run(flopline, "stats", path, "--json")
    doc = json.loads(out) if rc == 0 else {}
    c.check(rc == 0 and doc.get("slices") == 1 and doc["rows"][0]["flops"] is None,
            f"flops 1e400 dropped, dur 1e18/1e400 skipped: {doc}")
    c.check('"dur" out of range' in err and "flops or bytes is negative, nan, inf" in err,
            f"out-of-range numbers are counted: {err!r}")


def main():
    a, tmp = script_args(__doc__.splitlines()[0], "test_stats_faults")

    c = Checker()
    check_output_errors(c, a.flopline, tmp)
    check_memory(c, a.flopline, tmp)
    check_special_paths(c, a.flopline, tmp)
    check_damage(c, a.flopline, tmp)
    check_number_rule(c, a.flopline, tmp)
    print(f"{c.passed} passed, {c.failed} failed")
    return 1 if c.failed else 0


if __name__ == "__main__":
    sys.exit(main())
