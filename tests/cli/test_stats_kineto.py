#!/usr/bin/env python3
"""`flopline stats` against an independent computation on the Kineto/HTA corpus.

For every hta__*.json.gz and kineto__*.json.gz file, the per-kernel count and total
time printed by `flopline stats FILE --by name --cat kernel --csv` must equal what
this script computes with the standard library alone: the sum of `dur` of the
`"ph":"X"` events whose category is `kernel`, per name. Times are converted from the
JSON text exactly (decimal.Decimal, microseconds * 1000, rounded half away from zero,
as the reader does; see time_text.h), never through float.

Also checked: the CSV header, --json against the CSV, --top, --range on a trace
written here, and the error paths (missing file, garbage, bad flags, --help).
"""
import csv
import decimal
import glob
import gzip
import io
import json
import math
import os
import re
import subprocess
import sys

from cli_checker import Checker, require_corpus, script_args

CSV_HEADER = ("name,count,total_ns,avg_ns,median_ns,min_ns,max_ns,std_ns,pct,flops,bytes,"
              "tflops,gbps,pct_peak,precision,flops_source,busy_ns,self_ns,device_total_ns,"
              "extent_ns,cpu_ns,intensity,counted_flops,declared_vs_counted_pct,window_busy_ns")
INT_FIELDS = ("count", "total_ns", "avg_ns", "median_ns", "min_ns", "max_ns", "std_ns")
FLOAT_FIELDS = ("pct", "flops", "bytes", "tflops", "gbps", "pct_peak")


def run(flopline, *args):
    p = subprocess.run([flopline, *args], capture_output=True, timeout=300)
    return (p.returncode, p.stdout.decode("utf-8", "surrogateescape"),
            p.stderr.decode("utf-8", "surrogateescape"))


# ---- the independent computation ----------------------------------------------------

def us_text_to_ns(v):
    """A ts/dur value as parsed with parse_float=Decimal -> integer ns, or None."""
    if isinstance(v, bool) or v is None:
        return None
    if isinstance(v, str):
        try:
            v = decimal.Decimal(v.strip())
        except decimal.InvalidOperation:
            return None
    if isinstance(v, int):
        v = decimal.Decimal(v)
    if not isinstance(v, decimal.Decimal) or not v.is_finite():
        return None
    return int((v * 1000).quantize(decimal.Decimal(1), rounding=decimal.ROUND_HALF_UP))


def category_matches(cat, wanted):
    """flopline's rule (docs/STATS.md): case-insensitive, any element of a comma list."""
    if not isinstance(cat, str):
        return False
    parts = [cat] + (cat.split(",") if "," in cat else [])
    return any(p.strip().lower() == wanted.lower() for p in parts)


def load_events(path):
    opener = gzip.open if path.endswith(".gz") else open
    with opener(path, "rb") as f:
        doc = json.load(f, parse_float=decimal.Decimal)
    return doc["traceEvents"] if isinstance(doc, dict) else doc


def expected_kernels(events):
    """name -> [count, total_ns] over X events of category kernel."""
    out = {}
    for e in events:
        if not isinstance(e, dict) or e.get("ph") != "X" or not category_matches(e.get("cat"), "kernel"):
            continue
        name = e.get("name", "")
        raw = e.get("dur", 0)
        dur = us_text_to_ns(raw)
        # A dur that is a number the model cannot hold (nan, inf, past int64 ns) skips its
        # event (docs/TRACE_FORMAT.md, "Numbers out of range").
        if isinstance(raw, float) and not math.isfinite(raw):
            continue
        if isinstance(raw, decimal.Decimal) and dur is not None and abs(dur) >= 2**63:
            continue
        if dur is None or dur < 0:  # the reader takes a missing, bad or negative dur as 0
            dur = 0
        row = out.setdefault(name, [0, 0])
        row[0] += 1
        row[1] += dur
    return out


def parse_csv(text):
    rows = list(csv.reader(io.StringIO(text, newline="")))
    header, body = rows[0], rows[1:]
    result = []
    for r in body:
        d = dict(zip(header, r))
        for k in INT_FIELDS:
            d[k] = int(d[k])
        for k in FLOAT_FIELDS:
            d[k] = float(d[k]) if d[k] != "" else None
        result.append(d)
    return header, result


# ---- the checks ---------------------------------------------------------------------

