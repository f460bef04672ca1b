#include "flopline/kernels/types.h"

#include <algorithm>
#include <cctype>

namespace flopline::kernels {

const char* dtype_name(DType t) {
  switch (t) {
    case DType::f32:
      return "fp32";
    case DType::tf32:
      return "tf32";
    case DType::bf16:
      return "bf16";
    case DType::f16:
      return "fp16";
  }
  return "?";
}

std::size_t dtype_bytes(DType t) {
  return (t == DType::bf16 || t == DType::f16) ? 2 : 4;
}

bool parse_dtype(const std::string& text, DType* out) {
  std::string s = text;
  std::transform(s.begin(), s.end(), s.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  if (s == "fp32" || s == "f32" || s == "float32" || s == "float")
    *out = DType::f32;
  else if (s == "tf32")
    *out = DType::tf32;
  else if (s == "bf16" || s == "bfloat16")
    *out = DType::bf16;
  else if (s == "fp16" || s == "f16" || s == "float16" || s == "half")
    *out = DType::f16;
  else
    return false;
  return true;
}

const char* matmul_path_name(MatmulPath p) {
  switch (p) {
    case MatmulPath::automatic:
      return "auto";
    case MatmulPath::simt:
      return "simt";
    case MatmulPath::sm80:
      return "sm80";
    case MatmulPath::sm90:
      return "sm90";
  }
  return "?";
}

}  // namespace flopline::kernels
