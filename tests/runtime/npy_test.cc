// .npy reader/writer: round trips, NumPy's own header layout, and the errors users will hit.
#include <catch2/catch.hpp>

#include "tessera/error.h"
#include "runtime/npy.h"

using namespace tessera;

namespace {
std::string npy_v1(const std::string& dict, const std::string& data) {
  std::string header = dict;
  size_t total = 10 + header.size() + 1;
  header.append((64 - total % 64) % 64, ' ');
  header += '\n';
  std::string out = "\x93NUMPY";
  out += '\x01';
  out += '\x00';
  out += static_cast<char>(header.size() & 0xff);
  out += static_cast<char>(header.size() >> 8);
  return out + header + data;
}
}  // namespace

TEST_CASE("npy: f32 and i64 round trip through the writer") {
  HostTensor f = HostTensor::of<float>(DType::f32, {2, 3}, {1, 2, 3, 4, 5, -6.5f});
  HostTensor back = parse_npy(npy_bytes(f), "f.npy");
  CHECK(back.type == f.type);
  CHECK(back.bytes == f.bytes);
  HostTensor i = HostTensor::of<int64_t>(DType::i64, {4}, {1, -2, 3, 1ll << 40});
  HostTensor ib = parse_npy(npy_bytes(i), "i.npy");
  CHECK(ib.type == i.type);
  CHECK(ib.as<int64_t>()[3] == (1ll << 40));
  HostTensor s = HostTensor::of<float>(DType::f32, {}, {7.0f});
  CHECK(parse_npy(npy_bytes(s), "s.npy").type.shape.empty());
  // f16 ('<f2', NumPy's float16): an f16 model's inputs and outputs.
  HostTensor h = HostTensor::of<uint16_t>(DType::f16, {2}, {float_to_half(1.5f), float_to_half(-0.25f)});
  CHECK(npy_bytes(h).find("'descr': '<f2'") != std::string::npos);
  HostTensor hb = parse_npy(npy_bytes(h), "h.npy");
  CHECK(hb.type == h.type);
  CHECK(hb.bytes == h.bytes);
}

TEST_CASE("npy: the header NumPy writes (1-tuples, spacing) parses") {
  float data[3] = {1, 2, 3};
  std::string bytes = npy_v1("{'descr': '<f4', 'fortran_order': False, 'shape': (3,), }",
                             std::string(reinterpret_cast<const char*>(data), sizeof data));
  HostTensor t = parse_npy(bytes, "x.npy");
  CHECK(t.type == TensorType{DType::f32, {3}});
  CHECK(t.as<float>()[2] == 3.0f);
}

TEST_CASE("npy: bad files are user errors naming the file and field") {
  CHECK_THROWS_WITH(parse_npy("hello world", "a.npy"), Catch::Contains("a.npy") && Catch::Contains("magic"));
  CHECK_THROWS_WITH(parse_npy(npy_v1("{'descr': '>f4', 'fortran_order': False, 'shape': (1,), }", "abcd"), "b.npy"),
                    Catch::Contains("descr"));
  CHECK_THROWS_WITH(parse_npy(npy_v1("{'descr': '<f4', 'fortran_order': True, 'shape': (1,), }", "abcd"), "c.npy"),
                    Catch::Contains("fortran_order"));
  CHECK_THROWS_WITH(parse_npy(npy_v1("{'descr': '<f4', 'fortran_order': False, 'shape': (4,), }", "abcd"), "d.npy"),
                    Catch::Contains("d.npy: data"));
  CHECK_THROWS_AS(read_npy("/nonexistent/x.npy"), UserError);
}
