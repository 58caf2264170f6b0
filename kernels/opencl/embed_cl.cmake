# Generates a C++ file that holds a solver's OpenCL sources as string literals, so an installed
# daemon needs no source tree. Run at build time (see sonoflow_embed_cl in CMakeLists.txt) with:
#   -DOUTPUT=<file.cpp> -DSOURCES=<a.cl;b.cl;...> -DNAMESPACE=<sonoflow::x> -DHEADER=<path.hpp>
# HEADER declares `std::span<const opencl::ProgramPart> program_parts();` in NAMESPACE. The
# program is the concatenation of the files in the order given.
set(body "// Generated from OpenCL sources by kernels/opencl/embed_cl.cmake. Do not edit.\n")
string(APPEND body "#include \"${HEADER}\"\n\n")
string(APPEND body "namespace ${NAMESPACE} {\n\nnamespace {\n")
set(index 0)
set(entries "")
foreach(src IN LISTS SOURCES)
  file(READ "${src}" text)
  get_filename_component(name "${src}" NAME)
  # Raw string literals: the delimiter must not appear in the source.
  string(APPEND body "constexpr const char kPart${index}[] = R\"clsrc(\n// ---- ${name}\n${text})clsrc\";\n")
  string(APPEND entries "    {\"${name}\", kPart${index}},\n")
  math(EXPR index "${index} + 1")
endforeach()
string(APPEND body "constexpr opencl::ProgramPart kParts[] = {\n${entries}};\n}  // namespace\n\n")
string(APPEND body "std::span<const opencl::ProgramPart> program_parts() { return kParts; }\n\n}  // namespace ${NAMESPACE}\n")
file(WRITE "${OUTPUT}.tmp" "${body}")
file(COPY_FILE "${OUTPUT}.tmp" "${OUTPUT}" ONLY_IF_DIFFERENT)
file(REMOVE "${OUTPUT}.tmp")
