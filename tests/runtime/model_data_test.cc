// Seeded model data: deterministic, scaled by fan-in, and given inputs checked against the model.
#include <catch2/catch.hpp>

#include <cmath>

#include "tessera/error.h"
#include "runtime/model_data.h"
#include "tessera/model_loader.h"

using namespace tessera;

TEST_CASE("with_seeded_weights fills shape-only constants deterministically") {
  Graph g = load_model("data/models/conv_block.json");
  int filled = 0;
  Graph a = with_seeded_weights(g, 0, &filled);
  Graph b = with_seeded_weights(g, 0);
  Graph c = with_seeded_weights(g, 1);
  CHECK(filled > 0);
  CHECK(a == b);
  CHECK_FALSE(a == c);
  for (const Value& v : a.values) {
    if (!v.is_constant()) continue;
    REQUIRE(v.data);
    if (v.type.rank() == 4) {   // a conv weight: |w| < 1/sqrt(fan_in)
      const float* w = reinterpret_cast<const float*>(v.data->data());
      double bound = 1.0 / std::sqrt(static_cast<double>(v.type.numel() / v.type.shape[0]));
      for (int64_t i = 0; i < v.type.numel(); ++i) CHECK(std::fabs(w[i]) <= bound);
    }
  }
}

TEST_CASE("model_inputs: seeded by default, given ones type-checked") {
  Graph g = load_model("data/models/tiny_mlp.json");
  std::vector<HostTensor> x = model_inputs(g, 3);
  REQUIRE(x.size() == 1);
  CHECK(x[0].bytes == model_inputs(g, 3)[0].bytes);
  std::string name = g.value(g.inputs[0]).name;
  HostTensor mine(g.value(g.inputs[0]).type);
  CHECK(model_inputs(g, 3, {{name, mine}})[0].bytes == mine.bytes);
  CHECK_THROWS_AS(model_inputs(g, 3, {{name, HostTensor(TensorType{DType::f32, {2}})}}), UserError);
  CHECK_THROWS_AS(model_inputs(g, 3, {{"nope", mine}}), UserError);
}
