// Overloaded: a visitor for std::visit made of one lambda per alternative,
// e.g. std::visit(Overloaded{[](const MigGpus&) {...}, [](const MpsGpus&)
// {...}}, result.gpus). A missing alternative fails to compile.
//
// Thread-safety: a type.
#ifndef TESSERA_UTIL_OVERLOADED_H_
#define TESSERA_UTIL_OVERLOADED_H_

namespace tessera {

template <typename... Lambdas>
struct Overloaded : Lambdas... {
  using Lambdas::operator()...;
};
template <typename... Lambdas>
Overloaded(Lambdas...) -> Overloaded<Lambdas...>;

}  // namespace tessera

#endif  // TESSERA_UTIL_OVERLOADED_H_
