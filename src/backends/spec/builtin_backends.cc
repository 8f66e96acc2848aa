// Built-in backend specs, compiled into the binary from data/backends/*.json (the CMake
// configure step writes builtin_specs.inc), and --backends resolution.
#include <algorithm>
#include <map>
#include <utility>

#include "tessera/backend_spec.h"
#include "tessera/error.h"

namespace tessera {
namespace {

struct EmbeddedSpec {
  const char* name;   // file stem
  const char* text;
};

const EmbeddedSpec kEmbedded[] = {
#include "builtin_specs.inc"
};

const char* embedded_text(const std::string& name) {
  for (const auto& e : kEmbedded)
    if (name == e.name) return e.text;
  return nullptr;
}

}  // namespace

const std::vector<std::string>& builtin_backend_names() {
  // Every embedded spec is a built-in backend: adding one is adding its spec file.
  static const std::vector<std::string> names = [] {
    std::vector<std::string> n;
    for (const auto& e : kEmbedded) n.push_back(e.name);
    std::sort(n.begin(), n.end());
    return n;
  }();
  return names;
}

bool is_builtin_backend(const std::string& name) {
  const auto& names = builtin_backend_names();
  return std::find(names.begin(), names.end(), name) != names.end();
}

BackendSpec builtin_backend_spec(const std::string& name) {
  const char* text = is_builtin_backend(name) ? embedded_text(name) : nullptr;
  if (!text) {
    std::string known;
    for (const auto& n : builtin_backend_names()) known += (known.empty() ? "" : ", ") + n;
    throw UserError::option("backends", "", "unknown backend '" + name + "' (built-in: " + known +
                                          "; others need a backend spec file)");
  }
  BackendSpec spec = parse_backend_spec(text, "<builtin>/" + name + ".json");
  TESSERA_CHECK(spec.name == name, "built-in spec " + name + ".json names another backend");
  return spec;
}

std::vector<std::string> split_backend_list(const std::string& text) {
  std::vector<std::string> out;
  size_t start = 0;
  while (true) {
    size_t comma = text.find(',', start);
    std::string item = text.substr(start, comma == std::string::npos ? std::string::npos : comma - start);
    size_t b = item.find_first_not_of(" \t"), e = item.find_last_not_of(" \t");
    item = b == std::string::npos ? "" : item.substr(b, e - b + 1);
    if (item.empty())
      throw UserError::option("backends", "", "empty backend name in \"" + text + "\" (expected a,b,c)");
    out.push_back(item);
    if (comma == std::string::npos) break;
    start = comma + 1;
  }
  return out;
}

std::vector<BackendSpec> resolve_backends(const std::vector<std::string>& names,
                                          const std::vector<std::string>& spec_files) {
  std::map<std::string, BackendSpec> from_files;
  for (const auto& file : spec_files) {
    BackendSpec spec = load_backend_spec(file);
    auto [it, fresh] = from_files.emplace(spec.name, spec);
    if (!fresh)
      throw UserError(file, "name", "backend \"" + spec.name + "\" is also defined by " + it->second.source);
  }
  if (names.empty()) throw UserError::option("backends", "", "no backend given (expected a,b,c)");
  std::vector<BackendSpec> out;
  for (const auto& name : names) {
    for (const auto& done : out)
      if (done.name == name) throw UserError::option("backends", "", "backend '" + name + "' is listed twice");
    auto it = from_files.find(name);
    out.push_back(it != from_files.end() ? it->second : builtin_backend_spec(name));
  }
  return out;
}

}  // namespace tessera
