// Base64 (RFC 4648's standard alphabet, '+' and '/'): kubeconfig's
// certificate data, etcd's JSON keys and values.
#ifndef TESSERA_UTIL_BASE64_H_
#define TESSERA_UTIL_BASE64_H_

#include <optional>
#include <string>
#include <string_view>

namespace tessera {

// With '=' padding.
std::string EncodeBase64(std::string_view data);

// Padding optional, white space ignored; nullopt with the reason in `why`
// when malformed.
std::optional<std::string> DecodeBase64(std::string_view text, std::string* why);

}  // namespace tessera

#endif  // TESSERA_UTIL_BASE64_H_