def check_corpus_file(c, flopline, path):
    base = os.path.basename(path)
    expected = expected_kernels(load_events(path))
    rc, out, err = run(flopline, "stats", path, "--by", "name", "--cat", "kernel", "--csv",
                         "--names", "full")
    if not expected:
        c.check(rc == 1, f"{base}: no kernels, expected exit 1, got {rc}")
        c.check("no slices match (categories: kernel" in err, f"{base}: no-match message: {err!r}")
        c.check(out == "", f"{base}: nothing on stdout when nothing matches")
        return None
    if not c.check(rc == 0, f"{base}: exit {rc}: {err}"):
        return None
    c.check(out.split("\n", 1)[0] == CSV_HEADER, f"{base}: CSV header {out.splitlines()[0]!r}")
    _, rows = parse_csv(out)
    got = {r["name"]: r for r in rows}
    c.check(len(got) == len(rows), f"{base}: duplicate names in the CSV")
    c.check(set(got) == set(expected),
            f"{base}: names differ: only flopline {sorted(set(got) - set(expected))[:5]}, "
            f"only python {sorted(set(expected) - set(got))[:5]}")
    bad = [n for n in expected if n in got and
           (got[n]["count"], got[n]["total_ns"]) != tuple(expected[n])]
    c.check(not bad, f"{base}: count/total differ for {len(bad)} names, e.g. "
            + "; ".join(f"{n[:60]!r}: flopline {got[n]['count']}/{got[n]['total_ns']} "
                        f"python {expected[n][0]}/{expected[n][1]}" for n in bad[:3]))
    c.check(abs(sum(r["pct"] for r in rows) - 100.0) < 1e-6, f"{base}: pct sums to 100")
    order = [(-r["total_ns"], r["name"].encode("utf-8", "surrogateescape")) for r in rows]
    c.check(order == sorted(order), f"{base}: rows sorted by total desc, then name")
    for r in rows:
        ok = (r["min_ns"] <= r["median_ns"] <= r["max_ns"] and r["min_ns"] <= r["avg_ns"] <= r["max_ns"]
              and abs(r["avg_ns"] - r["total_ns"] / r["count"]) <= 0.5 and r["std_ns"] >= 0)
        if not c.check(ok, f"{base}: inconsistent statistics in row {r}"):
            break
    return rows


def check_json_matches_csv(c, flopline, path, csv_rows):
    rc, out, err = run(flopline, "stats", path, "--by", "name", "--cat", "kernel", "--json",
                         "--names", "full")
    if not c.check(rc == 0, f"--json exit {rc}: {err}"):
        return
    try:
        doc = json.loads(out)
    except ValueError as e:
        c.check(False, f"--json output is not JSON: {e}")
        return
    c.check(doc.get("files") == [path], f"--json files {doc.get('files')}")
    c.check(doc.get("categories") == ["kernel"], f"--json categories {doc.get('categories')}")
    c.check(doc.get("group_by") == "name", "--json group_by")
    c.check(doc.get("total_ns") == sum(r["total_ns"] for r in csv_rows), "--json total_ns")
    c.check(doc.get("rows_total") == len(csv_rows), "--json rows_total")
    rows = doc.get("rows", [])
    c.check(len(rows) == len(csv_rows), "--json row count")
    for j, r in zip(rows, csv_rows):
        same = (j["name"] == r["name"] and all(j[k] == r[k] for k in INT_FIELDS)
                and all(j[k] == r[k] for k in FLOAT_FIELDS))
        if not c.check(same, f"--json row differs from CSV: {j} vs {r}"):
            break


def check_top(c, flopline, path, csv_rows):
    rc, out, err = run(flopline, "stats", path, "--cat", "kernel", "--csv", "--top", "3", "--names", "full")
    if c.check(rc == 0, f"--top exit {rc}: {err}"):
        _, rows = parse_csv(out)
        c.check([r["name"] for r in rows] == [r["name"] for r in csv_rows[:3]],
                "--top 3 gives the first three rows")
    rc, out, _ = run(flopline, "stats", path, "--cat", "kernel", "--top", "2", "--names", "full")
    c.check(rc == 0 and "(top 2 shown)" in out, "table says how many rows --top kept")


def write_trace(path, events):
    with open(path, "w") as f:
        json.dump({"traceEvents": events}, f)


