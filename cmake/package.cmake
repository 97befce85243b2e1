# Debian/Ubuntu package: `cmake --build build --target package` (or `cd build && cpack`) writes
# build/fabscope_<version>_<arch>.deb. See docs/packaging.md.
#
# What goes in: every install() rule of the project. The package is monolithic (one .deb, no
# CPack components), so a new target joins it by having an install rule, nothing else:
#   install(TARGETS my_plugin LIBRARY DESTINATION lib/fabscope)   # -> /usr/lib/fabscope/
# Destinations are relative to the prefix (/usr in the package); data under share/fabscope.
# A shared object whose NEEDED libraries belong to a stack that is optional at run time (MPI,
# NCCL: fabscope opens it only when that stack is there) is listed in
# FABSCOPE_DEB_OPTIONAL_STACK_FILES below, so dpkg-shlibdeps does not turn that stack into a
# hard Depends; name the stack's package in Recommends/Suggests instead.

set(FABSCOPE_PACKAGE_MAINTAINER "fabscope maintainers <maintainers@fabscope.invalid>"
    CACHE STRING "Maintainer field of the Debian package")

set(CPACK_GENERATOR "DEB")
set(CPACK_PACKAGE_NAME "fabscope")
set(CPACK_PACKAGE_VERSION "${PROJECT_VERSION}")
set(CPACK_PACKAGE_CONTACT "${FABSCOPE_PACKAGE_MAINTAINER}")
set(CPACK_PACKAGING_INSTALL_PREFIX "/usr")
set(CPACK_INSTALL_PREFIX "/usr")  # with CPACK_SET_DESTDIR, the prefix the install rules see
# DESTDIR staging: install() rules see CMAKE_INSTALL_PREFIX=/usr, as on the target system.
set(CPACK_SET_DESTDIR ON)
set(CPACK_STRIP_FILES ON)
set(CPACK_DEBIAN_FILE_NAME "DEB-DEFAULT")  # fabscope_0.1.0_amd64.deb
set(CPACK_DEBIAN_PACKAGE_SECTION "net")
set(CPACK_DEBIAN_PACKAGE_PRIORITY "optional")
set(CPACK_DEBIAN_PACKAGE_CONTROL_STRICT_PERMISSION ON)

# Depends: only the shared libraries the binary is linked against (libc, libstdc++, libgcc),
# computed by dpkg-shlibdeps. The fabscope binary has no NEEDED entry for MPI, NCCL, CUDA, NVML,
# libibverbs or librdmacm (tests/unit/cli/binary_test.cpp): it opens them with dlopen, so they
# are Recommends (the RDMA stack: most nodes it runs on have one) or Suggests (the GPU stack
# comes from NVIDIA's repositories or the node image; MPI only for multi-node bench; the
# InfiniBand management libraries only where `fabscope fabric` sweeps a subnet).
set(CPACK_DEBIAN_PACKAGE_SHLIBDEPS ON)
set(CPACK_DEBIAN_PACKAGE_RECOMMENDS "libibverbs1, ibverbs-providers, librdmacm1")
set(CPACK_DEBIAN_PACKAGE_SUGGESTS
    "libnccl2, libnvidia-ml1, libcuda1, openmpi-bin, python3, prometheus, prometheus-node-exporter, libibumad3")
set(FABSCOPE_DEB_OPTIONAL_STACK_FILES "fabscope-mpi.so")

# One package for GPU and CPU-only nodes (docs/packaging.md): where CUDA and NCCL were found at
# build time it carries the GPU benchmark engine, and the description says which it is.
set(CPACK_PACKAGE_DESCRIPTION_SUMMARY
    "network checks and benchmarks for GPU training clusters (InfiniBand, RoCE, NCCL)")
if(FABSCOPE_HAVE_CUDA)
  set(_engine "This build includes the GPU benchmark engine (CUDA runtime linked statically,\nNCCL opened at run time); nodes without a GPU run every other command.")
else()
  set(_engine "This build has no GPU benchmark engine (it was built without the CUDA\ntoolkit): `fabscope bench` says so and exits 3; every other command works.")
