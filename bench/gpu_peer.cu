// SPDX-License-Identifier: Apache-2.0
// parity_gpu_peer: what cuBLAS and the CUDA driver reach on their own, for scripts/gpu-check.sh
// to set parity's figures against in the same run. The copy ceiling is the best of R
// device-to-device cudaMemcpyAsync copies (2 x bytes moved, as BabelStream counts copy); GEMM is
// cublasGemmEx alone, per dtype and compute type as parity's cuda backend calls it, best of R
// (parity's "best"). Timed as parity's gemm suite times (docs/BENCH.md "Timing"), so the ratio
// compares like with like: the stream is held by a spin kernel until the sample's work is
// queued (nvbandwidth), each sample queues enough GEMMs for about 2 ms (at most 128) and divides
// (nccl-tests), one unheld call and 0.25 s of warm-up first. One JSON document on stdout;
// exit 2 for bad usage, 3 when a CUDA or cuBLAS call fails (no driver, no device).
#include <cublas_v2.h>
#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_runtime.h>

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <sstream>
#include <string>
#include <vector>

namespace {

[[noreturn]] void Die(const char* call, cudaError_t e) {
  std::fprintf(stderr, "parity_gpu_peer: error: %s: %s: %s\n", call, cudaGetErrorName(e),
               cudaGetErrorString(e));
  std::exit(3);
}

#define CHECK(call)                        \
  do {                                     \
    const cudaError_t e_ = (call);         \
    if (e_ != cudaSuccess) Die(#call, e_); \
  } while (0)
#define CHECK_BLAS(call)                                                             \
  do {                                                                               \
    const cublasStatus_t s_ = (call);                                                \
    if (s_ != CUBLAS_STATUS_SUCCESS) {                                               \
      std::fprintf(stderr, "parity_gpu_peer: error: %s: cublasStatus_t %d\n", #call, \
                   static_cast<int>(s_));                                            \
      std::exit(3);                                                                  \
    }                                                                                \
  } while (0)

constexpr char kUsage[] =
    "usage: parity_gpu_peer [--device I] [--sizes 256,1024,2048] [--reps R] [--copy-bytes B]\n";

[[noreturn]] void Usage(const std::string& why) {
  std::fprintf(stderr, "parity_gpu_peer: error: %s\n%s", why.c_str(), kUsage);
  std::exit(2);
}

// A rate as a JSON number: null where the time was too short for the events to resolve.
std::string Rate(double work, double seconds) {
  const double rate = work / seconds;
  if (!(seconds > 0) || !std::isfinite(rate)) return "null";
  std::ostringstream out;
  out.precision(6);
  out << rate;
  return out.str();
}

long long ParseNumber(const char* flag, const std::string& text, long long lo, long long hi) {
  char* end = nullptr;
  const long long v = std::strtoll(text.c_str(), &end, 10);
  if (text.empty() || *end != '\0' || v < lo || v > hi) {
    Usage(std::string(flag) + ": '" + text + "' is not a number in range");
  }
  return v;
}

// Holds the stream until the host sets *latch (mapped pinned memory), or 10 s have passed on
// %globaltimer, when it sets *timed_out.
__global__ void SpinKernel(const volatile int* latch, volatile int* timed_out) {
  unsigned long long start, now;
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(start));
  while (*latch == 0) {
    asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(now));
    if (now - start > 10000000000ull) {
      *timed_out = 1;
      return;
    }
  }
}

constexpr double kTargetSampleSeconds = 2e-3;  // parity's gemm suite
constexpr int kMaxHeldCalls = 128;             // parity's bench/backend.h

// Element i of an operand: in [-1, 1), stored as the dtype.
__global__ void FillKernel(void* out, long long count, int kind, unsigned salt) {
  for (long long i = blockIdx.x * 256LL + threadIdx.x; i < count; i += gridDim.x * 256LL) {
    unsigned x = static_cast<unsigned>(i) * 2654435761u + salt * 0x9E3779B9u;
    x ^= x >> 16;
    x *= 0x85EBCA6Bu;
    x ^= x >> 13;
    const float v = static_cast<float>(x >> 8) * (1.0f / 8388608.0f) - 1.0f;
    if (kind == 0) static_cast<double*>(out)[i] = v;
    if (kind == 1) static_cast<float*>(out)[i] = v;
    if (kind == 2) static_cast<__half*>(out)[i] = __float2half(v);
    if (kind == 3) static_cast<__nv_bfloat16*>(out)[i] = __float2bfloat16(v);
  }
}

