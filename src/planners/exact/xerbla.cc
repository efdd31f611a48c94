// LAPACK's error handler, XERBLA, for the reference LAPACK and BLAS that CBC
// (CoinUtils' dense LU factorization) is linked with. The reference routine
// writes its message through the Fortran runtime, which would then be loaded
// into every process for this one routine; LAPACK lets a program supply its
// own XERBLA instead (LAPACK Users' Guide, 3rd ed., section 7.2), and the
// link takes this one ahead of the archive's (CMakeLists.txt, --undefined).
//
// LAPACK calls it only when a routine is given an invalid argument, which is
// a bug in the caller: it says which routine and argument, as the reference
// does, and aborts.
#include <cstddef>
#include <cstdio>
#include <cstdlib>

// Fortran's CHARACTER*(*) name comes with its length as a hidden last
// argument (gfortran: size_t), without a terminating NUL.
extern "C" void xerbla_(const char* name, const int* info, size_t name_length) {
  while (name_length > 0 && name[name_length - 1] == ' ') --name_length;
  std::fprintf(stderr,
               "tessera: internal error: LAPACK: on entry to %.*s parameter number %d "
               "had an illegal value\n",
               static_cast<int>(name_length), name, *info);
  std::abort();
}
