// Matching collectives across ranks and their waits; see collective_waits.h.
#include "flopline/trace/collective_waits.h"

#include <algorithm>
#include <map>

#include "flopline/trace/json_value.h"
#include "flopline/trace/types.h"

namespace flopline::trace {
namespace {

std::optional<std::int64_t> whole(std::string_view text) {
  if (text.empty() || text.size() > 12) return std::nullopt;
  std::int64_t n = 0;
  for (const char c : text) {
    if (c < '0' || c > '9') return std::nullopt;
    n = n * 10 + (c - '0');
  }
  return n;
}

bool inside(const RankCollectives& r, TimeNs t) {
  return t >= r.window_begin && t < r.window_end;
}

bool overlap(const CollectiveInstance& a, const CollectiveInstance& b) {
  return a.start <= b.end && b.start <= a.end;
}

bool same_call(const CollectiveInstance& a, const CollectiveInstance& b) {
  return a.collective == b.collective && a.message_bytes == b.message_bytes;
}

// How far the search for a rank's first kernel that overlaps the reference goes.
constexpr std::size_t kMaxLeadingSkip = 64;

// Per member of a communicator, how many leading kernels to leave out so that the k-th
// kernels of all members are one collective (collective_waits.h). 0 for all unless every
// member was recorded in windows on one host, a member's first kernel does not overlap
// the first kernel of the member whose list starts last, and a later kernel of it (same
// collective and size) does.
std::map<std::size_t, std::size_t> leading_skips(
    const std::vector<RankCollectives>& ranks,
    const std::map<std::size_t, std::vector<const CollectiveInstance*>>& members) {
  std::map<std::size_t, std::size_t> skip;
  const CollectiveInstance* ref = nullptr;
  bool one_clock = true;
  for (const auto& [r, list] : members) {
    skip[r] = 0;
    one_clock =
        one_clock && ranks[r].windowed && ranks[r].host == ranks[members.begin()->first].host;
    if (!list.empty() && (ref == nullptr || list.front()->start > ref->start)) ref = list.front();
  }
  if (ref == nullptr || !one_clock) return skip;
  for (const auto& [r, list] : members) {
    if (list.empty() || overlap(*list.front(), *ref)) continue;
    for (std::size_t j = 1; j < list.size() && j <= kMaxLeadingSkip; ++j) {
      if (same_call(*list[j], *ref) && overlap(*list[j], *ref)) {
        skip[r] = j;
        break;
      }
    }
  }
  return skip;
}

}  // namespace

std::optional<std::int64_t> trace_rank(const Trace& t) {
  for (const auto& [key, json] : t.extra_top_level) {
    if (key != "distributedInfo") continue;
    if (const auto r = json_member(json, "rank")) {
      if (const auto n = json_int(*r); n && *n >= 0) return n;
    }
  }
  for (const auto& [key, value] : t.info) {
    if (key == "rank") return whole(value);
  }
  return std::nullopt;
}

namespace {

std::string info_value(const Trace& t, std::string_view wanted) {
  for (const auto& [key, value] : t.info) {
    if (key == wanted) return value;
  }
  return {};
}

}  // namespace

std::string trace_window_group(const Trace& t) {
  return info_value(t, "window file");
}

bool trace_recorded_in_windows(const Trace& t) {
  return !info_value(t, "capture range").empty();
}

std::string trace_host(const Trace& t) {
  return info_value(t, "host");
}

CollectiveWaits collective_waits(const std::vector<RankCollectives>& ranks, bool keep_matched) {
  CollectiveWaits w;
  w.ranks.resize(ranks.size());
  for (std::size_t r = 0; r < ranks.size(); ++r) {
    w.ranks[r].file = ranks[r].file;
    w.ranks[r].rank = ranks[r].rank;
  }
  // Per window group and communicator, per rank: its kernels in order.
  using Members = std::map<std::size_t, std::vector<const CollectiveInstance*>>;
  std::map<std::pair<std::string, std::string>, Members> by_comm;
  for (std::size_t r = 0; r < ranks.size(); ++r) {
    for (const CollectiveInstance& i : ranks[r].instances) {
      if (i.communicator.empty()) {
        ++w.unmatched;
        continue;
      }
      by_comm[{ranks[r].group, i.communicator}][r].push_back(&i);
    }
  }
  for (const auto& entry : by_comm) {
    const std::string& comm = entry.first.second;
    const Members& members = entry.second;
    const std::map<std::size_t, std::size_t> skip = leading_skips(ranks, members);
    std::size_t shortest = SIZE_MAX, total = 0;
    for (const auto& [r, list] : members) {
      shortest = std::min(shortest, list.size() - skip.at(r));
      total += list.size();
    }
    auto kth = [&](std::size_t r, std::size_t k) -> const CollectiveInstance& {
      return *members.at(r)[k + skip.at(r)];
    };
    std::size_t matched = 0;
    if (members.size() >= 2) {
      for (std::size_t k = 0; k < shortest; ++k) {
        const CollectiveInstance& head = kth(members.begin()->first, k);
        bool same = true;
        TimeNs last = head.start;
        std::size_t last_rank = members.begin()->first;
        for (const auto& [r, list] : members) {
          const CollectiveInstance& i = kth(r, k);
          same = same && i.collective == head.collective && i.message_bytes == head.message_bytes;
          if (i.start > last) {
            last = i.start;
            last_rank = r;
          }
        }
        if (!same) break;  // the order is broken from here: nothing after k is trusted
        ++matched;
        // A collective belongs to the windows when its transfer starts in the window of
        // the rank that started it, the last to arrive; then every rank's arrival counts,
        // wherever it lies in its own window (a rank whose host runs steps ahead of its
        // GPU launches a step's collective after that step's range has ended).
        if (!inside(ranks[last_rank], last)) continue;
        MatchedCollective* kept = nullptr;
        if (keep_matched) {
          kept = &w.matched.emplace_back();
          kept->communicator = comm;
          kept->order = k;
          kept->collective = head.collective;
          kept->message_bytes = head.message_bytes;
          kept->last_rank = last_rank;
        }
        for (const auto& [r, list] : members) {
          const CollectiveInstance& i = kth(r, k);
          RankWaits& rw = w.ranks[r];
          const TimeNs dur = sub_saturating(i.end, i.start);
          TimeNs waited = sub_saturating(last, i.start);
          if (waited > dur) {
            ++rw.clock_suspect;
            waited = dur;
          }
          ++rw.matched;
          rw.kernel_ns = add_saturating(rw.kernel_ns, dur);
          rw.wait_ns = add_saturating(rw.wait_ns, waited);
          if (kept) kept->arrivals.push_back(CollectiveArrival{r, i.start, i.end, waited});
        }
        ++w.ranks[last_rank].last_arrivals;
        ++w.collectives;
      }
    }
    w.unmatched += total - matched * members.size();
  }
  for (std::size_t r = 0; r < w.ranks.size(); ++r) {
    if (w.ranks[r].last_arrivals == 0) continue;
    if (!w.waited_for || w.ranks[r].last_arrivals > w.ranks[*w.waited_for].last_arrivals)
      w.waited_for = r;
  }
  return w;
}

}  // namespace flopline::trace
