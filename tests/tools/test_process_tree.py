"""scripts/process_tree.py: a command run past its time ends whole, a child in a session
of its own (as torchrun's ranks are) included; one within its time gives its status."""
import os
import sys
import tempfile
import time

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "..", "scripts"))
import process_tree  # noqa: E402


def alive(pid):
    try:
        with open(f"/proc/{pid}/stat") as f:
            return f.read().split(")")[-1].split()[0] != "Z"
    except OSError:
        return False


def main():
    failures = []
    with tempfile.TemporaryDirectory() as d:
        pids = os.path.join(d, "pids")
        # A child in a new session and a grandchild below it, then a wait past the timeout.
        script = (f"setsid sh -c 'sleep 300 & echo $! >> {pids}; echo $$ >> {pids}; wait' & "
                  f"sleep 300 & echo $! >> {pids}; wait")
        with open(os.path.join(d, "log"), "w") as log:
            t0 = time.monotonic()
            rc = process_tree.run_whole(["sh", "-c", script], log, timeout=1.5)
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
            rc = process_tree.run_whole(["sh", "-c", "exit 3"], log, timeout=30)
        if rc != 3:
            failures.append(f"a command within its time: expected status 3, got {rc!r}")
    for f in failures:
        print("FAILED:", f)
    print("process_tree:", "failed" if failures else "ok")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
