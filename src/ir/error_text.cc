// ErrorText and the library's spelling of an option mention (see tessera/error.h).
#include "tessera/error.h"

namespace tessera {

std::string library_spelling(const OptionMention& mention) {
  std::string out;
  for (const auto& [name, dims] : mention.bindings) {
    out += (out.empty() ? "" : ", ") + mention.option + "[\"" + name + "\"] = {";
    if (dims.empty()) out += "...";
    for (size_t i = 0; i < dims.size(); ++i) out.append(i ? ", " : "").append(std::to_string(dims[i]));
    out += "}";
  }
  return out.empty() ? mention.option : out;
}

std::string ErrorText::render(const OptionSpelling& spell) const {
  std::string out;
  for (const auto& part : parts_)
    out += std::holds_alternative<std::string>(part) ? std::get<std::string>(part) : spell(std::get<OptionMention>(part));
  return out;
}

}  // namespace tessera
