#pragma once
// Start-up specialisation of every kernel of the fluid program.
//
// PoCL (the CPU device here) builds a kernel's work-group function only at its first launch,
// specialised to the work-group size: hundreds of milliseconds of LLVM per kernel on a cold
// kernel cache, and an allocation-heavy stall of the first frame that uses a kernel for the
// first time - the first live switch to a new material. warm_kernels launches every kernel of
// the program once over one empty work-group of the size the engine's launcher uses, so
// create() pays that cost instead. Drivers that compile at build time (GPUs) just run empty
// launches.
#include <cstddef>

#include "kernels/fluid/device/opencl.hpp"
#include "kernels/fluid/expected.hpp"

namespace sonoflow::fluid {

// Every kernel once with all arguments zero (counts 0: each kernel returns at once) or a
// zeroed scratch buffer, global size = local size = `work_group`. Needs the program built with
// -cl-kernel-arg-info; without argument information it does nothing, and a kernel whose
// arguments it cannot set is left to its first real launch. Fails only if the queue does.
// Set-up time only.
Status warm_kernels(ClRuntime& rt, std::size_t work_group);

}  // namespace sonoflow::fluid
