/* SPDX-License-Identifier: Apache-2.0 */
/* A fake of NCCL's C ABI (nccl.h, NCCL 2.x) for the NCCL transport's tests on machines with no
 * GPU: the collectives on host memory, carried out with MPI on a duplicate of MPI_COMM_WORLD.
 * It checks what the real library requires and returns ncclInvalidArgument otherwise: float32
 * and sum only, the default stream, counts, NCCL's in-place rules (all_gather: sendbuff =
 * recvbuff + rank * sendcount; reduce_scatter: recvbuff = sendbuff + rank * recvcount), ids from
 * ncclGetUniqueId, ranks as MPI numbers them. FAKE_NCCL_FAIL=init makes ncclCommInitRank fail. */
#include <mpi.h>
#include <stdlib.h>
#include <string.h>

typedef int ncclResult_t;
typedef struct {
  char internal[128];
} ncclUniqueId;
typedef struct ncclComm {
  MPI_Comm comm;
  int rank, nranks;
} * ncclComm_t;

enum { kSuccess = 0, kSystemError = 2, kInvalidArgument = 4, kInvalidUsage = 5 };
enum { kFloat32 = 7, kSum = 0 };

typedef struct {
  int send; /* 1 send, 0 receive */
  void* buffer;
  size_t count;
  int peer;
  ncclComm_t comm;
} Op;

static Op g_ops[1024];
static int g_ops_count = 0, g_group_depth = 0;

ncclResult_t ncclGetVersion(int* version) {
  *version = 22105; /* 2.21.5 */
  return kSuccess;
}

const char* ncclGetErrorString(ncclResult_t r) {
  switch (r) {
    case kSuccess:
      return "no error";
    case kSystemError:
      return "unhandled system error (fake)";
    case kInvalidArgument:
      return "invalid argument (fake)";
    case kInvalidUsage:
      return "invalid usage (fake)";
    default:
      return "unknown result code";
  }
}

ncclResult_t ncclGetUniqueId(ncclUniqueId* id) {
  memset(id->internal, 0, sizeof id->internal);
  strcpy(id->internal, "fake-nccl-id");
  id->internal[127] = 42;
  return kSuccess;
}

ncclResult_t ncclCommInitRank(ncclComm_t* comm, int nranks, ncclUniqueId id, int rank) {
  const char* fail = getenv("FAKE_NCCL_FAIL");
  if (fail != NULL && strcmp(fail, "init") == 0) return kSystemError;
  int world_rank = -1, world_size = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &world_rank);
  MPI_Comm_size(MPI_COMM_WORLD, &world_size);
  if (strcmp(id.internal, "fake-nccl-id") != 0 || id.internal[127] != 42) return kInvalidArgument;
  if (nranks != world_size || rank != world_rank) return kInvalidArgument;
  ncclComm_t c = calloc(1, sizeof *c);
  if (c == NULL) return kSystemError;
  MPI_Comm_dup(MPI_COMM_WORLD, &c->comm);
  c->rank = rank;
  c->nranks = nranks;
  *comm = c;
  return kSuccess;
}

ncclResult_t ncclCommDestroy(ncclComm_t comm) {
  if (comm == NULL) return kInvalidArgument;
  MPI_Comm_free(&comm->comm);
  free(comm);
  return kSuccess;
}

static int Bad(int dtype, ncclComm_t comm, void* stream) {
  return dtype != kFloat32 || comm == NULL || stream != NULL;
}

ncclResult_t ncclAllReduce(const void* send, void* recv, size_t count, int dtype, int op,
                           ncclComm_t comm, void* stream) {
  if (Bad(dtype, comm, stream) || op != kSum || count == 0) return kInvalidArgument;
  MPI_Allreduce(send == recv ? MPI_IN_PLACE : send, recv, (int)count, MPI_FLOAT, MPI_SUM,
                comm->comm);
  return kSuccess;
}

