#!/usr/bin/env python3
"""`flopline stats --by op` operator times on traces flopline recorded on an H200
(tests/data/flopline_h200_*.json.gz), against an independent computation here.

The rule (docs/STATS.md, Operator time): an operator (a user_annotation slice on a CPU
thread) owns the GPU work (kernel, gpu_memcpy, gpu_memset) whose launch call lies inside
it on its thread; the innermost such operator launched it directly. This script joins
work to launches by their "correlation" args (flopline joins by the ac2g flows first, so
the two joins are checked against each other too), finds the enclosing operators by
plain interval tests, and computes per operator name: instances owning work, the sum of
their busy times (the union of their work's intervals, by sorting), self times, device
totals and extents. Times come from the JSON text exactly (decimal, as the reader does).
"""
import csv
import decimal
import glob
import gzip
import io
import json
import os
import subprocess
import sys

from cli_checker import Checker, script_args

WORK = ("kernel", "gpu_memcpy", "gpu_memset")
LAUNCH = ("cuda_runtime", "cuda_driver")


def ns(v):
    d = decimal.Decimal(str(v)) if not isinstance(v, decimal.Decimal) else v
    return int((d * 1000).quantize(decimal.Decimal(1), rounding=decimal.ROUND_HALF_UP))


def union(intervals):
    total, hi = 0, None
    lo = None
    for s, e in sorted(intervals):
        if hi is None or s > hi:
            if hi is not None:
                total += hi - lo
            lo, hi = s, e
        else:
            hi = max(hi, e)
    return total + (hi - lo if hi is not None else 0)


def expected_rows(path):
    with gzip.open(path, "rt") as f:
        doc = json.load(f, parse_float=decimal.Decimal)
    ops, launches, work = [], {}, []
    for e in doc["traceEvents"]:
        if e.get("ph") != "X":
            continue
        start = ns(e["ts"])
        end = start + ns(e.get("dur", 0))
        cat = e.get("cat")
        where = (e.get("pid"), e.get("tid"))
        corr = (e.get("args") or {}).get("correlation")
        if cat == "user_annotation":
            ops.append({"name": e["name"], "where": where, "start": start, "end": end, "all": [], "self": []})
        elif cat in LAUNCH and corr is not None:
            launches.setdefault(int(corr), []).append((where, start, end))
        elif cat in WORK and corr is not None:
            work.append((int(corr), start, end))
    for corr, start, end in work:
        for where, ls, le in launches.get(corr, [])[:1]:
            owners = [o for o in ops if o["where"] == where and o["start"] <= ls and le <= o["end"]]
            if not owners:
                continue
            innermost = min(owners, key=lambda o: (o["end"] - o["start"], -o["start"]))
            innermost["self"].append((start, end))
            for o in owners:
                o["all"].append((start, end))
    rows = {}
    for o in ops:
        if not o["all"]:
            continue
        r = rows.setdefault(o["name"], {"count": 0, "busy": 0, "self": 0, "device_total": 0, "extent": 0})
        r["count"] += 1
        r["busy"] += union(o["all"])
        r["self"] += sum(e - s for s, e in o["self"])
        r["device_total"] += sum(e - s for s, e in o["all"])
        r["extent"] += max(e for _, e in o["all"]) - min(s for s, _ in o["all"])
    return rows


def main():
    a, _ = script_args(__doc__.splitlines()[0], "test_stats_operator_time")
    c = Checker()
    check = c.check

    traces = sorted(glob.glob(os.path.join(a.data, "flopline_h200_*.json.gz")))
    check(len(traces) >= 3, f"flopline's recorded traces are there ({len(traces)})")
    for path in traces:
        name = os.path.basename(path)
        want = expected_rows(path)
        check(len(want) > 0, f"{name}: some operator owns GPU work")
        p = subprocess.run([a.flopline, "stats", path, "--by", "op", "--cat", "user_annotation", "--csv"],
                           capture_output=True, text=True, timeout=120)
        if not check(p.returncode == 0, f"{name}: stats exits 0 ({p.stderr.strip()[:200]})"):
            continue
        got = {r["name"]: r for r in csv.DictReader(io.StringIO(p.stdout))}
        check(set(got) == set(want), f"{name}: rows {sorted(got)} vs {sorted(want)}")
        for op, w in want.items():
            r = got.get(op)
            if r is None:
                continue
            for key, col in (("count", "count"), ("busy", "total_ns"), ("busy", "busy_ns"), ("self", "self_ns"),
                             ("device_total", "device_total_ns"), ("extent", "extent_ns")):
                check(int(r[col]) == w[key], f"{name}: {op} {col} {r[col]} vs {w[key]} computed here")
            check(int(r["busy_ns"]) <= int(r["extent_ns"]), f"{name}: {op} busy within its extent")
    print(f"{c.passed} passed, {c.failed} failed")
    return 1 if c.failed else 0


if __name__ == "__main__":
    sys.exit(main())
