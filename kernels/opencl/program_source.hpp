#pragma once
// An OpenCL program embedded at build time from a solver's cl/*.cl files (embed_cl.cmake): the
// program source is the concatenation of the parts in order.
#include <span>
#include <string>

namespace sonoflow::opencl {

struct ProgramPart {
  const char* file;  // file name, for error messages
  const char* text;
};

inline std::string join(std::span<const ProgramPart> parts) {
  std::string s;
  for (const auto& p : parts) s += p.text;
  return s;
}

}  // namespace sonoflow::opencl
