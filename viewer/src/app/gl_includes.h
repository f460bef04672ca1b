// The one place GL and GLFW headers are included. libGL exports the GL 3 entry
// points the viewer uses (framebuffer objects, glReadPixels), so prototypes suffice
// and no loader is needed; Dear ImGui's OpenGL3 backend loads its own.
#pragma once

#ifndef GL_GLEXT_PROTOTYPES
#define GL_GLEXT_PROTOTYPES 1
#endif
#include <GL/gl.h>
#include <GL/glext.h>

#define GLFW_INCLUDE_NONE
#include <GLFW/glfw3.h>
