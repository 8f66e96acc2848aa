// Pattern syntax (tessera::parse_pattern): any text as a pattern. A pattern that parses must print
// canonically (parse(print(p)) prints the same) and match on a small model without failing.
// Seeds: tests/fuzz/corpus/pattern/.
#include "fuzz_target.h"
#include "tessera/model_loader.h"
#include "partition/pattern.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace tessera;
  static const Graph graph = load_model(fuzz::source_path("data/models/conv_block.json"));
  fuzz::expect_clean([&] {
    PatternPtr p = parse_pattern(fuzz::as_text(data, size));
    std::string text = p->to_string();
    std::string again = parse_pattern(text, "printed")->to_string();
    if (again != text) fuzz::finding("pattern print is not canonical", text + " reprints as " + again);
    if (p->kind() == Pattern::Kind::Op) (void)match_all(graph, *p);
  });
  return 0;
}
