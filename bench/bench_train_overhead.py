"""What recording costs on a training step, measured so that it can be trusted: each
configuration runs train_loop.py in its own process, the same warm-up for all, in many
interleaved rounds (the order rotates every round), and the result is the median step
time of each configuration with the spread of its round medians. A cost is reported
only where it exceeds that spread.

    python3 bench_train_overhead.py --flopline BUILD/profiler/flopline \
        --floor BUILD/bench/libflopline_floor.so [--rounds 10] [--configs none,floor,flopline,torch]
        [--layers 6] [--deadline SECONDS] [--cpus 2-5]
    python3 bench_train_overhead.py --flopline X --from DIR [DIR ...]   (the table of earlier runs)

Configurations:
  none         no profiler
  floor        libflopline_floor.so: flopline's CUPTI requests, every record discarded
  flopline     flopline run, default kinds
  torch        torch.profiler (CPU and CUDA activities) around the timed steps
  counters     flopline run --counters (default: the first launch of each work key)
  gpu-metrics  flopline run --gpu-metrics
  flush        flopline run --flush-interval 200ms (appends while the timed steps run; the
               default 5s rarely falls inside them)
  self-timed   flopline run with FLOPLINE_SELF_TIMING=1: its step time shows what the
               timing costs, and the table after the main one says where flopline's own
               time went (callbacks, buffer requests and completions, decoding, appends)
Prints a table last; --out DIR keeps every run's JSON and log. --cpus pins every
configuration's process (and what it starts) to the same CPUs, so that where the
scheduler puts the launching thread is not one more difference between processes.
"""
import argparse
import json
import os
import random
import statistics
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
LOOP = os.path.join(HERE, "train_loop.py")


def command(config, args, out_dir, round_no):
    py = [sys.executable, LOOP, "--steps", str(args.steps), "--warmup", str(args.warmup),
          "--layers", str(args.layers), "--label", config]
    result = os.path.join(out_dir, f"{config}-{round_no}.json")
    py += ["--json", result]
    env = dict(os.environ)
    if config == "none":
        return py, env, result
    if config == "torch":
        return py + ["--profiler", "torch"], env, result
    if config == "floor":
        env["CUDA_INJECTION64_PATH"] = args.floor
        env["NVTX_INJECTION64_PATH"] = args.floor
        env["LD_PRELOAD"] = ":".join(p for p in (env.get("LD_PRELOAD", ""), args.floor) if p)
        return py, env, result
    trace = os.path.join(out_dir, f"{config}-{round_no}.trace.json")
    run = [args.flopline, "run", "--no-summary", "-o", trace]
    if config == "counters":
        run.append("--counters")
    elif config == "gpu-metrics":
        run.append("--gpu-metrics")
    elif config == "flush":
        run += ["--flush-interval", "200ms"]
    elif config == "self-timed":
        env["FLOPLINE_SELF_TIMING"] = "1"
    return run + ["--"] + py, env, result


UNIT_MS = {"ns": 1e-6, "us": 1e-3, "ms": 1.0, "s": 1e3}


def self_timing(out_dirs):
    """{part: [(count, total_ms, max_ms) per self-timed run]} from the runs' logs, where
    the capture printed `flopline: self timing: PART: COUNT x MEAN = TOTAL (max MAX)`."""
    import re
    line = re.compile(r"flopline: self timing: ([a-z ]+): ([\d,]+) x [\d.]+ \w+ = ([\d.]+) (\w+) "
                      r"\(max ([\d.]+) (\w+)\)")
    parts = {}
    for d in out_dirs:
        for name in sorted(os.listdir(d)):
            if not (name.startswith("self-timed-") and name.endswith(".log")):
                continue
            with open(os.path.join(d, name)) as f:
                for m in line.finditer(f.read()):
                    parts.setdefault(m.group(1), []).append(
                        (int(m.group(2).replace(",", "")), float(m.group(3)) * UNIT_MS[m.group(4)],
                         float(m.group(5)) * UNIT_MS[m.group(6)]))
    return parts


def print_self_timing(out_dirs):
    parts = self_timing(out_dirs)
    if not parts:
        return
    print()
    print("flopline's own time per self-timed run (whole process, medians over runs)")
    print(f"{'part':22s} {'runs':>4s} {'count':>10s} {'total ms':>10s} {'mean ns':>10s} {'max ms':>8s}")
    for part, runs in parts.items():
        count = statistics.median(r[0] for r in runs)
        total = statistics.median(r[1] for r in runs)
        print(f"{part:22s} {len(runs):4d} {count:10.0f} {total:10.2f} {total * 1e6 / max(count, 1):10.0f} "
              f"{max(r[2] for r in runs):8.3f}")


