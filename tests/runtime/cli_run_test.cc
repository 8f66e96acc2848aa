// The CLI contract of `tessera run --json` and `tessera bench --json` (docs/design.md): exact keys,
// types, exit status; `--input NAME=FILE.npy` read and checked against the model's input.
#include <catch2/catch.hpp>

#include <algorithm>
#include <filesystem>
#include <string>

#include <nlohmann/json.hpp>

#include "support/files.h"
#include "support/skip.h"
#include "support/subprocess.h"
#include "support/temp_dir.h"
#include "runtime/npy.h"

using namespace tessera;
using namespace tessera::testing;

namespace {

const std::string kMlp = " data/models/tiny_mlp.json";   // input x: f32 [1, 16]

Process tessera_cli(const std::string& args) { return run_command(tessera_binary() + " " + args); }

// `tessera tune` of conv_block over ref,onednn,eigen with measured costs into `db`; the plan it wrote.
nlohmann::json tune_conv_block(const std::string& db, const std::string& plan) {
  Process t = tessera_cli("tune data/models/conv_block.json --backends ref,onednn,eigen --cache " + db +
                          " --budget-ms 2 --repeat 5 --plan " + plan);
  INFO(t.err);
  REQUIRE(t.exit_code == 0);
  return nlohmann::json::parse(read_file(plan));
}

}  // namespace

TEST_CASE("tessera run --json prints exactly latency_ms, max_abs_error, ok") {
  TempDir dir;
  const std::string plan = dir.file("plan.json");
  REQUIRE(tessera_cli("partition" + kMlp + " --backends ref,onednn --cost roofline --plan " + plan).exit_code == 0);
  Process r = tessera_cli("run" + kMlp + " --plan " + plan + " --check --repeat 3 --json");
  INFO(r.err);
  REQUIRE(r.exit_code == 0);
  nlohmann::json j = nlohmann::json::parse(r.out);
  CHECK(j.size() == 3);
  CHECK(j["latency_ms"].is_number());
  CHECK(j["latency_ms"].get<double>() > 0);
  CHECK(j["max_abs_error"].is_number());
  CHECK(j["ok"] == true);

  Process nocheck = tessera_cli("run" + kMlp + " --plan " + plan + " --repeat 1 --json");
  REQUIRE(nocheck.exit_code == 0);
  CHECK(nlohmann::json::parse(nocheck.out)["max_abs_error"].is_null());
}

TEST_CASE("tessera run --against races the plan with others and reports each paired figure") {
  TempDir dir;
  const std::string ref = dir.file("ref.json"), onednn = dir.file("onednn.json");
  REQUIRE(tessera_cli("partition" + kMlp + " --backends ref --cost roofline --plan " + ref).exit_code == 0);
  REQUIRE(tessera_cli("partition" + kMlp + " --backends ref,onednn --cost roofline --plan " + onednn).exit_code == 0);
  Process r = tessera_cli("run" + kMlp + " --plan " + onednn + " --against " + ref + " --repeat 2 --json");
  INFO(r.err);
  REQUIRE(r.exit_code == 0);
  nlohmann::json j = nlohmann::json::parse(r.out);
  CHECK(j["latency_ms"].is_number());
  REQUIRE(j["race"].size() == 2);
  CHECK(j["race"][0]["plan"] == onednn);   // the plan itself first, then the others in order
  CHECK(j["race"][1]["plan"] == ref);
  CHECK(j["race"][0]["latency_ms"].get<double>() > 0);
  CHECK(j["race"][1]["latency_ms"].get<double>() > 0);

  Process text = tessera_cli("run" + kMlp + " --plan " + onednn + " --against " + ref + " --repeat 1");
  REQUIRE(text.exit_code == 0);
  CHECK(text.out.find("race, 9 interleaved rounds") != std::string::npos);
  CHECK(text.out.find("1.00x") != std::string::npos);

  Process missing = tessera_cli("run" + kMlp + " --plan " + onednn + " --against " + dir.file("none.json"));
  CHECK(missing.exit_code == 2);
  CHECK(missing.err.find("none.json") != std::string::npos);
}

