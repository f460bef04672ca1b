#!/usr/bin/env python3
"""Writes a large Kineto-style (PyTorch profiler) trace for reader benchmarks.

The layout copies what torch.profiler writes byte for byte in shape: one event per
few lines, two-space indent, 17-digit microsecond timestamps with three decimals,
cpu_op and cuda_runtime X events on host threads, kernel / gpu_memcpy /
gpu_memset / gpu_user_annotation X events on GPU streams with Kineto's kernel args,
ac2g launch flows (s on the launch, f with "bp":"e" on the kernel), fwdbwd flows,
and M events for processes and threads at the end, as Kineto writes them.

usage: make_kineto_trace.py OUT.json [--mb 1024] [--seed 1]
"""
import argparse
import random

KERNELS = [
    "void at::native::vectorized_elementwise_kernel<4, at::native::FillFunctor<float>, "
    "at::detail::Array<char*, 1> >(int, at::native::FillFunctor<float>, at::detail::Array<char*, 1>)",
    "ampere_sgemm_128x64_tn",
    "sm80_xmma_gemm_f32f32_tf32f32_f32_tn_n_tilesize128x128x32_stage3_warpsize2x2x1_tensor16x8x8_kernel",
    "void at::native::(anonymous namespace)::CatArrayBatchedCopy_aligned16_contig<at::native::(anonymous "
    "namespace)::OpaqueType<4u>, unsigned int, 1, 128, 1>(at::native::(anonymous namespace)::OpaqueType<4u>*, "
    "at::native::(anonymous namespace)::CatArrInputTensorMetadata<at::native::(anonymous namespace)::OpaqueType<4u>, "
    "unsigned int, 128, 1>, at::native::(anonymous namespace)::TensorSizeStride<unsigned int, 4u>, int, unsigned int)",
    "void at::native::reduce_kernel<512, 1, at::native::ReduceOp<float, at::native::func_wrapper_t<float, "
    "at::native::sum_functor<float, float, float>::operator()(at::TensorIterator&)::{lambda(float, float)#1}>, "
    "unsigned int, float, 4> >(at::native::ReduceOp<float, at::native::func_wrapper_t<float, "
    "at::native::sum_functor<float, float, float>::operator()(at::TensorIterator&)::{lambda(float, float)#1}>, "
    "unsigned int, float, 4>)",
    "void (anonymous namespace)::softmax_warp_forward<float, float, float, 10, false, false>(float*, float const*, "
    "int, int, int, bool const*, int, bool)",
    "triton_poi_fused_add_mul_0",
    "triton_red_fused__softmax_1",
    "void cutlass::Kernel2<cutlass_80_tensorop_s1688gemm_128x128_16x4_tn_align4>(cutlass_80_tensorop_s1688gemm_"
    "128x128_16x4_tn_align4::Params)",
    "ncclDevKernel_AllReduce_Sum_f32_RING_LL(ncclDevComm*, unsigned long, ncclWork*)",
]
OPS = [
    ("aten::linear", "aten::addmm"),
    ("aten::conv2d", "aten::cudnn_convolution"),
    ("aten::softmax", "aten::_softmax"),
    ("aten::add_", "aten::add_"),
    ("aten::mul", "aten::mul"),
    ("aten::sum", "aten::sum"),
    ("aten::cat", "aten::cat"),
    ("autograd::engine::evaluate_function: AddmmBackward0", "AddmmBackward0"),
    ("Optimizer.step#SGD.step", "aten::_foreach_add_"),
]
RUNTIME = ["cudaLaunchKernel", "cudaLaunchKernel", "cudaLaunchKernel", "cudaMemcpyAsync", "cudaStreamIsCapturing"]
PID = 1102
TIDS = [1102, 1262]
STREAMS = [7, 20, 24]
BASE_US = 1712195495501688  # a real Kineto epoch-microsecond timestamp


