// The capture configuration every entry point shares (FLOPLINE_* variables, kind lists,
// output names), the run manifest that keeps processes' files apart, and the stored
// calibration format.
#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdio>
#include <map>
#include <string>

#include "flopline/capture/calibration.h"
#include "flopline/capture/capture_config.h"
#include "flopline/capture/output_manifest.h"

namespace flopline::capture {
namespace {

GetEnv env_of(const std::map<std::string, std::string>& m) {
  return [m](const char* name) -> const char* {
    const auto it = m.find(name);
    return it == m.end() ? nullptr : it->second.c_str();
  };
}

TEST(ActivityKinds, NamesGroupsAndRemovals) {
  std::string error;
  EXPECT_EQ(parse_activity_kinds("kernel", &error), kKindKernel);
  EXPECT_EQ(parse_activity_kinds("kernel, memcpy ,NVTX", &error),
            kKindKernel | kKindMemcpy | kKindNvtx);
  EXPECT_EQ(parse_activity_kinds("api", &error), kKindRuntime | kKindDriver);
  EXPECT_EQ(parse_activity_kinds("all", &error), kAllKinds);
  EXPECT_EQ(parse_activity_kinds("CONCURRENT_KERNEL,MARKER_DATA,SYNCHRONIZATION", &error),
            kKindKernel | kKindNvtx | kKindSync);
  EXPECT_EQ(parse_activity_kinds("-overhead", &error), kDefaultKinds & ~kKindOverhead);
  EXPECT_EQ(parse_activity_kinds("all,-driver,-name", &error),
            kAllKinds & ~(kKindDriver | kKindName));
  EXPECT_FALSE(parse_activity_kinds("kernel,bogus", &error));
  EXPECT_NE(error.find("'bogus'"), std::string::npos);
  EXPECT_FALSE(parse_activity_kinds("kernel,,memcpy", &error));
  EXPECT_FALSE(parse_activity_kinds("", &error));
}

TEST(ActivityKinds, DefaultRecordsCallsThroughCallbacks) {
  std::string error;
  // The default records the calls that matter through callbacks, not through RUNTIME and
  // DRIVER activity records (which instrument every call).
  EXPECT_EQ(kDefaultKinds & (kKindRuntime | kKindDriver | kKindQueries | kKindSync), 0u);
  EXPECT_EQ(kDefaultKinds & (kKindKernel | kKindMemcpy | kKindMemset | kKindNvtx),
            kKindKernel | kKindMemcpy | kKindMemset | kKindNvtx);
  EXPECT_NE(kDefaultKinds & kKindCalls, 0u);
  EXPECT_EQ(parse_activity_kinds("calls", &error), kKindCalls);
  EXPECT_EQ(parse_activity_kinds("default,-calls,api", &error),
            (kDefaultKinds & ~kKindCalls) | kKindRuntime | kKindDriver);
  EXPECT_EQ(activity_kinds_to_string(kKindKernel | kKindCalls), "kernel,calls");
  // "all": every activity kind (every call, queries included), no callbacks.
  EXPECT_EQ(parse_activity_kinds("all", &error), kAllKinds);
  EXPECT_EQ(kAllKinds & kKindCalls, 0u);
}

TEST(ActivityKinds, RecordedCalls) {
  for (const char* name :
       {"cudaLaunchKernel_v7000", "cudaLaunchKernelExC_v11060", "cuLaunchKernel",
        "cuLaunchKernelEx", "cudaGraphLaunch_v10000", "cudaMemcpyAsync_v3020",
        "cuMemcpyHtoDAsync_v2", "cudaMemsetAsync", "cudaMalloc_v3020", "cudaMallocAsync_v11020",
        "cuMemAlloc_v2", "cudaFree_v3020", "cuMemFree_v2", "cudaDeviceSynchronize_v3020",
        "cudaStreamSynchronize", "cuCtxSynchronize", "cudaEventRecord", "cudaStreamWaitEvent",
        "cudaDeviceReset_v3020"}) {
    EXPECT_TRUE(is_recorded_call(name)) << name;
  }
  for (const char* name :
       {"cudaGetDevice_v3020", "cuGetProcAddress_v2", "cudaStreamIsCapturing_v10000",
        "cudaSetDevice_v3020", "cudaEventCreate", "cuDeviceGetAttribute", "cuCtxGetCurrent",
        "cudaGetLastError_v3020", "cudaStreamCreateWithFlags"}) {
    EXPECT_FALSE(is_recorded_call(name)) << name;
  }
}

TEST(ActivityKinds, DefaultLeavesOutQueries) {
  std::string error;
  EXPECT_EQ(parse_activity_kinds("default", &error), kDefaultKinds);
  EXPECT_EQ(kDefaultKinds & kKindQueries, 0u);
  EXPECT_EQ(parse_activity_kinds("all,-queries", &error), kAllKinds & ~kKindQueries);
}

TEST(ApiNames, BaseNamesAndQueries) {
  EXPECT_EQ(api_base_name("cudaGetDeviceProperties_v2_v12000"), "cudaGetDeviceProperties");
  EXPECT_EQ(api_base_name("cudaLaunchKernel_v7000"), "cudaLaunchKernel");
  EXPECT_EQ(api_base_name("cuMemAlloc_v2"), "cuMemAlloc");
  EXPECT_EQ(api_base_name("cuLaunchKernel"), "cuLaunchKernel");
  EXPECT_EQ(api_base_name("_v2"), "_v2");
  EXPECT_EQ(api_base_name("cuFoo_vx"), "cuFoo_vx");
  EXPECT_TRUE(is_query_api("cudaGetDevice_v3020"));
  EXPECT_TRUE(is_query_api("cuGetProcAddress_v2"));
  EXPECT_TRUE(is_query_api("cuDeviceGetAttribute"));
  EXPECT_FALSE(is_query_api("cudaLaunchKernel_v7000"));
  EXPECT_FALSE(is_query_api("cuLaunchKernelEx"));
  EXPECT_FALSE(is_query_api("cudaMemcpyAsync_v3020"));
  EXPECT_FALSE(is_query_api("cudaStreamSynchronize_v3020"));
  EXPECT_FALSE(is_query_api("cudaSetDevice_v3020"));
}

TEST(ActivityKinds, CanonicalText) {
  EXPECT_EQ(activity_kinds_to_string(kAllKinds), "all");
  EXPECT_EQ(activity_kinds_to_string(kDefaultKinds), "default");
  EXPECT_EQ(activity_kinds_to_string(kKindKernel | kKindNvtx), "kernel,nvtx");
  EXPECT_EQ(activity_kinds_to_string(0), "none");
  std::string error;
  for (std::uint32_t k : {kKindKernel | kKindMemcpy, kKindRuntime | kKindDriver | kKindSync}) {
    EXPECT_EQ(parse_activity_kinds(activity_kinds_to_string(k), &error), k);
  }
}

// One context: the replay has drained it, so the flush loses nothing. Several: another
// context's running work would come back without times, so only when asked.
TEST(CountersForcedFlush, OnWithOneContextUnlessTheVariableSaysOtherwise) {
  EXPECT_TRUE(counters_forced_flush(env_of({}), false));
  EXPECT_FALSE(counters_forced_flush(env_of({}), true));
  EXPECT_TRUE(counters_forced_flush(env_of({{"FLOPLINE_COUNTERS_FORCED_FLUSH", "1"}}), true));
  EXPECT_FALSE(counters_forced_flush(env_of({{"FLOPLINE_COUNTERS_FORCED_FLUSH", "0"}}), false));
}

TEST(ProcessRank, FirstSetVariableInOrder) {
  EXPECT_FALSE(process_rank(env_of({})));
  EXPECT_EQ(process_rank(env_of({{"SLURM_PROCID", "3"}})), "3");
  EXPECT_EQ(process_rank(env_of({{"SLURM_PROCID", "3"}, {"OMPI_COMM_WORLD_RANK", "5"}})), "5");
  EXPECT_EQ(process_rank(env_of({{"RANK", "1"}, {"OMPI_COMM_WORLD_RANK", "5"}})), "1");
  EXPECT_EQ(process_rank(env_of({{"RANK", ""}, {"PMI_RANK", "7"}})), "7");
}

TEST(OutputPath, TemplatesAndDirectories) {
  const auto no_dir = [](const std::string&) { return false; };
  const auto dir = [](const std::string& p) { return p == "traces"; };
  EXPECT_EQ(expand_output_template("t-%p-%r-%%-%x.json", 42, std::string("3")), "t-42-3-%-%x.json");
  EXPECT_EQ(expand_output_template("t-%r.json", 42, std::nullopt), "t-42.json");
  EXPECT_EQ(expand_output_template("t%", 1, std::nullopt), "t%");
  EXPECT_EQ(output_path_for_process("", 42, std::nullopt, no_dir), "flopline-42.json");
  EXPECT_EQ(output_path_for_process("", 42, std::string("2"), no_dir), "flopline-rank2.json");
  EXPECT_EQ(output_path_for_process("out/", 42, std::nullopt, no_dir), "out/flopline-42.json");
  EXPECT_EQ(output_path_for_process("traces", 42, std::nullopt, dir), "traces/flopline-42.json");
  EXPECT_EQ(output_path_for_process("run.json.gz", 42, std::nullopt, no_dir), "run.json.gz");
}

TEST(CaptureEnv, ReadsAndFallsBack) {
  CaptureEnv e = read_capture_env(env_of({{"FLOPLINE_OUTPUT", "x.json"},
                                          {"FLOPLINE_KINDS", "kernel,nvtx"},
                                          {"FLOPLINE_MAX_MEMORY_MB", "64"},
                                          {"FLOPLINE_MANIFEST", "/tmp/m"},
                                          {"FLOPLINE_RUN_ID", "abc-1"},
                                          {"FLOPLINE_RUN_PID", "4711"},
                                          {"RANK", "0"}}));
  EXPECT_EQ(e.run_id, "abc-1");
  EXPECT_EQ(e.run_pid, 4711);
  EXPECT_EQ(e.output, "x.json");
  EXPECT_EQ(e.kinds, kKindKernel | kKindNvtx);
  EXPECT_EQ(e.max_memory_bytes, 64ull << 20);
  EXPECT_EQ(e.manifest, "/tmp/m");
  EXPECT_EQ(e.rank, "0");
  EXPECT_TRUE(e.warnings.empty());
  e = read_capture_env(
      env_of({{"FLOPLINE_KINDS", "kernels,nope"}, {"FLOPLINE_MAX_MEMORY_MB", "-3"}}));
  EXPECT_EQ(e.kinds, kDefaultKinds);
  EXPECT_EQ(e.max_memory_bytes, 1024ull << 20);
  EXPECT_EQ(e.warnings.size(), 2u);
  EXPECT_EQ(read_capture_env(env_of({{"FLOPLINE_RUN_PID", "x"}})).run_pid, 0);
  // A self-timing value that is neither on nor off is said, not ignored.
  e = read_capture_env(env_of({{"FLOPLINE_SELF_TIMING", "abc"}}));
  EXPECT_FALSE(e.self_timing);
  ASSERT_EQ(e.warnings.size(), 1u);
  EXPECT_NE(e.warnings[0].find("FLOPLINE_SELF_TIMING"), std::string::npos);
  EXPECT_TRUE(read_capture_env(env_of({{"FLOPLINE_SELF_TIMING", "0"}})).warnings.empty());
  // The memory cap's limit is the command line's too (test_cli_run.cc).
  EXPECT_EQ(read_capture_env(env_of({{"FLOPLINE_MAX_MEMORY_MB", "1099511627777"}})).warnings.size(),
            1u);
  // The counters' exclusion pattern: taken when it is a regular expression.
  e = read_capture_env(env_of({{"FLOPLINE_COUNTERS_EXCLUDE", "^custom_ar"}}));
  EXPECT_EQ(e.counters_exclude, "^custom_ar");
  EXPECT_TRUE(e.warnings.empty());
  e = read_capture_env(env_of({{"FLOPLINE_COUNTERS_EXCLUDE", "[oops"}}));
  EXPECT_EQ(e.counters_exclude, "");
  ASSERT_EQ(e.warnings.size(), 1u);
  EXPECT_NE(e.warnings[0].find("FLOPLINE_COUNTERS_EXCLUDE"), std::string::npos);
}

TEST(Manifest, PathWithPid) {
  EXPECT_EQ(path_with_pid("a/t.json", 7), "a/t-7.json");
  EXPECT_EQ(path_with_pid("t.json.gz", 7), "t-7.json.gz");
  EXPECT_EQ(path_with_pid("dir.json/trace", 7), "dir.json/trace-7");
  EXPECT_EQ(path_with_pid(".json", 7), ".json-7");
}

std::string temp_manifest() {
  char name[] = "/tmp/flopline-manifest-test-XXXXXX";
  const int fd = mkstemp(name);
  EXPECT_GE(fd, 0);
  close(fd);
  return name;
}

TEST(Manifest, SecondProcessGetsItsOwnFile) {
  const std::string m = temp_manifest();
  EXPECT_EQ(claim_output_path(m, "t.json", 100), "t.json");
  EXPECT_EQ(claim_output_path(m, "t.json", 100), "t.json");  // the same process again
  EXPECT_EQ(claim_output_path(m, "t.json", 200), "t-200.json");
  EXPECT_EQ(claim_output_path(m, "u.json", 200), "u.json");
  const auto entries = read_manifest(m);
  ASSERT_EQ(entries.size(), 3u);
  EXPECT_EQ(entries[0].pid, 100);
  EXPECT_EQ(entries[0].state, ManifestState::kClaimed);
  EXPECT_EQ(entries[1].path, "t-200.json");
  EXPECT_EQ(entries[2].path, "u.json");
  EXPECT_EQ(claim_output_path("", "t.json", 300), "t.json");
  std::remove(m.c_str());
  EXPECT_TRUE(read_manifest(m).empty());
}

TEST(Manifest, OnlyFilesOnDiskAreListedAndFailuresSayWhy) {
  const std::string m = temp_manifest();
  claim_output_path(m, "a.json", 1);
  claim_output_path(m, "b.json", 2);
  claim_output_path(m, "c.json", 3);
  note_partial(m, 1, "a.json", "up to 5.0 s");
  note_written(m, 2, "b.json", "10 events, 2 kernels");
  note_failed(m, 3, "c.json", "No space left\ton device");  // a tab never splits a note
  note_partial(m, 1, "a.json", "up to 9.0 s");
  const auto files = run_files(read_manifest(m));
  ASSERT_EQ(files.size(), 3u);
  EXPECT_EQ(files[0].path, "a.json");
  EXPECT_EQ(files[0].state, ManifestState::kPartial);
  EXPECT_EQ(files[0].detail, "up to 9.0 s");
  EXPECT_EQ(files[1].state, ManifestState::kWritten);
  EXPECT_EQ(files[1].detail, "10 events, 2 kernels");
  EXPECT_EQ(files[2].state, ManifestState::kFailed);
  EXPECT_EQ(files[2].detail, "No space left on device");
  // A finished write is never hidden by a later partial note.
  note_written(m, 1, "a.json", "done");
  note_partial(m, 1, "a.json", "late");
  EXPECT_EQ(run_files(read_manifest(m))[0].state, ManifestState::kWritten);
  // A claim alone (a process that never wrote) lists nothing.
  claim_output_path(m, "d.json", 4);
  EXPECT_EQ(run_files(read_manifest(m)).size(), 3u);
  std::remove(m.c_str());
}

TEST(RunOutputPath, APlainFileBelongsToTheCommandsOwnProcess) {
  auto no_dir = [](const std::string&) { return false; };
  EXPECT_EQ(run_output_path("/o/t.json", 50, std::nullopt, true, true, no_dir), "/o/t.json");
  EXPECT_EQ(run_output_path("/o/t.json", 51, std::nullopt, false, true, no_dir), "/o/t-51.json");
  EXPECT_EQ(run_output_path("/o/t.json.gz", 52, std::string("1"), false, true, no_dir),
            "/o/t-rank1.json.gz");
  // Outside a run the path is taken as given.
  EXPECT_EQ(run_output_path("/o/t.json", 51, std::nullopt, false, false, no_dir), "/o/t.json");
  // Templates and directories already name each process.
  EXPECT_EQ(run_output_path("/o/t-%p.json", 51, std::nullopt, false, true, no_dir), "/o/t-51.json");
  EXPECT_EQ(run_output_path("/o/", 51, std::nullopt, false, true, no_dir), "/o/flopline-51.json");
  EXPECT_EQ(run_output_path("/o/", 51, std::string("3"), false, true, no_dir),
            "/o/flopline-rank3.json");
  auto dir = [](const std::string& p) { return p == "/o/d"; };
  EXPECT_EQ(run_output_path("/o/d", 51, std::nullopt, false, true, dir), "/o/d/flopline-51.json");
}

TEST(Calibration, RoundTripAndApply) {
  CalibratedPeaks p;
  p.device = "NVIDIA H200";
  p.uuid = "GPU-1234";
  p.date = "2026-11-20T10:00:00Z";
  p.peak_flops = {{"fp32", 5.1e13}, {"tf32", 4.17e14}, {"bf16", 7.94e14}};
  p.peak_bytes_per_s = 4.3e12;
  const auto back = parse_calibration(format_calibration(p));
  ASSERT_TRUE(back.has_value());
  EXPECT_EQ(back->device, p.device);
  EXPECT_EQ(back->uuid, p.uuid);
  ASSERT_EQ(back->peak_flops.size(), 3u);
  EXPECT_NEAR(back->peak_flops[2].second, 7.94e14, 1e9);
  EXPECT_NEAR(back->peak_bytes_per_s, 4.3e12, 1e6);

  trace::DeviceProperties d;
  d.peak_flops = {{"fp64", 6.7e13}, {"fp32", 6.7e13}};
  d.peak_bytes_per_s = 4.8e12;
  d.peak_source = "table";
  apply_calibration(d, *back);
  EXPECT_EQ(d.peak_source, "calibrated");
  EXPECT_NEAR(d.peak_flops_for("fp32"), 5.1e13, 1e8);
  EXPECT_NEAR(d.peak_flops_for("fp64"), 6.7e13, 1e8);  // not measured: the table's stays
  EXPECT_NEAR(d.peak_flops_for("bf16"), 7.94e14, 1e9);
  EXPECT_NEAR(d.peak_bytes_per_s, 4.3e12, 1e6);

  EXPECT_FALSE(parse_calibration("{}"));
  EXPECT_FALSE(parse_calibration("not json"));
  EXPECT_FALSE(parse_calibration("{\"peak_flops\":{\"fp32\":-1}}"));
}

TEST(Calibration, Path) {
  EXPECT_EQ(calibration_path("GPU-1", "x", env_of({{"FLOPLINE_PEAKS_FILE", "/p.json"}})),
            "/p.json");
  EXPECT_EQ(calibration_path("GPU-1", "x", env_of({{"HOME", "/h"}})),
            "/h/.cache/flopline/peaks-GPU-1.json");
  EXPECT_EQ(calibration_path("", "NVIDIA H200", env_of({{"XDG_CACHE_HOME", "/c"}})),
            "/c/flopline/peaks-NVIDIA_H200.json");
}

}  // namespace
}  // namespace flopline::capture