TEST_CASE("tessera run --input: a good .npy runs; a wrong shape, dtype or name is a usage error naming it") {
  TempDir dir;
  const std::string plan = dir.file("plan.json");
  REQUIRE(tessera_cli("partition" + kMlp + " --backends ref --cost roofline --plan " + plan).exit_code == 0);
  std::vector<float> values(16);
  for (size_t i = 0; i < values.size(); ++i) values[i] = 0.25f * static_cast<float>(i) - 2.0f;
  const std::string good = dir.file("x.npy"), short_x = dir.file("x8.npy"), ints = dir.file("xi.npy");
  write_npy(good, HostTensor::of<float>(DType::f32, {1, 16}, values));
  write_npy(short_x, HostTensor::of<float>(DType::f32, {1, 8}, std::vector<float>(8, 1.0f)));
  write_npy(ints, HostTensor::of<int64_t>(DType::i64, {1, 16}, std::vector<int64_t>(16, 1)));

  Process ok = tessera_cli("run" + kMlp + " --plan " + plan + " --input x=" + good + " --check --repeat 1 --json");
  INFO(ok.err);
  CHECK(ok.exit_code == 0);
  CHECK(nlohmann::json::parse(ok.out)["ok"] == true);
  // The values are used, not only checked: the outputs differ from those of the seeded input.
  const std::string given = dir.file("given"), seeded = dir.file("seeded");
  REQUIRE(tessera_cli("run" + kMlp + " --plan " + plan + " --input x=" + good + " --repeat 1 --output-dir " + given).exit_code == 0);
  REQUIRE(tessera_cli("run" + kMlp + " --plan " + plan + " --repeat 1 --output-dir " + seeded).exit_code == 0);
  int outputs = 0;
  for (const auto& e : std::filesystem::directory_iterator(given)) {
    INFO(e.path().filename().string());
    const HostTensor a = read_npy(e.path().string()), b = read_npy(seeded + "/" + e.path().filename().string());
    CHECK(a.type == b.type);
    CHECK(a.bytes != b.bytes);
    ++outputs;
  }
  CHECK(outputs == 1);

  // The file is read and held against the model's input x: f32 [1, 16].
  for (const auto& [args, needle] : {std::pair{"x=" + short_x, std::string("[1,8]")},
                                     std::pair{"x=" + ints, std::string("i64")},
                                     std::pair{"nope=" + good, std::string("nope: the model has no input of that name (its inputs: x)")}}) {
    Process bad = tessera_cli("run" + kMlp + " --plan " + plan + " --input " + args + " --repeat 1");
    INFO(args << " -> " << bad.err);
    CHECK(bad.exit_code == 2);
    CHECK(bad.err.find(needle) != std::string::npos);
    CHECK(std::count(bad.err.begin(), bad.err.end(), '\n') == 1);
    CHECK(bad.out.empty());
  }
}

TEST_CASE("tessera bench --json lists backends, predicted_ms, measured_ms, their ratio and the clock per combination") {
  TempDir dir;
  const std::string svg = dir.file("bench.svg");
  Process r = tessera_cli("bench data/models/conv_block.json --combos ref ref,onednn --cost roofline --repeat 2 --json --svg " + svg);
  INFO(r.err);
  REQUIRE(r.exit_code == 0);
  nlohmann::json j = nlohmann::json::parse(r.out);
  REQUIRE(j.size() == 2);
  CHECK(j[0]["backends"] == nlohmann::json({"ref"}));
  CHECK(j[1]["backends"] == nlohmann::json({"ref", "onednn"}));
  for (const auto& row : j) {
    CHECK(row["predicted_ms"].is_number());
    CHECK(row["measured_ms"].get<double>() > 0);
    CHECK(row["predicted_over_measured"].get<double>() == Approx(row["predicted_ms"].get<double>() / row["measured_ms"].get<double>()));
    CHECK(row["clock"] == "cpu");   // one thread (the default): CPU time per run (src/runtime/run_clock.h)
  }
  CHECK(read_file(svg).find("<svg") != std::string::npos);
}

