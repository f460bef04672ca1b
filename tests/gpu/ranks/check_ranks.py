"""The multi-rank and diff checks of docs/STATS.md and docs/DIFF.md on a GPU machine:

  straggler  a two-rank DDP job (torchrun, with --profiler-steps 'step *': each rank's
             trace holds ProfilerStep#0..13) whose rank 1 sleeps --straggle-ms before
             each backward: `flopline stats DIR --steps 'step *' --skip-first 4` names
             rank 1 as the rank the others wait for, and rank 0 waits about that long a
             step (between 0.75x and 1.5x); each rank's breakdown parts add up to its
             window, and its communication is there.
  tf32       one loop with TF32 matmuls off, then on, both with --counters:
             `flopline diff --by op` classifies every GEMM operator row as a precision
             change (fp32 to tf32, from the counted tensor instructions).
  batch      batch 8 against batch 16: the GEMM operator rows are more work (their
             FLOPs per call, from the operators' shapes, double).

Prints a table and one line per failure; exit 1 when a check failed, 77 (ctest's skip)
without the GPUs it needs.

  check_ranks.py --flopline build/profiler/flopline --out DIR [--parts straggler,tf32,batch]
"""
import argparse
import json
import os
import shutil
import subprocess
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "..", "scripts"))
import check_support  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))
LOOP = os.path.join(HERE, "ranks_loop.py")
GEMM_OPS = ("aten::mm", "aten::addmm")


def run(cmd, log, timeout):
    """The command's exit status; 99 when a process of it ended before its final write
    (its trace holds only what was appended), which this check counts as a failure.
    Every step of each write is in the log (FLOPLINE_WRITE_DEBUG)."""
    env = dict(os.environ, FLOPLINE_WRITE_DEBUG="1")
    with open(log, "w") as f:
        # Killed whole past its time, ranks included (scripts/check_support.py).
        code = check_support.run_whole(cmd, f, timeout, env=env)
        if code == "timeout":
            f.write(f"\ntimed out after {timeout} s\n")
            return 124
    with open(log, errors="replace") as f:
        text = f.read()
    if "ended before its final write" in text:
        print(f"{os.path.basename(log)}: a process ended before its final write:\n" +
              "\n".join(l for l in text.splitlines() if "flopline:" in l)[-3000:])
        return 99
    return code


def json_of(cmd):
    r = subprocess.run(cmd, capture_output=True, text=True, timeout=300)
    if r.returncode not in (0, 3):
        raise RuntimeError(f"{' '.join(cmd)}: exit {r.returncode}: {r.stderr.strip()[-600:]}")
    return json.loads(r.stdout)


def straggler(a, rows, failures):
    d = os.path.join(a.out, "straggler")
    shutil.rmtree(d, ignore_errors=True)
    steps, skip = 14, 4
    os.makedirs(d)
    code = run([a.flopline, "run", "--profiler-steps", "step *", "-o", os.path.join(d, "straggler.json"),
                "--", "torchrun", "--standalone", "--nproc_per_node=2",
                LOOP, "--steps", str(steps), "--straggle-ms", str(a.straggle_ms)],
               os.path.join(a.out, "straggler.log"), 240)
    if code != 0:
        failures.append(f"straggler: the job exited {code} (straggler.log)")
        return
    # --profiler-steps: torch.profiler's step marker over each "step N" range, for HTA.
    for f in sorted(os.listdir(d)):
        if not f.endswith(".json"):
            continue
        with open(os.path.join(d, f)) as fh:
            names = sorted(e.get("name", "") for e in json.load(fh)["traceEvents"]
                           if str(e.get("name", "")).startswith("ProfilerStep#"))
        want = sorted(f"ProfilerStep#{i}" for i in range(steps))
        rows.append((f"straggler: {f} ProfilerStep markers", len(names), steps))
        if names != want:
            failures.append(f"straggler: {f} has ProfilerStep markers {names[:4]}..., expected #0..#{steps - 1}")
    window = ["--steps", "step *", "--skip-first", str(skip)]
    s = json_of([a.flopline, "stats", d, "--json", *window])
    w = s.get("collective_waits")
    if not w:
        failures.append("straggler: no collective_waits in `flopline stats --json`")
        return
    kept = steps - skip
    per_step = {r["rank"]: r["wait_ns"] / kept / 1e6 for r in w["ranks"]}
    rows.append(("straggler: rank the others wait for", w["waited_for_rank"], 1))
    for rank in sorted(per_step, key=lambda r: (r is None, r)):
        rows.append((f"straggler: rank {rank} wait per step (ms)", round(per_step[rank], 2),
                     f"~{a.straggle_ms:g}" if rank == 0 else "small"))
    if w["waited_for_rank"] != 1:
        failures.append(f"straggler: waited-for rank {w['waited_for_rank']}, expected 1")
    if not (0.75 * a.straggle_ms <= per_step.get(0, 0) <= 1.5 * a.straggle_ms):
        failures.append(f"straggler: rank 0 waits {per_step.get(0)} ms a step, expected about "
                        f"{a.straggle_ms:g}")
    if per_step.get(1, 1e9) > 0.25 * a.straggle_ms:
        failures.append(f"straggler: rank 1 waits {per_step.get(1)} ms a step, expected little")
    b = json_of([a.flopline, "stats", d, "--report", "breakdown", "--json", *window])
    for dev in b["devices"]:
        parts = dev["compute_ns"] + dev["communication_ns"] + dev["memory_ns"] + dev["idle_ns"]
        rows.append((f"straggler: rank {dev['rank']} compute/comm/memory/idle % of window",
                     "/".join(f"{100 * dev[k] / dev['window_ns']:.1f}" for k in
                              ("compute_ns", "communication_ns", "memory_ns", "idle_ns")), "sum 100"))
        if abs(parts - dev["window_ns"]) > 0.001 * dev["window_ns"]:
            failures.append(f"straggler: rank {dev['rank']}'s parts add to {parts} ns, window "
                            f"{dev['window_ns']} ns")
        if dev["communication_total_ns"] <= 0:
            failures.append(f"straggler: rank {dev['rank']} has no communication in its steps")


