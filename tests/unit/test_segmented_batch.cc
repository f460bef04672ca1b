// SegmentedBatch: what a capture's snapshot copies, and that it needs no record copy
// under the owner's lock.
#include "flopline/capture/segmented_batch.h"

#include <gtest/gtest.h>

#include <atomic>
#include <cstdint>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

namespace flopline::capture {
namespace {

// A part with `kernels` kernels and `calls` calls numbered from `first` (correlation ids
// and names carry the number, so order and identity can be checked).
RecordBatch part(std::uint32_t first, int kernels, int calls) {
  RecordBatch b;
  for (int i = 0; i < kernels; ++i) {
    KernelRecord k;
    k.correlation_id = first + static_cast<std::uint32_t>(i);
    k.name = "kernel_" + std::to_string(k.correlation_id);
    b.kernels.push_back(k);
  }
  for (int i = 0; i < calls; ++i) {
    ApiRecord a;
    a.correlation_id = first + static_cast<std::uint32_t>(i);
    a.name = "call_" + std::to_string(a.correlation_id);
    b.api_calls.push_back(a);
  }
  return b;
}

std::vector<std::uint32_t> kernel_ids(const RecordBatch& b) {
  std::vector<std::uint32_t> ids;
  for (const KernelRecord& k : b.kernels) ids.push_back(k.correlation_id);
  return ids;
}

TEST(SegmentedBatch, FlattenKeepsEveryRecordInArrivalOrder) {
  SegmentedBatch batch(7);
  std::vector<std::uint32_t> expected;
  std::uint32_t next = 1;
  for (int p = 0; p < 9; ++p) {
    const int n = p % 4 + 1;
    RecordBatch r = part(next, n, 2);
    MarkerRecord m;
    m.id = static_cast<std::uint32_t>(p);
    m.name = "range " + std::to_string(p);
    r.markers.push_back(m);
    r.thread_names.push_back({static_cast<std::uint32_t>(100 + p), "worker"});
    for (int i = 0; i < n; ++i) expected.push_back(next + static_cast<std::uint32_t>(i));
    next += static_cast<std::uint32_t>(n);
    batch.append(std::move(r));
  }
  const RecordBatch all = SegmentedBatch::flatten(batch.seal());
  EXPECT_EQ(kernel_ids(all), expected);
  EXPECT_EQ(all.api_calls.size(), 18u);
  ASSERT_EQ(all.markers.size(), 9u);
  for (std::size_t p = 0; p < all.markers.size(); ++p) {
    EXPECT_EQ(all.markers[p].name, "range " + std::to_string(p));
  }
  ASSERT_EQ(all.thread_names.size(), 9u);
  EXPECT_EQ(all.thread_names.back().thread_id, 108u);
  EXPECT_EQ(record_count(all), expected.size() + 18 + 9);
}

TEST(SegmentedBatch, SealsSegmentsAtTheirSize) {
  SegmentedBatch batch(10);
  for (int i = 0; i < 9; ++i) batch.append(part(static_cast<std::uint32_t>(i), 1, 0));
  EXPECT_EQ(batch.segment_count(), 1u);  // the open one
  batch.append(part(9, 1, 0));
  EXPECT_EQ(batch.segment_count(), 1u);  // sealed at 10 records, no open one
  batch.append(part(10, 3, 0));
  EXPECT_EQ(batch.segment_count(), 2u);
  const SegmentedBatch::Segments s = batch.seal();
  ASSERT_EQ(s.size(), 2u);
  EXPECT_EQ(s[0]->kernels.size(), 10u);
  EXPECT_EQ(s[1]->kernels.size(), 3u);
}

TEST(SegmentedBatch, ASealedSnapshotNeverChangesAfterwards) {
  SegmentedBatch batch(4);
  batch.append(part(1, 3, 1));
  const SegmentedBatch::Segments before = batch.seal();
  batch.append(part(4, 5, 0));
  batch.clear_records();
  batch.append(part(9, 2, 0));
  const RecordBatch old = SegmentedBatch::flatten(before);
  EXPECT_EQ(kernel_ids(old), (std::vector<std::uint32_t>{1, 2, 3}));
  EXPECT_EQ(old.api_calls.size(), 1u);
  EXPECT_EQ(kernel_ids(SegmentedBatch::flatten(batch.seal())), (std::vector<std::uint32_t>{9, 10}));
}

TEST(SegmentedBatch, ClearKeepsDevicesAndThreadNamesOnly) {
  SegmentedBatch batch(3);
  RecordBatch r = part(1, 5, 5);
  DeviceInfo d;
  d.ordinal = 1;
  d.name = "GPU one";
  r.devices.push_back(d);
  r.thread_names.push_back({42, "main"});
  batch.append(std::move(r));
  batch.append(part(6, 2, 0));
  batch.clear_records();
  const RecordBatch left = SegmentedBatch::flatten(batch.seal());
  EXPECT_EQ(record_count(left), 0u);
  ASSERT_EQ(left.devices.size(), 1u);
  EXPECT_EQ(left.devices[0].name, "GPU one");
  ASSERT_EQ(left.thread_names.size(), 1u);
  EXPECT_EQ(left.thread_names[0].name, "main");
}

TEST(SegmentedBatch, EmptyGivesNoSegment) {
  SegmentedBatch batch;
  EXPECT_EQ(batch.segment_count(), 0u);
  EXPECT_TRUE(batch.seal().empty());
  EXPECT_EQ(record_count(SegmentedBatch::flatten({})), 0u);
}

// The capture's pattern: one thread appends under a lock, another seals under it and
// flattens outside it. Every snapshot is a prefix of what was appended, in order.
TEST(SegmentedBatch, SnapshotsWhileAppendingAreConsistentPrefixes) {
  SegmentedBatch batch(64);
  std::mutex mu;
  constexpr std::uint32_t kTotal = 20000;
  std::atomic<bool> done{false};
  std::thread writer([&] {
    for (std::uint32_t i = 0; i < kTotal; i += 5) {
      RecordBatch r = part(i, 5, 0);
      std::lock_guard<std::mutex> lock(mu);
      batch.append(std::move(r));
    }
    done = true;
  });
  std::size_t snapshots = 0, last_size = 0;
  bool in_order = true, growing = true;
  while (!done || snapshots == 0) {
    SegmentedBatch::Segments s;
    {
      std::lock_guard<std::mutex> lock(mu);
      s = batch.seal();
    }
    const RecordBatch b = SegmentedBatch::flatten(s);
    for (std::size_t i = 0; i < b.kernels.size(); ++i) {
      in_order = in_order && b.kernels[i].correlation_id == i &&
                 b.kernels[i].name == "kernel_" + std::to_string(i);
    }
    growing = growing && b.kernels.size() >= last_size;
    last_size = b.kernels.size();
    ++snapshots;
  }
  writer.join();
  EXPECT_TRUE(in_order);
  EXPECT_TRUE(growing);
  EXPECT_EQ(SegmentedBatch::flatten(batch.seal()).kernels.size(), kTotal);
}

}  // namespace
}  // namespace flopline::capture
