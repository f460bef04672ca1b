"""scripts/measurement_times.py: FLOPLINE_COUNTERS_DEBUG's measurement lines, in the
format with Start, launch call and Stop and in the earlier one without, are grouped by
kind (passes, part, metrics) or by the function the "measuring" line named, with the
right counts and medians."""
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "..", "scripts"))
import measurement_times as mt  # noqa: E402

LINES = [
    "flopline: counters: measuring kernA (measurement 0): first of its shape; metrics: learning",
    "flopline: counters: measurement 0 took 230.00 ms: 6 passes, 0.00 ms configuring, 0.00 ms "
    "waiting for queued work, 229.00 ms running (130.00 ms starting, 99.00 ms launching, "
    "0.00 ms stopping), 1.00 ms decoding; 0.55 GiB in use on the device; metrics: m1,m2,m3",
    "flopline: counters: measuring kernB (measurement 1): first of its shape; metrics: learned",
    "flopline: counters: measurement 1 took 80.00 ms: 1 passes (a one-pass part), 3.00 ms "
    "configuring, 0.02 ms waiting for queued work, 76.00 ms running (0.00 ms starting, "
    "76.00 ms launching, 0.00 ms stopping), 1.00 ms decoding; 0.55 GiB in use on the device; "
    "metrics: m1,m2",
    "flopline: counters: measuring kernB (measurement 2): differs; metrics: learned",
    "flopline: counters: measurement 2 took 90.00 ms: 1 passes (a one-pass part), 3.00 ms "
    "configuring, 0.02 ms waiting for queued work, 86.00 ms running (0.00 ms starting, "
    "86.00 ms launching, 0.00 ms stopping), 1.00 ms decoding; 0.55 GiB in use on the device; "
    "metrics: m1,m2",
    # The earlier format: no steps, no metrics.
    "flopline: counters: measurement 3 took 140.00 ms: 2 passes, 0.00 ms configuring, 0.00 ms "
    "waiting for queued work, 139.00 ms running, 1.00 ms decoding; 2.00 GiB in use on the device",
    # With the tensor instruction counts as read, before the metrics.
    "flopline: counters: measurement 4 took 60.00 ms: 2 passes, 0.00 ms configuring, 0.00 ms "
    "waiting for queued work, 59.00 ms running (0.00 ms starting, 59.00 ms launching, "
    "0.00 ms stopping), 1.00 ms decoding; 0.55 GiB in use on the device; instructions: "
    "sm__inst_executed_pipe_tensor.sum=nan, sm__inst_executed_pipe_tensor_op_hmma_type_hfma2.sum=0; "
    "metrics: m1,m2,m3",
    "an unrelated line",
]


def main():
    failures = []
    rows = mt.parse(LINES)
    if [r["id"] for r in rows] != [0, 1, 2, 3, 4]:
        failures.append(f"measurements parsed: {[r['id'] for r in rows]}")
    by_kind = mt.table(rows)
    want = {
        "1 passes, part, 2 metrics: 2, median 85.0 ms, total 0.2 s (configuring 3.0, start 0.0, "
        "launch 81.0, stop 0.0)",
        "2 passes: 1, median 140.0 ms, total 0.1 s (configuring 0.0)",
        "2 passes, 3 metrics: 1, median 60.0 ms, total 0.1 s (configuring 0.0, start 0.0, "
        "launch 59.0, stop 0.0)",
        "6 passes, 3 metrics: 1, median 230.0 ms, total 0.2 s (configuring 0.0, start 130.0, "
        "launch 99.0, stop 0.0)",
    }
    if set(by_kind) != want:
        failures.append("by kind:\n  " + "\n  ".join(by_kind))
    by_function = mt.table(rows, by="function", width=4)
    names = sorted(line.split(":")[0] for line in by_function)
    if names != ["?", "kern"] or not any(line.startswith("kern: 3,") for line in by_function):
        failures.append("by function (4 characters kept, the unnamed one as ?):\n  " +
                        "\n  ".join(by_function))
    for f in failures:
        print("FAIL:", f)
    print("ok" if not failures else f"{len(failures)} failures")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
