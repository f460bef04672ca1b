// torch.profiler's step markers from NVTX step ranges (capture/profiler_steps.h): the
// number from the name, a ProfilerStep#N slice over each matching range that encloses
// it on its thread, none without the option or without a number, and the same events
// whether the run is decoded at once or streamed.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "flopline/capture/profiler_steps.h"
#include "flopline/capture/record_decoder.h"
#include "flopline/capture/streaming_decoder.h"
#include "record_test_util.h"

namespace flopline::capture {
namespace {

constexpr std::uint32_t kPid = 900;
constexpr std::uint32_t kMain = 901;

MarkerRecord marker(std::uint32_t id, TimeNs ts, std::uint32_t flags, std::string name = {}) {
  return thread_marker(id, ts, flags, std::move(name), kPid, kMain);
}

RecordBatch steps_batch() {
  RecordBatch b;
  b.process_id = kPid;
  const std::vector<std::string> names = {"step 3", "step 4", "forward", "step final"};
  for (std::uint32_t i = 0; i < names.size(); ++i) {
    const TimeNs at = 1000 + 1000 * static_cast<TimeNs>(i);
    b.markers.push_back(marker(i + 1, at, kMarkerStart, names[i]));
    b.markers.push_back(marker(i + 1, at + 800, kMarkerEnd));
  }
  ApiRecord a;
  a.name = "cudaLaunchKernel";
  a.cbid = 211;
  a.start = 1100;
  a.end = 1200;
  a.process_id = kPid;
  a.thread_id = kMain;
  a.correlation_id = 1;
  b.api_calls.push_back(a);
  KernelRecord k;
  k.name = "k";
  k.start = 1300;
  k.end = 1500;
  k.stream = 7;
  k.context = 1;
  k.correlation_id = 1;
  b.kernels.push_back(k);
  return b;
}

struct Found {
  std::string name;
  TimeNs start = 0, dur = 0;
  std::uint32_t row = 0;
};

std::vector<Found> cpu_slices(const trace::Trace& t, std::string_view prefix) {
  std::vector<Found> out;
  for (const trace::Track& track : t.tracks) {
    if (track.kind != trace::TrackKind::kThread) continue;
    for (std::uint32_t r = 0; r < track.rows.size(); ++r) {
      for (const trace::Slice& s : track.rows[r]) {
        const std::string name(t.str(s.name));
        if (name.starts_with(prefix)) out.push_back({name, s.start, s.dur, r});
      }
    }
  }
  return out;
}

TEST(ProfilerSteps, NumberComesFromTheEndOfTheName) {
  EXPECT_EQ(trailing_step_number("step 12"), 12);
  EXPECT_EQ(trailing_step_number("iter_007"), 7);
  EXPECT_EQ(trailing_step_number("0"), 0);
  EXPECT_EQ(trailing_step_number("step"), std::nullopt);
  EXPECT_EQ(trailing_step_number("step 12a"), std::nullopt);
  EXPECT_EQ(trailing_step_number(""), std::nullopt);
  EXPECT_EQ(trailing_step_number("step 1234567890123456789"), std::nullopt);  // 19 digits
}

TEST(ProfilerSteps, EachNumberedStepRangeGetsAnEnclosingMarker) {
  DecodeOptions o;
  o.profiler_steps = "step *";
  const trace::Trace t = decode_to_trace(steps_batch(), o);
  const std::vector<Found> markers = cpu_slices(t, "ProfilerStep#");
  ASSERT_EQ(markers.size(), 2u);  // "forward" does not match, "step final" has no number
  EXPECT_EQ(markers[0].name, "ProfilerStep#3");
  EXPECT_EQ(markers[0].start, 1000);
  EXPECT_EQ(markers[0].dur, 800);
  EXPECT_EQ(markers[1].name, "ProfilerStep#4");
  EXPECT_EQ(markers[1].start, 2000);
  // The marker encloses its range: it sits on the outer row.
  for (const Found& s : cpu_slices(t, "step 3")) EXPECT_GT(s.row, markers[0].row);
  EXPECT_EQ(cpu_slices(t, "step 3").size(), 1u);
  // Off by default.
  EXPECT_TRUE(cpu_slices(decode_to_trace(steps_batch()), "ProfilerStep#").empty());
}

TEST(ProfilerSteps, StreamedAsWrittenAtOnce) {
  StreamingOptions so;
  so.decode.profiler_steps = "step *";
  StreamingDecoder d(so);
  RecordBatch first = steps_batch();
  RecordBatch second;
  second.process_id = kPid;
  // The last two ranges come in a later append.
  second.markers.assign(first.markers.begin() + 4, first.markers.end());
  first.markers.resize(4);
  d.add(std::move(first));
  const trace::Trace a = d.take(2900);
  d.add(std::move(second));
  const trace::Trace b = d.take(kEndOfRun);
  std::vector<Found> markers = cpu_slices(a, "ProfilerStep#");
  for (const Found& f : cpu_slices(b, "ProfilerStep#")) markers.push_back(f);
  ASSERT_EQ(markers.size(), 2u);
  EXPECT_EQ(markers[0].name, "ProfilerStep#3");
  EXPECT_EQ(markers[1].name, "ProfilerStep#4");
}

}  // namespace
}  // namespace flopline::capture