def us(t_ns):
    return "%d.%03d" % (t_ns // 1000, t_ns % 1000)


def ts(t_ns):
    return us(t_ns + BASE_US * 1000)


def cpu_op(name, tid, t, dur, ext, rng):
    dims = "[%d, %d], [%d, %d]" % (rng.choice([64, 512, 2048]), 1024, 1024, rng.choice([128, 1024, 4096]))
    return (
        '  {\n    "ph": "X", "cat": "cpu_op", "name": "%s", "pid": %d, "tid": %d,\n'
        '    "ts": %s, "dur": %s,\n    "args": {\n'
        '      "External id": %d,"Record function id": 0, "Sequence number": %d, "Fwd thread id": 0, '
        '"Ev Idx": %d, "Input Dims": [%s], "Input type": ["float", "float"], '
        '"Input Strides": [[1024, 1], [1, 1024]], "Concrete Inputs": ["", ""]\n    }\n  }'
        % (name, PID, tid, ts(t), us(dur), ext, ext // 3, ext % 10000, dims)
    )


def runtime(name, tid, t, dur, ext, corr):
    return (
        '  {\n    "ph": "X", "cat": "cuda_runtime", "name": "%s", "pid": %d, "tid": %d,\n'
        '    "ts": %s, "dur": %s,\n    "args": {\n'
        '      "External id": %d,      "cbid": 211, "correlation": %d\n    }\n  }'
        % (name, PID, tid, ts(t), us(dur), ext, corr)
    )


def kernel(name, stream, t, dur, ext, corr, rng):
    return (
        '  {\n    "ph": "X", "cat": "kernel", "name": "%s", "pid": 0, "tid": %d,\n'
        '    "ts": %s, "dur": %s,\n    "args": {\n'
        '      "External id": %d,      "queued": 0, "device": 0, "context": 1,      "stream": %d, '
        '"correlation": %d,      "registers per thread": %d,      "shared memory": %d,      '
        '"blocks per SM": %.6f,      "warps per SM": %.6f,      "grid": [%d, %d, 1],      '
        '"block": [128, 1, 1],      "est. achieved occupancy %%": %d\n    }\n  }'
        % (name, stream, ts(t), us(dur), ext, stream, corr, rng.choice([16, 30, 128, 255]),
           rng.choice([0, 16384, 49152]), rng.random() * 8, rng.random() * 64,
           rng.randint(1, 4096), rng.randint(1, 128), rng.randint(5, 100))
    )


def memcpy(stream, t, dur, ext, corr, nbytes):
    return (
        '  {\n    "ph": "X", "cat": "gpu_memcpy", "name": "Memcpy HtoD (Pinned -> Device)", "pid": 0, "tid": %d,\n'
        '    "ts": %s, "dur": %s,\n    "args": {\n'
        '      "External id": %d,      "device": 0, "context": 1,      "stream": %d, "correlation": %d,      '
        '"bytes": %d, "memory bandwidth (GB/s)": %.6f\n    }\n  }'
        % (stream, ts(t), us(dur), ext, stream, corr, nbytes, nbytes / max(dur, 1))
    )


def flow(ph, fid, pid, tid, t, cat):
    bp = ', "bp": "e"' if ph == "f" else ""
    return (
        '  {\n    "ph": "%s", "id": %d, "pid": %d, "tid": %d, "ts": %s,\n    "cat": "%s", "name": "%s"%s\n  }'
        % (ph, fid, pid, tid, ts(t), cat, cat, bp)
    )


def metadata():
    out = []
    for pid, name, labels, sort in [(PID, "python", "CPU", PID), (0, "python", "GPU 0", 5000000)]:
        out.append('  {\n    "name": "process_name", "ph": "M", "ts": %s, "pid": %d, "tid": 0,\n'
                   '    "args": {\n      "name": "%s"\n    }\n  }' % (ts(0), pid, name))
        out.append('  {\n    "name": "process_labels", "ph": "M", "ts": %s, "pid": %d, "tid": 0,\n'
                   '    "args": {\n      "labels": "%s"\n    }\n  }' % (ts(0), pid, labels))
        out.append('  {\n    "name": "process_sort_index", "ph": "M", "ts": %s, "pid": %d, "tid": 0,\n'
                   '    "args": {\n      "sort_index": %d\n    }\n  }' % (ts(0), pid, sort))
    for tid in TIDS:
        out.append('  {\n    "name": "thread_name", "ph": "M", "ts": %s, "pid": %d, "tid": %d,\n'
                   '    "args": {\n      "name": "thread %d (python)"\n    }\n  }' % (ts(0), PID, tid, tid))
    for s in STREAMS:
        out.append('  {\n    "name": "thread_name", "ph": "M", "ts": %s, "pid": 0, "tid": %d,\n'
                   '    "args": {\n      "name": "stream %d"\n    }\n  }' % (ts(0), s, s))
    return out


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("out")
    ap.add_argument("--mb", type=float, default=1024.0, help="approximate size in MiB")
    ap.add_argument("--seed", type=int, default=1)
    a = ap.parse_args()
    rng = random.Random(a.seed)
    target = int(a.mb * (1 << 20))
    head = (
        '{\n  "schemaVersion": 1,\n  "deviceProperties": [\n    {\n      "id": 0, "name": "NVIDIA H200", '
        '"totalGlobalMem": 150110011392,\n      "computeMajor": 9, "computeMinor": 0,\n      '
        '"maxThreadsPerBlock": 1024, "maxThreadsPerMultiprocessor": 2048,\n      "regsPerBlock": 65536, '
        '"warpSize": 32,\n      "sharedMemPerBlock": 49152, "numSms": 132\n    }\n  ],\n'
        '  "distributedInfo": {"backend": "nccl", "rank": 0, "world_size": 8},\n  "record_shapes": 1,\n'
        '  "traceEvents": [\n'
    )
    written = 0
    events = 0
    t = 1000  # ns after BASE_US
    gpu_free = {s: t for s in STREAMS}
    ext = 1
    corr = 135000
    fwdbwd = 1
    with open(a.out, "w") as f:
        f.write(head)
        written += len(head)
        first = True
        chunk = []
        while written < target:
            tid = rng.choice(TIDS)
            outer, inner = rng.choice(OPS)
            n_launch = rng.randint(1, 3)
            outer_dur = 8000 + n_launch * 12000 + rng.randint(0, 20000)
            evs = [cpu_op(outer, tid, t, outer_dur, ext, rng)]
            ext += 1
            ti = t + 1500 + rng.randint(0, 500)
            evs.append(cpu_op(inner, tid, ti, outer_dur - 3000, ext, rng))
            if rng.random() < 0.1:
                evs.append(flow("f" if tid == 1262 else "s", fwdbwd, PID, tid, ti, "fwdbwd"))
                fwdbwd += 1
            ext += 1
            tl = ti + 1000
            for _ in range(n_launch):
                name = rng.choice(RUNTIME)
                ldur = 3000 + rng.randint(0, 6000)
                evs.append(runtime(name, tid, tl, ldur, ext, corr))
                if name in ("cudaLaunchKernel", "cudaMemcpyAsync"):
                    stream = rng.choice(STREAMS)
                    start = max(gpu_free[stream], tl + 4000 + rng.randint(0, 3000))
                    kdur = rng.randint(1000, 400000)
                    evs.append(flow("s", corr, PID, tid, tl, "ac2g"))
                    if name == "cudaMemcpyAsync":
                        evs.append(memcpy(stream, start, kdur, ext, corr, rng.choice([4096, 1 << 20, 64 << 20])))
                    else:
                        evs.append(kernel(rng.choice(KERNELS), stream, start, kdur, ext, corr, rng))
                    evs.append(flow("f", corr, 0, stream, start, "ac2g"))
                    gpu_free[stream] = start + kdur + 1000
                corr += 1
                tl += ldur + 500
            t += outer_dur + rng.randint(500, 5000)
            text = ",\n".join(evs)
            chunk.append(text if first else ",\n" + text)
            first = False
            written += len(chunk[-1])
            events += len(evs)
            if len(chunk) >= 2000:
                f.write("".join(chunk))
                chunk = []
        meta = metadata()
        chunk.append(",\n" + ",\n".join(meta))
        events += len(meta)
        # No baseTimeNanoseconds: ts are absolute epoch microseconds (17 digits), as in
        # HTA's ns_resolution trace.
        tail = '\n],\n  "traceName": "bench.pt.trace.json",\n  "displayTimeUnit": "ms"\n}\n'
        chunk.append(tail)
        f.write("".join(chunk))
    print("%s: %d events" % (a.out, events))


if __name__ == "__main__":
    main()