def parse_cpus(text):
    """'2-5,8' -> {2, 3, 4, 5, 8}; an empty text pins nothing."""
    cpus = set()
    for part in filter(None, text.split(",")):
        lo, _, hi = part.partition("-")
        cpus.update(range(int(lo), int(hi or lo) + 1))
    return cpus


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--flopline", required=True)
    ap.add_argument("--floor", default="")
    ap.add_argument("--configs", default="none,floor,flopline,torch")
    ap.add_argument("--rounds", type=int, default=10)
    ap.add_argument("--steps", type=int, default=60)
    ap.add_argument("--warmup", type=int, default=10)
    ap.add_argument("--layers", type=int, default=6, help="train_loop.py's --layers")
    ap.add_argument("--deadline", type=float, default=None,
                    help="seconds: start no round that would end after this (the table then "
                         "covers the rounds that completed)")
    ap.add_argument("--cpus", default="", help="pin every run to these CPUs, e.g. 2-5")
    ap.add_argument("--out", default=None)
    ap.add_argument("--from", dest="from_dirs", nargs="+", default=None,
                    help="no runs: the table of the rounds in these earlier --out folders "
                         "(their summary.json), taken together")
    args = ap.parse_args()
    configs = args.configs.split(",")
    if args.from_dirs:
        medians = {c: [] for c in configs}
        walls = {c: [] for c in configs}
        for d in args.from_dirs:
            with open(os.path.join(d, "summary.json")) as f:
                earlier = json.load(f)
            for c in configs:
                medians[c] += earlier["medians"].get(c, [])
                walls[c] += earlier["process_s"].get(c, [])
        rc = report(configs, medians, walls, args.from_dirs[0], failures=0, write=False)
        print_self_timing(args.from_dirs)
        return rc
    if "floor" in configs and not os.path.exists(args.floor):
        sys.exit(f"bench_train_overhead: --floor {args.floor!r} not found")
    cpus = parse_cpus(args.cpus)
    pin = (lambda: os.sched_setaffinity(0, cpus)) if cpus else None
    out_dir = args.out or tempfile.mkdtemp(prefix="flopline-overhead-")
    os.makedirs(out_dir, exist_ok=True)
    medians = {c: [] for c in configs}
    walls = {c: [] for c in configs}
    failures = 0
    started = time.perf_counter()
    round_s = None  # the longest round so far
    for r in range(args.rounds):
        elapsed = time.perf_counter() - started
        if args.deadline and round_s and elapsed + round_s > args.deadline:
            print(f"deadline: {r} of {args.rounds} rounds fit in {args.deadline:.0f} s", flush=True)
            break
        round_start = time.perf_counter()
        order = configs[r % len(configs):] + configs[:r % len(configs)]
        for c in order:
            cmd, env, result = command(c, args, out_dir, r)
            t0 = time.perf_counter()
            p = subprocess.run(cmd, env=env, capture_output=True, text=True, preexec_fn=pin)
            wall = time.perf_counter() - t0
            with open(os.path.join(out_dir, f"{c}-{r}.log"), "w") as log:
                log.write(" ".join(cmd) + "\n" + p.stdout + p.stderr)
            if p.returncode != 0 or not os.path.exists(result):
                failures += 1
                print(f"round {r} {c}: exit {p.returncode}\n{p.stderr[-2000:]}", flush=True)
                continue
            with open(result) as f:
                med = json.load(f)["median_ms"]
            medians[c].append(med)
            walls[c].append(wall)
            print(f"round {r} {c:12s} median {med:8.3f} ms  process {wall:6.1f} s", flush=True)
        round_s = max(round_s or 0, time.perf_counter() - round_start)
        # Kept after every round: a call cut short still leaves the rounds it finished.
        with open(os.path.join(out_dir, "summary.json"), "w") as f:
            json.dump({"medians": medians, "process_s": walls}, f, indent=1)

    rc = report(configs, medians, walls, out_dir, failures, write=True)
    print_self_timing([out_dir])
    return rc


def added_interval(values, base, reps=2000, seed=1):
    """The 5th and 95th percentiles of median(values) - median(base) over bootstrap
    resamples of the rounds: how far the added time could move with other rounds."""
    rng = random.Random(seed)
    diffs = sorted(statistics.median(rng.choices(values, k=len(values))) -
                   statistics.median(rng.choices(base, k=len(base))) for _ in range(reps))
    return diffs[int(0.05 * reps)], diffs[int(0.95 * reps) - 1]


def report(configs, medians, walls, out_dir, failures, write):
    """Prints the table of the rounds' medians (and with `write`, keeps summary.json)."""
    base = statistics.median(medians["none"]) if medians.get("none") else None
    summary = {}
    print()
    print(f"{'config':12s} {'rounds':>6s} {'median ms':>10s} {'spread ms':>17s} {'added ms':>9s} "
          f"{'process s':>9s}  added ms, 90% of resamples")
    for c in configs:
        v = medians[c]
        if not v:
            print(f"{c:12s} {'0':>6s}  (no result)")
            continue
        m = statistics.median(v)
        lo, hi = min(v), max(v)
        added = None if base is None else m - base
        # The cost is visible only when it is larger than the spread of either side.
        noise = (hi - lo) if base is None else max(hi - lo, max(medians["none"]) - min(medians["none"]))
        shown = "-" if added is None else (f"{added:+.3f}" if abs(added) > noise else "noise")
        interval = None if base is None or c == "none" else added_interval(v, medians["none"])
        summary[c] = {"median_ms": m, "min_ms": lo, "max_ms": hi, "added_ms": added, "noise_ms": noise,
                      "process_s": statistics.median(walls[c]), "added_interval_ms": interval}
        shown_interval = "" if interval is None else f"  {interval[0]:+.3f}..{interval[1]:+.3f}"
        print(f"{c:12s} {len(v):6d} {m:10.3f} {lo:8.3f}..{hi:8.3f} {shown:>9s} "
              f"{statistics.median(walls[c]):9.1f}{shown_interval}")
    def ratio(a, b):
        sa, sb = summary.get(a), summary.get(b)
        if not sa or not sb or not sb["added_ms"] or sb["added_ms"] <= 0 or sa["added_ms"] is None:
            return None
        return sa["added_ms"] / sb["added_ms"]
    for a, b in (("flopline", "floor"), ("flopline", "torch")):
        r = ratio(a, b)
        if r is not None:
            print(f"added time {a} / {b}: {r:.2f}")
    if "counters" in summary and "flopline" in summary:
        print(f"whole process with --counters / without: "
              f"{summary['counters']['process_s'] / summary['flopline']['process_s']:.2f}")
    if write:
        with open(os.path.join(out_dir, "summary.json"), "w") as f:
            json.dump({"configs": summary, "medians": medians, "process_s": walls}, f, indent=1)
        print(f"results: {out_dir}")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
