#pragma once
// Closed paths through the clusters (thesis 5.2.2): a short closed tour by nearest neighbour
// then 2-opt (Croes 1958) until no exchange of two edges shortens it, and the recursive split
// that cuts a set whose tour is longer than L in two at the midpoint of its extent along the
// principal direction of its pressure-weighted covariance, re-touring each half.
#include <Eigen/Core>

namespace sonoflow::haptics::stm {

// Reorders order[0..n) (indices into points) into a closed tour starting at order[0]; at most
// max_passes sweeps of 2-opt. Returns the tour length; adds the pair tests done to *work.
float closed_tour(const Eigen::Vector2f* points, int* order, int n, int max_passes, long* work);

// Length of the closed tour order[0..n).
float tour_length(const Eigen::Vector2f* points, const int* order, int n);

struct TourSegment {
  int begin = 0;     // into the order array
  int count = 0;
  float length = 0;  // closed tour length (m)
  float mass = 0;    // sum of the clusters' masses
};

// Splits order[0..n) recursively until every closed tour is at most max_length (or a single
// cluster), leaving each piece toured in place. Writes up to max_segments segments; returns
// how many. masses: one per point.
int split_tours(const Eigen::Vector2f* points, const float* masses, int* order, int n,
                float max_length, int max_passes, TourSegment* segments, int max_segments,
                long* work);

}  // namespace sonoflow::haptics::stm
