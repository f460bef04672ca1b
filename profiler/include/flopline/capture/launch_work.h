// Which launches may share one measurement of hardware counters (docs/COUNTERS.md,
// "Which launches share a measurement"). Pure functions and a sampler of plain values,
// used by the capture on the launching thread and tested without a GPU.
//
// A launch's work key is the function itself (context and function handle, never the
// name), its grid, block and dynamic shared memory, and its arguments as 8-byte words:
//
//   - an argument of exactly 8 bytes whose value looks like an address (see
//     looks_like_address) becomes kAddressWord: device buffers move between steps
//     without changing the work (a null pointer stays 0: an optional operand, a bias
//     or a residual, present or not, is other work);
//   - a word of a by-value struct at a position where the driver has recognised a
//     device address (StructAddressWords) becomes kAddressWord too: cuBLAS's struct
//     holds the operands' addresses beside M, N and K, and two 32-bit sizes side by side
//     read like an address, so only the driver can tell them apart;
//   - a word that two measured launches of one function and shape differed in, while
//     they counted the same work, is learned as not part of the work (an RNG seed or
//     offset, a learning rate, the operand addresses inside a by-value struct): from
//     then on it is left out for that function, in every shape (a word is one field of
//     the function's parameters, whatever the grid). Only differences of at most
//     kMaxLearnedWords words teach, not counting words that look like addresses on both
//     sides, and only launches that did some work (FLOPs or bytes stored);
//   - everything else (sizes in a by-value struct, as cuBLAS passes M, N and K; a
//     sequence length; a flag) stays in the key.
//
// The first `per_key` launches of each key are measured; every later one takes the
// values of the latest measurement of its key.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "flopline/capture/counters.h"
#include "flopline/capture/records.h"

namespace flopline::capture {

// Where each parameter of a function sits in its argument buffer (bytes), as the
// driver's cuFuncGetParamInfo gives it. Empty `params` with `known` false: unreadable.
struct ParamLayout {
  struct Param {
    std::uint32_t offset = 0;
    std::uint32_t size = 0;
  };
  std::vector<Param> params;
  bool known = false;
};

// An 8-byte value in the range where this platform's user-space and device virtual
// addresses live (2^32 up to 2^48): a 64-bit size or count almost never is.
inline bool looks_like_address(std::uint64_t v) {
  return v >= (1ull << 32) && v < (1ull << 48);
}

// What an address becomes in a launch's words: beyond the address range, so no
// address equals it, and not 0, so a null pointer stays apart.
inline constexpr std::uint64_t kAddressWord = 0xadd7e55add7e55ull;

// The launch's arguments as 8-byte words, parameter by parameter (a parameter shorter
// than 8 bytes is one word, a longer one is cut into words, the last one zero-padded);
// an address-like 8-byte parameter becomes kAddressWord. `kernel_params` is
// cuLaunchKernel's array of pointers, one per parameter.
void argument_words(const ParamLayout& layout, const void* const* kernel_params,
                    std::vector<std::uint64_t>* words);
// The same from a packed argument buffer (CU_LAUNCH_PARAM_BUFFER_POINTER); parameters
// that reach past `size` are left out.
void argument_words_packed(const ParamLayout& layout, const void* buffer, std::size_t size,
                           std::vector<std::uint64_t>* words);

// Which words of one function's by-value structs hold device addresses. A struct word
// that looks like an address is asked about (`is_device_address`, the driver's
// cuPointerGetAttribute in the capture) at most kChecks times per position; a position
// the driver once recognises holds an address from then on, in every launch of the
// function: a struct's field is one field whatever the values. Positions the driver
// never recognised stay in the key (sizes, and host addresses left in padding).
class StructAddressWords {
 public:
  static constexpr std::uint8_t kChecks = 8;

  StructAddressWords() = default;
  explicit StructAddressWords(const ParamLayout& layout);
  // Replaces the words at address positions with kAddressWord, asking first about
  // address-like words at positions not yet known. `words` from argument_words of the
  // same layout; a different count (a packed buffer that left parameters out) is left
  // as it is.
  template <class IsDeviceAddress>
  void apply(std::vector<std::uint64_t>* words, IsDeviceAddress&& is_device_address) {
    if (words->size() != state_.size()) return;
    std::uint64_t* w = words->data();
    for (std::size_t i = 0; i < state_.size(); ++i) {
      std::uint8_t& state = state_[i];
      if (state == kSettled) continue;
      if (state == kAddress) {
        if (w[i] != 0) w[i] = kAddressWord;
        continue;
      }
      if (!looks_like_address(w[i])) continue;
      if (is_device_address(w[i])) {
        state = kAddress;
        w[i] = kAddressWord;
      } else if (++state == kAsked + kChecks) {
        state = kSettled;
      }
    }
  }
  std::size_t address_words() const;

