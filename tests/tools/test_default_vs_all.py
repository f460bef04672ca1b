"""bench/counters_default_vs_all.py: where the two runs launched different kernels, the
launches are paired by the longest common runs of names, so that one kernel launched in
only one run does not end the comparison there; what disagrees after it is still found."""
import contextlib
import io
import json
import os
import sys
import tempfile

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "..", "bench"))
import counters_default_vs_all as dva  # noqa: E402


def trace(path, launches):
    events = []
    for i, (name, flops, source) in enumerate(launches):
        events.append({"ph": "X", "cat": "kernel", "name": name, "ts": 10 * i, "dur": 5,
                       "args": {"correlation": i + 1, "flops": flops, "flops source": source,
                                "dram bytes written": 1000.0, "grid": "[1,1,1]", "block": "[1,1,1]"}})
    with open(path, "w") as f:
        json.dump({"traceEvents": events}, f)


def main():
    failures = []
    pairs = dva.pair_launches(["a", "b", "c", "d"], ["a", "x", "b", "c", "d"])
    if pairs != [(0, 0), (1, 2), (2, 3), (3, 4)]:
        failures.append(f"pairs around an extra launch: {pairs}")
    if dva.pair_launches(["a", "b"], ["a", "b"]) != [(0, 0), (1, 1)]:
        failures.append("the same launches do not pair one to one")
    if dva.pair_launches([], ["a"]) != []:
        failures.append("nothing to pair paired something")
    with tempfile.TemporaryDirectory() as d:
        default = os.path.join(d, "default.json")
        every = os.path.join(d, "all.json")
        same = "counters (same work)"
        trace(default, [("a", 10.0, "counters"), ("b", 20.0, same), ("c", 30.0, same),
                        ("d", 40.0, same)])
        # The every-launch run launched one kernel more, early; after it, d's FLOPs differ.
        trace(every, [("a", 10.0, "counters"), ("x", 5.0, "counters"), ("b", 20.0, "counters"),
                      ("c", 30.0, "counters"), ("d", 44.0, "counters")])
        out = io.StringIO()
        with contextlib.redirect_stdout(out):
            pct, wrong = dva.compare(default, every, top=5)
        text = out.getvalue()
        if wrong != 1:
            failures.append(f"{wrong} disagreeing launches, not 1 (d's FLOPs):\n{text}")
        if abs(pct - 75.0) > 1e-9:
            failures.append(f"agreeing share {pct}, not 75% (3 of 4 equal launches):\n{text}")
        if "comparing the 4 that pair up" not in text or "(0 and 1 left out)" not in text:
            failures.append(f"the pairing is not reported:\n{text}")
    for f in failures:
        print("FAIL:", f)
    print("ok" if not failures else f"{len(failures)} failures")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
