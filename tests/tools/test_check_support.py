"""scripts/check_support.py: a command run past its time ends whole, a child in a session
of its own (as torchrun's ranks are) included, and one within its time gives its status;
a trace reads the same gzipped or not, as a dict or a bare list of events; the GPUs a
check may use are those nvidia-smi lists, no more than CUDA_VISIBLE_DEVICES names."""
import gzip
import json
import os
import sys
import tempfile
import time

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "..", "scripts"))
import check_support  # noqa: E402


def alive(pid):
    try:
        with open(f"/proc/{pid}/stat") as f:
            return f.read().split(")")[-1].split()[0] != "Z"
    except OSError:
        return False


def check_traces(d, failures):
    events = [{"ph": "X", "cat": "kernel", "name": "k", "ts": 1, "dur": 2}]
    for name, doc in (("dict.json", {"traceEvents": events}), ("list.json", events),
                      ("dict.json.gz", {"traceEvents": events})):
        path = os.path.join(d, name)
        opener = gzip.open if name.endswith(".gz") else open
        with opener(path, "wt") as f:
            json.dump(doc, f)
        got = check_support.trace_events(check_support.read_trace(path))
        if got != events:
            failures.append(f"{name}: read {got!r}")


def check_gpus(d, failures):
    fake = os.path.join(d, "bin")
    os.makedirs(fake)
    with open(os.path.join(fake, "nvidia-smi"), "w") as f:
        f.write("#!/bin/sh\necho 'GPU 0: NVIDIA H200 (UUID: a)'\necho 'GPU 1: NVIDIA H200 (UUID: b)'\n")
    os.chmod(os.path.join(fake, "nvidia-smi"), 0o755)
    saved = {k: os.environ.get(k) for k in ("PATH", "CUDA_VISIBLE_DEVICES")}
    try:
        cases = [(fake, None, 2), (fake, "1", 1), (fake, "0,1,2,3", 2), (fake, "", 0),
                 (os.path.join(d, "none"), None, 0), (os.path.join(d, "none"), "0", 0)]
        for path, visible, expected in cases:
            os.environ["PATH"] = path
            if visible is None:
                os.environ.pop("CUDA_VISIBLE_DEVICES", None)
            else:
                os.environ["CUDA_VISIBLE_DEVICES"] = visible
            got = check_support.visible_gpus()
            if got != expected:
                failures.append(f"visible_gpus() with {'nvidia-smi' if path == fake else 'no driver'} "
                                f"and CUDA_VISIBLE_DEVICES={visible!r}: {got}, expected {expected}")
    finally:
        for k, v in saved.items():
            if v is None:
                os.environ.pop(k, None)
            else:
                os.environ[k] = v


def main():
    failures = []
    with tempfile.TemporaryDirectory() as d:
        check_traces(d, failures)
        check_gpus(d, failures)
    with tempfile.TemporaryDirectory() as d:
        pids = os.path.join(d, "pids")
        # A child in a new session and a grandchild below it, then a wait past the timeout.
        script = (f"setsid sh -c 'sleep 300 & echo $! >> {pids}; echo $$ >> {pids}; wait' & "
                  f"sleep 300 & echo $! >> {pids}; wait")
        with open(os.path.join(d, "log"), "w") as log:
            t0 = time.monotonic()
            rc = check_support.run_whole(["sh", "-c", script], log, timeout=1.5)
            took = time.monotonic() - t0
        if rc != "timeout":
            failures.append(f"expected 'timeout', got {rc!r}")
        if took > 30:
            failures.append(f"took {took:.1f} s to end a 1.5 s run")
        time.sleep(0.2)
        started = [int(x) for x in open(pids).read().split()]
        if len(started) != 3:
            failures.append(f"expected 3 processes started, got {started}")
        left = [p for p in started if alive(p)]
        if left:
            failures.append(f"still running after the timeout: {left}")
            for p in left:
                os.kill(p, 9)
        with open(os.path.join(d, "log"), "w") as log:
            rc = check_support.run_whole(["sh", "-c", "exit 3"], log, timeout=30)
        if rc != 3:
            failures.append(f"a command within its time: expected status 3, got {rc!r}")
    for f in failures:
        print("FAILED:", f)
    print("check_support:", "failed" if failures else "ok")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
