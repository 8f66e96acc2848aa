// The search a plan was made with, parsed once from its name.
//
// Front ends and plan files spell a search as text: "collage" (the exact search over every
// candidate, the default), "greedy", "exhaustive" (brute force, the test oracle) and
// "single:<backend>" (the cheapest plan that puts every node it can on one backend). SearchKind is
// that text parsed: code that chooses by search asks `kind == SearchKind::Kind::single` and reads
// `backend`, instead of comparing strings and cutting prefixes at each site. name() gives the text
// back, so a plan's "search" field round-trips.
#pragma once

#include <optional>
#include <string>

namespace tessera {

struct SearchKind {
  enum class Kind { collage, greedy, exhaustive, single };
  Kind kind = Kind::collage;
  std::string backend;  // the backend of single:<backend>; empty otherwise

  // The kind `text` names, or nullopt when it names none ("single:" needs a backend).
  static std::optional<SearchKind> parse(const std::string& text);
  // As parse, throwing UserError::option("search", text, ...) listing the searches.
  static SearchKind parse_or_throw(const std::string& text);
  static SearchKind single_backend(std::string backend) { return {Kind::single, std::move(backend)}; }

  std::string name() const;
  // Whether the search proves its plan optimal under the costs (collage, exhaustive), among
  // every plan rather than among a subset of them (single).
  bool exact() const { return kind == Kind::collage || kind == Kind::exhaustive; }
};

}  // namespace tessera
