// deploy_cpp MODEL PLAN [--input-shape NAME=1x3x224x224]...: loads a model and the plan made for
// it, runs the plan once on inputs in this program's own buffers, and prints each output's shape
// and a checksum. Exit 0 on success, 2 with tessera's one-line message for bad input.
#include <cmath>
#include <cstdio>
#include <cstring>
#include <map>
#include <string>
#include <vector>

#include "tessera/error.h"
#include "tessera/model_loader.h"
#include "tessera/session.h"

int main(int argc, char** argv) {
  if (argc < 3) {
    std::fprintf(stderr, "usage: deploy_cpp MODEL PLAN [--input-shape NAME=DxDxD]...\n");
    return 2;
  }
  try {
    std::map<std::string, tessera::Shape> shapes;
    for (int i = 3; i + 1 < argc; i += 2)
      if (std::strcmp(argv[i], "--input-shape") == 0) shapes.insert(tessera::parse_input_shape(argv[i + 1], "--input-shape"));

    tessera::Model model = tessera::Model::load(argv[1], shapes);
    tessera::Plan plan = tessera::load_plan(argv[2], model);
    tessera::Session session(model, plan, {.threads = 1});

    // The caller's buffers: inputs filled with a ramp, outputs allocated here, written in place.
    std::vector<std::vector<float>> in_data, out_data;
    std::vector<tessera::ConstTensorView> inputs;
    std::vector<tessera::TensorView> outputs;
    for (const tessera::TensorInfo& t : session.inputs()) {
      if (t.type.dtype != tessera::DType::f32) throw tessera::UserError(argv[1], t.name, "this example feeds f32 inputs only");
      auto& buf = in_data.emplace_back(static_cast<size_t>(t.type.numel()));
      for (size_t i = 0; i < buf.size(); ++i) buf[i] = static_cast<float>(i % 255) / 255.0f - 0.5f;
      inputs.emplace_back(t.type, buf.data());
    }
    for (const tessera::TensorInfo& t : session.outputs()) {
      if (t.type.dtype != tessera::DType::f32) throw tessera::UserError(argv[1], t.name, "this example reads f32 outputs only");
      auto& buf = out_data.emplace_back(static_cast<size_t>(t.type.numel()));
      outputs.push_back({t.type, buf.data()});
    }
    session.run(inputs, outputs);

    for (size_t k = 0; k < outputs.size(); ++k) {
      double sum = 0;
      bool finite = true;
      for (float x : out_data[k]) {
        sum += x;
        finite &= std::isfinite(x);
      }
      std::printf("%s: %s sum %.6g\n", session.outputs()[k].name.c_str(), tessera::to_string(outputs[k].type).c_str(), sum);
      if (!finite) {
        std::fprintf(stderr, "deploy_cpp: output %s is not finite\n", session.outputs()[k].name.c_str());
        return 1;
      }
    }
    std::printf("deploy_cpp: %zu partitions, compiled in %.1f ms\n", plan.partitions.size(), session.compile_ms());
    return 0;
  } catch (const tessera::UserError& e) {
    std::fprintf(stderr, "deploy_cpp: %s\n", e.what());
    return 2;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "deploy_cpp: internal error: %s\n", e.what());
    return 1;
  }
}
