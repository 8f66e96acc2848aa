// Messages of a distributed tune (tessera::distributed::decode, src/distributed/tune_protocol.h):
// any bytes as one message from a peer rank. decode() must return a message or throw
// ProtocolError (which the dealer turns into a UserError naming the rank, exit 2); anything else is
// a finding. A message that decodes must survive encode → decode unchanged (compared encoded, so
// every field counts). Seeds: tests/fuzz/corpus/mpi_message/.
#include <exception>

#include "fuzz_target.h"
#include "distributed/tune_protocol.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace tessera;
  using namespace tessera::distributed;
  std::string_view text = fuzz::as_text(data, size);
  Message m;
  try {
    m = decode(text);
  } catch (const ProtocolError& e) {
    if (*e.what() == '\0') fuzz::finding("ProtocolError without a message", "");
    return 0;
  } catch (const std::exception& e) {
    fuzz::finding("exception other than ProtocolError", e.what());
  }
  const std::string once = encode(m);
  try {
    const std::string twice = encode(decode(once));
    if (twice != once) fuzz::finding("message round trip", once + " -> " + twice);
  } catch (const std::exception& e) {
    fuzz::finding("re-decoding an encoded message", once + ": " + e.what());
  }
  return 0;
}
