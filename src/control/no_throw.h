// NoThrow: runs a store method's body and turns any exception (a bad_alloc,
// a JSON library's) into an Internal status naming `who`: no exception
// leaves a ControlStore.
#ifndef TESSERA_CONTROL_NO_THROW_H_
#define TESSERA_CONTROL_NO_THROW_H_

#include <exception>
#include <string>

#include "tessera/status.h"

namespace tessera {

template <typename F>
auto NoThrow(const char* who, F&& body) -> decltype(body()) {
  try {
    return body();
  } catch (const std::exception& e) {
    return Status::Internal(std::string(who) + ": unexpected exception: " + e.what());
  } catch (...) {
    return Status::Internal(std::string(who) + ": unexpected exception");
  }
}

}  // namespace tessera

#endif  // TESSERA_CONTROL_NO_THROW_H_
