// Module: the partitioned model, `main` plus global functions (docs/design.md; TVM's IRModule after
// BYOC partitioning). Only emit builds modules; every emit step is a plain function
// Module -> Module (or Plan -> Module) that leaves its argument alone.
//
//   main(%x) {                                       global functions, by symbol:
//     %0 = @tvmgen_default_onednn_main_0(%x, %w0)      tvmgen_default_onednn_main_0  Compiler=onednn
//     %1 = Relu(%0)            <- not outlined (yet)     Primitive=1, global_symbol=...
//     %2 = @tvmgen_default_onednn_main_0(%1, %w1)        { Conv ... ; Composite fns inside }
//   }                                                  tvmgen_default_eigen_main_0   Extern=1 (stub)
//
// Terms:
//   main       a Graph over the model's values. A node is either an op of the model that no pass
//              has outlined, or a *call*: op = the callee's symbol, domain = the callee's backend,
//              inputs = the arguments (activations and weights, in the callee's parameter order),
//              outputs = the callee's results, allocated by the caller. main's nodes stay in a
//              topological order, so main can be partitioned again like any model.
//   Function   a global function: its body is a Graph whose inputs are its parameters (weights
//              included: blocks that differ only in weights share one function) and attributes
//              Compiler=<backend>, Primitive=1, global_symbol=<symbol>. Pattern matches inside
//              are inner Composite functions (Composite=<pattern name>,
//              PartitionedFromPattern=<"Conv_Add_Relu_">), kept as node groups of the body.
//   extern stub  a Function after codegen: attributes exactly {Extern=1}; its body is kept for
//              export and inspection but no longer matters; its compiled artifact sits in
//              external_modules under the stub's symbol. Call sites do not change.
//   lowered    after lowering, a function (and main) also carries its kernel calls over explicit
//              buffers and its static memory plan (lowered_function.h).
//
// Ownership: the Module owns its graphs by value; modules are cheap enough to copy
// at the scale tessera targets (10^4 nodes; weight data is shared, never copied).
#pragma once

#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "tessera/graph.h"
#include "runtime/lowered_function.h"

namespace tessera {

struct CompiledFunction;   // backend_compiler.h: what a backend's codegen produced

namespace attr {
inline constexpr const char* kCompiler = "Compiler";
inline constexpr const char* kPrimitive = "Primitive";
inline constexpr const char* kGlobalSymbol = "global_symbol";
inline constexpr const char* kExtern = "Extern";
inline constexpr const char* kComposite = "Composite";
inline constexpr const char* kPartitionedFromPattern = "PartitionedFromPattern";
}  // namespace attr

// Attribute name -> value, sorted, so printing is deterministic ("1" for flags).
using FunctionAttrs = std::map<std::string, std::string>;

// An inner Composite function: a pattern match inside a global function's body.
struct CompositeFunction {
  FunctionAttrs attrs;              // Composite, PartitionedFromPattern
  std::vector<std::string> nodes;   // names of its body nodes, in body order (names survive
                                    // passes that insert nodes; indices would not)

  const std::string& name() const { return attrs.at(attr::kComposite); }
};

struct Function {
  std::string symbol;
  FunctionAttrs attrs;
  Graph body;                                // inputs = parameters; body.name = symbol
  std::vector<CompositeFunction> composites; // sorted by first node
  std::optional<LoweredFunction> lowered;

  // The Compiler attribute, "" for an extern stub.
  std::string backend() const;
  bool is_extern() const { return attrs.count(attr::kExtern) != 0; }
};

// A compiled artifact of one extern stub (TVM's external runtime modules).
struct ExternalModule {
  std::string backend;          // who compiled it
  std::string summary;          // one line for module.txt ("onednn: 3 kernels, 12 KiB")
  std::shared_ptr<CompiledFunction> artifact;     // null when only described (tests)
};

class Module {
 public:
  Graph main;
  std::map<std::string, Function> functions;            // by symbol
  std::map<std::string, ExternalModule> external_modules;  // by extern stub symbol
  std::optional<LoweredFunction> main_lowered;
  // Call node name in main -> the names of the model nodes it replaced (outline's bookkeeping:
  // what makes outlining idempotent, and what graph.dot draws inside each cluster).
  std::map<std::string, std::vector<std::string>> outlined_from;

  // A module whose main is `graph` and that has no functions yet.
  static Module from_graph(Graph graph);

  // The callee of a call node in main, nullptr for an op node.
  const Function* callee(const Node& node) const;
  bool is_call(const Node& node) const { return callee(node) != nullptr; }
  const Function* find(const std::string& symbol) const;
  // Symbols of the functions whose Compiler is `backend`, sorted.
  std::vector<std::string> functions_of(const std::string& backend) const;
};

}  // namespace tessera
