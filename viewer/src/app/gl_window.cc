#include "gl_window.h"

#include <backends/imgui_impl_glfw.h>
#include <backends/imgui_impl_opengl3.h>
#include <imgui.h>

#include <cfloat>
#include <cstdint>

#include "gl_includes.h"  // first: it defines GL_GLEXT_PROTOTYPES before any GL header

#include <GL/glx.h>  // glXGetCurrentDisplay: the X connection of the current GL context

namespace flopline::viewer {
namespace {

// GLFW reports errors through a callback; the last one explains a failed create().
std::string& last_glfw_error() {
  static std::string e;
  return e;
}

void on_glfw_error(int code, const char* description) {
  last_glfw_error() = std::string(description ? description : "unknown") + " (GLFW error " +
                      std::to_string(code) + ")";
}

WindowInput* input_of(GLFWwindow* w) {
  return static_cast<WindowInput*>(glfwGetWindowUserPointer(w));
}

void on_drop(GLFWwindow* window, int count, const char** paths) {
  WindowInput* in = input_of(window);
  if (!in) return;
  for (int i = 0; i < count; ++i) in->dropped.emplace_back(paths[i]);
  ++in->event_count;
}

// Every callback counts an event, so the frame pacer knows input arrived. They are
// installed before Dear ImGui's backend, which chains to them.
void count_event(GLFWwindow* w) {
  if (WindowInput* in = input_of(w)) ++in->event_count;
}
void on_cursor_pos(GLFWwindow* w, double, double) {
  count_event(w);
}
void on_cursor_enter(GLFWwindow* w, int) {
  count_event(w);
}
void on_mouse_button(GLFWwindow* w, int, int, int) {
  count_event(w);
}
void on_scroll(GLFWwindow* w, double, double) {
  count_event(w);
}
void on_key(GLFWwindow* w, int key, int, int action, int mods) {
  count_event(w);
  if (WindowInput* in = input_of(w); in && action == GLFW_PRESS)
    in->key_presses.emplace_back(key, mods);
}
void on_char(GLFWwindow* w, unsigned) {
  count_event(w);
}
void on_size(GLFWwindow* w, int, int) {
  count_event(w);
}
void on_refresh(GLFWwindow* w) {
  count_event(w);
}
void on_focus(GLFWwindow* w, int) {
  count_event(w);
}

void install_counting_callbacks(GLFWwindow* w) {
  glfwSetDropCallback(w, on_drop);
  glfwSetCursorPosCallback(w, on_cursor_pos);
  glfwSetCursorEnterCallback(w, on_cursor_enter);
  glfwSetMouseButtonCallback(w, on_mouse_button);
  glfwSetScrollCallback(w, on_scroll);
  glfwSetKeyCallback(w, on_key);
  glfwSetCharCallback(w, on_char);
  glfwSetWindowSizeCallback(w, on_size);
  glfwSetWindowRefreshCallback(w, on_refresh);
  glfwSetWindowFocusCallback(w, on_focus);
}

// Tries OpenGL 3.3 core first (what Mesa gives on any machine), then whatever 3.x
// compatibility context the driver has.
GLFWwindow* create_context_window(const WindowConfig& c, const char*& glsl) {
  glfwWindowHint(GLFW_VISIBLE, c.visible ? GLFW_TRUE : GLFW_FALSE);
  glfwWindowHint(GLFW_CONTEXT_VERSION_MAJOR, 3);
  glfwWindowHint(GLFW_CONTEXT_VERSION_MINOR, 3);
  glfwWindowHint(GLFW_OPENGL_PROFILE, GLFW_OPENGL_CORE_PROFILE);
  if (GLFWwindow* w = glfwCreateWindow(c.width, c.height, c.title.c_str(), nullptr, nullptr)) {
    glsl = "#version 330 core";
    return w;
  }
  glfwWindowHint(GLFW_CONTEXT_VERSION_MINOR, 0);
  glfwWindowHint(GLFW_OPENGL_PROFILE, GLFW_OPENGL_ANY_PROFILE);
  glsl = "#version 130";
  return glfwCreateWindow(c.width, c.height, c.title.c_str(), nullptr, nullptr);
}

}  // namespace

std::unique_ptr<GlWindow> GlWindow::create(const WindowConfig& config, std::string& error) {
  glfwSetErrorCallback(on_glfw_error);
  if (!glfwInit()) {
    error = "cannot open a window: " + last_glfw_error();
    return nullptr;
  }
  std::unique_ptr<GlWindow> self(new GlWindow());
  const char* glsl = nullptr;
  self->window_ = create_context_window(config, glsl);
  if (!self->window_) {
    error = "cannot create an OpenGL 3 window: " + last_glfw_error();
    return nullptr;
  }
  glfwMakeContextCurrent(self->window_);
  glfwSwapInterval(config.vsync ? 1 : 0);
  glfwSetWindowUserPointer(self->window_, &self->input_);
  install_counting_callbacks(self->window_);

  IMGUI_CHECKVERSION();
  ImGui::CreateContext();
  ImGuiIO& io = ImGui::GetIO();
  // Window placement is computed from the window size every frame; an imgui.ini
  // would only make screenshots depend on the previous run.
  io.IniFilename = nullptr;
  io.ConfigWindowsMoveFromTitleBarOnly = true;
  ImGui::StyleColorsDark();
  ImGui::GetStyle().WindowRounding = 0;
  self->imgui_glfw_ = ImGui_ImplGlfw_InitForOpenGL(self->window_, true);
  self->imgui_gl_ = ImGui_ImplOpenGL3_Init(glsl);
  if (!self->imgui_glfw_ || !self->imgui_gl_) {
    error = "cannot initialise Dear ImGui's GLFW/OpenGL3 backends";
    return nullptr;
  }
  // Build the font texture now and sample it with GL_NEAREST: ImGui draws glyphs and
  // solid fills texel-aligned, so the picture is the same, and a software rasteriser
  // (llvmpipe) fills several times faster without bilinear filtering.
  ImGui_ImplOpenGL3_CreateDeviceObjects();
  const auto tex = static_cast<GLuint>(reinterpret_cast<std::uintptr_t>(io.Fonts->TexID));
  glBindTexture(GL_TEXTURE_2D, tex);
  glTexParameteri(GL_TEXTURE_2D, GL_TEXTURE_MIN_FILTER, GL_NEAREST);
  glTexParameteri(GL_TEXTURE_2D, GL_TEXTURE_MAG_FILTER, GL_NEAREST);
  glBindTexture(GL_TEXTURE_2D, 0);
  return self;
}

GlWindow::~GlWindow() {
  if (imgui_gl_) ImGui_ImplOpenGL3_Shutdown();
  if (imgui_glfw_) ImGui_ImplGlfw_Shutdown();
  if (ImGui::GetCurrentContext()) ImGui::DestroyContext();
  if (window_) glfwDestroyWindow(window_);
  glfwTerminate();
}

bool GlWindow::should_close() const {
  return glfwWindowShouldClose(window_) != 0;
}

void GlWindow::request_close() {
  glfwSetWindowShouldClose(window_, GLFW_TRUE);
}

void GlWindow::replay_key_presses() {
  ImGuiIO& io = ImGui::GetIO();
  for (int k : held_keys_) io.KeysDown[k] = glfwGetKey(window_, k) == GLFW_PRESS;
  held_keys_.clear();
  io.KeyCtrl = io.KeysDown[GLFW_KEY_LEFT_CONTROL] || io.KeysDown[GLFW_KEY_RIGHT_CONTROL];
  io.KeyShift = io.KeysDown[GLFW_KEY_LEFT_SHIFT] || io.KeysDown[GLFW_KEY_RIGHT_SHIFT];
  io.KeyAlt = io.KeysDown[GLFW_KEY_LEFT_ALT] || io.KeysDown[GLFW_KEY_RIGHT_ALT];
  for (const auto& [key, mods] : input_.key_presses) {
    if (key < 0 || key >= static_cast<int>(IM_ARRAYSIZE(io.KeysDown))) continue;
    if (!io.KeysDown[key]) {
      // Already released: down for this one frame, so ImGui sees the press.
      io.KeysDown[key] = true;
      held_keys_.push_back(key);
    }
    io.KeyCtrl |= (mods & GLFW_MOD_CONTROL) != 0;
    io.KeyShift |= (mods & GLFW_MOD_SHIFT) != 0;
    io.KeyAlt |= (mods & GLFW_MOD_ALT) != 0;
  }
  input_.key_presses.clear();
}

void GlWindow::begin_frame() {
  ImGui_ImplOpenGL3_NewFrame();
  ImGui_ImplGlfw_NewFrame();
  replay_key_presses();
  if (headless_width_ > 0) {
    ImGuiIO& io = ImGui::GetIO();
    io.DisplaySize =
        ImVec2(static_cast<float>(headless_width_), static_cast<float>(headless_height_));
    io.DisplayFramebufferScale = ImVec2(1, 1);
    io.MousePos = ImVec2(-FLT_MAX, -FLT_MAX);
    for (bool& down : io.MouseDown) down = false;
  }
  ImGui::NewFrame();
}

void GlWindow::finish_ui() {
  if (rendered_frame_ == ImGui::GetFrameCount()) return;
  ImGui::Render();
  rendered_frame_ = ImGui::GetFrameCount();
}

void GlWindow::render_draw_data() {
  finish_ui();
  const ImVec2 size = ImGui::GetIO().DisplaySize;
  const ImVec2 scale = ImGui::GetIO().DisplayFramebufferScale;
  glViewport(0, 0, static_cast<GLsizei>(size.x * scale.x), static_cast<GLsizei>(size.y * scale.y));
  // The timeline's background colour (ui_colors.h kTracksBg): windows without a
  // background of their own show it.
  glClearColor(24.0f / 255, 25.0f / 255, 28.0f / 255, 1.0f);
  glClear(GL_COLOR_BUFFER_BIT);
  ImGui_ImplOpenGL3_RenderDrawData(ImGui::GetDrawData());
}

void GlWindow::end_frame(bool show) {
  render_draw_data();
  if (show) present();
}

void GlWindow::present() {
  glfwSwapBuffers(window_);
}

std::pair<int, int> GlWindow::framebuffer_size() const {
  int w = 0, h = 0;
  glfwGetFramebufferSize(window_, &w, &h);
  return {w, h};
}

void GlWindow::wait_until_shown() {
  glFinish();
  // With llvmpipe the swap hands the image to the X server (Xvfb) to copy; without this
  // the server's copy of one frame runs beside the building of the next.
  if (Display* d = glXGetCurrentDisplay()) XSync(d, False);
}

void GlWindow::set_title(const std::string& title) {
  glfwSetWindowTitle(window_, title.c_str());
}

std::vector<std::string> GlWindow::take_dropped_files() {
  std::vector<std::string> out;
  out.swap(input_.dropped);
  return out;
}

std::string gl_renderer_name() {
  const auto* r = reinterpret_cast<const char*>(glGetString(GL_RENDERER));
  return r ? r : "unknown";
}

}  // namespace flopline::viewer
