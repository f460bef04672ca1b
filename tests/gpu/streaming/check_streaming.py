"""Checks the streaming capture with bounded memory (docs/CAPTURE.md, "While the program
runs") on long runs of launch_loop.py at 30,000 launches a second:

  plain    `flopline run` for MINUTES: exits 0, nothing dropped, every launch's kernel
           in the trace, the process's resident memory after the first minute grows by
           less than 50 MB to the end (median of the second minute against median of
           the last; the peak is printed beside it), and `flopline stats` reads the
           finished file;
  metrics  the same with --gpu-metrics (its samples stream too);
  kill     SIGKILL at KILL minutes: the file left holds the first KILL-1 minutes and
           more (kernels that start after KILL-1 minutes), and `flopline stats` reads it.

Each mode runs on its own GPU when there are enough (CUDA_VISIBLE_DEVICES), else one
after the other. The process's RSS is sampled every 5 s. Prints a table; exit 1 when a
check failed, 77 (ctest's skip) without a CUDA device.

  check_streaming.py --flopline build/profiler/flopline --out DIR
                     [--minutes 8] [--kill-at 5] [--rate 30000] [--modes plain,metrics,kill]
                     [--format json.gz|json] [--read stats|summary]
"""
import argparse
import json
import os
import re
import signal
import subprocess
import sys
import threading
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "..", "scripts"))
import check_support  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))
LOOP = os.path.join(HERE, "launch_loop.py")
GROWTH_LIMIT_MB = 50


def rss_mb(pid):
    try:
        with open(f"/proc/{pid}/status") as f:
            for line in f:
                if line.startswith("VmRSS:"):
                    return int(line.split()[1]) / 1024
    except OSError:
        pass
    return None


class Run:
    def __init__(self, mode, args, gpu):
        self.mode = mode
        self.dir = os.path.join(args.out, mode)
        os.makedirs(self.dir, exist_ok=True)
        self.trace = os.path.join(self.dir, "trace." + args.format)
        self.pid_file = os.path.join(self.dir, "loop.pid")
        for p in (self.trace, self.pid_file):
            if os.path.exists(p):
                os.remove(p)
        seconds = args.minutes * 60
        self.kill_after = args.kill_at * 60 if mode == "kill" else None
        cmd = [args.flopline, "run", "-o", self.trace]
        if mode == "metrics":
            cmd.append("--gpu-metrics")
        cmd += ["--", sys.executable, LOOP, "--seconds", str(seconds), "--rate", str(args.rate),
                "--pid-file", self.pid_file]
        env = dict(os.environ)
        if gpu is not None:
            env["CUDA_VISIBLE_DEVICES"] = str(gpu)
        self.log = open(os.path.join(self.dir, "run.log"), "w")
        self.samples = []  # (seconds since the loop started, RSS MB)
        self.proc = subprocess.Popen(cmd, stdout=self.log, stderr=subprocess.STDOUT, env=env)
        self.watch = threading.Thread(target=self.sample, daemon=True)
        self.watch.start()

    def sample(self):
        pid = None
        while self.proc.poll() is None and pid is None:
            try:
                with open(self.pid_file) as f:
                    pid = int(f.read().strip() or 0) or None
            except (OSError, ValueError):
                time.sleep(0.5)
        if pid is None:
            return
        start = time.monotonic()
        # Written as sampled, so a call cut short still brings back the samples so far.
        live = open(os.path.join(self.dir, "rss.txt"), "w")
        while self.proc.poll() is None:
            t = time.monotonic() - start
            if self.kill_after is not None and t >= self.kill_after:
                os.kill(pid, signal.SIGKILL)
                return
            r = rss_mb(pid)
            if r is None:
                return
            self.samples.append((t, r))
            live.write(f"{t:.0f} {r:.1f}\n")
            live.flush()
            time.sleep(5)

    def wait(self):
        code = self.proc.wait()
        self.watch.join()
        self.log.close()
        with open(os.path.join(self.dir, "run.log"), errors="replace") as f:
            self.output = f.read()
        return code


def stats(flopline, path, extra=()):
    t0 = time.monotonic()
    r = subprocess.run([flopline, "stats", path, "--json", *extra], capture_output=True, text=True)
    took = time.monotonic() - t0
    if r.returncode != 0:
        return None, took, r.stderr.strip()[-400:]
    return json.loads(r.stdout), took, ""


def summary_kernels(run_output):
    """The kernel slices `flopline run`'s summary read back from the finished file (its
    "Kernels by GPU time" table's total), or None without that table."""
    at = run_output.find("== Kernels by GPU time ==")
    if at < 0:
        return None
    m = re.search(r"Total: [\d,]+ ns in ([\d,]+) slices", run_output[at:])
    return int(m.group(1).replace(",", "")) if m else None


