// Lazy, tolerant access to JSON text held in the model (args objects, raw metadata).
// Only what is asked for is parsed. Accepts what the reader accepts (nan/inf,
// invalid UTF-8, trailing commas).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace flopline::trace {

// The raw text of member `key` of the JSON object `object_text`, or nullopt.
std::optional<std::string_view> json_member(std::string_view object_text, std::string_view key);
// All top-level members of an object, in order, as (decoded key, raw value text).
std::vector<std::pair<std::string, std::string_view>> json_members(std::string_view object_text);
// A raw JSON value as a number: numbers, numeric strings, true/false. nullopt otherwise.
std::optional<double> json_number(std::string_view value_text);
std::optional<std::int64_t> json_int(std::string_view value_text);
// A raw JSON string value, decoded (escapes resolved). nullopt when not a string.
std::optional<std::string> json_string(std::string_view value_text);

}  // namespace flopline::trace
