// Gzip (RFC 1952) compression of a reply body, for Content-Encoding: gzip.
#ifndef TESSERA_CONTROL_GZIP_H_
#define TESSERA_CONTROL_GZIP_H_

#include <string>
#include <string_view>

#include "tessera/status.h"

namespace tessera {

// `data` as one gzip member (zlib's default level). Internal when zlib fails.
Result<std::string> GzipCompress(std::string_view data);

}  // namespace tessera

#endif  // TESSERA_CONTROL_GZIP_H_
