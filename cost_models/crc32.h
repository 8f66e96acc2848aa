// CRC-32 (IEEE 802.3, reflected polynomial 0xEDB88320, as zlib's crc32): the self-check on every
// cost database record. Table-driven, one byte at a time; records are ~100 bytes, so speed is moot.
// Internal to tessera_cost.
#pragma once

#include <cstdint>
#include <string_view>

namespace tessera::cost_detail {

uint32_t crc32(std::string_view data);

}  // namespace tessera::cost_detail
