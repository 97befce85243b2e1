# cmake -DDIR=<docgen dir> -DGZIP=<gzip> -P gzip_man.cmake
# DIR/man1/*.1 -> DIR/man1.gz/*.1.gz with gzip -9n (no name or time stamp: the same page gives
# the same bytes, as Debian policy 12.1 and reproducible builds want).
file(REMOVE_RECURSE ${DIR}/man1.gz)
file(MAKE_DIRECTORY ${DIR}/man1.gz)
file(GLOB pages ${DIR}/man1/*.1)
foreach(page IN LISTS pages)
  get_filename_component(name ${page} NAME)
  execute_process(COMMAND ${GZIP} -9n -c ${page} OUTPUT_FILE ${DIR}/man1.gz/${name}.gz
                  RESULT_VARIABLE rc)
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "gzip ${page} failed (${rc})")
  endif()
endforeach()
