// NCCL calls from their NVTX payloads to their kernels: the payload layouts NCCL has
// used, tying calls to kernels (one call, a group, other threads, names that do not
// fit), nccl-tests' bandwidth formulas, the args on a decoded kernel and the summary
// `flopline stats` prints.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <map>
#include <string>
#include <vector>

#include "flopline/capture/capture_config.h"
#include "flopline/capture/nccl_calls.h"
#include "flopline/capture/record_decoder.h"
#include "flopline/trace/collectives.h"
#include "flopline/trace/json_value.h"

namespace flopline::capture {
namespace {

using trace::Collective;

constexpr std::uint64_t kSidAllGather = 4, kSidAllReduce = 5, kSidCommInitRank = 0,
                        kSidAlltoAll = 16;

std::uint64_t schema(std::uint64_t sid) {
  return kNvtxStaticSchemaStart + sid;
}

// NCCL 2.25 and later: {uint64 comm; size_t bytes; ncclRedOp_t op} (24 bytes, padded).
struct CurrentAllReduce {
  std::uint64_t comm;
  std::size_t bytes;
  int op;
};
// NCCL 2.16-2.24: {size_t bytes; ncclRedOp_t op}.
struct OldAllReduce {
  std::size_t bytes;
  int op;
};
struct CurrentAllGather {
  std::uint64_t comm;
  std::size_t bytes;
};

TEST(NcclPayload, CurrentLayoutGivesSizeAndCommunicator) {
  static_assert(sizeof(CurrentAllReduce) == 24);
  const CurrentAllReduce p{0xabcdef0123ull, 25165824, 0};
  const auto d = decode_nccl_payload(schema(kSidAllReduce), &p, sizeof p);
  ASSERT_TRUE(d);
  EXPECT_EQ(d->collective, Collective::kAllReduce);
  EXPECT_EQ(d->message_bytes, 25165824u);
  EXPECT_EQ(d->communicator, 0xabcdef0123ull);

  const CurrentAllGather g{7, 4096};
  const auto dg = decode_nccl_payload(schema(kSidAllGather), &g, sizeof g);
  ASSERT_TRUE(dg);
  EXPECT_EQ(dg->collective, Collective::kAllGather);
  EXPECT_EQ(dg->message_bytes, 4096u);
  EXPECT_EQ(dg->communicator, 7u);
}

TEST(NcclPayload, OlderLayoutWithoutCommunicatorStillGivesTheSize) {
  static_assert(sizeof(OldAllReduce) == 16);
  const OldAllReduce p{1048576, 0};
  const auto d = decode_nccl_payload(schema(kSidAllReduce), &p, sizeof p);
  ASSERT_TRUE(d);
  EXPECT_EQ(d->message_bytes, 1048576u);
  EXPECT_EQ(d->communicator, 0u);
  const std::size_t old_all_gather = 8192;  // {size_t bytes}
  const auto g = decode_nccl_payload(schema(kSidAllGather), &old_all_gather, 8);
  ASSERT_TRUE(g);
  EXPECT_EQ(g->message_bytes, 8192u);
}

TEST(NcclPayload, OtherSchemasAndSizesAreNotRead) {
  const CurrentAllReduce p{1, 2, 0};
  // A communicator-creating call, a dynamic schema, another tool's schema id, and sizes
  // that fit no layout NCCL used.
  EXPECT_FALSE(decode_nccl_payload(schema(kSidCommInitRank), &p, sizeof p));
  EXPECT_FALSE(decode_nccl_payload(std::uint64_t{1} << 32, &p, sizeof p));
  EXPECT_FALSE(decode_nccl_payload(5, &p, sizeof p));
  EXPECT_FALSE(decode_nccl_payload(schema(kSidAllReduce), &p, 20));
  EXPECT_FALSE(decode_nccl_payload(schema(kSidAllReduce), &p, 8));
  EXPECT_FALSE(decode_nccl_payload(schema(kSidAllReduce), nullptr, 24));
  // AlltoAll came after the communicator was added: no 8-byte form.
  EXPECT_FALSE(decode_nccl_payload(schema(kSidAlltoAll), &p, 8));
  EXPECT_TRUE(decode_nccl_payload(schema(kSidAlltoAll), &p, 16));
}

NcclCallRecord call(std::uint32_t thread, TimeNs at, Collective c, std::uint64_t bytes,
                    std::uint64_t comm = 99) {
  NcclCallRecord r;
  r.thread_id = thread;
  r.start = at;
  r.collective = c;
  r.message_bytes = bytes;
  r.communicator = comm;
  return r;
}

constexpr const char* kAllReduceKernel = "ncclDevKernel_AllReduce_Sum_f32_RING_LL";

TEST(NcclMatch, EachKernelTakesTheCallsMadeOnItsThreadSinceTheLastLaunch) {
  const std::vector<NcclCallRecord> calls = {
      call(1, 100, Collective::kAllReduce, 1000),
      call(2, 150, Collective::kAllGather, 64),  // another thread, its own kernel
      call(1, 300, Collective::kAllReduce, 2000),
  };
  const std::vector<NcclKernelLaunch> launches = {
      {1, 350, kAllReduceKernel},  // given out of time order on purpose
      {1, 120, kAllReduceKernel},
      {2, 160, "ncclDevKernel_AllGather_RING_LL"},
      {1, 500, kAllReduceKernel},  // no call since the last launch
  };
  const auto m = match_nccl_calls(calls, launches);
  ASSERT_EQ(m.size(), 4u);
  ASSERT_TRUE(m[1]);
  EXPECT_EQ(m[1]->message_bytes, 1000u);
  EXPECT_EQ(m[1]->calls, 1u);
  ASSERT_TRUE(m[0]);
  EXPECT_EQ(m[0]->message_bytes, 2000u);
  ASSERT_TRUE(m[2]);
  EXPECT_EQ(m[2]->collective, Collective::kAllGather);
  EXPECT_FALSE(m[3]);
}

TEST(NcclMatch, AGroupSumsItsCallsUnlessTheyDiffer) {
  // ncclGroupStart; 3 x AllReduce; ncclGroupEnd -> one kernel.
  const std::vector<NcclCallRecord> group = {call(1, 10, Collective::kAllReduce, 100),
                                             call(1, 20, Collective::kAllReduce, 200),
                                             call(1, 30, Collective::kAllReduce, 300)};
  const auto m = match_nccl_calls(group, {{1, 40, kAllReduceKernel}});
  ASSERT_TRUE(m[0]);
  EXPECT_EQ(m[0]->message_bytes, 600u);
  EXPECT_EQ(m[0]->calls, 3u);

  const std::vector<NcclCallRecord> mixed = {call(1, 10, Collective::kAllReduce, 100),
                                             call(1, 20, Collective::kBroadcast, 200)};
  EXPECT_FALSE(match_nccl_calls(mixed, {{1, 40, kAllReduceKernel}})[0]);
  const std::vector<NcclCallRecord> two_comms = {call(1, 10, Collective::kAllReduce, 100, 1),
                                                 call(1, 20, Collective::kAllReduce, 100, 2)};
  EXPECT_FALSE(match_nccl_calls(two_comms, {{1, 40, kAllReduceKernel}})[0]);
}

TEST(NcclMatch, TheKernelNameMustBeTheCollectives) {
  const std::vector<NcclCallRecord> reduce = {call(1, 10, Collective::kReduce, 100)};
  // "Reduce" is inside AllReduce and ReduceScatter kernel names: not a fit.
  EXPECT_FALSE(match_nccl_calls(reduce, {{1, 40, kAllReduceKernel}})[0]);
  EXPECT_FALSE(match_nccl_calls(reduce, {{1, 40, "ncclDevKernel_ReduceScatter_Sum_bf16"}})[0]);
  EXPECT_TRUE(match_nccl_calls(reduce, {{1, 40, "ncclDevKernel_Reduce_Sum_f32_RING_LL"}})[0]);
  // AlltoAll runs as NCCL's SendRecv kernel.
  const std::vector<NcclCallRecord> a2a = {call(1, 10, Collective::kAlltoAll, 100)};
  EXPECT_TRUE(match_nccl_calls(a2a, {{1, 40, "ncclDevKernel_SendRecv(ncclDevKernelArgs4K)"}})[0]);
  EXPECT_FALSE(match_nccl_calls(a2a, {{1, 40, kAllReduceKernel}})[0]);
}

TEST(NcclMatch, KernelNamesOfCurrentAndOlderNccl) {
  EXPECT_TRUE(is_nccl_kernel("_Z38ncclDevKernel_AllReduce_Sum_f32_RING_LL19ncclDevKernelArgs"));
  EXPECT_TRUE(is_nccl_kernel("ncclKernel_AllReduce_RING_LL_Sum_float(ncclDevComm*, ...)"));
  EXPECT_FALSE(is_nccl_kernel("ampere_sgemm_128x64_nn"));
}

TEST(NcclTestsBandwidth, FormulasOfNcclTests) {
  // AllReduce of 1 GB in 10 ms on 8 ranks: algbw 100 GB/s, busbw x 2*7/8 = 175 GB/s.
  const auto ar = trace::nccl_tests_bandwidth(Collective::kAllReduce, 1'000'000'000, 8, 10'000'000);
  EXPECT_DOUBLE_EQ(*ar.size_bytes, 1e9);
  EXPECT_DOUBLE_EQ(*ar.algbw_gbps, 100.0);
  EXPECT_DOUBLE_EQ(*ar.busbw_gbps, 175.0);
  // On 2 ranks the factor is 1.
  const auto ar2 = trace::nccl_tests_bandwidth(Collective::kAllReduce, 1'000'000, 2, 1000);
  EXPECT_DOUBLE_EQ(*ar2.busbw_gbps, *ar2.algbw_gbps);
  // AllGather: S = message x n (what each rank receives), busbw x (n-1)/n.
  const auto ag = trace::nccl_tests_bandwidth(Collective::kAllGather, 1'000'000, 4, 1'000'000);
  EXPECT_DOUBLE_EQ(*ag.size_bytes, 4e6);
  EXPECT_DOUBLE_EQ(*ag.algbw_gbps, 4.0);
  EXPECT_DOUBLE_EQ(*ag.busbw_gbps, 3.0);
  const auto rs = trace::nccl_tests_bandwidth(Collective::kReduceScatter, 1'000'000, 4, 1'000'000);
  EXPECT_DOUBLE_EQ(*rs.busbw_gbps, 3.0);
  // Broadcast: busbw = algbw, no rank count needed.
  const auto bc =
      trace::nccl_tests_bandwidth(Collective::kBroadcast, 5'000'000, std::nullopt, 1'000'000);
  EXPECT_DOUBLE_EQ(*bc.algbw_gbps, 5.0);
  EXPECT_DOUBLE_EQ(*bc.busbw_gbps, 5.0);
  // Without the rank count: AllReduce has algbw only, AllGather nothing.
  const auto ar_n = trace::nccl_tests_bandwidth(Collective::kAllReduce, 1000, std::nullopt, 1000);
  EXPECT_TRUE(ar_n.algbw_gbps);
  EXPECT_FALSE(ar_n.busbw_gbps);
  const auto ag_n = trace::nccl_tests_bandwidth(Collective::kAllGather, 1000, std::nullopt, 1000);
  EXPECT_FALSE(ag_n.size_bytes);
  EXPECT_FALSE(ag_n.algbw_gbps);
  // A zero-length kernel has a size and no bandwidth.
  const auto z = trace::nccl_tests_bandwidth(Collective::kAllReduce, 1000, 2, 0);
  EXPECT_TRUE(z.size_bytes);
  EXPECT_FALSE(z.algbw_gbps);
}

TEST(NcclWorldSize, FromTheLaunchersVariables) {
  std::map<std::string, std::string> env;
  const GetEnv get = [&](const char* name) -> const char* {
    const auto it = env.find(name);
    return it == env.end() ? nullptr : it->second.c_str();
  };
  EXPECT_FALSE(job_world_size(get));
  env["SLURM_NTASKS"] = "16";
  EXPECT_EQ(job_world_size(get), 16u);
  env["WORLD_SIZE"] = "8";
  EXPECT_EQ(job_world_size(get), 8u);
  for (const char* bad : {"0", "-2", "8x", "", "99999999999999999999"}) {
    env["WORLD_SIZE"] = bad;
    if (*bad == '\0') {
      EXPECT_EQ(job_world_size(get), 16u) << "empty is unset";
    } else {
      EXPECT_FALSE(job_world_size(get)) << bad;
    }
  }
}

// One rank of a two-rank job: two AllReduce calls, each launching its kernel.
RecordBatch two_all_reduces() {
  RecordBatch b;
  b.process_id = 4242;
  b.world_size = 2;
  for (std::uint32_t i = 0; i < 2; ++i) {
    const TimeNs t = 10'000 * (i + 1);
    ApiRecord a;
    a.domain = ApiDomain::kDriver;
    a.name = "cuLaunchKernelEx";
    a.start = t + 100;
    a.end = t + 200;
    a.process_id = 4242;
    a.thread_id = 100;
    a.correlation_id = 10 + i;
    b.api_calls.push_back(a);
    KernelRecord k;
    k.name = kAllReduceKernel;
    k.start = t + 1000;
    k.end = t + 1000 + 4000 * (i + 1);  // 4 us, then 8 us
    k.context = 1;
    k.stream = 13;
    k.correlation_id = 10 + i;
    b.kernels.push_back(k);
    b.nccl_calls.push_back(call(100, t, Collective::kAllReduce, 100'000'000));
  }
  return b;
}

TEST(NcclDecode, KernelCarriesItsCollectiveSizeAndBandwidth) {
  const trace::Trace t = decode_to_trace(two_all_reduces());
  std::vector<std::string> args;
  for (const trace::Track& track : t.tracks) {
    for (const auto& row : track.rows) {
      for (const trace::Slice& s : row) {
        if (t.str(s.cat) == "kernel") args.emplace_back(t.args.json(s.args));
      }
    }
  }
  ASSERT_EQ(args.size(), 2u);
  for (std::size_t i = 0; i < 2; ++i) {
    SCOPED_TRACE(args[i]);
    EXPECT_EQ(trace::json_string(*trace::json_member(args[i], "collective")), "AllReduce");
    EXPECT_EQ(trace::json_int(*trace::json_member(args[i], "collective message bytes")),
              100'000'000);
    EXPECT_EQ(trace::json_int(*trace::json_member(args[i], "collective ranks")), 2);
    // 1e8 bytes in 4 us = 25,000 GB/s: the arithmetic, not a real link.
    const double algbw = *trace::json_number(*trace::json_member(args[i], "algbw (GB/s)"));
    EXPECT_NEAR(algbw, 1e8 / (4000.0 * (i + 1)), 1e-6);
    EXPECT_NEAR(*trace::json_number(*trace::json_member(args[i], "busbw (GB/s)")), algbw, 1e-6);
  }

  trace::CollectiveSummary summary;
  summary.add(t);
  const auto rows = summary.rows();
  ASSERT_EQ(rows.size(), 1u);
  EXPECT_EQ(rows[0].kernels, 2u);
  EXPECT_EQ(rows[0].total_ns, 12000);
  ASSERT_TRUE(rows[0].bandwidth.busbw_gbps);
  EXPECT_NEAR(*rows[0].bandwidth.algbw_gbps, 1e8 / 6000.0, 1e-6);  // over the mean time
}

TEST(NcclDecode, WithoutNcclCallsOrWorldSizeNothingIsMadeUp) {
  RecordBatch b = two_all_reduces();
  b.world_size.reset();
  trace::Trace t = decode_to_trace(b);
  trace::CollectiveSummary s;
  s.add(t);
  ASSERT_EQ(s.rows().size(), 1u);
  EXPECT_FALSE(s.rows()[0].ranks);
  EXPECT_FALSE(s.rows()[0].bandwidth.busbw_gbps);  // AllReduce's factor needs n
  EXPECT_TRUE(s.rows()[0].bandwidth.algbw_gbps);

  b.nccl_calls.clear();
  t = decode_to_trace(b);
  trace::CollectiveSummary none;
  none.add(t);
  EXPECT_TRUE(none.empty());
}

}  // namespace
}  // namespace flopline::capture