TEST_CASE("tessera bench races the plans together: one plan, one executor, one figure") {
  // "ref" twice and "ref,onednn" on conv_block: the two "ref" rows are one
  // plan, timed as one in every round, so they read the same figure; the other is its own.
  Process r = tessera_cli("bench data/models/conv_block.json --combos ref ref,onednn ref --cost roofline --repeat 2 --json");
  INFO(r.err);
  REQUIRE(r.exit_code == 0);
  nlohmann::json j = nlohmann::json::parse(r.out);
  REQUIRE(j.size() == 3);
  CHECK(j[0]["measured_ms"].get<double>() == j[2]["measured_ms"].get<double>());
  CHECK(j[1]["measured_ms"].get<double>() > 0);
  CHECK(r.err.find("interleaved rounds") != std::string::npos);
}

TEST_CASE("tessera bench's table: predicted / measured per row, then best single / all backends") {
  Process r = tessera_cli("bench data/models/conv_block.json --combos ref,onednn ref,eigen ref,onednn,eigen --cost roofline --repeat 2");
  INFO(r.out << r.err);
  REQUIRE(r.exit_code == 0);
  CHECK(r.out.find("pred/meas") != std::string::npos);
  CHECK(r.out.find("measured: CPU time per run") != std::string::npos);
  CHECK(r.out.find("/ all-backend row (ref,onednn,eigen): ") != std::string::npos);
  Process two = tessera_cli("bench data/models/conv_block.json --combos ref,onednn --cost roofline --repeat 2 --threads 2");
  REQUIRE(two.exit_code == 0);
  CHECK(two.out.find("measured: wall time per run") != std::string::npos);
  CHECK(two.out.find("all-backend row") == std::string::npos);   // no wider row to compare
}

TEST_CASE("tessera bench --cost measure shows the plan tune returned, not the one its verification rejected") {
  // tune times the search's plan against single-backend plans end to end and keeps the verdicts in
  // the database; bench over the same backends and database makes the same choice, as partition does.
  TempDir dir;
  const std::string db = dir.file("costs.db");
  const nlohmann::json tuned = tune_conv_block(db, dir.file("plan.json"));
  REQUIRE(tuned.contains("verified"));   // the search's plan and single:onednn, single:eigen differ
  Process b = tessera_cli("bench data/models/conv_block.json --combos ref,onednn,eigen --cost measure --cache " + db +
                          " --repeat 2 --json");
  INFO(b.err);
  REQUIRE(b.exit_code == 0);
  const nlohmann::json rows = nlohmann::json::parse(b.out);
  REQUIRE(rows.size() == 1);
  CHECK(rows[0]["chosen"] == tuned["verified"]["chosen"]);
}

TEST_CASE("after tune, partition --backends ref,X --cost measure weighs X's plans as tune did") {
  // Users (and scripts/bench_vs_ort.sh) build "X with ref" with the partition command. Its own
  // contenders (the search over ref and X, its merged variant, single:X) are raced by tune too, so
  // it decides from the database instead of keeping an unmeasured plan; where tune's plan is one
  // of them, it is the same plan.
  TempDir dir;
  const std::string db = dir.file("costs.db");
  const nlohmann::json tuned = tune_conv_block(db, dir.file("plan.json"));
  auto cut = [](const nlohmann::json& j) {
    std::vector<std::pair<std::string, nlohmann::json>> c;
    for (const auto& p : j["partitions"]) c.emplace_back(p["backend"], p["nodes"]);
    return c;
  };
  for (const std::string x : {"onednn", "eigen"}) {
    const std::string pair = dir.file(x + ".json"), single = dir.file(x + ".single.json");
    Process p = tessera_cli("partition data/models/conv_block.json --backends ref," + x + " --cost measure --cache " +
                            db + " --plan " + pair);
    Process s = tessera_cli("partition data/models/conv_block.json --backends ref," + x + " --search single:" + x +
                            " --cost measure --cache " + db + " --plan " + single);
    INFO(x << ": " << p.err << s.err);
    REQUIRE(p.exit_code == 0);
    REQUIRE(s.exit_code == 0);
    const nlohmann::json pj = nlohmann::json::parse(read_file(pair));
    // Decided from tune's verdicts, or nothing to decide (the search's plan is single:X).
    CHECK((pj.contains("verified") || cut(pj) == cut(nlohmann::json::parse(read_file(single)))));
    bool within = true;
    for (const auto& q : tuned["partitions"]) within = within && (q["backend"] == "ref" || q["backend"] == x);
    if (within) CHECK(cut(pj) == cut(tuned));
  }
}

