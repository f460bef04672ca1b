// Work keys, the sampler and the exclusion rule of launch_work.h.
#include "flopline/capture/launch_work.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <regex>

#include "flopline/trace/collectives.h"

namespace flopline::capture {

namespace {

// Appends the words of one parameter's bytes.
void append_param(const unsigned char* p, std::uint32_t size, std::vector<std::uint64_t>* words) {
  if (size == 8) {
    std::uint64_t v = 0;
    std::memcpy(&v, p, 8);
    words->push_back(looks_like_address(v) ? kAddressWord : v);
    return;
  }
  // Whole words with a fixed-size copy (a load; a copy of variable size is a call to
  // memcpy per word, most of the cost of a 300-word struct), then the zero-padded tail.
  const std::uint32_t whole = size / 8 * 8;
  std::size_t n = words->size();
  words->resize(n + (size + 7) / 8);
  std::uint64_t* out = words->data() + n;
  for (std::uint32_t at = 0; at < whole; at += 8) std::memcpy(out++, p + at, 8);
  if (whole < size) {
    std::uint64_t v = 0;
    std::memcpy(&v, p + whole, size - whole);
    *out = v;
  }
}

}  // namespace

void argument_words(const ParamLayout& layout, const void* const* kernel_params,
                    std::vector<std::uint64_t>* words) {
  words->clear();
  if (!layout.known || kernel_params == nullptr) return;
  for (std::size_t i = 0; i < layout.params.size(); ++i) {
    if (kernel_params[i] == nullptr) continue;
    append_param(static_cast<const unsigned char*>(kernel_params[i]), layout.params[i].size, words);
  }
}

void argument_words_packed(const ParamLayout& layout, const void* buffer, std::size_t size,
                           std::vector<std::uint64_t>* words) {
  words->clear();
  if (!layout.known || buffer == nullptr) return;
  const auto* base = static_cast<const unsigned char*>(buffer);
  for (const ParamLayout::Param& p : layout.params) {
    if (static_cast<std::size_t>(p.offset) + p.size > size) continue;
    append_param(base + p.offset, p.size, words);
  }
}

StructAddressWords::StructAddressWords(const ParamLayout& layout) {
  for (const ParamLayout::Param& p : layout.params) {
    const std::size_t n = p.size == 8 ? 1 : (p.size + 7) / 8;
    state_.insert(state_.end(), n, p.size > 8 ? kAsked : kSettled);
  }
}

std::size_t StructAddressWords::address_words() const {
  return static_cast<std::size_t>(std::count(state_.begin(), state_.end(), kAddress));
}

std::size_t LaunchShapeHash::operator()(const LaunchShape& s) const {
  std::size_t h = std::hash<std::uint64_t>()(s.function);
  auto mix = [&h](std::uint64_t v) {
    h ^= std::hash<std::uint64_t>()(v) + 0x9e3779b97f4a7c15ull + (h << 6) + (h >> 2);
  };
  mix(s.context);
  for (int d = 0; d < 3; ++d) mix(static_cast<std::uint64_t>(s.grid[d]) << 32 | s.block[d]);
  mix(s.shared_memory);
  return h;
}

std::size_t WorkSampler::FunctionIdHash::operator()(const FunctionId& f) const {
  return std::hash<std::uint64_t>()(f.function) ^ (std::hash<std::uint64_t>()(f.context) << 1);
}

std::size_t WorkSampler::WordsHash::operator()(const std::vector<std::uint64_t>& w) const {
  // Four independent lanes, so a struct of hundreds of words (PyTorch's foreach and cat
  // metadata) is not one chain of dependent multiplies; then splitmix64's finalizer.
  constexpr std::uint64_t kOdd = 0x9e3779b97f4a7c15ull;
  std::uint64_t lane[4] = {0x243f6a8885a308d3ull, 0x13198a2e03707344ull, 0xa4093822299f31d0ull,
                           0x082efa98ec4e6c89ull};
  const std::size_t n = w.size();
  std::size_t i = 0;
  for (; i + 4 <= n; i += 4) {
    for (int k = 0; k < 4; ++k) lane[k] = (lane[k] ^ w[i + k]) * kOdd;
  }
  for (int k = 0; i < n; ++i, ++k) lane[k] = (lane[k] ^ w[i]) * kOdd;
  std::uint64_t h = n;
  for (std::uint64_t l : lane) h = (h ^ (l >> 29) ^ l) * 0xbf58476d1ce4e5b9ull;
  h ^= h >> 31;
  return static_cast<std::size_t>(h);
}

bool same_counted_work(const CountedWork& a, const CountedWork& b) {
  auto close = [](double x, double y, double rel, double slack) {
    return std::fabs(x - y) <= std::max(rel * std::max(std::fabs(x), std::fabs(y)), slack);
  };
  if (!close(a.flops, b.flops, 1e-3, 0.5)) return false;
  if (a.dram_write_bytes.has_value() != b.dram_write_bytes.has_value()) return false;
  return !a.dram_write_bytes || close(*a.dram_write_bytes, *b.dram_write_bytes, 0.02, 4096);
}

void WorkSampler::key_of(const ShapeState& s, std::span<const std::uint64_t> words, bool args_known,
                         std::vector<std::uint64_t>* key) const {
  key->clear();
  if (!args_known) return;  // the shape alone
  key->assign(words.begin(), words.end());
  const std::vector<bool>& ignored = functions_[s.function].ignored;
  for (std::size_t i = 0; i < key->size() && i < ignored.size(); ++i) {
    if (ignored[i]) (*key)[i] = 0;
  }
  // Keys with and without readable arguments never meet: a shape's layout is fixed.
}

SampleDecision WorkSampler::decide(const LaunchShape& shape, std::span<const std::uint64_t> words,
                                   bool args_known) {
  SampleDecision d;
  d.exact = args_known;
  if (per_key_ == 0) {  // every launch: nothing to remember
    d.measure = true;
    d.measurement = measurements_taken_++;
    return d;
  }
  auto [it, fresh] = shape_index_.try_emplace(shape, static_cast<std::uint32_t>(shapes_.size()));
  if (fresh) {
    const auto [f, new_function] = function_index_.try_emplace(
        FunctionId{shape.context, shape.function}, static_cast<std::uint32_t>(functions_.size()));
    if (new_function) functions_.emplace_back();
    functions_[f->second].shapes.push_back(it->second);
    shapes_.emplace_back().function = f->second;
  }
  ShapeState& s = shapes_[it->second];
  key_of(s, words, args_known, &scratch_);
  auto k = s.keys.find(scratch_);
  if (k == s.keys.end()) k = s.keys.emplace(scratch_, KeyState{}).first;
  KeyState& key = k->second;
  if (key.source != kNoId && measurements_[key.source].awaits_part) {
    measurements_[key.source].awaits_part = false;
    d.measure = true;
    d.continuing = true;
    d.measurement = key.source;
    return d;
  }
  if (key.taken < per_key_ && key.failures < kMaxFailures) {
    d.measure = true;
    d.measurement = static_cast<std::uint32_t>(measurements_.size());
    Measurement m;
    m.shape = it->second;
    m.words.assign(words.begin(), words.end());
    m.args_known = args_known;
    measurements_.push_back(std::move(m));
    s.measurements.push_back(d.measurement);
    ++key.taken;
    key.source = d.measurement;
    ++measurements_taken_;
    return d;
  }
  d.measurement = key.source;
  return d;
}

void WorkSampler::rebuild_keys(ShapeState& s) {
  // Failure counts stay with the keys that still exist under the new mask.
  std::unordered_map<std::vector<std::uint64_t>, KeyState, WordsHash> keys;
  for (const std::uint32_t id : s.measurements) {
    const Measurement& m = measurements_[id];
    if (m.state == State::kCancelled) continue;
    key_of(s, m.words, m.args_known, &scratch_);
    KeyState& k = keys[scratch_];
    if (m.state == State::kFailed) {
      ++k.failures;
      continue;
    }
    ++k.taken;
    // The latest finished measurement is the source; a pending one only when none is.
    const bool done = m.state == State::kDone;
    if (k.source == kNoId || done || measurements_[k.source].state != State::kDone) k.source = id;
  }
  s.keys = std::move(keys);
}

void WorkSampler::cancel(std::uint32_t id) {
  if (per_key_ == 0 || id >= measurements_.size()) return;
  Measurement& m = measurements_[id];
  m.state = State::kCancelled;
  m.awaits_part = false;
  rebuild_keys(shapes_[m.shape]);
}

void WorkSampler::failed(std::uint32_t id) {
  if (per_key_ == 0 || id >= measurements_.size()) return;
  Measurement& m = measurements_[id];
  m.state = State::kFailed;
  m.awaits_part = false;
  rebuild_keys(shapes_[m.shape]);
}

void WorkSampler::continues(std::uint32_t id) {
  if (per_key_ == 0 || id >= measurements_.size()) return;
  Measurement& m = measurements_[id];
  if (m.state == State::kPending) m.awaits_part = true;
}

void WorkSampler::measured(std::uint32_t id, const CountedWork& work) {
  if (per_key_ == 0 || id >= measurements_.size()) return;
  Measurement& m = measurements_[id];
  m.state = State::kDone;
  m.work = work;
  ShapeState& s = shapes_[m.shape];
  FunctionState& fn = functions_[s.function];
  const bool did_work = work.flops > 0 || work.dram_write_bytes.value_or(0) > 0;
  bool learned = false;
  if (did_work && m.args_known) {
    // Compare with the shape's latest measurements: the same work under other values
    // of a few words means those words do not choose the work.
    constexpr std::size_t kCompared = 64;
    const std::size_t n = s.measurements.size();
    for (std::size_t j = n > kCompared ? n - kCompared : 0; j < n; ++j) {
      const Measurement& p = measurements_[s.measurements[j]];
      if (s.measurements[j] == id || p.state != State::kDone || !p.args_known) continue;
      if (p.words.size() != m.words.size() || !same_counted_work(p.work, work)) continue;
      std::vector<std::size_t> differ;
      std::size_t values = 0;  // differing words that do not look like addresses
      for (std::size_t i = 0; i < m.words.size() && values <= kMaxLearnedWords; ++i) {
        const bool ignored = i < fn.ignored.size() && fn.ignored[i];
        if (ignored || p.words[i] == m.words[i]) continue;
        differ.push_back(i);
        if (!looks_like_address(p.words[i]) || !looks_like_address(m.words[i])) ++values;
      }
      if (differ.empty() || values > kMaxLearnedWords) continue;
      if (fn.ignored.size() < m.words.size()) fn.ignored.resize(m.words.size(), false);
      for (std::size_t i : differ) fn.ignored[i] = true;
      learned = true;
    }
  }
  // decide() already made this measurement its key's source; only a learned word moves
  // keys (several may now be one), in every shape of the function.
  if (learned) {
    for (const std::uint32_t shape : fn.shapes) rebuild_keys(shapes_[shape]);
  }
}

std::string WorkSampler::explain(std::uint32_t id) const {
  if (per_key_ == 0 || id >= measurements_.size()) return {};
  const Measurement& m = measurements_[id];
  const ShapeState& s = shapes_[m.shape];
  const std::vector<bool>& ignored_words = functions_[s.function].ignored;
  std::uint32_t closest = kNoId;
  std::vector<std::size_t> best;
  for (const std::uint32_t j : s.measurements) {
    if (j >= id) break;
    const Measurement& p = measurements_[j];
    if (p.words.size() != m.words.size()) continue;
    std::vector<std::size_t> differ;
    for (std::size_t i = 0; i < m.words.size(); ++i) {
      const bool ignored = i < ignored_words.size() && ignored_words[i];
      if (!ignored && p.words[i] != m.words[i]) differ.push_back(i);
    }
    if (closest == kNoId || differ.size() < best.size()) {
      closest = j;
      best = std::move(differ);
    }
  }
  if (closest == kNoId) return "first of its shape";
  const Measurement& p = measurements_[closest];
  std::string out = "differs from measurement " + std::to_string(closest) + " (" +
                    (p.state == State::kDone ? "done" : "not done") + ") in " +
                    std::to_string(best.size()) + " words:";
  char buf[96];
  for (std::size_t k = 0; k < best.size() && k < 8; ++k) {
    const std::size_t i = best[k];
    std::snprintf(buf, sizeof buf, " [%zu] %llx->%llx", i,
                  static_cast<unsigned long long>(p.words[i]),
                  static_cast<unsigned long long>(m.words[i]));
    out += buf;
  }
  return out;
}

std::size_t WorkSampler::keys() const {
  std::size_t n = 0;
  for (const ShapeState& s : shapes_) n += s.keys.size();
  return n;
}

std::size_t WorkSampler::learned_words() const {
  std::size_t n = 0;
  for (const FunctionState& f : functions_)
    n += static_cast<std::size_t>(std::count(f.ignored.begin(), f.ignored.end(), true));
  return n;
}

struct CounterExclusion::Pattern {
  std::regex re;
};

CounterExclusion::CounterExclusion(std::string_view user_pattern) {
  if (user_pattern.empty()) return;
  try {
    user_ = new Pattern{std::regex(std::string(user_pattern), std::regex::ECMAScript)};
  } catch (const std::regex_error&) {
    user_ = nullptr;
  }
}

CounterExclusion::~CounterExclusion() {
  delete user_;
}
CounterExclusion::CounterExclusion(CounterExclusion&& o) noexcept : user_(o.user_) {
  o.user_ = nullptr;
}
CounterExclusion& CounterExclusion::operator=(CounterExclusion&& o) noexcept {
  std::swap(user_, o.user_);
  return *this;
}

std::string_view CounterExclusion::why(std::string_view name) const {
  // Names as the driver gives them: mangled C++ (which contains the plain words) or
  // plain (Triton's).
  if (trace::is_communication_kernel(name)) return "communication";
  if (user_ != nullptr && std::regex_search(name.begin(), name.end(), user_->re))
    return "excluded by --counters-exclude";
  return {};
}

bool valid_exclude_pattern(std::string_view pattern, std::string* error) {
  try {
    std::regex re(std::string(pattern), std::regex::ECMAScript);
    (void)re;
    return true;
  } catch (const std::regex_error& e) {
    if (error) *error = e.what();
    return false;
  }
}

}  // namespace flopline::capture
