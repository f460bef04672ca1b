// Decides, after each frame, whether to draw the next one at once or to sleep until
// an event arrives. Drawing a few frames after each input lets Dear ImGui settle
// (hover states, layout that depends on the previous frame); after that the viewer
// costs nothing while nothing changes.
#pragma once

#include <cstdint>

namespace flopline::viewer {

class FramePacer {
 public:
  enum class Wait {
    kPoll,         // draw the next frame at once
    kWaitTimeout,  // sleep until an event or the timeout (work in the background)
    kWaitEvents,   // sleep until an event
  };
  struct Decision {
    Wait wait = Wait::kWaitEvents;
    double timeout_s = 0;
  };

  explicit FramePacer(int frames_after_input = 3) : frames_after_input_(frames_after_input) {}

  // `event_count` is a counter the window's callbacks increase; a change means input.
  void observe_events(std::uint64_t event_count);
  // Something in the app changed by itself (a load finished, a view animates).
  void request_frames() { frames_left_ = frames_after_input_; }
  // Called once per drawn frame. `busy`: background work whose progress is shown.
  Decision after_frame(bool busy);
  int frames_left() const { return frames_left_; }

 private:
  int frames_after_input_;
  int frames_left_ = 0;
  std::uint64_t last_event_count_ = 0;
};

}  // namespace flopline::viewer
