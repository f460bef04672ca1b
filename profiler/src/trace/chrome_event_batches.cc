// The traceEvents array walked in batches, optionally on a second thread.
//
// Parsing (tokenizing and checking args; numbers stay text) and decoding (interning,
// builder calls, copying args, which is where fresh memory gets faulted in) are of
// the same order on a Kineto trace, so on a large input a producer thread parses
// batch k+1 while the calling thread decodes batch k: a 1 GB Kineto trace loads in
// about 1.5 s instead of 2.0 s on two cores (bench/bench_reader.cc). Batches are
// handed over in order through a small ring, so the result is the same as reading
// sequentially.
#include <condition_variable>
#include <cstring>
#include <exception>
#include <mutex>
#include <thread>

#include "trace/chrome_reader_impl.h"

namespace flopline::trace::chrome {
namespace {

constexpr std::size_t kBatchEvents = 1024;
constexpr std::size_t kRing = 4;

class ArrayWalker {
 public:
  explicit ArrayWalker(json::Scanner& s) : s_(s) { s_.set_pos(s_.pos() + 1); }  // past '['

  // Fills `b` with the next entries; false once the array has ended (see end()).
  bool fill(EventBatch& b) {
    b.count = 0;
    b.entries = 0;
    b.not_objects = 0;
    b.owned_used = 0;
    b.errors.clear();
    if (b.events.size() < kBatchEvents) b.events.resize(kBatchEvents);
    const bool more = fill_entries(b);
    b.end_offset = s_.offset();
    return more;
  }
  ArrayEnd end() const { return end_; }

 private:
  bool fill_entries(EventBatch& b) {
    while (b.count < kBatchEvents) {
      // Entries are separated by ','; a trailing comma before ']' or before the end
      // of the text is accepted, and so is a missing ']'.
      s_.skip_ws();
      if (!first_ && !s_.eof() && s_.peek() != ']') {
        if (s_.peek() != ',') {
          s_.fail("expected ',' or ']' after a trace event, found " + s_.describe(s_.pos()));
          if (!recover(b, false)) return false;
          continue;
        }
        s_.set_pos(s_.pos() + 1);
        s_.skip_ws();
      }
      first_ = false;
      if (s_.eof()) {
        end_ = ArrayEnd::kUnclosed;
        return false;
      }
      if (s_.peek() == ']') {
        s_.set_pos(s_.pos() + 1);
        end_ = ArrayEnd::kClosed;
        return false;
      }
      ++b.entries;
      if (s_.peek() == '{') {
        RawEvent& e = b.events[b.count];
        if (!parser_.parse(s_, e)) {
          if (!recover(b, true)) return false;
          continue;
        }
        keep_decoded(e, b);
        ++b.count;
      } else if (s_.skip_value()) {
        ++b.not_objects;
      } else if (!recover(b, true)) {
        return false;
      }
    }
    return true;
  }

  // Records the scanner's error in the batch and moves to the next event, if any.
  bool recover(EventBatch& b, bool cut_entry) {
    SyntaxError e{s_.error_at(), s_.error_reason(), cut_entry, nullptr};
    const char* next = next_event_after(e.at);
    if (next != nullptr && next > last_resume_) {
      e.resumed_at = last_resume_ = next;
      s_.resume_at(next);
      first_ = true;
      b.errors.push_back(std::move(e));
      return true;
    }
    b.errors.push_back(std::move(e));
    end_ = ArrayEnd::kError;
    return false;
  }

  // The first '{' at or after `from` that follows ',' or '}' and starts an event
  // (see read_event_array). Null when there is none, or the search budget is spent.
  const char* next_event_after(const char* from) {
    const char* const begin = s_.begin();
    const char* const end = s_.end();
    const auto budget = static_cast<std::uint64_t>(end - begin) + 4096;
    for (const char* p = from; p < end && searched_ < budget;) {
      p = static_cast<const char*>(std::memchr(p, '{', static_cast<std::size_t>(end - p)));
      if (p == nullptr) break;
      const char* before = p;
      while (before > begin && json::Scanner::is_ws(before[-1])) --before;
      if (before > begin && (before[-1] == ',' || before[-1] == '}')) {
        json::Scanner probe(begin, end);
        probe.set_pos(p);
        bool event = probe_parser_.parse(probe, probe_event_) && probe_event_.ph.present();
        if (event) {
          probe.skip_ws();
          event = probe.eof() || probe.peek() == ',' || probe.peek() == ']';
        }
        searched_ +=
            static_cast<std::uint64_t>((probe.failed() ? probe.error_at() : probe.pos()) - p);
        if (event) return p;
      }
      searched_ += static_cast<std::uint64_t>(p + 1 - from);
      from = ++p;
    }
    return nullptr;
  }

