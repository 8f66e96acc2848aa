#include "emit/codegen.h"

#include "backends/compilers/backend_compiler.h"
#include "backends/kernel.h"

namespace tessera {

Codegen compiler_codegen(std::shared_ptr<const BackendCompiler> compiler) {
  std::string name = compiler->name();
  return {name, [compiler, name](const Graph& body, const std::vector<bool>& native_inputs,
                                 const std::vector<bool>& native_outputs, const std::vector<bool>& varying_inputs) {
            BoundaryLayouts layouts = native_boundary_layouts(body, compiler->native_layout(), native_inputs, native_outputs);
            layouts.varying_inputs = varying_inputs;
            std::shared_ptr<CompiledFunction> artifact = compiler->compile(body, layouts);
            return ExternalModule{name, compiler->version() + ", workspace " + std::to_string(artifact->workspace_bytes()) + " B",
                                  std::move(artifact)};
          }};
}

namespace {

// Which parameters and results of `symbol` travel in the backend's boundary layout (codegen.h).
// A parameter does when some call site in main passes a computed value, unless every call site
// passes one of main's inputs: those arrive plain (the ONNX order), and a function that takes them
// so lets its first kernel read them as they are, or reorders them once itself, where the
// executor's conversion could be undone inside (mobilenet_v3_small's stem convolution reads NCHW:
// two reorders, 0.09 ms of a 2.2 ms run). A result does unless every call site makes it one of
// main's outputs that no other call reads (the executor would convert it back to plain).
struct NativeUse {
  std::vector<bool> inputs, outputs, varying;
};

// `read[v]`: some node of main reads value v; `from_inputs[v]`: v is a graph input or computed
// from one (both computed once for all functions). A parameter varies when some call site passes
// such a value (a DequantizeLinear of int8 weights does not: it is the same on every run).
NativeUse native_use(const Module& module, const std::string& symbol, const std::vector<char>& read,
                     const std::vector<char>& from_inputs) {
  const Graph& body = module.functions.at(symbol).body;
  const Graph& main = module.main;
  // Native: a parameter some call site feeds with a computed value (neither a constant nor a graph
  // input); a result some call site hands on (to another call, or to nobody: not a graph output).
  NativeUse use{std::vector<bool>(body.inputs.size(), false), std::vector<bool>(body.outputs.size(), false),
                std::vector<bool>(body.inputs.size(), false)};
  for (const Node& n : main.nodes) {
    const Function* f = module.callee(n);
    if (!f || f->symbol != symbol) continue;
    for (size_t i = 0; i < n.inputs.size() && i < use.inputs.size(); ++i) {
      if (n.inputs[i] == kNoValue) continue;
      if (main.value(n.inputs[i]).kind == ValueKind::Intermediate) use.inputs[i] = true;
      if (from_inputs[static_cast<size_t>(n.inputs[i])]) use.varying[i] = true;   // a graph input itself too
    }
    for (size_t i = 0; i < n.outputs.size() && i < use.outputs.size(); ++i) {
      const ValueId v = n.outputs[i];
      if (v == kNoValue || !main.is_output(v) || read[static_cast<size_t>(v)]) use.outputs[i] = true;
    }
  }
  return use;
}

}  // namespace

Module codegen(const Module& module, const std::vector<Codegen>& codegens, std::vector<std::string>* skipped) {
  Module out = module;
  std::vector<char> read(module.main.values.size(), 0);
  for (const Node& n : module.main.nodes)
    for (ValueId v : n.inputs)
      if (v != kNoValue) read[static_cast<size_t>(v)] = 1;
  std::vector<char> from_inputs(module.main.values.size(), 0);   // main's nodes are in topological order
  for (ValueId v : module.main.inputs) from_inputs[static_cast<size_t>(v)] = 1;
  for (const Node& n : module.main.nodes) {
    bool any = false;
    for (ValueId v : n.inputs) any = any || (v != kNoValue && from_inputs[static_cast<size_t>(v)]);
    if (any)
      for (ValueId v : n.outputs)
        if (v != kNoValue) from_inputs[static_cast<size_t>(v)] = 1;
  }
  for (const Codegen& cg : codegens)
    for (const std::string& symbol : module.functions_of(cg.backend)) {
      Function& fn = out.functions.at(symbol);
      try {
        const NativeUse use = native_use(module, symbol, read, from_inputs);
        out.external_modules[symbol] = cg.compile(fn.body, use.inputs, use.outputs, use.varying);
      } catch (const KernelUnsupported& e) {
        if (skipped) skipped->push_back(symbol + ": " + e.what());
        continue;
      }
      fn.attrs = {{attr::kExtern, "1"}};
      fn.composites.clear();
      fn.lowered.reset();
    }
  return out;
}

}  // namespace tessera
