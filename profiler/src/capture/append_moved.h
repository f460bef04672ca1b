// Moving one record vector onto the end of another, as the capture's batches grow.
#pragma once

#include <iterator>
#include <utility>
#include <vector>

namespace flopline::capture::detail {

// Moves `from`'s elements after `to`'s (taking its buffer when `to` is empty) and leaves
// `from` empty.
template <class T>
void append_moved(std::vector<T>& to, std::vector<T>& from) {
  if (to.empty()) {
    to = std::move(from);
  } else {
    to.insert(to.end(), std::make_move_iterator(from.begin()), std::make_move_iterator(from.end()));
  }
  from.clear();
}

}  // namespace flopline::capture::detail
