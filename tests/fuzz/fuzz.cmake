# Included from the top-level CMakeLists.txt when FABSCOPE_FUZZ=ON, before src/: every library
# is compiled with libFuzzer's coverage instrumentation and ASan+UBSan, so a target only has to
# link the libraries it exercises. tests/fuzz/CMakeLists.txt declares the targets, one line each:
#   fabscope_fuzz_target(<name> <library>...)   # <name>_fuzz.cpp -> fabscope_<name>_fuzz
# Seeds live in tests/fuzz/corpus/<name>; scripts/fuzz.sh runs every fabscope_*_fuzz it finds.
if(NOT CMAKE_CXX_COMPILER_ID MATCHES "Clang")
  message(FATAL_ERROR "FABSCOPE_FUZZ needs clang (cmake --preset fuzz, or -DCMAKE_CXX_COMPILER=clang++): libFuzzer is part of clang")
endif()
add_compile_options(-fsanitize=fuzzer-no-link,address,undefined -fno-omit-frame-pointer
                    -fno-sanitize-recover=undefined)
add_link_options(-fsanitize=address,undefined)

function(fabscope_fuzz_target name)
  add_executable(fabscope_${name}_fuzz ${name}_fuzz.cpp)
  target_compile_options(fabscope_${name}_fuzz PRIVATE -fsanitize=fuzzer)
  target_link_options(fabscope_${name}_fuzz PRIVATE -fsanitize=fuzzer)
  target_link_libraries(fabscope_${name}_fuzz PRIVATE ${ARGN})
endfunction()

# `cmake --build --preset fuzz --target fuzz` builds every fuzz executable of tests/fuzz, however
# it was declared (collected once the whole tree is configured).
function(fabscope_fuzz_collect)
  get_property(targets DIRECTORY ${PROJECT_SOURCE_DIR}/tests/fuzz PROPERTY BUILDSYSTEM_TARGETS)
  list(FILTER targets INCLUDE REGEX "^fabscope_.*_fuzz$")
  add_custom_target(fuzz)
  if(targets)
    add_dependencies(fuzz ${targets})
  endif()
endfunction()
cmake_language(DEFER DIRECTORY ${PROJECT_SOURCE_DIR} CALL fabscope_fuzz_collect)