 private:
  // Per word position: kSettled (not a struct word, or asked about kChecks times without
  // being an address), kAddress, or kAsked plus the times it was asked about so far.
  static constexpr std::uint8_t kSettled = 0, kAddress = 1, kAsked = 2;
  std::vector<std::uint8_t> state_;
};

struct LaunchShape {
  std::uint64_t context = 0;
  std::uint64_t function = 0;  // CUfunction (or CUkernel) handle
  std::uint32_t grid[3] = {0, 0, 0};
  std::uint32_t block[3] = {0, 0, 0};
  std::uint32_t shared_memory = 0;  // dynamic, bytes
  bool operator==(const LaunchShape&) const = default;
};
struct LaunchShapeHash {
  std::size_t operator()(const LaunchShape& s) const;
};

// Whether two measurements counted the same work: FLOPs within 0.1%, bytes stored
// within 2% (or 4 KB). Bytes read are not compared: they depend on what L2 held.
bool same_counted_work(const CountedWork& a, const CountedWork& b);

// A scalar list passed by value (PyTorch's foreach ops under AdamW pass each tensor's
// bias correction, new at every step) differs in many words at once.
inline constexpr std::size_t kMaxLearnedWords = 128;

struct SampleDecision {
  bool measure = false;
  // measure: the new measurement's id; otherwise the measurement whose values this
  // launch takes (kNoId: none yet).
  std::uint32_t measurement = kNoId;
  bool exact = true;  // false when the arguments could not be read (the key is the shape)
  // measure: the launch continues an earlier launch's measurement in parts (continues()).
  bool continuing = false;
};

// Not thread-safe: the caller serializes every call.
class WorkSampler {
 public:
  explicit WorkSampler(std::uint32_t per_key) : per_key_(per_key) {}

  // `words` from argument_words (unused when !args_known).
  SampleDecision decide(const LaunchShape& shape, std::span<const std::uint64_t> words,
                        bool args_known);
  // A measurement that did not happen after all (a stream being captured): it neither
  // counts towards its key nor serves as a source.
  void cancel(std::uint32_t measurement);
  // A measurement that failed: the key's next launch is measured again, at most
  // kMaxFailures times per key.
  void failed(std::uint32_t measurement);
  // A measurement's result: learns words that are not part of the work.
  void measured(std::uint32_t measurement, const CountedWork& work);
  // A measurement in parts (function_metrics.h) needs another launch of its key: the
  // key's next launch is measured under the same id (decide() says `continuing`).
  // Launches of the key until then take the measurement as their source.
  void continues(std::uint32_t measurement);

  bool every_launch() const { return per_key_ == 0; }  // decide() then reads no words
  // Why measurement `id` was a new key, for FLOPLINE_COUNTERS_DEBUG: "first of its
  // shape", or the word positions (not yet learned) in which it differs from the
  // earlier measurement of its shape that it is closest to, with both values.
  std::string explain(std::uint32_t id) const;
  std::size_t keys() const;
  std::size_t shapes() const { return shapes_.size(); }
  // Words learned as not part of the work, over all functions.
  std::size_t learned_words() const;

  static constexpr std::uint32_t kMaxFailures = 3;

 private:
  enum class State : std::uint8_t { kPending, kDone, kFailed, kCancelled };
  struct Measurement {
    std::uint32_t shape = 0;
    std::vector<std::uint64_t> words;
    bool args_known = true;
    State state = State::kPending;
    bool awaits_part = false;  // continues(): the key's next launch measures a part
    CountedWork work;
  };
  struct WordsHash {
    std::size_t operator()(const std::vector<std::uint64_t>& w) const;
  };
  struct KeyState {
    std::uint32_t taken = 0;     // measurements started (pending or done)
    std::uint32_t failures = 0;  // measurements that failed
    std::uint32_t source = kNoId;
  };
  struct ShapeState {
    std::uint32_t function = 0;  // index into functions_
    std::unordered_map<std::vector<std::uint64_t>, KeyState, WordsHash> keys;
    std::vector<std::uint32_t> measurements;  // ids, in order
  };
  // One function (context and handle) over all its shapes.
  struct FunctionState {
    std::vector<bool> ignored;  // per word position: learned as not part of the work
    std::vector<std::uint32_t> shapes;
  };
  struct FunctionId {
    std::uint64_t context = 0;
    std::uint64_t function = 0;
    bool operator==(const FunctionId&) const = default;
  };
  struct FunctionIdHash {
    std::size_t operator()(const FunctionId& f) const;
  };
  void key_of(const ShapeState& s, std::span<const std::uint64_t> words, bool args_known,
              std::vector<std::uint64_t>* key) const;
  void rebuild_keys(ShapeState& s);

  std::uint32_t per_key_;  // 0: every launch
  std::uint32_t measurements_taken_ = 0;
  std::unordered_map<LaunchShape, std::uint32_t, LaunchShapeHash> shape_index_;
  std::vector<ShapeState> shapes_;
  std::unordered_map<FunctionId, std::uint32_t, FunctionIdHash> function_index_;
  std::vector<FunctionState> functions_;
  std::vector<Measurement> measurements_;  // by id (unused when per_key_ == 0)
  std::vector<std::uint64_t> scratch_;
};

// Why a kernel is never replayed, from its name: "communication" for kernels that wait
// for another GPU or process (NCCL's ncclDevKernel_* and ncclKernel_*, NVSHMEM's,
// PyTorch's symmetric-memory collectives), "excluded by --counters-exclude" when the
// user's pattern (an ECMAScript regex, searched in the name) matches; "" otherwise.
class CounterExclusion {
 public:
  // An invalid pattern excludes nothing beyond the built-in rule (the command line
  // refuses it first: valid_exclude_pattern).
  explicit CounterExclusion(std::string_view user_pattern = {});
  ~CounterExclusion();
  CounterExclusion(CounterExclusion&&) noexcept;
  CounterExclusion& operator=(CounterExclusion&&) noexcept;
  std::string_view why(std::string_view kernel_name) const;

 private:
  struct Pattern;
  Pattern* user_ = nullptr;
};
// Whether `pattern` is a usable --counters-exclude regex; `error` says why not.
bool valid_exclude_pattern(std::string_view pattern, std::string* error);

}  // namespace flopline::capture
