#include "kernels/haptics/assignment.hpp"

#include <algorithm>
#include <limits>

namespace sonoflow::haptics {

float min_cost_assignment(const CostMatrix& cost, int rows, int cols,
                          std::array<int, kMaxAssignment>& column_of_row) {
  rows = std::clamp(rows, 0, kMaxAssignment);
  cols = std::clamp(cols, rows, kMaxAssignment);
  column_of_row.fill(-1);
  if (rows == 0) return 0;
  // Shortest augmenting paths with row potentials u and column potentials v (1-based; column 0
  // is the virtual start). row_of[j]: the row holding column j.
  constexpr float kInf = std::numeric_limits<float>::max();
  std::array<double, kMaxAssignment + 1> u{}, v{};
  std::array<int, kMaxAssignment + 1> row_of{}, way{};
  for (int r = 1; r <= rows; ++r) {
    row_of[0] = r;
    int j0 = 0;
    std::array<double, kMaxAssignment + 1> min_slack;
    std::array<bool, kMaxAssignment + 1> used{};
    min_slack.fill(kInf);
    do {
      used[std::size_t(j0)] = true;
      const int i0 = row_of[std::size_t(j0)];
      double delta = kInf;
      int j1 = 0;
      for (int j = 1; j <= cols; ++j) {
        if (used[std::size_t(j)]) continue;
        const double slack = double(cost[std::size_t(i0 - 1)][std::size_t(j - 1)]) -
                             u[std::size_t(i0)] - v[std::size_t(j)];
        if (slack < min_slack[std::size_t(j)]) {
          min_slack[std::size_t(j)] = slack;
          way[std::size_t(j)] = j0;
        }
        if (min_slack[std::size_t(j)] < delta) {
          delta = min_slack[std::size_t(j)];
          j1 = j;
        }
      }
      for (int j = 0; j <= cols; ++j) {
        if (used[std::size_t(j)]) {
          u[std::size_t(row_of[std::size_t(j)])] += delta;
          v[std::size_t(j)] -= delta;
        } else {
          min_slack[std::size_t(j)] -= delta;
        }
      }
      j0 = j1;
    } while (row_of[std::size_t(j0)] != 0);
    do {  // augment along the path
      const int j1 = way[std::size_t(j0)];
      row_of[std::size_t(j0)] = row_of[std::size_t(j1)];
      j0 = j1;
    } while (j0 != 0);
  }
  float total = 0;
  for (int j = 1; j <= cols; ++j) {
    if (row_of[std::size_t(j)] > 0) {
      column_of_row[std::size_t(row_of[std::size_t(j)] - 1)] = j - 1;
      total += cost[std::size_t(row_of[std::size_t(j)] - 1)][std::size_t(j - 1)];
    }
  }
  return total;
}

}  // namespace sonoflow::haptics