ncclResult_t ncclAllGather(const void* send, void* recv, size_t count, int dtype, ncclComm_t comm,
                           void* stream) {
  if (Bad(dtype, comm, stream) || count == 0) return kInvalidArgument;
  const float* mine = (const float*)recv + (size_t)comm->rank * count;
  const char* s = send;
  const char* r = recv;
  const size_t whole = count * (size_t)comm->nranks * sizeof(float);
  if (s >= r && s < r + whole && (const float*)send != mine) return kInvalidArgument;
  if ((const float*)send == mine) {
    MPI_Allgather(MPI_IN_PLACE, 0, MPI_DATATYPE_NULL, recv, (int)count, MPI_FLOAT, comm->comm);
  } else {
    MPI_Allgather(send, (int)count, MPI_FLOAT, recv, (int)count, MPI_FLOAT, comm->comm);
  }
  return kSuccess;
}

ncclResult_t ncclReduceScatter(const void* send, void* recv, size_t count, int dtype, int op,
                               ncclComm_t comm, void* stream) {
  if (Bad(dtype, comm, stream) || op != kSum || count == 0) return kInvalidArgument;
  float* mine = (float*)send + (size_t)comm->rank * count;
  const char* s = send;
  const char* r = recv;
  const size_t whole = count * (size_t)comm->nranks * sizeof(float);
  if (r >= s && r < s + whole && (float*)recv != mine) return kInvalidArgument;
  if ((float*)recv == mine) {
    /* NCCL leaves the result at sendbuff + rank * count; MPI's in-place puts it at the start. */
    MPI_Reduce_scatter_block(MPI_IN_PLACE, (void*)send, (int)count, MPI_FLOAT, MPI_SUM, comm->comm);
    memmove(mine, send, count * sizeof(float));
  } else {
    MPI_Reduce_scatter_block(send, recv, (int)count, MPI_FLOAT, MPI_SUM, comm->comm);
  }
  return kSuccess;
}

ncclResult_t ncclBroadcast(const void* send, void* recv, size_t count, int dtype, int root,
                           ncclComm_t comm, void* stream) {
  if (Bad(dtype, comm, stream) || count == 0 || root < 0 || root >= comm->nranks) {
    return kInvalidArgument;
  }
  if (comm->rank == root && send != recv) memcpy(recv, send, count * sizeof(float));
  MPI_Bcast(recv, (int)count, MPI_FLOAT, root, comm->comm);
  return kSuccess;
}

static ncclResult_t Queue(int send, const void* buffer, size_t count, int dtype, int peer,
                          ncclComm_t comm, void* stream) {
  if (Bad(dtype, comm, stream) || peer < 0 || peer >= comm->nranks) return kInvalidArgument;
  if (g_ops_count == (int)(sizeof g_ops / sizeof g_ops[0])) return kInvalidUsage;
  Op op = {send, (void*)buffer, count, peer, comm};
  g_ops[g_ops_count++] = op;
  return kSuccess;
}

static ncclResult_t Flush(void) {
  MPI_Request requests[1024];
  for (int i = 0; i < g_ops_count; ++i) {
    const Op* op = &g_ops[i];
    if (op->send) {
      MPI_Isend(op->buffer, (int)op->count, MPI_FLOAT, op->peer, 7, op->comm->comm, &requests[i]);
    } else {
      MPI_Irecv(op->buffer, (int)op->count, MPI_FLOAT, op->peer, 7, op->comm->comm, &requests[i]);
    }
  }
  MPI_Waitall(g_ops_count, requests, MPI_STATUSES_IGNORE);
  g_ops_count = 0;
  return kSuccess;
}

ncclResult_t ncclGroupStart(void) {
  ++g_group_depth;
  return kSuccess;
}

ncclResult_t ncclGroupEnd(void) {
  if (g_group_depth == 0) return kInvalidUsage;
  return --g_group_depth == 0 ? Flush() : kSuccess;
}

ncclResult_t ncclSend(const void* send, size_t count, int dtype, int peer, ncclComm_t comm,
                      void* stream) {
  ncclResult_t r = Queue(1, send, count, dtype, peer, comm, stream);
  return r != kSuccess || g_group_depth > 0 ? r : Flush();
}

ncclResult_t ncclRecv(void* recv, size_t count, int dtype, int peer, ncclComm_t comm,
                      void* stream) {
  ncclResult_t r = Queue(0, recv, count, dtype, peer, comm, stream);
  return r != kSuccess || g_group_depth > 0 ? r : Flush();
}
