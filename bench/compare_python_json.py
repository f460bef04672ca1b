#!/usr/bin/env python3
"""Times python3's json.load on a trace, for comparison with bench_reader.

usage: compare_python_json.py FILE [RUNS]

Reads the whole file (inflating .gz), then times json.loads on the text, and
json.load end to end (file read + parse). Prints seconds and MB/s of JSON text.
"""
import gzip
import json
import sys
import time


def read_text(path):
    with open(path, "rb") as f:
        data = f.read()
    if data[:2] == b"\x1f\x8b":
        data = gzip.decompress(data)
    return data


def main():
    path = sys.argv[1]
    runs = int(sys.argv[2]) if len(sys.argv) > 2 else 1
    for i in range(runs):
        t0 = time.perf_counter()
        data = read_text(path)
        t1 = time.perf_counter()
        doc = json.loads(data)
        t2 = time.perf_counter()
        events = doc if isinstance(doc, list) else doc.get("traceEvents", [])
        mb = len(data) / (1 << 20)
        print("run %d: %d events, %.1f MB; read %.3f s, json.loads %.3f s = %.0f MB/s; end to end %.3f s = %.0f MB/s"
              % (i + 1, len(events), mb, t1 - t0, t2 - t1, mb / (t2 - t1), t2 - t0, mb / (t2 - t0)))
        del doc, events, data


if __name__ == "__main__":
    main()