TEST_CASE("tessera run refuses an edited plan: unknown backend, a node its backend cannot take; --allow-fallback") {
  TempDir dir;
  const std::string plan = dir.file("plan.json");
  REQUIRE(tessera_cli("partition" + kMlp + " --backends ref,onednn --cost roofline --plan " + plan).exit_code == 0);
  nlohmann::json j = nlohmann::json::parse(read_file(plan));
  j["partitions"][0]["backend"] = "onednnn";
  write_file(dir.file("typo.json"), j.dump());
  Process typo = tessera_cli("run" + kMlp + " --plan " + dir.file("typo.json"));
  CHECK(typo.exit_code == 2);
  CHECK_THAT(typo.err, Catch::Contains("typo.json: partitions[0].backend: unknown backend 'onednnn' (backends that run here: "));
  CHECK(std::count(typo.err.begin(), typo.err.end(), '\n') == 1);
  j["partitions"][0]["backend"] = "blas";   // blas takes no Relu
  write_file(dir.file("moved.json"), j.dump());
  Process moved = tessera_cli("run" + kMlp + " --plan " + dir.file("moved.json"));
  CHECK(moved.exit_code == 2);
  CHECK_THAT(moved.err, Catch::Contains("node 'relu0' cannot run on blas"));
  CHECK_THAT(moved.err, Catch::Contains("allow a fallback to ref with --allow-fallback)"));
  Process allowed = tessera_cli("run" + kMlp + " --plan " + dir.file("moved.json") + " --allow-fallback --check --repeat 1");
  INFO(allowed.err);
  CHECK(allowed.exit_code == 0);
  CHECK_THAT(allowed.err, Catch::Contains("warning: partitions[0]: node 'relu0' cannot run on blas"));
}

TEST_CASE("tessera run warns once when the plan was tuned at another thread count") {
  TempDir dir;
  const nlohmann::json plan = tune_conv_block(dir.file("costs.db"), dir.file("plan.json"));
  REQUIRE(plan.contains("tuned_on"));
  CHECK(plan["tuned_on"]["threads"] == 1);
  Process same = tessera_cli("run data/models/conv_block.json --repeat 1 --plan " + dir.file("plan.json"));
  CHECK(same.exit_code == 0);
  CHECK(same.err.find("was tuned at") == std::string::npos);
  Process other = tessera_cli("run data/models/conv_block.json --repeat 1 --threads 2 --plan " + dir.file("plan.json"));
  CHECK(other.exit_code == 0);
  size_t warnings = 0;
  for (size_t at = other.err.find("was tuned at"); at != std::string::npos; at = other.err.find("was tuned at", at + 1)) ++warnings;
  CHECK(warnings == 1);
  CHECK_THAT(other.err, Catch::Contains("the plan was tuned at 1 thread on ") && Catch::Contains("this run uses 2 threads") &&
                            Catch::Contains("(tune again here, or set --threads to 1)"));
}

TEST_CASE("tessera tune --pin: a mistake is exit 2 before anything is measured; --why explains the tuned plan") {
  TempDir dir;
  const std::string db = dir.file("costs.db");
  const std::string tune = "tune data/models/conv_block.json --backends ref,onednn,eigen --budget-ms 2 --repeat 5 --cache " + db;
  Process bad = tessera_cli(tune + " --pin 'relu*=onednnn'");
  CHECK(bad.exit_code == 2);
  CHECK_THAT(bad.err, Catch::Contains("pin relu*=onednnn: backend 'onednnn' is not among the backends"));
  CHECK_FALSE(std::filesystem::exists(db));   // not even opened: nothing was measured
  Process why = tessera_cli(tune + " --pin 'relu*=eigen' --why relu0 --plan " + dir.file("plan.json"));
  INFO(why.err);
  REQUIRE(why.exit_code == 0);
  CHECK_THAT(why.out, Catch::Contains("node 'relu0' (Relu) runs on eigen"));
  CHECK_THAT(why.out, Catch::Contains("onednn     no candidate: pinned to eigen by pin relu*=eigen"));
  CHECK_THAT(read_file(dir.file("plan.json")), Catch::Contains("\"steering\": [\n  {\"kind\": \"pin\", \"selector\": \"relu*\""));
}

