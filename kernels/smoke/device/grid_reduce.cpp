#include "kernels/smoke/device/grid_reduce.hpp"

namespace sonoflow::smoke {

opencl::Expected<GridReduce> GridReduce::create(opencl::ClRuntime& rt) {
  auto k = rt.kernel("reduce_partials");
  if (!k) return k.error();
  GridReduce r;
  r.reduce_ = k.value();
  return r;
}

void GridReduce::fold(opencl::Launcher& launch, GridBuffers& g, int count, int slot) {
  launch.record(opencl::set_args(reduce_, g.partials, count, g.results, slot,
                                 cl::Local(sizeof(float) * 8 * kLocal)));
  launch(reduce_, cl::NullRange, cl::NDRange(kLocal), cl::NDRange(kLocal));
}

Float8 GridReduce::read(opencl::Launcher& launch, GridBuffers& g, int slot) {
  launch.record(launch.queue().enqueueReadBuffer(g.results, CL_TRUE,
                                                 static_cast<std::size_t>(slot) * sizeof(Float8),
                                                 sizeof(Float8), staging_.data()));
  return staging_;
}

}  // namespace sonoflow::smoke
