#pragma once
// Minimum-cost assignment of rows to columns (Hungarian algorithm, Kuhn-Munkres with
// potentials), for the small problems of matching focal points or paths across ticks.
// rows <= cols <= kMaxAssignment; every row gets a distinct column. O(rows^2 cols), no heap.
#include <array>

namespace sonoflow::haptics {

inline constexpr int kMaxAssignment = 8;

using CostMatrix = std::array<std::array<float, kMaxAssignment>, kMaxAssignment>;

// column_of_row[r] = the column given to row r. Returns the total cost. Requires
// 0 <= rows <= cols <= kMaxAssignment and finite costs.
float min_cost_assignment(const CostMatrix& cost, int rows, int cols,
                          std::array<int, kMaxAssignment>& column_of_row);

}  // namespace sonoflow::haptics