TEST_CASE("tessera bench --pin/--forbid: every combination obeys; one without the pinned backend is a row error") {
  Process r = tessera_cli("bench data/models/conv_block.json --combos ref ref,onednn ref,eigen --cost roofline --repeat 2 "
                          "--pin relu0=onednn --forbid conv1=eigen --json");
  INFO(r.err);
  REQUIRE(r.exit_code == 0);
  const nlohmann::json rows = nlohmann::json::parse(r.out);
  REQUIRE(rows.size() == 3);
  CHECK(rows[0]["error"] == "data/models/conv_block.json: pin relu0=onednn: onednn is not in this combination");
  CHECK_FALSE(rows[1].contains("error"));
  CHECK(rows[1]["measured_ms"].is_number());
  CHECK(rows[2]["error"].get<std::string>().find("onednn is not in this combination") != std::string::npos);
  Process bad = tessera_cli("bench data/models/conv_block.json --combos ref,onednn --cost roofline --pin relu0=onednnn");
  CHECK(bad.exit_code == 2);
  CHECK_THAT(bad.err, Catch::Contains("backend 'onednnn' is not among the backends"));
}

TEST_CASE("silero VAD partitions around its If and LSTM and runs with --check", "[.silero]") {
  // scripts/fetch_silero.sh (run by scripts/fetch_models.sh) puts the models in the git-ignored
  // data/models/silero/; without them this ctest entry (runtime_cli_test.silero) reports Skipped.
  // silero_vad_16k_op15.onnx: every If folds at import, the LSTM runs on ref. silero_vad.onnx: an
  // If on the sample rate `sr` around the whole model, run on ref with its branches interpreted;
  // the seeded sr is 16000 (model_data.h), the branch that types for 512-sample chunks.
  const std::string shapes = " --input-shape input=1x512 --input-shape state=2x1x128";
  for (const std::string name : {"silero_vad_16k_op15.onnx", "silero_vad.onnx"}) {
    const std::string model = "data/models/silero/" + name;
    if (!std::filesystem::exists(model)) skip_test(model + " missing: run scripts/fetch_models.sh");
    TempDir dir;
    const std::string plan = dir.file("plan.json");
    Process p = tessera_cli("partition " + model + shapes + " --backends ref,onednn --cost roofline --plan " + plan);
    INFO(name << ": " << p.err);
    REQUIRE(p.exit_code == 0);
    Process r = tessera_cli("run " + model + shapes + " --plan " + plan + " --check --repeat 2 --json");
    INFO(r.err);
    REQUIRE(r.exit_code == 0);
    CHECK(nlohmann::json::parse(r.out)["ok"] == true);
    if (name != "silero_vad.onnx") continue;
    // The If stays on ref even when a backend that takes every op ("tvm": "*") is offered.
    const std::string tvm_plan = dir.file("plan_tvm.json");
    Process tvm = tessera_cli("partition " + model + shapes + " --backends ref,tvm --cost roofline --plan " + tvm_plan);
    INFO(tvm.err);
    REQUIRE(tvm.exit_code == 0);
    const nlohmann::json tvm_json = nlohmann::json::parse(read_file(tvm_plan));   // outlives the loop
    for (const auto& part : tvm_json["partitions"])
      for (const auto& node : part["nodes"])
        if (node == "If_0") CHECK(part["backend"] == "ref");
    // sr = 8000 chooses the 8 kHz branch, which does not type for 512 samples: exit 2, one line.
    const std::string sr = dir.file("sr.npy");
    write_npy(sr, HostTensor::of<int64_t>(DType::i64, {}, {8000}));
    Process bad = tessera_cli("run " + model + shapes + " --plan " + plan + " --input sr=" + sr + " --repeat 1");
    CHECK(bad.exit_code == 2);
    CHECK(bad.err.find("node 'If_0' (If)") != std::string::npos);
    CHECK(std::count(bad.err.begin(), bad.err.end(), '\n') == 1);
  }
}
