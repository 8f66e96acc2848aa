#include "tessera/codegen.h"

#include "tessera/backend_compiler.h"
#include "tessera/kernel.h"

namespace tessera {

Codegen compiler_codegen(std::shared_ptr<const BackendCompiler> compiler) {
  std::string name = compiler->name();
  return {name, [compiler, name](const Graph& body, const std::vector<bool>& activation) {
            std::shared_ptr<CompiledFunction> artifact =
                compiler->compile(body, native_boundary_layouts(body, compiler->native_layout(), activation));
            return ExternalModule{name, compiler->version() + ", workspace " + std::to_string(artifact->workspace_bytes()) + " B",
                                  std::move(artifact)};
          }};
}

namespace {

// Per parameter of `symbol`: whether some call site in main passes a value that is not a constant.
std::vector<bool> activation_params(const Module& module, const std::string& symbol) {
  std::vector<bool> out(module.functions.at(symbol).body.inputs.size(), false);
  for (const Node& n : module.main.nodes) {
    const Function* f = module.callee(n);
    if (!f || f->symbol != symbol) continue;
    for (size_t i = 0; i < n.inputs.size() && i < out.size(); ++i)
      if (n.inputs[i] != kNoValue && !module.main.value(n.inputs[i]).is_constant()) out[i] = true;
  }
  return out;
}

}  // namespace

Module codegen(const Module& module, const std::vector<Codegen>& codegens, std::vector<std::string>* skipped) {
  Module out = module;
  for (const Codegen& cg : codegens)
    for (const std::string& symbol : module.functions_of(cg.backend)) {
      Function& fn = out.functions.at(symbol);
      try {
        out.external_modules[symbol] = cg.compile(fn.body, activation_params(module, symbol));
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
