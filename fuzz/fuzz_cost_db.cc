// Cost-database lines (tessera::CostDatabase): any bytes as a database file. Each line is decoded
// as it is (almost always failing its CRC) and again with its correct CRC appended, so the JSON
// inside is exercised too; a record that decodes must encode and decode to itself. The whole input
// is also opened as a database file. Seeds: tests/fuzz/corpus/cost_db/.
#include <zlib.h>

#include <cstdio>

#include "fuzz_target.h"
#include "tessera/cost_database.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace tessera;
  std::string_view text = fuzz::as_text(data, size);
  fuzz::expect_clean([&] {
    for (size_t start = 0; start <= text.size();) {
      size_t end = std::min(text.find('\n', start), text.size());
      std::string line(text.substr(start, end - start));
      char crc[16];
      std::snprintf(crc, sizeof crc, "%08lx", ::crc32(::crc32(0L, Z_NULL, 0), reinterpret_cast<const Bytef*>(line.data()),
                                                   static_cast<uInt>(line.size())));
      for (const std::string& candidate : {line, line + "\t" + crc}) {
        auto record = CostDatabase::decode_record(candidate);
        if (!record) continue;
        auto again = CostDatabase::decode_record(CostDatabase::encode_record(record->first, record->second));
        if (!again || again->first != record->first || !(again->second == record->second))
          fuzz::finding("cost record round trip", candidate);
      }
      start = end + 1;
    }
    const std::string path = fuzz::write_temp(text, ".db");
    (void)CostDatabase::open(path)->entries();
  });
  return 0;
}
