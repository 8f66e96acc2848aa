#include "search/search_kind.h"

#include "tessera/error.h"

namespace tessera {

std::optional<SearchKind> SearchKind::parse(const std::string& text) {
  if (text == "collage") return SearchKind{Kind::collage, ""};
  if (text == "greedy") return SearchKind{Kind::greedy, ""};
  if (text == "exhaustive") return SearchKind{Kind::exhaustive, ""};
  const std::string single = "single:";
  if (text.size() > single.size() && text.compare(0, single.size(), single) == 0)
    return single_backend(text.substr(single.size()));
  return std::nullopt;
}

SearchKind SearchKind::parse_or_throw(const std::string& text) {
  if (std::optional<SearchKind> kind = parse(text)) return *kind;
  throw UserError::option("search", "", "unknown search '" + text +
                                            "' (expected collage, greedy, exhaustive or single:<backend>)");
}

std::string SearchKind::name() const {
  switch (kind) {
    case Kind::collage: return "collage";
    case Kind::greedy: return "greedy";
    case Kind::exhaustive: return "exhaustive";
    case Kind::single: return "single:" + backend;
  }
  return "collage";
}

}  // namespace tessera
