#include "frame_pacer.h"

namespace flopline::viewer {

void FramePacer::observe_events(std::uint64_t event_count) {
  if (event_count != last_event_count_) {
    last_event_count_ = event_count;
    frames_left_ = frames_after_input_;
  }
}

FramePacer::Decision FramePacer::after_frame(bool busy) {
  if (frames_left_ > 0) {
    --frames_left_;
    return {.wait = Wait::kPoll, .timeout_s = 0};
  }
  // A progress bar moves ten times a second; more would only cost CPU the load needs.
  if (busy) return {.wait = Wait::kWaitTimeout, .timeout_s = 0.1};
  return {.wait = Wait::kWaitEvents, .timeout_s = 0};
}

}  // namespace flopline::viewer