def check_range(c, flopline, tmp):
    # The first event is at 100 us; kernels start 0, 1, 2.5, 10 us after it.
    path = os.path.join(tmp, "range.json")
    write_trace(path, [
        {"ph": "X", "cat": "cpu_op", "name": "op", "pid": 1, "tid": 1, "ts": 100, "dur": 50},
        {"ph": "X", "cat": "kernel", "name": "a", "pid": 0, "tid": 7, "ts": 100, "dur": 1},
        {"ph": "X", "cat": "kernel", "name": "b", "pid": 0, "tid": 7, "ts": 101, "dur": 1},
        {"ph": "X", "cat": "kernel", "name": "a", "pid": 0, "tid": 7, "ts": 102.5, "dur": 3},
        {"ph": "X", "cat": "kernel", "name": "b", "pid": 0, "tid": 7, "ts": 110, "dur": 0.25},
    ])
    starts = {("a", 0): 1000, ("b", 1000): 1000, ("a", 2500): 3000, ("b", 10000): 250}

    def expect(lo, hi):
        out = {}
        for (name, t), dur in starts.items():
            if (lo is None or t >= lo) and (hi is None or t < hi):
                out.setdefault(name, [0, 0])
                out[name][0] += 1
                out[name][1] += dur
        return out

    for spec, lo, hi in (("1us:10us", 1000, 10000), ("1000:2500", 1000, 2500),
                         ("2.5us:", 2500, None), (":1us", None, 1000), ("0.001ms:0.01ms", 1000, 10000),
                         ("0s:1s", 0, 10**9)):
        rc, out, err = run(flopline, "stats", path, "--csv", "--range", spec, "--names", "full")
        if not c.check(rc == 0, f"--range {spec}: exit {rc}: {err}"):
            continue
        _, rows = parse_csv(out)
        got = {r["name"]: [r["count"], r["total_ns"]] for r in rows}
        c.check(got == expect(lo, hi), f"--range {spec}: {got} != {expect(lo, hi)}")
    rc, _, err = run(flopline, "stats", path, "--range", "20us:")
    c.check(rc == 1 and "no slices match" in err, f"--range past the end: exit {rc}, {err!r}")


def check_errors(c, flopline, tmp):
    missing = os.path.join(tmp, "does_not_exist.json")
    rc, out, err = run(flopline, "stats", missing)
    c.check(rc == 1, f"missing file: exit {rc}")
    c.check(missing in err, f"missing file: path in message: {err!r}")

    garbage = os.path.join(tmp, "garbage.json")
    with open(garbage, "wb") as f:
        f.write(b'{"traceEvents": [\n  {"ph": "X", "name": @@@}\n]}\n')
    rc, out, err = run(flopline, "stats", garbage)
    c.check(rc == 1, f"garbage: exit {rc}")
    # ReadError::message(): FILE:LINE:COLUMN (byte OFFSET): REASON
    c.check(re.search(re.escape(garbage) + r":2:\d+ \(byte \d+\): \S", err) is not None,
            f"garbage: file, line:column and byte in the message: {err!r}")
    c.check(out == "", "garbage: nothing on stdout")

    for args in (["stats", garbage, "--frobnicate"], ["frobnicate"], ["stats"],
                 ["stats", garbage, "--top", "zero"], ["stats", garbage, "--by", "kernel"],
                 ["stats", garbage, "--range", "5ms"], ["stats", garbage, "--csv", "--json"],
                 ["stats", garbage, "--top"]):
        rc, out, err = run(flopline, *args)
        c.check(rc == 2, f"{args}: exit {rc}, expected 2")
        c.check("--help" in err and err.strip() != "", f"{args}: usage hint in {err!r}")

    rc, out, err = run(flopline, "stats", "--help")
    c.check(rc == 0, "stats --help exit 0")
    for flag in ("--by", "--cat", "--top", "--range", "--csv", "--json", "--help"):
        c.check(flag in out, f"stats --help mentions {flag}")
    rc, out, _ = run(flopline, "--help")
    c.check(rc == 0 and "stats" in out, "flopline --help lists stats")
    rc, out, _ = run(flopline, "--version")
    c.check(rc == 0 and out.startswith("flopline "), "flopline --version")


def main():
    a, tmp = script_args(__doc__.splitlines()[0], "test_stats_kineto")
    require_corpus(a.corpus)

    c = Checker()
    files = sorted(glob.glob(os.path.join(a.corpus, "hta__*.json.gz")) +
                   glob.glob(os.path.join(a.corpus, "kineto__*.json.gz")))
    c.check(len(files) >= 7, f"found {len(files)} Kineto/HTA corpus files in {a.corpus}")
    biggest = None
    for path in files:
        rows = check_corpus_file(c, a.flopline, path)
        if rows and (biggest is None or len(rows) > len(biggest[1])):
            biggest = (path, rows)
    if biggest:
        check_json_matches_csv(c, a.flopline, *biggest)
        check_top(c, a.flopline, *biggest)
    check_range(c, a.flopline, tmp)
    check_errors(c, a.flopline, tmp)

    print(f"{c.passed} passed, {c.failed} failed")
    return 1 if c.failed else 0


if __name__ == "__main__":
    sys.exit(main())
