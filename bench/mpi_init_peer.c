/* SPDX-License-Identifier: Apache-2.0 */
/* The start-up any MPI program pays, for scale in bench/fleet_figures.py: MPI_Init, one
 * barrier, MPI_Finalize, and nothing else.
 *   mpicc -O2 -o init bench/mpi_init_peer.c && mpirun -np 4 ./init */
#include <mpi.h>

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  MPI_Barrier(MPI_COMM_WORLD);
  MPI_Finalize();
  return 0;
}
