"""Small traces whose pictures and tables the tests know in advance."""
from viewer_harness import meta, write_trace, x_event

# Times in microseconds. At t = SCAN_US every slice row but the launcher's is covered,
# and no label (labels are centred in their slices) comes near it.
SCAN_US = 40
TRACK_ROWS = {  # name -> (pid, tid, start, dur)
    "step": (1, 1, 0, 100),
    "forward": (1, 1, 10, 80),
    "matmul_op": (1, 1, 20, 60),
    "load_batch": (1, 2, 5, 90),
    "span_a": (1, 3, 0, 60),
    "span_b": (1, 3, 30, 70),  # overlaps span_a without nesting: an extra row
    "gemm_kernel": (2, 7, 15, 70),
}
SLICE_ROWS = 8         # the 7 above in 7 rows, plus the launcher's row
ROWS_AT_SCAN = 7       # rows with a slice at SCAN_US


def write_tracks(path):
    ev = [
        meta("process_name", 1, 0, "app"),
        meta("thread_name", 1, 1, "main"),
        meta("thread_name", 1, 2, "loader"),
        meta("thread_name", 1, 3, "overlap"),
        meta("thread_name", 1, 4, "launcher"),
        meta("process_name", 2, 0, "GPU 0"),
        meta("thread_name", 2, 7, "stream 7"),
    ]
    for name, (pid, tid, start, dur) in TRACK_ROWS.items():
        cat = "kernel" if name == "gemm_kernel" else "user_annotation"
        args = {"grid": [128, 1, 1], "block": [256, 1, 1], "stream": 7} if cat == "kernel" else None
        ev.append(x_event(name, cat, pid, tid, start, dur, args))
    ev.append(x_event("cudaLaunchKernel", "cuda_runtime", 1, 4, 12, 2, {"correlation": 1}))
    ev.append({"ph": "s", "id": 1, "pid": 1, "tid": 4, "ts": 12.5, "cat": "ac2g", "name": "ac2g"})
    ev.append({"ph": "f", "id": 1, "pid": 2, "tid": 7, "ts": 15, "cat": "ac2g", "name": "ac2g", "bp": "e"})
    write_trace(path, ev)


# The operator table fixture: name -> list of (start_us, dur_us); FLOPs and bytes per
# instance.
OPS = {
    "matmul": ([(0, 10), (100, 20), (200, 30), (300, 40)], 1e9, 1e6),
    "softmax": ([(50, 5), (150, 15)], 1e7, 4e6),
}
PEAK_TF32 = 4.947e14
PEAK_BW = 4.8e12


def write_ops(path):
    ev = [meta("process_name", 10, 0, "train"), meta("thread_name", 10, 11, "main")]
    for name, (spans, flops, nbytes) in OPS.items():
        for start, dur in spans:
            ev.append(x_event(name, "user_annotation", 10, 11, start, dur,
                              {"flops": flops, "bytes": nbytes, "precision": "tf32"}))
    devices = [{"id": 0, "name": "NVIDIA H200", "numSms": 132, "computeMajor": 9, "computeMinor": 0,
                "peakFlops": {"fp32": 6.69e13, "tf32": PEAK_TF32, "bf16": 9.89e14},
                "peakBandwidthBytesPerSec": PEAK_BW, "peakSource": "table"}]
    write_trace(path, ev, deviceProperties=devices)