  // Strings with escapes were decoded into the parser's scratch, which the next
  // entry overwrites: copy them into the batch.
  void keep_decoded(RawEvent& e, EventBatch& b) {
    for (Field* f : {&e.ph, &e.name, &e.cat, &e.scope, &e.bp, &e.ts, &e.dur, &e.pid, &e.tid, &e.id,
                     &e.bind_id, &e.id2}) {
      if (f->kind == json::Kind::kNone || f->len == 0 ||
          (f->ptr >= s_.begin() && f->ptr < s_.end()))
        continue;
      if (b.owned_used == b.owned.size()) b.owned.emplace_back();
      std::string& copy = b.owned[b.owned_used++];
      copy.assign(f->text());
      f->set(f->kind, copy);
    }
  }

  json::Scanner& s_;
  EventParser parser_;
  EventParser probe_parser_;  // tries candidates after an error, without touching s_
  RawEvent probe_event_;
  std::uint64_t searched_ = 0;  // bytes looked at while recovering, over the whole array
  const char* last_resume_ = nullptr;
  bool first_ = true;
  ArrayEnd end_ = ArrayEnd::kClosed;
};

ArrayEnd read_sequential(ArrayWalker& walker, const std::function<bool(EventBatch&)>& consume) {
  EventBatch b;
  for (;;) {
    const bool more = walker.fill(b);
    if (!consume(b)) return ArrayEnd::kCancelled;
    if (!more) return walker.end();
  }
}

ArrayEnd read_threaded(ArrayWalker& walker, const std::function<bool(EventBatch&)>& consume) {
  EventBatch ring[kRing];
  std::mutex m;
  std::condition_variable cv;
  std::size_t produced = 0;  // batches filled; batch n lives in ring[n % kRing]
  std::size_t consumed = 0;
  bool done = false;           // the producer has filled its last batch
  bool stop = false;           // the consumer wants no more
  std::exception_ptr failure;  // thrown by the producer (bad_alloc), rethrown here

  std::thread producer([&] {
    for (;;) {
      std::size_t slot;
      {
        std::unique_lock<std::mutex> lock(m);
        cv.wait(lock, [&] { return produced - consumed < kRing || stop; });
        if (stop) return;
        slot = produced % kRing;
      }
      bool more = false;
      try {
        more = walker.fill(ring[slot]);
      } catch (...) {
        std::lock_guard<std::mutex> lock(m);
        failure = std::current_exception();
        done = true;
      }
      {
        std::lock_guard<std::mutex> lock(m);
        if (!failure) ++produced;
        done = done || !more;
      }
      cv.notify_all();
      if (!more) return;
    }
  });
  auto halt = [&] {
    {
      std::lock_guard<std::mutex> lock(m);
      stop = true;
    }
    cv.notify_all();
    producer.join();
  };

  for (;;) {
    std::size_t slot;
    {
      std::unique_lock<std::mutex> lock(m);
      cv.wait(lock, [&] { return consumed < produced || done; });
      if (consumed == produced) break;  // done, and everything consumed
      slot = consumed % kRing;
    }
    bool go_on;
    try {
      go_on = consume(ring[slot]);
    } catch (...) {  // e.g. bad_alloc in the builder: stop the producer first
      halt();
      throw;
    }
    if (!go_on) {
      halt();
      return ArrayEnd::kCancelled;
    }
    {
      std::lock_guard<std::mutex> lock(m);
      ++consumed;
    }
    cv.notify_all();
  }
  producer.join();
  if (failure) std::rethrow_exception(failure);
  return walker.end();
}

}  // namespace

ArrayEnd read_event_array(json::Scanner& s, bool threaded,
                          const std::function<bool(EventBatch&)>& consume) {
  ArrayWalker walker(s);
  return threaded ? read_threaded(walker, consume) : read_sequential(walker, consume);
}

}  // namespace flopline::trace::chrome
