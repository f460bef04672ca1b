// What a counter track says in words: its name, the unit its name states, its values
// as text, and the vertical scale of its graph. GL-free, unit-tested.
#pragma once

#include <string>
#include <string_view>

#include "core/counter_index.h"

namespace flopline::viewer {

// A track's title from the counter event's name and the args member of the series:
// "GPU metrics: SM active %"; the name alone for a counter of one unnamed value.
std::string counter_track_name(std::string_view name, std::string_view key);

// The unit a series' title ends with, when it names one: "%" ("SM active %"), a rate
// ("DRAM read GB/s", "bandwidth (GB/s)") or a size ("Total Allocated MB"); "" when the
// title states none. Only the last word counts, so a word that merely contains a unit
// ("Bytes in use") is not one.
std::string counter_unit(std::string_view title);

// A value for a label or a tooltip, with its unit: "87.3 %", "3010 GB/s", "1.25 M".
std::string format_counter_value(double v, std::string_view unit);

// Where a series' numbers come from, in words, by its category: flopline's GPU metrics
// (cat "gpu_metrics") or another tool's counter events.
std::string counter_source(std::string_view cat);

// The values a graph's height spans: from min(0, lowest) to the highest value shown,
// at least 100 for a percentage (so 40% reads as 40% of the height).
struct CounterScale {
  double lo = 0;
  double hi = 1;
  // y px of `v` in a band [top, top + height): hi at the top, lo at the bottom.
  float y_of(double v, float top, float height) const;
};
CounterScale counter_scale(const ValueRange& shown, std::string_view unit);

}  // namespace flopline::viewer
