// Linear least squares for the small, dense systems the model fits need
// (iGniter's active-time curve, gpu-lets' interference model). Internal to
// the library: not part of the public include/tessera API.
//
// Thread-safety: pure functions.
#ifndef TESSERA_UTIL_LEAST_SQUARES_H_
#define TESSERA_UTIL_LEAST_SQUARES_H_

#include <algorithm>
#include <array>
#include <cmath>
#include <cstddef>
#include <vector>

namespace tessera {

template <size_t N>
struct LeastSquaresSolution {
  std::array<double, N> x{};
  double residual = 0;  // || A x - y ||
  bool full_rank = false;
};

// Minimises || A x - y || by Householder QR of A (rows `a`). Columns are
// scaled to unit norm first, so that the rank test is relative to each
// column and a large-valued column does not swamp the constant one.
// full_rank is false (x all 0) with fewer rows than columns, a zero or
// non-finite column, or a column (nearly) a combination of the others.
template <size_t N>
LeastSquaresSolution<N> SolveLeastSquares(std::vector<std::array<double, N>> a,
                                          std::vector<double> y) {
  LeastSquaresSolution<N> out;
  const size_t m = a.size();
  if (m < N) return out;
  std::array<double, N> scale{};
  for (size_t j = 0; j < N; ++j) {
    for (size_t i = 0; i < m; ++i) scale[j] += a[i][j] * a[i][j];
    scale[j] = std::sqrt(scale[j]);
    if (!(scale[j] > 0) || !std::isfinite(scale[j])) return out;
    for (size_t i = 0; i < m; ++i) a[i][j] /= scale[j];
  }
  std::array<double, N> diag{};
  for (size_t k = 0; k < N; ++k) {
    double norm = 0;
    for (size_t i = k; i < m; ++i) norm += a[i][k] * a[i][k];
    norm = std::sqrt(norm);
    if (!(norm > 0)) return out;
    diag[k] = a[k][k] > 0 ? -norm : norm;
    a[k][k] -= diag[k];  // column k below the diagonal is now the reflector v
    double vv = 0;
    for (size_t i = k; i < m; ++i) vv += a[i][k] * a[i][k];
    auto reflect = [&](auto&& at) {
      double s = 0;
      for (size_t i = k; i < m; ++i) s += a[i][k] * at(i);
      const double f = 2 * s / vv;
      for (size_t i = k; i < m; ++i) at(i) -= f * a[i][k];
    };
    for (size_t j = k + 1; j < N; ++j) reflect([&](size_t i) -> double& { return a[i][j]; });
    reflect([&](size_t i) -> double& { return y[i]; });
  }
  const double largest = std::abs(*std::max_element(
      diag.begin(), diag.end(), [](double p, double q) { return std::abs(p) < std::abs(q); }));
  for (size_t k = 0; k < N; ++k) {
    if (!(std::abs(diag[k]) > 1e-11 * largest)) return out;
  }
  for (size_t k = N; k-- > 0;) {
    double s = y[k];
    for (size_t j = k + 1; j < N; ++j) s -= a[k][j] * out.x[j];
    out.x[k] = s / diag[k];
  }
  for (size_t j = 0; j < N; ++j) out.x[j] /= scale[j];
  for (size_t i = N; i < m; ++i) out.residual += y[i] * y[i];
  out.residual = std::sqrt(out.residual);
  out.full_rank = std::isfinite(out.residual);
  return out;
}

}  // namespace tessera

#endif  // TESSERA_UTIL_LEAST_SQUARES_H_
