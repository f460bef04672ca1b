// Hardware counters that give a kernel's FLOPs and DRAM bytes (docs/COUNTERS.md).
//
// Which metrics: chosen from the chip's own list of counter metrics (CUPTI's profiler
// host API names them per chip), by rules, not by a table for one GPU:
//
//   tensor ops   sm__ops_path_tensor_op_<path>_src_<type>[_dst_<type>] per instruction
//                path (hgmma, hmma, utchmma, ...) where the chip lists them: one count
//                per operation, so a matmul's count is 2*m*n*k. Where a path is given
//                with and without its destination type, the destination-typed ones are
//                taken (they partition the others). A source type with no per-path
//                metric falls back to sm__ops_path_tensor_src_<type>[_dst_<type>].
//                Integer types (int8) are counted apart: ops, not FLOPs. The
//                "_sparsity_on" count of each chosen metric, where listed, says how many
//                of its ops ran on sparse operands.
//   SIMT         sm__sass_thread_inst_executed_op_{d,f,h}{add,mul,fma}_pred_on (smsp__
//                when sm__ is not listed): thread instructions; an FMA is two FLOPs.
//   DRAM read    dram__bytes_read (or dram__sectors_read x 32 bytes).
//   DRAM write   lts__t_sectors_srcunit_tex_op_write x 32 bytes: what the kernel stores,
//                which the write-back L2 sends to DRAM (docs/COUNTERS.md says why not
//                dram__bytes_write: under replay it holds the replay's own write-backs).
//   duration     gpu__time_duration: the kernel's GPU time during the measurement (a
//                measured launch's activity record carries no times of its own).
//   tensor inst  sm__inst_executed_pipe_tensor less ..._op_hmma_type_hfma2 where listed
//                (HFMA2 that the tensor pipe executes); with the instruction types (the
//                two-pass first set) ..._op_{hmma,dmma,imma} less HFMA2 instead, never
//                beside the pipe's total: matrix instructions executed. Not
//                a FLOP count: it tells whether a launch measured with only its
//                function's learned tensor metrics did tensor work those metrics miss
//                (function_metrics.h). Outside the pass count of the plan: it is
//                measured only beside them.
//
// Values are the metrics' ".sum" over the whole GPU for one kernel launch.
//
// Cost: the profiler replays a measured kernel once per pass, and how many passes a set
// of metrics needs depends on the chip. Sparsity counts and integer tensor ops are
// optional: given a way to count passes, each is kept only when it adds no pass (it is
// then listed in CounterPlan::left_out), so they never make counting slower.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <span>
#include <string>
#include <utility>
#include <vector>

