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


# GPU metrics as `flopline run --gpu-metrics` writes them (profiler/src/capture/
# counter_records.cc, the Chrome writer): "C" events named "GPU metrics", cat
# "gpu_metrics", one args member per series, on the GPU device's pid. A sample every
# METRICS_INTERVAL_US from 0; SM active is SM_HIGH for the first half, SM_LOW after.
METRICS_PID = 0
METRICS_SAMPLES = 100
METRICS_INTERVAL_US = 10
METRICS_SERIES = ["SM active %", "tensor pipe active %", "DRAM read GB/s", "DRAM write GB/s"]
SM_HIGH, SM_LOW = 100.0, 25.0


def metrics_value(series, i):
    if series == 0:
        return SM_HIGH if i < METRICS_SAMPLES // 2 else SM_LOW
    if series == 1:
        return 40.0
    return (1000.0 if series == 2 else 500.0) * (1 + i % 4)


def write_gpu_metrics(path):
    ev = [
        meta("process_name", 1636, 0, "python3"),
        meta("thread_name", 1636, 1636, "python3"),
        meta("process_name", METRICS_PID, 0, "GPU 0: NVIDIA H200"),
        {"ph": "M", "name": "process_labels", "pid": METRICS_PID, "tid": 0, "args": {"labels": "GPU 0"}},
        {"ph": "M", "name": "process_sort_index", "pid": METRICS_PID, "tid": 0, "args": {"sort_index": 5000000}},
        meta("thread_name", METRICS_PID, 7, "stream 7"),
        x_event("cudaLaunchKernel", "cuda_runtime", 1636, 1636, 1, 3, {"correlation": 1}),
        x_event("gemm", "kernel", METRICS_PID, 7, 5, 900, {"stream": 7, "correlation": 1}),
    ]
    for s, key in enumerate(METRICS_SERIES):
        for i in range(METRICS_SAMPLES):
            ev.append({"ph": "C", "name": "GPU metrics", "cat": "gpu_metrics", "pid": METRICS_PID,
                       "ts": i * METRICS_INTERVAL_US, "args": {key: metrics_value(s, i)}})
    write_trace(path, ev)
