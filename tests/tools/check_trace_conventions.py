#!/usr/bin/env python3
"""A trace written the way `flopline run` writes one, read by a reader that is not
flopline's (Python's json) and checked against the conventions other tools rely on:

- Chrome DevTools' trace model sorts every event by "ts" and treats "M" events as
  metadata: each M event has a numeric ts, Chrome's "__metadata" category, a pid and
  tid, and the arg its name calls for (process_name -> name, thread_sort_index ->
  sort_index, ...).
- Complete events have a duration >= 0; every flow id has its start and its end,
  the end binding to the enclosing slice ("bp": "e").
- deviceProperties carries Kineto's keys (those torch.profiler writes, with the same
  values as the bundled torch.profiler trace of an H200) next to flopline's peaks, and
  every M event has the keys Kineto's M events have.
"""
import argparse
import gzip
import json
import os
import subprocess
import sys

META_ARG = {"process_name": "name", "process_labels": "labels", "process_sort_index": "sort_index",
            "thread_name": "name", "thread_sort_index": "sort_index"}
KINETO_DEVICE_KEYS = ("maxThreadsPerBlock", "maxThreadsPerMultiprocessor", "regsPerBlock", "warpSize",
                      "sharedMemPerBlock", "regsPerMultiprocessor", "sharedMemPerBlockOptin",
                      "sharedMemPerMultiprocessor")


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--writer", required=True)
    ap.add_argument("--kineto", required=True, help="a torch.profiler trace of an H200")
    ap.add_argument("--tmp", required=True)
    a = ap.parse_args()
    failed = passed = 0

    def check(cond, what):
        nonlocal failed, passed
        if not cond:
            print("FAIL:", what)
        passed, failed = passed + bool(cond), failed + (not cond)

    os.makedirs(a.tmp, exist_ok=True)
    path = os.path.join(a.tmp, "capture_conventions.json")
    p = subprocess.run([a.writer, path], capture_output=True, text=True, timeout=60)
    check(p.returncode == 0, f"the writer ran ({p.stderr.strip()})")
    with open(path) as f:
        doc = json.load(f)
    with gzip.open(a.kineto, "rt") as f:
        kineto = json.load(f)

    events = doc["traceEvents"]
    check(all(isinstance(e.get("ts"), (int, float)) for e in events), "every event has a numeric ts")
    meta = [e for e in events if e.get("ph") == "M"]
    check(len(meta) >= 4, f"metadata events are written ({len(meta)})")
    kineto_meta_keys = set().union(*(e.keys() for e in kineto["traceEvents"] if e.get("ph") == "M"))
    for e in meta:
        what = f"M {e.get('name')} pid {e.get('pid')} tid {e.get('tid')}"
        check(e.get("cat") == "__metadata", f"{what}: cat __metadata")
        check("pid" in e and "tid" in e, f"{what}: pid and tid")
        key = META_ARG.get(e.get("name"))
        check(key is not None and key in e.get("args", {}), f"{what}: args.{key}")
        check(kineto_meta_keys <= set(e.keys()), f"{what}: Kineto's M keys {sorted(kineto_meta_keys)}")
    for e in events:
        if e.get("ph") == "X":
            check(isinstance(e.get("dur"), (int, float)) and e["dur"] >= 0, f"X {e.get('name')}: dur >= 0")
    flows = {}
    for e in events:
        if e.get("ph") in ("s", "f"):
            flows.setdefault((e.get("cat"), e.get("id")), []).append(e)
    check(len(flows) > 0, "launch flows are written")
    for key, ends in flows.items():
        phases = sorted(x["ph"] for x in ends)
        check(phases == ["f", "s"], f"flow {key}: one start and one end ({phases})")
        check(all(x.get("bp") == "e" for x in ends if x["ph"] == "f"), f"flow {key}: the end binds enclosing")

    devices = doc.get("deviceProperties", [])
    check(len(devices) == 1, f"one device ({len(devices)})")
    want = {k: v for k, v in kineto["deviceProperties"][0].items() if k in KINETO_DEVICE_KEYS}
    check(len(want) == len(KINETO_DEVICE_KEYS), f"the torch.profiler trace has every key ({sorted(want)})")
    for d in devices:
        for k, v in want.items():
            check(d.get(k) == v, f"deviceProperties.{k} = {d.get(k)} (torch.profiler wrote {v})")
        check("peakFlops" in d and d.get("peakSource") == "table", "flopline's peaks are there too")
    print(f"{passed} passed, {failed} failed")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