endif()
set(CPACK_PACKAGE_DESCRIPTION
"fabscope probes, checks, configures, benchmarks and monitors the network of
GPU training nodes: RDMA ports, RoCE GID tables, GPUDirect RDMA, PCIe paths
and OS settings (fabscope doctor, probe, check), NCCL environment planning
and lint (fabscope env), NCCL_DEBUG log analysis (fabscope log), NCCL
collective benchmarks in nccl-tests' format (fabscope bench) and a
Prometheus exporter with alert rules and a Grafana dashboard.
.
NVIDIA's libraries (NCCL, CUDA, NVML), MPI and the RDMA libraries are
opened at run time, so one binary runs on nodes with or without them.
${_engine}")

# Debian policy files of a native package: copyright and changelog.gz in /usr/share/doc.
string(TIMESTAMP _date "%a, %d %b %Y %H:%M:%S +0000" UTC)  # honours SOURCE_DATE_EPOCH
set(_doc ${PROJECT_BINARY_DIR}/package/doc)
file(WRITE ${_doc}/changelog
"fabscope (${PROJECT_VERSION}) unstable; urgency=medium

  * Built from the fabscope source tree at version ${PROJECT_VERSION}.

 -- ${FABSCOPE_PACKAGE_MAINTAINER}  ${_date}
")
find_program(GZIP_PROGRAM gzip REQUIRED)
execute_process(COMMAND ${GZIP_PROGRAM} -9n -c ${_doc}/changelog OUTPUT_FILE ${_doc}/changelog.gz)
string(TIMESTAMP FABSCOPE_COPYRIGHT_YEAR "%Y" UTC)
configure_file(${PROJECT_SOURCE_DIR}/cmake/copyright.in ${_doc}/copyright @ONLY)
install(FILES ${_doc}/copyright ${_doc}/changelog.gz DESTINATION share/doc/fabscope)

# dpkg-shlibdeps behind a filter that drops FABSCOPE_DEB_OPTIONAL_STACK_FILES from its
# arguments (CPackDeb runs it on every dynamically linked ELF file and has no exclusion list;
# it finds dpkg-shlibdeps through SHLIBDEPS_EXECUTABLE, set in the project config file).
find_program(FABSCOPE_DPKG_SHLIBDEPS dpkg-shlibdeps)
if(FABSCOPE_DPKG_SHLIBDEPS)
  configure_file(${PROJECT_SOURCE_DIR}/cmake/dpkg-shlibdeps-filter.sh.in
                 ${PROJECT_BINARY_DIR}/package/dpkg-shlibdeps-filter.sh @ONLY
                 FILE_PERMISSIONS OWNER_READ OWNER_WRITE OWNER_EXECUTE GROUP_READ GROUP_EXECUTE
                                  WORLD_READ WORLD_EXECUTE)
  set(FABSCOPE_SHLIBDEPS_FILTER ${PROJECT_BINARY_DIR}/package/dpkg-shlibdeps-filter.sh)
  file(WRITE ${PROJECT_BINARY_DIR}/package/cpack-project.cmake
       "set(SHLIBDEPS_EXECUTABLE \"${PROJECT_BINARY_DIR}/package/dpkg-shlibdeps-filter.sh\")\n")
  set(CPACK_PROJECT_CONFIG_FILE ${PROJECT_BINARY_DIR}/package/cpack-project.cmake)
endif()

# Shared libraries in the linker's directories (the NCCL tuner plugin, which NCCL opens by its
# name, libnccl-tuner-fabscope.so, so it lives in /usr/lib) need the ldconfig trigger (Debian
# policy 8.1.1; lintian's lacks-ldconfig-trigger). Whether there are any is known only once the
# install rules ran, so a pre-build script looks at the staging tree and adds the trigger then.
file(WRITE ${PROJECT_BINARY_DIR}/package/control/triggers "activate-noawait ldconfig\n")
set(FABSCOPE_DEB_TRIGGERS ${PROJECT_BINARY_DIR}/package/control/triggers)
set(CPACK_FABSCOPE_DEB_TRIGGERS ${FABSCOPE_DEB_TRIGGERS})  # CPACK_* reach the cpack run
set(CPACK_PRE_BUILD_SCRIPTS ${PROJECT_SOURCE_DIR}/cmake/package_prebuild.cmake)

include(CPack)
