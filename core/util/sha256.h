// SHA-256 digests, used for problem fingerprints, skill hashes and content-addressed caches.
#pragma once

#include <string>
#include <string_view>

namespace mkb {

/// Lower-case hexadecimal SHA-256 of the given bytes.
std::string sha256Hex(std::string_view bytes);

} // namespace mkb
