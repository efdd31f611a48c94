#include <gtest/gtest.h>

// The reference LAPACK's LU factorization, which CBC's dense factorization
// calls (Fortran: every argument by reference).
extern "C" void dgetrf_(const int* m, const int* n, double* a, const int* lda, int* pivots,
                        int* info);

namespace tessera {
namespace {

// dgetrf_ of a matrix with -1 rows: LAPACK's first argument is invalid.
void FactorWithNegativeRows() {
  const int m = -1, n = 1, lda = 1;
  double a[1] = {1};
  int pivots[1] = {0};
  int info = 0;
  dgetrf_(&m, &n, a, &lda, pivots, &info);
}

// An invalid argument reaches Tessera's XERBLA (src/planners/exact/xerbla.cc),
// not the reference one, which prints differently and exits with status 0.
TEST(LapackErrors, AnInvalidArgumentIsReportedByTesseraAndAborts) {
  EXPECT_DEATH(FactorWithNegativeRows(),
               "tessera: internal error: LAPACK: on entry to DGETRF parameter number 1 had an "
               "illegal value");
}

}  // namespace
}  // namespace tessera