def diff_rows(a, before, after):
    j = json_of([a.flopline, "diff", before, after, "--by", "op", "--json"])
    return [r for r in j["rows"] if r["name"] in GEMM_OPS]


def pair(a, name, extra_a, extra_b, flags):
    files = []
    for label, extra in (("a", extra_a), ("b", extra_b)):
        path = os.path.join(a.out, f"{name}-{label}.json")
        code = run([a.flopline, "run", *flags, "-o", path, "--", sys.executable, LOOP,
                    "--steps", "6", "--ops", *extra], os.path.join(a.out, f"{name}-{label}.log"), 240)
        if code != 0:
            return None, f"{name}: the {label} run exited {code} ({name}-{label}.log)"
        files.append(path)
    return files, None


def tf32(a, rows, failures):
    files, err = pair(a, "tf32", ["--tf32", "off"], ["--tf32", "on"], ["--counters"])
    if err:
        failures.append(err)
        return
    gemms = diff_rows(a, *files)
    for r in gemms:
        rows.append((f"tf32: {r['name']}", r["change"],
                     f"{(r['a'] or {}).get('precision')} -> {(r['b'] or {}).get('precision')}"))
    if not gemms:
        failures.append("tf32: no GEMM operator rows in the diff")
    for r in gemms:
        if r["change"] != "precision changed":
            failures.append(f"tf32: {r['name']} is '{r['change']}', expected 'precision changed'")


def batch(a, rows, failures):
    files, err = pair(a, "batch", ["--batch", "8"], ["--batch", "16"], [])
    if err:
        failures.append(err)
        return
    gemms = diff_rows(a, *files)
    for r in gemms:
        rows.append((f"batch: {r['name']}", r["change"], f"work {r.get('work_pct')}%"))
    if not gemms:
        failures.append("batch: no GEMM operator rows in the diff")
    for r in gemms:
        if r["change"] != "more work" or not r.get("work_pct") or abs(r["work_pct"] - 100) > 5:
            failures.append(f"batch: {r['name']} is '{r['change']}' with work "
                            f"{r.get('work_pct')}%, expected 'more work' at +100%")


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--flopline", required=True)
    p.add_argument("--out", required=True)
    p.add_argument("--parts", default="straggler,tf32,batch")
    p.add_argument("--straggle-ms", type=float, default=20)
    a = p.parse_args()
    os.makedirs(a.out, exist_ok=True)
    parts = [x for x in a.parts.split(",") if x]
    n = check_support.visible_gpus()
    if n == 0:
        print("skipped: no CUDA device")
        return 77
    if "straggler" in parts and n < 2:
        print(f"skipped: {n} GPU, the straggler check needs 2")
        return 77
    rows, failures = [], []
    for part in parts:
        try:
            {"straggler": straggler, "tf32": tf32, "batch": batch}[part](a, rows, failures)
        except (RuntimeError, KeyError, ValueError, subprocess.TimeoutExpired) as e:
            failures.append(f"{part}: {e}")
    width = max([len(r[0]) for r in rows] + [10])
    print(f"{'check':{width}}  {'got':>24}  expected")
    for name, got, want in rows:
        print(f"{name:{width}}  {str(got):>24}  {want}")
    for f in failures:
        print("FAILED:", f)
    print("rank and diff checks:", "passed" if not failures else f"{len(failures)} failed")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
