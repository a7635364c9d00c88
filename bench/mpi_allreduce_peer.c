/* SPDX-License-Identifier: Apache-2.0 */
/* The peer of parity's all_reduce figure: a bare MPI_Allreduce timing loop, as nccl-tests
 * times one size (warm-up, then REPS samples of ITERS operations each, the slowest rank's
 * time), out-of-place, float32 sum. Prints one line per sample: "busbw GB/s".
 *   mpicc -O2 -o peer bench/mpi_allreduce_peer.c && mpirun -np 4 ./peer BYTES ITERS REPS */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int rank = 0, ranks = 1;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &ranks);
  if (argc != 4) {
    if (rank == 0) fprintf(stderr, "usage: peer BYTES ITERS REPS\n");
    MPI_Abort(MPI_COMM_WORLD, 2);
  }
  const size_t bytes = strtoull(argv[1], NULL, 10);
  const int iters = atoi(argv[2]), reps = atoi(argv[3]);
  const int count = (int)(bytes / ranks / sizeof(float)) * ranks;
  float* send = malloc((size_t)count * sizeof(float));
  float* recv = malloc((size_t)count * sizeof(float));
  for (int i = 0; i < count; ++i) send[i] = (float)((i + rank) % 1024), recv[i] = 0.0f;
  for (int i = 0; i < iters; ++i) {
    MPI_Allreduce(send, recv, count, MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD);
  }
  const double factor = 2.0 * (ranks - 1) / ranks;
  for (int r = 0; r < reps; ++r) {
    MPI_Barrier(MPI_COMM_WORLD);
    const double start = MPI_Wtime();
    for (int i = 0; i < iters; ++i) {
      MPI_Allreduce(send, recv, count, MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD);
    }
    double seconds = (MPI_Wtime() - start) / iters, slowest = 0.0;
    MPI_Allreduce(&seconds, &slowest, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
    if (rank == 0) printf("%.6f\n", (double)count * sizeof(float) / slowest / 1e9 * factor);
  }
  free(send);
  free(recv);
  MPI_Finalize();
  return 0;
}
