# Run by cpack after the install rules filled the staging tree, before the .deb is made
# (CPACK_PRE_BUILD_SCRIPTS, cmake/package.cmake): ldconfig trigger when a shared library sits in
# a directory the dynamic linker searches.
set(_root "${CPACK_TEMPORARY_INSTALL_DIRECTORY}")
file(GLOB _linker_dir_libs LIST_DIRECTORIES false
     "${_root}/lib/*.so*" "${_root}/usr/lib/*.so*" "${_root}/lib/*-linux-gnu*/*.so*"
     "${_root}/usr/lib/*-linux-gnu*/*.so*")
if(_linker_dir_libs)
  list(APPEND CPACK_DEBIAN_PACKAGE_CONTROL_EXTRA "${CPACK_FABSCOPE_DEB_TRIGGERS}")
  message(STATUS "fabscope: ldconfig trigger for ${_linker_dir_libs}")
endif()
