"""Checks that NCCL kernels carry their call's size from NCCL's NVTX ranges and
nccl-tests' bandwidths (docs/STATS.md, "Collectives"): runs collectives_loop.py on two
GPUs under `flopline run`, then, on each rank's trace, every expected call has kernels
with exactly its message size, algbw = size / kernel time, and busbw by nccl-tests'
factor; `flopline stats --json` lists the same rows. Rank 1 arrives late at a few
all-reduces (a host sleep): rank 0's kernels must wait about that long, computed here
independently and in `flopline stats`' collective waits; every file carries
distributedInfo and the run's shared baseTimeNanoseconds. Prints what it found.
Exit 77 (ctest's skip) with fewer than two CUDA devices.

  check_collectives.py --flopline build/profiler/flopline --out DIR
"""
import argparse
import json
import os
import subprocess
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "..", "scripts"))
import check_support  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))


def kernels(path):
    events = check_support.trace_events(check_support.read_trace(path))
    return [e for e in events if e.get("ph") == "X" and e.get("cat") == "kernel"]


def factor(collective, n):
    if collective == "AllReduce":
        return 2.0 * (n - 1) / n
    if collective in ("AllGather", "ReduceScatter", "AlltoAll"):
        return (n - 1) / n
    return 1.0


def size_of(collective, message, n):
    return message * n if collective in ("AllGather", "ReduceScatter", "AlltoAll") else message


