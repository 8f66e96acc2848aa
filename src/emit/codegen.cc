#include "tessera/codegen.h"

#include "tessera/backend_compiler.h"
#include "tessera/kernel.h"

namespace tessera {

Codegen compiler_codegen(std::shared_ptr<const BackendCompiler> compiler) {
  std::string name = compiler->name();
  return {name, [compiler, name](const Graph& body) {
            std::shared_ptr<CompiledFunction> artifact = compiler->compile(body);
            return ExternalModule{name, compiler->version() + ", workspace " + std::to_string(artifact->workspace_bytes()) + " B",
                                  std::move(artifact)};
          }};
}

Module codegen(const Module& module, const std::vector<Codegen>& codegens, std::vector<std::string>* skipped) {
  Module out = module;
  for (const Codegen& cg : codegens)
    for (const std::string& symbol : module.functions_of(cg.backend)) {
      Function& fn = out.functions.at(symbol);
      try {
        out.external_modules[symbol] = cg.compile(fn.body);
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
