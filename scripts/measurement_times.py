#!/usr/bin/env python3
"""Where a counted run's measurements spent their time, from the lines
FLOPLINE_COUNTERS_DEBUG=1 prints ("flopline: counters: measurement N took ..."): count,
median and total per kind (passes, one-pass part or not, number of metrics) or per
measured function, with the medians of configuring, Start, the launch call and Stop
where the line has them.

    measurement_times.py LOG [--by kind|function] [--width 40]
"""
import argparse
import re
import statistics
import sys

TOOK = re.compile(r"measurement (\d+) took ([\d.]+) ms: (\d+) passes( \(a one-pass part\))?, "
                  r"([\d.]+) ms configuring")
STEPS = re.compile(r"\(([\d.]+) ms starting, ([\d.]+) ms launching, ([\d.]+) ms stopping\)")
METRICS = re.compile(r"; metrics: (\S+)")
MEASURING = re.compile(r"counters: measuring (\S+) \(measurement (\d+)\)")


def parse(lines):
    """One dict per measurement line: id, ms, passes, part, configure_ms, and where
    printed start_ms, launch_ms, stop_ms, metrics (their count), function (from the
    "measuring" line before it)."""
    function, out = {}, []
    for line in lines:
        m = MEASURING.search(line)
        if m:
            function[m[2]] = m[1]
            continue
        m = TOOK.search(line)
        if not m:
            continue
        row = {"id": int(m[1]), "ms": float(m[2]), "passes": int(m[3]), "part": bool(m[4]),
               "configure_ms": float(m[5]), "function": function.get(m[1], "?")}
        s = STEPS.search(line)
        if s:
            row.update(start_ms=float(s[1]), launch_ms=float(s[2]), stop_ms=float(s[3]))
        k = METRICS.search(line)
        if k:
            row["metrics"] = len(k[1].split(","))
        out.append(row)
    return out


def key_of(row, by, width):
    if by == "function":
        return row["function"][:width]
    kind = f"{row['passes']} passes" + (", part" if row["part"] else "")
    return kind + (f", {row['metrics']} metrics" if "metrics" in row else "")


def table(rows, by="kind", width=40):
    groups = {}
    for r in rows:
        groups.setdefault(key_of(r, by, width), []).append(r)
    lines = []
    for k, g in sorted(groups.items()):
        med = lambda f: statistics.median(r[f] for r in g)
        text = f"{k}: {len(g)}, median {med('ms'):.1f} ms, total {sum(r['ms'] for r in g) / 1e3:.1f} s"
        text += f" (configuring {med('configure_ms'):.1f}"
        if all("launch_ms" in r for r in g):
            text += f", start {med('start_ms'):.1f}, launch {med('launch_ms'):.1f}, stop {med('stop_ms'):.1f}"
        lines.append(text + ")")
    return lines


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("log")
    ap.add_argument("--by", choices=("kind", "function"), default="kind")
    ap.add_argument("--width", type=int, default=40, help="characters of a function's name kept")
    a = ap.parse_args()
    try:
        with open(a.log, errors="replace") as f:
            rows = parse(f)
    except OSError as e:
        print(f"measurement_times.py: cannot read {a.log}: {e.strerror}", file=sys.stderr)
        return 2
    if not rows:
        print(f"    (no measurement lines in {a.log}: was FLOPLINE_COUNTERS_DEBUG=1 set?)")
        return 0
    for line in table(rows, a.by, a.width):
        print("    " + line)
    return 0


if __name__ == "__main__":
    sys.exit(main())
