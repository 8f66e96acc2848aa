#include "emit/backend_pipeline.h"

#include "emit/convert_layout.h"
#include "emit/fold_constants.h"
#include "emit/module_printer.h"

namespace tessera {

BackendPass convert_layout_pass() {
  return {"convert_layout", [](const Module& m, const std::string& b) { return convert_layout(m, b); }};
}
BackendPass fold_constants_pass() {
  return {"fold_constants", [](const Module& m, const std::string& b) { return fold_constants(m, b); }};
}

BackendPipeline builtin_pipeline(const std::string& backend) {
  BackendPipeline p{backend, {}, {}};
  if (backend == "tvm") {
    p.passes = {convert_layout_pass(), fold_constants_pass()};
    p.dispatch.overrides = {override_op("Softmax", "tvm.softmax"), override_op("LayerNormalization", "tvm.layer_norm")};
  } else if (backend == "byoc") {
    p.dispatch.composite_kernels = {{"byoc.relu", "byoc.relu"}, {"byoc.add", "byoc.add"}};
  }
  return p;
}

Module run_backend_passes(const Module& module, const std::vector<BackendPipeline>& pipelines, const DumpFn& dump) {
  Module m = module;
  for (const BackendPipeline& p : pipelines)
    for (const BackendPass& pass : p.passes) {
      Module next = pass.run(m, p.backend);
      if (dump && print_module(next) != print_module(m)) dump(p.backend + "." + pass.name, next);
      m = std::move(next);
    }
  return m;
}

}  // namespace tessera
