#include "flopline/capture/segmented_batch.h"

#include <iterator>
#include <utility>

#include "capture/append_moved.h"

namespace flopline::capture {
namespace {

template <class T>
void append_copied(std::vector<T>& to, const std::vector<T>& from) {
  to.insert(to.end(), from.begin(), from.end());
}

// Calls f(member pointer) for every vector flatten() and append_records() carry.
template <class F>
void for_each_vector(F&& f) {
  f(&RecordBatch::kernels);
  f(&RecordBatch::memcpys);
  f(&RecordBatch::memsets);
  f(&RecordBatch::api_calls);
  f(&RecordBatch::syncs);
  f(&RecordBatch::markers);
  f(&RecordBatch::marker_data);
  f(&RecordBatch::overheads);
  f(&RecordBatch::names);
  f(&RecordBatch::devices);
  f(&RecordBatch::thread_names);
}

// Moves every record, device and thread name of `from` to the end of `to`'s vectors.
void append_records(RecordBatch& to, RecordBatch&& from) {
  for_each_vector([&](auto member) { detail::append_moved(to.*member, from.*member); });
}

}  // namespace

std::size_t record_count(const RecordBatch& b) {
  return b.kernels.size() + b.memcpys.size() + b.memsets.size() + b.api_calls.size() +
         b.syncs.size() + b.markers.size() + b.marker_data.size() + b.overheads.size() +
         b.names.size();
}

void SegmentedBatch::append(RecordBatch&& part) {
  append_records(open_, std::move(part));
  if (record_count(open_) >= records_per_segment_) seal();
}

bool SegmentedBatch::open_empty() const {
  return record_count(open_) == 0 && open_.devices.empty() && open_.thread_names.empty();
}

SegmentedBatch::Segments SegmentedBatch::seal() {
  if (!open_empty()) {
    // Not a const object, only a pointer to const: merge() may move out of a segment
    // it alone holds.
    sealed_.push_back(
        std::shared_ptr<const RecordBatch>(std::make_shared<RecordBatch>(std::move(open_))));
    open_ = RecordBatch{};
  }
  return sealed_;
}

SegmentedBatch::Segments SegmentedBatch::take() {
  seal();
  Segments out = std::move(sealed_);
  sealed_.clear();
  return out;
}

RecordBatch SegmentedBatch::merge(Segments&& segments) {
  RecordBatch out;
  for (std::shared_ptr<const RecordBatch>& s : segments) {
    if (s.use_count() == 1) {
      append_records(out, std::move(const_cast<RecordBatch&>(*s)));
    } else {
      RecordBatch copy = *s;
      append_records(out, std::move(copy));
    }
    s.reset();
  }
  return out;
}

RecordBatch SegmentedBatch::flatten(const Segments& segments) {
  RecordBatch out;
  for_each_vector([&](auto member) {
    std::size_t n = 0;
    for (const auto& s : segments) n += ((*s).*member).size();
    (out.*member).reserve(n);
    for (const auto& s : segments) append_copied(out.*member, (*s).*member);
  });
  return out;
}

void SegmentedBatch::clear_records() {
  RecordBatch kept;
  for (const auto& s : seal()) {
    append_copied(kept.devices, s->devices);
    append_copied(kept.thread_names, s->thread_names);
  }
  sealed_.clear();
  open_ = std::move(kept);
}

}  // namespace flopline::capture
