// The program's one window: GLFW, an OpenGL 3 context and Dear ImGui with its GLFW
// and OpenGL3 backends. Frames are begun and ended here; what is drawn is not.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

struct GLFWwindow;

namespace flopline::viewer {

struct WindowConfig {
  int width = 1600;
  int height = 900;
  bool visible = true;  // false for --screenshot: nothing appears on the screen
  bool vsync = true;    // off for --bench, so frame times measure work, not the display
  std::string title = "flopline-view";
};

// What the window's callbacks collect between frames.
struct WindowInput {
  std::vector<std::string> dropped;  // paths dropped on the window
  std::uint64_t event_count = 0;     // any input or window event
  // Key presses since the last frame, with their modifiers. Dear ImGui 1.86 only sees
  // which keys are down at the start of a frame, so a press and release that arrive
  // together (a quick tap, or xdotool) would be lost without these.
  std::vector<std::pair<int, int>> key_presses;
};

class GlWindow {
 public:
  // Returns nothing and sets `error` when there is no display or no OpenGL 3.
  static std::unique_ptr<GlWindow> create(const WindowConfig& config, std::string& error);
  ~GlWindow();
  GlWindow(const GlWindow&) = delete;
  GlWindow& operator=(const GlWindow&) = delete;

  GLFWwindow* handle() const { return window_; }
  bool should_close() const;
  void request_close();
  // Starts a Dear ImGui frame (polls nothing; the caller decides how to wait).
  void begin_frame();
  // Headless modes: every frame has this size whatever the window manager did, and no
  // mouse (a pointer that happens to lie over the hidden window must not hover).
  void set_headless(int width, int height) {
    headless_width_ = width;
    headless_height_ = height;
  }
  // Renders the ImGui draw data into the bound framebuffer and presents it.
  void end_frame(bool present = true);
  // Waits until the frame is on the screen: the GL work done (llvmpipe rasterises on its
  // own threads) and, on X11, the server done with the swap's image copy.
  void wait_until_shown();
  // Ends the ImGui frame and builds its draw data (once per frame; render_draw_data
  // calls it when the caller has not, the bench calls it to time the UI apart).
  void finish_ui();
  // Renders the ImGui draw data without presenting (screenshots).
  void render_draw_data();
  void present();
  // Size of the window's framebuffer in pixels.
  std::pair<int, int> framebuffer_size() const;
  void set_title(const std::string& title);
  // Files dropped on the window since the last call.
  std::vector<std::string> take_dropped_files();
  std::uint64_t event_count() const { return input_.event_count; }

 private:
  GlWindow() = default;
  GLFWwindow* window_ = nullptr;
  bool imgui_glfw_ = false;
  bool imgui_gl_ = false;
  void replay_key_presses();
  WindowInput input_;
  std::vector<int> held_keys_;  // keys marked down for one frame by replay_key_presses
  int rendered_frame_ = -1;
  int headless_width_ = 0;
  int headless_height_ = 0;
};

// The GL_RENDERER string ("llvmpipe (LLVM 15.0.6, 256 bits)"), for bench reports.
std::string gl_renderer_name();

}  // namespace flopline::viewer