def rss_figures(samples):
    """Growth of the resident memory after the first minute, and its peak. Each append
    holds its records decoded into events for a moment (about 150 MB at 150,000
    launches), so single samples jump by that much and fall back: growth compares the
    median of the second minute with the median of the last minute, where a leak shows
    and an append's moment does not. The peak is reported beside it."""
    after = [(t, r) for t, r in samples if t >= 60]
    if not after:
        return {"rss_1min": None, "rss_max_after": None, "rss_end": None, "growth": None}
    end = after[-1][0]
    second = sorted(r for t, r in after if t < 120) or [after[0][1]]
    last = sorted(r for t, r in after if t >= end - 60)
    median = lambda v: v[len(v) // 2]
    return {"rss_1min": median(second), "rss_max_after": max(r for _, r in after),
            "rss_end": median(last), "growth": median(last) - median(second)}


def check(run, code, args):
    """One finished run's row for the table and its failures."""
    failures = []
    row = {"mode": run.mode, "exit": code}
    out = run.output
    m = re.search(r'\{"launches": (\d+)', out)
    row["launches"] = int(m.group(1)) if m else None
    dropped = re.search(r"(\d+) activity records were dropped", out)
    row["dropped"] = int(dropped.group(1)) if dropped else 0
    row.update(rss_figures(run.samples))
    row["file_mb"] = os.path.getsize(run.trace) / 2**20 if os.path.exists(run.trace) else 0
    summary = summary_kernels(out) if args.read == "summary" else None
    if summary is not None:
        # flopline run's own summary read the finished file with the same reader.
        s, took, err = {"slices": summary}, 0.0, ""
    else:
        s, took, err = stats(args.flopline, run.trace) if row["file_mb"] else (None, 0, "no file")
    row["stats_s"] = took
    row["kernels"] = s["slices"] if s else None
    if s is None:
        failures.append(f"{run.mode}: flopline stats failed: {err}")
    if run.mode == "kill":
        if code != -signal.SIGKILL and code != 128 + signal.SIGKILL:
            failures.append(f"kill: exit {code}, expected SIGKILL")
        kept = (args.kill_at - 1) * 60
        late, _, err = stats(args.flopline, run.trace, ["--range", f"{kept:.0f}s:"])
        row["after_kept"] = late["slices"] if late else None
        if not late or late["slices"] == 0:
            failures.append(f"kill: no kernel starts after {kept:.0f} s in the file left ({err})")
    else:
        if code != 0:
            failures.append(f"{run.mode}: exit {code}")
        if row["dropped"]:
            failures.append(f"{run.mode}: {row['dropped']} records dropped")
        if row["launches"] is None or row["kernels"] is None or row["kernels"] < row["launches"]:
            failures.append(f"{run.mode}: {row['kernels']} kernels in the trace for "
                            f"{row['launches']} launches")
        if row["growth"] is None or row["growth"] >= GROWTH_LIMIT_MB:
            failures.append(f"{run.mode}: RSS grew {row['growth']} MB after the first minute "
                            f"(limit {GROWTH_LIMIT_MB})")
    return row, failures


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--flopline", required=True)
    p.add_argument("--out", required=True)
    p.add_argument("--minutes", type=float, default=8)
    p.add_argument("--kill-at", type=float, default=5)
    p.add_argument("--rate", type=float, default=30000)
    p.add_argument("--modes", default="plain,metrics,kill")
    p.add_argument("--read", choices=["stats", "summary"], default="stats",
                   help="how a finished trace is read back: a separate `flopline stats`, or "
                        "the summary `flopline run` printed from it (the same reader, once: "
                        "an 8-minute trace takes a minute or more to read)")
    p.add_argument("--format", choices=["json", "json.gz"], default="json.gz",
                   help="the trace's file type (json reads back faster: about 700 bytes a launch)")
    args = p.parse_args()
    n = check_support.visible_gpus()
    if n == 0:
        print("no CUDA device: skipped")
        return 77
    modes = [m for m in args.modes.split(",") if m]
    parallel = n >= len(modes)
    print(f"{n} GPU(s); modes {modes} {'in parallel' if parallel else 'one after the other'}; "
          f"{args.minutes} min at {args.rate:.0f} launches/s, kill at {args.kill_at} min", flush=True)
    runs = []
    # Each run is checked as soon as it ends, in its own thread: reading a finished
    # 8-minute trace takes tens of seconds, and the kill run ends minutes before the others.
    results = {}

    def check_when_done(run):
        code = run.wait()
        print(f"{run.mode}: ended (exit {code}); reading its trace", flush=True)
        results[run.mode] = check(run, code, args)
        with open(os.path.join(run.dir, "row.json"), "w") as f:
            json.dump(results[run.mode], f)

    if parallel:
        runs = [Run(m, args, i) for i, m in enumerate(modes)]
        threads = [threading.Thread(target=check_when_done, args=(r,)) for r in runs]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
    else:
        for m in modes:
            runs.append(Run(m, args, None))
            check_when_done(runs[-1])
    rows = [results[r.mode][0] for r in runs]
    failures = [f for r in runs for f in results[r.mode][1]]

    def fmt(v, spec=""):
        return "-" if v is None else format(v, spec)

    print(f"{'mode':8} {'exit':>5} {'launches':>10} {'kernels':>10} {'dropped':>8} "
          f"{'RSS min 2':>10} {'RSS peak':>8} {'growth MB':>10} {'file MB':>8} {'stats s':>8} "
          f"{'after kept':>10}")
    for r in rows:
        print(f"{r['mode']:8} {r['exit']:>5} {fmt(r['launches']):>10} {fmt(r['kernels']):>10} "
              f"{r['dropped']:>8} {fmt(r['rss_1min'], '.1f'):>10} {fmt(r['rss_max_after'], '.1f'):>8} "
              f"{fmt(r['growth'], '.1f'):>10} {r['file_mb']:>8.1f} {r['stats_s']:>8.1f} "
              f"{fmt(r.get('after_kept')):>10}")
    for f in failures:
        print("FAILED:", f)
    print("streaming checks:", "passed" if not failures else f"{len(failures)} failed")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
