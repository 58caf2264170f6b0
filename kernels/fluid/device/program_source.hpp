#pragma once
// The OpenCL program of the fluid engine, embedded at build time from kernels/fluid/cl/*.cl
// (embed_cl.cmake): the program source is the concatenation of the parts in order.
#include <span>
#include <string>

namespace sonoflow::fluid {

struct ProgramPart {
  const char* file;  // file name, for error messages
  const char* text;
};

std::span<const ProgramPart> program_parts();

inline std::string program_source() {
  std::string s;
  for (const auto& p : program_parts()) s += p.text;
  return s;
}

}  // namespace sonoflow::fluid
