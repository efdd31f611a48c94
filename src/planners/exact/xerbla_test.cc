#include <gtest/gtest.h>

// The reference LAPACK's LU factorization, which CBC's dense factorization
// calls (Fortran: every argument by reference).
extern "C" void dgetrf_(const int* m, const int* n, double* a, const int* lda, int* pivots,
                        int* info);

namespace tessera {
namespace {

// An invalid argument reaches Tessera's XERBLA (src/planners/exact/xerbla.cc),
// not the reference one, which prints differently and exits with status 0.
TEST(LapackErrors, AnInvalidArgumentIsReportedByTesseraAndAborts) {
  EXPECT_DEATH(
      {
        const int m = -1, n = 1, lda = 1;
        double a[1] = {1};
        int pivots[1] = {0}, info = 0;
        dgetrf_(&m, &n, a, &lda, pivots, &info);
      },
      "tessera: internal error: LAPACK: on entry to DGETRF parameter number 1 had an illegal "
      "value");
}

}  // namespace
}  // namespace tessera
