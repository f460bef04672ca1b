#include "core/table_columns.h"

#include <algorithm>

namespace flopline::viewer {

float name_column_width(float longest_name_px, float available_px, float font_px) {
  const float least = 12 * font_px;
  const float most = std::max(least, 0.55f * available_px);
  return std::clamp(longest_name_px, least, most);
}

}  // namespace flopline::viewer
