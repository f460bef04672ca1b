// Events that pair up: v1 flows (s/t/f), v2 flows (bind_id with flow_in/flow_out)
// and async spans (b/e nestable, S/F legacy).
#include <algorithm>

#include "trace/chrome_reader_impl.h"

namespace flopline::trace::chrome {
namespace {

// Sorts events of one kind by (key, ts, rank, file order) and calls
// walk(first, last) for each run of one key.
template <typename Event, typename Rank, typename Walk>
void for_each_key_in_time_order(std::vector<Event>& events, Rank rank, Walk walk) {
  std::sort(events.begin(), events.end(), [&](const Event& a, const Event& b) {
    if (!(a.key == b.key)) return a.key < b.key;
    if (a.ts() != b.ts()) return a.ts() < b.ts();
    if (rank(a) != rank(b)) return rank(a) < rank(b);
    return a.order < b.order;
  });
  for (std::size_t i = 0; i < events.size();) {
    std::size_t j = i + 1;
    while (j < events.size() && events[j].key == events[i].key) ++j;
    walk(events.data() + i, events.data() + j);
    i = j;
  }
}

}  // namespace

void LinkTracker::flow_v1(const LinkKey& key, char phase, TimeNs ts, std::uint32_t track,
                          bool bind_enclosing, StringId name) {
  flow_events_.push_back(FlowEvent{key, ts, track, static_cast<std::uint32_t>(flow_events_.size()),
                                   name, phase, bind_enclosing});
}

// v2 flows are matched in file order: flow_out opens the flow under its id, the next
// flow_in with that id closes it (a slice with both is a step in the middle).
void LinkTracker::flow_v2(std::uint64_t bind_id, bool in, bool out, TimeNs ts, std::uint32_t track,
                          StringId name, StringId cat) {
  const FlowEnd here{track, ts, true, {}};
  if (in) {
    auto it = open_v2_.find(bind_id);
    if (it != open_v2_.end()) {
      builder_.add_flow(Flow{bind_id, it->second.name, it->second.cat, it->second.from, here});
      open_v2_.erase(it);
    }
  }
  if (out) open_v2_[bind_id] = OpenFlowV2{here, name, cat};
}

void LinkTracker::async_event(const LinkKey& key, bool is_begin, std::uint32_t track,
                              const Slice& s) {
  async_events_.push_back(
      AsyncEvent{key, s, track, static_cast<std::uint32_t>(async_events_.size()), is_begin});
}

void LinkTracker::finish(TimeNs last_ts, Counts& counts) {
  auto skip = [&](Skip why) { ++counts.skipped[static_cast<int>(why)]; };

  // Async spans: innermost open begin first; still open at the end -> closed at the
  // trace's last timestamp. On equal ts a begin sorts before an end.
  std::vector<const AsyncEvent*> open;
  for_each_key_in_time_order(
      async_events_, [](const AsyncEvent& e) { return e.is_begin ? 0 : 1; },
      [&](const AsyncEvent* first, const AsyncEvent* last) {
        open.clear();
        for (const AsyncEvent* e = first; e != last; ++e) {
          if (e->is_begin) {
            open.push_back(e);
            continue;
          }
          if (open.empty()) {
            skip(Skip::kOrphanAsyncEnd);
            continue;
          }
          Slice s = open.back()->slice;
          const std::uint32_t track = open.back()->track;
          open.pop_back();
          if (!span_between(s.start, e->slice.start, s.dur)) {
            counts.skipped[static_cast<int>(Skip::kDurRange)] += 2;
            continue;
          }
          if (s.args == kNoArgs) s.args = e->slice.args;  // catapult merges end args
          builder_.add_slice(track, s);
          counts.loaded += 2;
        }
        for (const AsyncEvent* b : open) {
          Slice s = b->slice;
          if (!span_between(s.start, last_ts, s.dur)) {
            skip(Skip::kDurRange);
            continue;
          }
          builder_.add_slice(b->track, s);
          ++counts.loaded;
          ++counts.notes[static_cast<int>(Note::kUnclosedAsync)];
        }
      });
  std::vector<AsyncEvent>().swap(async_events_);

  // v1 flows, per key in time order (s before t before f on a tie). File order is no
  // guide: Kineto writes many "f" before their "s". Starts are queued first in, first
  // out: Chrome reuses a task's id while an earlier post with that id is pending
  // (catapult__flow), and the earliest pending start is the one an end belongs to.
  struct Pending {
    const FlowEvent* event;
    bool counted;  // already part of an arrow (a "t")
  };
  std::vector<Pending> queue;
  // Flows are mostly s/f pairs: one arrow per two events. Reserving that avoids
  // doubling a vector of a million flows (and its page faults) on Kineto traces.
  std::vector<Flow>& flows = builder_.trace().flows;
  flows.reserve(flows.size() + flow_events_.size() / 2);
  for_each_key_in_time_order(
      flow_events_, [](const FlowEvent& e) { return e.phase == 's'   ? 0
                                                    : e.phase == 't' ? 1
                                                                     : 2; },
      [&](FlowEvent* first, FlowEvent* last) {
        // A lone pair whose "f" is earlier than its "s" is one launch -> kernel flow
        // seen through two clocks (Kineto's CPU and GPU timestamps disagree slightly).
        if (last - first == 2 && first[0].phase == 'f' && first[1].phase == 's')
          std::swap(first[0], first[1]);
        queue.clear();
        std::size_t head = 0;
        for (const FlowEvent* e = first; e != last; ++e) {
          if (e->phase == 's') {
            queue.push_back(Pending{e, false});
            continue;
          }
          if (head == queue.size()) {
            skip(Skip::kFlowNoStart);
            continue;
          }
          const Pending from = queue[head];
          Flow f;
          f.id = e->key.id;
          f.name = from.event->name;
          f.cat = e->key.cat;
          f.from = FlowEnd{from.event->track, from.event->ts_, from.event->enclosing, {}};
          f.to = FlowEnd{e->track, e->ts_, e->enclosing, {}};
          builder_.add_flow(f);
          counts.loaded += from.counted ? 1 : 2;
          if (e->phase == 't') {
            queue[head] = Pending{e, true};
          } else {
            ++head;
          }
        }
        for (std::size_t k = head; k < queue.size(); ++k) {
          if (!queue[k].counted) skip(Skip::kFlowNoEnd);
        }
      });
  std::vector<FlowEvent>().swap(flow_events_);
  open_v2_.clear();
}

}  // namespace flopline::trace::chrome