namespace flopline::capture {

enum class CounterUse : std::uint8_t {
  kTensorOps,           // tensor-core operations
  kTensorSparseOps,     // the part of a kTensorOps metric that ran sparse (not added again)
  kSimtOps,             // SIMT thread instructions
  kDramRead,            // bytes (or sectors) read from DRAM
  kDramWrite,           // sectors the kernel stores to L2: written back to DRAM
  kDuration,            // the kernel's GPU time under replay (ns): places a replayed kernel
  kTensorInstructions,  // tensor instructions executed: a check, not FLOPs
  // GMMA instructions (`path` "gmma"; float ones are a part of HMMA's, integer ones of
  // IMMA's): what a function's two-pass first set can see of its tensor work
  // (function_metrics.h), never FLOPs.
  kTensorInstructionType,
};

struct CounterMetric {
  std::string name;  // as the profiler takes it: "<base metric>.sum"
  CounterUse use = CounterUse::kTensorOps;
  std::string precision;  // "tf32", "bf16", "fp16", "fp8", "fp64", "fp32", "int8"; "" for DRAM
  std::string path;       // "hgmma", "hmma", ... for tensor ops; "tensor" for a per-type
                          // total; "simt"; "dram"
  double per_count = 1;   // FLOPs (or bytes) per counted unit: 2 for an FMA, 32 per sector;
                          // -1 for instructions subtracted from the tensor instructions
  bool integer = false;   // integer tensor ops: counted apart from FLOPs
  // Kept only when it adds no replay pass (sparsity counts, integer ops, duration).
  bool optional() const {
    return integer || use == CounterUse::kTensorSparseOps || use == CounterUse::kDuration;
  }
  // Tensor operations (FLOPs or integer ops) or their sparse part.
  bool tensor() const {
    return use == CounterUse::kTensorOps || use == CounterUse::kTensorSparseOps;
  }
};

struct CounterPlan {
  // The counting metrics, then the tensor-instruction metrics (kTensorInstructions, then
  // kTensorInstructionType), which `passes` does not include.
  std::vector<CounterMetric> metrics;
  // What this chip cannot count with the metrics it lists, in words ("fp16 SIMT fma").
  std::vector<std::string> missing;
  // Optional metrics left out because they would add a replay pass.
  std::vector<std::string> left_out;
  std::size_t passes = 0;  // replay passes the counting metrics need; 0 when not known
  std::vector<std::string> names() const;
  bool empty() const { return metrics.empty(); }
};

// How many replay passes a set of metric names needs on the chip; nothing when it
// cannot tell (the names are then taken as they are).
using PassCounter = std::function<std::optional<std::size_t>(const std::vector<std::string>&)>;

// `chip_metrics`: the chip's base metric names (no rollup), in any order.
// `instruction_types`: the tensor instructions by type where the chip lists GMMA (HMMA,
// DMMA, IMMA less HFMA2 as kTensorInstructions, GMMA as kTensorInstructionType) in place
// of the pipe's total: what the two-pass first set reads (function_metrics.h).
CounterPlan plan_counter_metrics(std::span<const std::string> chip_metrics,
                                 const PassCounter& passes = {}, bool instruction_types = false);

// What one launch did, from its counter values.
struct CountedWork {
  double flops = 0;  // floating-point operations: tensor and SIMT
  // Per precision, largest first; tensor and SIMT operations of one type add up ("fp16").
  std::vector<std::pair<std::string, double>> flops_by_precision;
  double tensor_flops = 0;
  // Per tensor instruction path ("hgmma", "hmma", ...; "tensor" for per-type totals).
  std::vector<std::pair<std::string, double>> tensor_flops_by_path;
  double sparse_ops = 0;  // tensor operations on sparse operands (a part of the above)
  double int_ops = 0;     // integer tensor operations (int8), not in flops
  std::optional<double> dram_read_bytes;
  std::optional<double> dram_write_bytes;
  std::optional<double> duration_ns;          // gpu__time_duration of the measured launch
  std::optional<double> tensor_instructions;  // kTensorInstructions, summed
  // The precision with the most FLOPs ("" when there are none): the peak that "% of
  // peak" divides by.
  std::string precision;

  std::optional<double> dram_bytes() const;
};

// `values` are parallel to plan.metrics; negative or NaN values (not measured) count as
// absent.
CountedWork evaluate_counters(const CounterPlan& plan, std::span<const double> values);

// A device-wide metric sampled over time (--gpu-metrics, PM sampling).
struct GpuMetric {
  std::string name;   // "sm__cycles_active.avg.pct_of_peak_sustained_elapsed"
  std::string label;  // the counter track's series: "SM active %"
  double scale = 1;   // value shown = metric value * scale (bytes/s -> GB/s)
};

// SM active %, tensor pipe active % and DRAM read and write GB/s, from the chip's list
// of PM-sampling metrics (base names); what it lacks goes to `missing`.
std::vector<GpuMetric> plan_gpu_metrics(std::span<const std::string> chip_metrics,
                                        std::vector<std::string>* missing);

// Which precision the trace and "% of peak" call an operation type ("tf32_dst_fp32" ->
// "tf32", "fp4_fp6_fp8" -> "fp8"); "" for types that are not numbers (int1).
std::string precision_of_tensor_type(std::string_view source_type);

}  // namespace flopline::capture
