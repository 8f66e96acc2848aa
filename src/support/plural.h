// Counts with their nouns in printed lines: "1 partition", "2 partitions", "0 nodes".
//
// Only regular English plurals appear in tessera's output (partition, node, function, weight,
// candidate, crossing, thread, run); an irregular one passes its plural explicitly.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>

namespace tessera {

inline std::string count_of(size_t n, std::string_view singular, std::string_view plural = {}) {
  std::string out = std::to_string(n) + " ";
  if (n == 1) out += singular;
  else if (plural.empty()) (out += singular) += "s";
  else out += plural;
  return out;
}

}  // namespace tessera
