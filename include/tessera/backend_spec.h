// BackendSpec: a declarative backend (`tessera.backend` version 1, docs/design.md) and the
// built-in backends' partition rules, written as the same specs (data/backends/*.json).
//
// A spec says which ops a backend takes alone (`ops`, or "*"), which fused kernels it has
// (`patterns`, each a named composite), how it fuses (`fusion`: none | tvm | arbitrary) and its
// limits (max_depth, max_exits, allow_taps). Its partition rule is always
//
//   OnlyValid[limits]( Fusion[style, max_depth]( DTypes[dtypes]( Union( SingleOp{ops}, Composite{patterns} ) ) ) )
//
// and a candidate's ops and dtypes are all supported by construction: seeds only contain
// supported ops whose tensors have dtypes the backend takes ("dtypes", dtype_support.h; DTypes is
// left out when the spec takes every dtype).
//
// Loading validates everything and throws UserError("FILE: FIELD: WHAT"): unknown or misspelt
// fields, wrong types, a bad format/version, an unknown fusion style, a pattern syntax error (with
// its column), an op the registry does not know (tessera::find_op), a negative limit, duplicate
// pattern names. Built-in specs are compiled into the binary (generated from data/backends/ at
// build time), so `tessera` works from any directory.
//
// Built-ins: ref (every op alone), eigen, onednn, blas (real backends, kernels under
// src/backends/<name>/), tvm and byoc (Collage's test backends, cost-model only).
#pragma once

#include <memory>
#include <string>
#include <vector>

namespace tessera {

class PartitionRule;        // src/partition/partition_rule.h
struct BackendSpecDetail;   // src/backends/spec/backend_spec_detail.h

struct BackendSpec {
  std::string name;
  std::string device = "cpu";
  bool all_ops = false;                     // "ops": "*"
  std::vector<std::string> ops;             // sorted, unique; empty when all_ops
  std::string source;                       // file it came from ("<builtin>/ref.json" for built-ins)

  BackendSpec();
  ~BackendSpec();
  BackendSpec(const BackendSpec& o);
  BackendSpec(BackendSpec&& o) noexcept;
  BackendSpec& operator=(const BackendSpec& o);
  BackendSpec& operator=(BackendSpec&& o) noexcept;

  // How it partitions and what its functions take: its patterns, dtypes, fusion style, limits and
  // boundary layout. The partitioner's business; a program that only names backends needs none
  // of it.
  BackendSpecDetail& detail() { return *detail_; }
  const BackendSpecDetail& detail() const { return *detail_; }

  // True when `ops` lists the op ("*" included) or a pattern names it.
  bool supports(const std::string& op) const;
  // OnlyValid(Fusion(Union(SingleOp, Composite))) as above, rules named "<name>.single" etc.
  std::unique_ptr<PartitionRule> make_rule() const;

 private:
  std::unique_ptr<BackendSpecDetail> detail_;
};

// Parses a spec's JSON text; `file` names it in errors.
BackendSpec parse_backend_spec(const std::string& json_text, const std::string& file);
// Reads and parses a spec file; an unreadable file is a UserError.
BackendSpec load_backend_spec(const std::string& path);

// Built-in backend names, sorted: one per spec compiled in (data/backends/*.json and
// src/backends/<name>/*.json). One that runs here also has a registration
// (src/backends/registered_backends.inc: its compiler, precision and op table).
const std::vector<std::string>& builtin_backend_names();
bool is_builtin_backend(const std::string& name);
// The built-in spec; throws UserError if `name` is not built in.
BackendSpec builtin_backend_spec(const std::string& name);

// The `--backends a,b --backend-spec F...` resolution every command shares: spec files first
// (a file may shadow a built-in name), then built-ins. Unknown names, a name listed twice and two
// files defining one name are UserErrors naming the flag or file; a spec file whose backend is not
// in `names` is loaded (so it is validated) and otherwise unused. Result in `names` order.
std::vector<BackendSpec> resolve_backends(const std::vector<std::string>& names,
                                          const std::vector<std::string>& spec_files);
// Splits "a,b,c" (the --backends syntax), trimming blanks; an empty item is a UserError.
std::vector<std::string> split_backend_list(const std::string& text);

}  // namespace tessera
