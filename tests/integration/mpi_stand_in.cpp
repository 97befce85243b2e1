// A module linked against MPI like bench's fabscope-mpi.so (which is only built with CUDA), for
// shlibdeps_filter_test.sh on machines without the CUDA toolkit.
#include <mpi.h>

extern "C" int fabscope_mpi_stand_in() {
  int flag = 0;
  MPI_Initialized(&flag);
  return flag;
}