namespace flopline::capture {
namespace {

TEST(FlushInterval, AppendsTakeAtMostAFifthOfTheTime) {
  // Short appends: the interval rules.
  EXPECT_EQ(next_append_wait_ns(5'000'000'000, 100'000'000), 5'000'000'000);
  // An append that took T waits 4T: a fifth of the time spent appending.
  EXPECT_EQ(next_append_wait_ns(5'000'000'000, 3'000'000'000), 12'000'000'000);
  // The early append of many records waits only for the share.
  EXPECT_EQ(next_append_wait_ns(0, 250'000'000), 1'000'000'000);
  EXPECT_EQ(next_append_wait_ns(0, 0), 0);
  EXPECT_EQ(next_append_wait_ns(-1, -1), 0);  // never negative
}

TEST(FlushInterval, UnitsRangeAndOff) {
  std::string error;
  EXPECT_EQ(parse_flush_interval("5s", &error), 5'000'000'000);
  EXPECT_EQ(parse_flush_interval("1h", &error), 3'600'000'000'000);  // the message says 1h
  EXPECT_FALSE(parse_flush_interval("2h", &error).has_value());
  EXPECT_NE(error.find("ms, s, m, h"), std::string::npos) << error;
  EXPECT_EQ(parse_flush_interval("250ms", &error), 250'000'000);
  EXPECT_EQ(parse_flush_interval("1.5s", &error), 1'500'000'000);
  EXPECT_EQ(parse_flush_interval("2m", &error), 120'000'000'000);
  EXPECT_EQ(parse_flush_interval("off", &error), 0);
  EXPECT_EQ(parse_flush_interval("0", &error), 0);
  EXPECT_FALSE(parse_flush_interval("5", &error).has_value());  // no unit
  EXPECT_NE(error.find("'5'"), std::string::npos);
  EXPECT_FALSE(parse_flush_interval("50ms", &error).has_value());  // under 100 ms
  EXPECT_FALSE(parse_flush_interval("2h", &error).has_value());
  auto env = [](const char* v) {
    return read_capture_env([v](const char* n) -> const char* {
      return std::string_view(n) == "FLOPLINE_FLUSH_INTERVAL" ? v : nullptr;
    });
  };
  EXPECT_EQ(env("1s").flush_interval_ns, 1'000'000'000);
  EXPECT_EQ(env("off").flush_interval_ns, 0);
  const CaptureEnv bad = env("soon");
  EXPECT_EQ(bad.flush_interval_ns, kDefaultFlushIntervalNs);
  ASSERT_EQ(bad.warnings.size(), 1u);
  EXPECT_NE(bad.warnings[0].find("FLOPLINE_FLUSH_INTERVAL"), std::string::npos);
  EXPECT_EQ(read_capture_env([](const char*) -> const char* { return nullptr; }).flush_interval_ns,
            kDefaultFlushIntervalNs);
}

}  // namespace
}  // namespace flopline::capture