def check_ranks(files, expected):
    """distributedInfo and a shared time base in every rank's file, and the straggler's
    calls: rank 0's kernels wait about the straggler's sleep (absolute times, base +
    ts, computed here independently of flopline)."""
    problems = []
    docs = {f: check_support.read_trace(f) for f in files}
    bases = {d.get("baseTimeNanoseconds") for d in docs.values()}
    if len(bases) != 1:
        problems.append(f"baseTimeNanoseconds differ across ranks: {sorted(map(str, bases))}")
    starts = {}
    for f, d in docs.items():
        info = d.get("distributedInfo", {})
        if not isinstance(info.get("rank"), int) or info.get("world_size") != expected["world_size"]:
            problems.append(f"{os.path.basename(f)}: distributedInfo {info}")
            continue
        s = expected["straggler"]
        ks = sorted((float(e["ts"]), e) for e in d["traceEvents"]
                    if e.get("ph") == "X" and e.get("cat") == "kernel"
                    and e.get("args", {}).get("collective message bytes") == s["message_bytes"])
        base = int(d.get("baseTimeNanoseconds", 0))
        starts[info["rank"]] = [base + round(ts * 1000) for ts, _ in ks]
    s = expected["straggler"]
    if len(starts) == 2 and all(len(v) == s["calls"] for v in starts.values()):
        waits = [starts[1][i] - starts[0][i] for i in range(s["calls"])]
        print("straggler: rank 0 waits (ms): " + ", ".join(f"{w / 1e6:.1f}" for w in waits))
        if not all(0.75 * s["seconds"] * 1e9 <= w <= 3 * s["seconds"] * 1e9 for w in waits):
            problems.append(f"rank 0's waits {waits} ns, want about {s['seconds'] * 1e9:.0f}")
    else:
        problems.append(f"straggler kernels: {[(k, len(v)) for k, v in starts.items()]}")
    return problems


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    ap.add_argument("--flopline", required=True)
    ap.add_argument("--out", required=True)
    ap.add_argument("--timeout", type=float, default=240)
    args = ap.parse_args()
    if check_support.visible_gpus() < 2:
        print("skipped: fewer than two CUDA devices")
        return 77
    os.makedirs(args.out, exist_ok=True)
    expected_path = os.path.join(args.out, "expected.json")
    env = dict(os.environ, EXPECTED_OUT=expected_path, NCCL_NVLS_ENABLE="0",
               TORCH_SYMM_MEM_DISABLE_MULTICAST="1", NVSHMEM_DISABLE_NVLS="1")
    trace_dir = os.path.join(args.out, "traces")
    os.makedirs(trace_dir, exist_ok=True)
    for old in os.listdir(trace_dir):
        os.remove(os.path.join(trace_dir, old))
    cmd = [args.flopline, "run", "--no-summary", "-o", os.path.join(trace_dir, "coll.json"), "--", "torchrun",
           "--standalone", "--nproc_per_node=2", os.path.join(HERE, "collectives_loop.py")]
    log = os.path.join(args.out, "run.log")
    with open(log, "w") as f:
        rc = check_support.run_whole(cmd, f, args.timeout, env=env)  # killed whole past its time
    if rc != 0:
        print(f"flopline run: exit {rc}\n" + open(log).read()[-3000:])
        return 1
    expected = json.load(open(expected_path))
    n = expected["world_size"]
    files = sorted(os.path.join(trace_dir, f) for f in os.listdir(trace_dir)
                   if f.endswith(".json") or f.endswith(".json.gz"))
    status = 0
    if len(files) != n:
        print(f"expected {n} traces, found {files}")
        status = 1
    print(f"{'file':<28} {'collective':<14} {'message':>10} {'kernels':>7} "
          f"{'algbw GB/s':>10} {'busbw GB/s':>10}  problems")
    for path in files:
        ks = kernels(path)
        nccl = [k for k in ks if "nccl" in k["name"].lower()]
        with_size = [k for k in nccl if "collective" in k.get("args", {})]
        for want in expected["calls"]:
            mine = [k for k in with_size
                    if k["args"]["collective"] == want["collective"]
                    and k["args"].get("collective message bytes") == want["message_bytes"]]
            problems = []
            if len(mine) < want["calls"]:
                problems.append(f"{len(mine)} kernels, want {want['calls']}")
            algbws, busbws = [], []
            for k in mine:
                a = k["args"]
                dur_ns = float(k["dur"]) * 1000.0
                s = size_of(want["collective"], want["message_bytes"], n)
                if a.get("collective ranks") != n:
                    problems.append(f"ranks {a.get('collective ranks')}")
                if not a.get("collective", "") in k["name"] and "SendRecv" not in k["name"]:
                    problems.append(f"kernel {k['name'][:40]}")
                # ts/dur are microseconds with three decimals: 1 ns of rounding.
                want_alg = s / dur_ns
                got_alg = a.get("algbw (GB/s)")
                if got_alg is None or abs(got_alg - want_alg) > want_alg * (2.0 / dur_ns) + 1e-9:
                    problems.append(f"algbw {got_alg} want {want_alg:.3f}")
                got_bus = a.get("busbw (GB/s)")
                if got_bus is None or abs(got_bus - (got_alg or 0) * factor(want["collective"], n)) > 1e-6 * max(1.0, got_bus or 0):
                    problems.append(f"busbw {got_bus}")
                algbws.append(got_alg or 0)
                busbws.append(got_bus or 0)
            med = lambda v: sorted(v)[len(v) // 2] if v else 0.0
            print(f"{os.path.basename(path)[:28]:<28} {want['collective']:<14} "
                  f"{want['message_bytes']:>10} {len(mine):>7} {med(algbws):>10.1f} "
                  f"{med(busbws):>10.1f}  {'; '.join(sorted(set(problems))) or 'ok'}")
            if problems:
                status = 1
        print(f"{os.path.basename(path)}: {len(nccl)} NCCL kernels, {len(with_size)} with a size")
    for p in check_ranks(files, expected):
        print("ranks: " + p)
        status = 1
    stats = subprocess.run([args.flopline, "stats", "--json", trace_dir], capture_output=True,
                           text=True, timeout=120)
    if stats.returncode != 0:
        print("flopline stats failed: " + stats.stderr[-2000:])
        return 1
    doc = json.loads(stats.stdout)
    waits = doc.get("collective_waits") or {}
    s = expected["straggler"]
    by_rank = {r["rank"]: r for r in waits.get("ranks", [])}
    print(f"flopline stats collective_waits: {waits.get('collectives')} matched, "
          f"{waits.get('unmatched')} unmatched, waited for rank {waits.get('waited_for_rank')}; "
          + "; ".join(f"rank {k}: waited {v['wait_ns'] / 1e6:.1f} of {v['kernel_ns'] / 1e6:.1f} ms, "
                      f"last {v['last_arrivals']}" for k, v in sorted(by_rank.items())))
    if (waits.get("unmatched") != 0 or 0 not in by_rank or 1 not in by_rank
            or by_rank[0]["wait_ns"] < 0.75 * s["calls"] * s["seconds"] * 1e9
            or by_rank[1]["last_arrivals"] < s["calls"]):
        print("flopline stats: collective waits do not show rank 1's lateness")
        status = 1
    rows = doc.get("collectives", [])
    for want in expected["calls"]:
        row = [r for r in rows if r["collective"] == want["collective"]
               and r["message_bytes"] == want["message_bytes"] and r["ranks"] == n]
        if not row or row[0]["kernels"] < want["calls"] * n or row[0]["busbw_gbps"] is None:
            print(f"flopline stats: no row for {want} in {rows}")
            status = 1
    print(f"flopline stats --json: {len(rows)} collective rows")
    print("check_collectives: " + ("ok" if status == 0 else "FAILED"))
    return status


if __name__ == "__main__":
    sys.exit(main())