struct GemmKind {
  const char* dtype;
  int storage;  // FillKernel's kind
  cudaDataType_t type;
  cublasComputeType_t compute;
  const char* call;
  size_t item;
};
constexpr GemmKind kKinds[] = {
    {"float64", 0, CUDA_R_64F, CUBLAS_COMPUTE_64F, "cublasGemmEx CUBLAS_COMPUTE_64F", 8},
    {"float32", 1, CUDA_R_32F, CUBLAS_COMPUTE_32F, "cublasGemmEx CUBLAS_COMPUTE_32F", 4},
    {"tf32", 1, CUDA_R_32F, CUBLAS_COMPUTE_32F_FAST_TF32,
     "cublasGemmEx CUBLAS_COMPUTE_32F_FAST_TF32", 4},
    {"float16", 2, CUDA_R_16F, CUBLAS_COMPUTE_32F, "cublasGemmEx CUDA_R_16F, CUBLAS_COMPUTE_32F",
     2},
    {"bfloat16", 3, CUDA_R_16BF, CUBLAS_COMPUTE_32F, "cublasGemmEx CUDA_R_16BF, CUBLAS_COMPUTE_32F",
     2},
};

}  // namespace

int main(int argc, char** argv) {
  int device = 0;
  std::vector<long long> sizes = {256, 1024, 2048};
  int reps = 0;  // 0: 20 up to n = 1024, 5 above; 20 copies
  long long copy_bytes = 3LL << 28;
  for (int i = 1; i < argc; ++i) {
    const std::string flag = argv[i];
    if (flag == "-h" || flag == "--help") {
      std::fputs(kUsage, stdout);
      return 0;
    }
    if (i + 1 >= argc) Usage(flag + " needs a value");
    const std::string value = argv[++i];
    if (flag == "--device") {
      device = static_cast<int>(ParseNumber("--device", value, 0, 1 << 20));
    } else if (flag == "--reps") {
      reps = static_cast<int>(ParseNumber("--reps", value, 1, 100000));
    } else if (flag == "--copy-bytes") {
      copy_bytes = ParseNumber("--copy-bytes", value, 1 << 20, 1LL << 40);
    } else if (flag == "--sizes") {
      sizes.clear();
      std::stringstream list(value);
      std::string item;
      while (std::getline(list, item, ',')) {
        sizes.push_back(ParseNumber("--sizes", item, 1, 65536));
      }
      if (sizes.empty()) Usage("--sizes: no size");
    } else {
      Usage("unknown option " + flag);
    }
  }
  int count = 0;
  CHECK(cudaGetDeviceCount(&count));
  if (device >= count) {
    std::fprintf(stderr, "parity_gpu_peer: error: no device %d (there are %d)\n", device, count);
    return 3;
  }
  CHECK(cudaSetDevice(device));
  cudaDeviceProp prop{};
  CHECK(cudaGetDeviceProperties(&prop, device));
  cudaStream_t stream;
  CHECK(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));
  cudaEvent_t start, stop;
  CHECK(cudaEventCreate(&start));
  CHECK(cudaEventCreate(&stop));
  int* latch = nullptr;  // [0]: set by the host to release; [1]: set by a spin that timed out
  CHECK(cudaHostAlloc(reinterpret_cast<void**>(&latch), 2 * sizeof(int), cudaHostAllocMapped));
  int* latch_device = nullptr;
  CHECK(cudaHostGetDevicePointer(reinterpret_cast<void**>(&latch_device), latch, 0));
  // Seconds `work` took on the device; held: queued behind a spin kernel released once `work`
  // has returned, so the host's time to queue it is not counted.
  auto timed = [&](auto&& work, bool held) {
    if (held) {
      latch[0] = latch[1] = 0;
      SpinKernel<<<1, 1, 0, stream>>>(latch_device, latch_device + 1);
      CHECK(cudaGetLastError());
    }
    CHECK(cudaEventRecord(start, stream));
    work();
    CHECK(cudaEventRecord(stop, stream));
    if (held) __atomic_store_n(&latch[0], 1, __ATOMIC_RELEASE);
    CHECK(cudaEventSynchronize(stop));
    if (held && __atomic_load_n(&latch[1], __ATOMIC_ACQUIRE) != 0) {
      std::fprintf(stderr, "parity_gpu_peer: error: the held stream timed out after 10 s\n");
      std::exit(3);
    }
    float ms = 0;
    CHECK(cudaEventElapsedTime(&ms, start, stop));
    return ms * 1e-3;
  };

  // The copy ceiling.
  void *src = nullptr, *dst = nullptr;
  CHECK(cudaMalloc(&src, copy_bytes));
  CHECK(cudaMalloc(&dst, copy_bytes));
  CHECK(cudaMemsetAsync(src, 1, copy_bytes, stream));
  const int copy_reps = reps > 0 ? reps : 20;
  double copy_best = 1e30;
  for (int r = 0; r < 3 + copy_reps; ++r) {
    const double t = timed(
        [&] { CHECK(cudaMemcpyAsync(dst, src, copy_bytes, cudaMemcpyDeviceToDevice, stream)); },
        r > 0);
    if (r >= 3) copy_best = t < copy_best ? t : copy_best;
  }
  CHECK(cudaFree(src));
  CHECK(cudaFree(dst));

  cublasHandle_t handle;
  CHECK_BLAS(cublasCreate(&handle));
  CHECK_BLAS(cublasSetStream(handle, stream));
  int major = 0, minor = 0, patch = 0;
  CHECK_BLAS(cublasGetProperty(MAJOR_VERSION, &major));
  CHECK_BLAS(cublasGetProperty(MINOR_VERSION, &minor));
  CHECK_BLAS(cublasGetProperty(PATCH_LEVEL, &patch));

  std::ostringstream gemm;
  bool first = true;
  for (const GemmKind& kind : kKinds) {
    for (long long n : sizes) {
      const long long elements = n * n;
      void *a, *b, *c;
      CHECK(cudaMalloc(&a, elements * kind.item));
      CHECK(cudaMalloc(&b, elements * kind.item));
      CHECK(cudaMalloc(&c, elements * kind.item));
      FillKernel<<<1024, 256, 0, stream>>>(a, elements, kind.storage, 1);
      CHECK(cudaGetLastError());
      FillKernel<<<1024, 256, 0, stream>>>(b, elements, kind.storage, 2);
      CHECK(cudaGetLastError());
      const double one64 = 1.0, zero64 = 0.0;
      const float one32 = 1.0f, zero32 = 0.0f;
      const bool f64 = kind.storage == 0;
      const int dim = static_cast<int>(n);
      int calls = 1;
      auto call = [&] {
        for (int i = 0; i < calls; ++i) {
          CHECK_BLAS(cublasGemmEx(handle, CUBLAS_OP_N, CUBLAS_OP_N, dim, dim, dim,
                                  f64 ? static_cast<const void*>(&one64) : &one32, a, kind.type,
                                  dim, b, kind.type, dim,
                                  f64 ? static_cast<const void*>(&zero64) : &zero32, c, kind.type,
                                  dim, kind.compute, CUBLAS_GEMM_DEFAULT));
        }
      };
      timed(call, false);  // cuBLAS's set-up and kernel loading, never behind a held stream
      double warm = 0;
      for (int w = 0; w < 2 || warm < 0.25; ++w) {
        const double t = timed(call, true);
        warm += t;
        const double want = std::ceil(kTargetSampleSeconds / (t / calls) - 1e-6);
        calls = static_cast<int>(want < 1 ? 1 : want > kMaxHeldCalls ? kMaxHeldCalls : want);
      }
      const int gemm_reps = reps > 0 ? reps : (n <= 1024 ? 20 : 5);
      double best = 1e30;
      for (int r = 0; r < gemm_reps; ++r) {
        const double t = timed(call, true) / calls;
        best = t < best ? t : best;
      }
      CHECK(cudaFree(a));
      CHECK(cudaFree(b));
      CHECK(cudaFree(c));
      const double flops = 2.0 * double(n) * double(n) * double(n);
      gemm << (first ? "" : ",\n  ") << "{\"dtype\":\"" << kind.dtype << "\",\"size\":" << n
           << ",\"gflops\":" << Rate(flops / 1e9, best) << ",\"reps\":" << gemm_reps
           << ",\"calls_per_sample\":" << calls << ",\"call\":\"" << kind.call << "\"}";
      first = false;
    }
  }
  CHECK_BLAS(cublasDestroy(handle));
  CHECK(cudaEventDestroy(start));
  CHECK(cudaEventDestroy(stop));
  CHECK(cudaStreamDestroy(stream));
  CHECK(cudaFreeHost(latch));
  std::printf(
      "{\"format\":\"parity-gpu-peer\",\"version\":1,\"device\":\"%s\",\"cublas\":\"%d.%d.%d\",\n"
      " \"copy\":{\"bytes\":%lld,\"gbs\":%s,\"reps\":%d,\"method\":\"cudaMemcpyAsync "
      "device-to-device, 2 x bytes per copy, best of %d\"},\n \"gemm\":[%s]}\n",
      prop.name, major, minor, patch, copy_bytes,
      Rate(2.0 * double(copy_bytes) / 1e9, copy_best).c_str(), copy_reps, copy_reps,
      gemm.str().c_str());
  return 0;
}
