// SPDX-License-Identifier: Apache-2.0
#include "bench/backend_cpu.h"

#include <Random123/philox.h>
#include <cblas.h>
#include <fmt/format.h>
#include <omp.h>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <dnnl.hpp>
#include <fstream>
#include <map>
#include <optional>
#include <string>
#include <tuple>

#include "core/parallel.h"

extern "C" {
// OpenBLAS's own introspection (openblas_config.h declares them; cblas.h may not).
char* openblas_get_config(void);
char* openblas_get_corename(void);
void openblas_set_num_threads(int num_threads);
}

namespace parity::bench {
namespace {

// Large arrays start on a 2 MiB boundary, so transparent huge pages can back them whole.
constexpr std::size_t kLargeAlignment = std::size_t{2} << 20;
constexpr std::size_t kSmallAlignment = 64;

std::string CpuModel() {
  std::ifstream in("/proc/cpuinfo");
  std::string line;
  while (std::getline(in, line)) {
    if (line.rfind("model name", 0) == 0) {
      const std::size_t colon = line.find(':');
      if (colon != std::string::npos && colon + 2 <= line.size()) return line.substr(colon + 2);
    }
  }
  return "CPU";
}

std::string CpuVendor(const std::string& model) {
  if (model.find("AMD") != std::string::npos) return "AMD";
  if (model.find("Intel") != std::string::npos) return "Intel";
  return "";
}

std::string IsaName(dnnl::cpu_isa isa) {
  switch (isa) {
    case dnnl::cpu_isa::sse41:
      return "sse41";
    case dnnl::cpu_isa::avx:
      return "avx";
    case dnnl::cpu_isa::avx2:
      return "avx2";
    case dnnl::cpu_isa::avx2_vnni:
      return "avx2_vnni";
    case dnnl::cpu_isa::avx512_core:
      return "avx512_core";
    case dnnl::cpu_isa::avx512_core_vnni:
      return "avx512_core_vnni";
    case dnnl::cpu_isa::avx512_core_bf16:
      return "avx512_core_bf16";
    case dnnl::cpu_isa::avx512_core_amx:
      return "avx512_core_amx";
    default:
      return "other";
  }
}

template <typename T>
void StreamKernel(StreamOp op, T* a, T* b, T* c, std::size_t n, T scalar) {
  const std::ptrdiff_t count = static_cast<std::ptrdiff_t>(n);
  switch (op) {
    case StreamOp::kCopy:
#pragma omp parallel for simd schedule(static)
      for (std::ptrdiff_t i = 0; i < count; ++i) c[i] = a[i];
      break;
    case StreamOp::kMul:
#pragma omp parallel for simd schedule(static)
      for (std::ptrdiff_t i = 0; i < count; ++i) b[i] = scalar * c[i];
      break;
    case StreamOp::kAdd:
#pragma omp parallel for simd schedule(static)
      for (std::ptrdiff_t i = 0; i < count; ++i) c[i] = a[i] + b[i];
      break;
    case StreamOp::kTriad:
#pragma omp parallel for simd schedule(static)
      for (std::ptrdiff_t i = 0; i < count; ++i) a[i] = b[i] + scalar * c[i];
      break;
    case StreamOp::kNstream:
#pragma omp parallel for simd schedule(static)
      for (std::ptrdiff_t i = 0; i < count; ++i) a[i] += b[i] + scalar * c[i];
      break;
  }
}

// Dot sums in T, as BabelStream's OpenMP dot does, but in blocks of kDotBlock elements whose
// sums are then added (a GPU's shape: a short run per thread, then partial sums). One running
// float32 sum per thread and SIMD lane, over millions of equal terms, drifts by several percent,
// past the stream suite's bound λ·√n·u (StreamDotTolerance); blocked, it stays far inside.
constexpr std::ptrdiff_t kDotBlock = 1024;

template <typename T>
double DotKernel(const T* a, const T* b, std::size_t n) {
  const std::ptrdiff_t count = static_cast<std::ptrdiff_t>(n);
  const std::ptrdiff_t blocks = (count + kDotBlock - 1) / kDotBlock;
  T sum = 0;
#pragma omp parallel for schedule(static) reduction(+ : sum)
  for (std::ptrdiff_t block = 0; block < blocks; ++block) {
    const std::ptrdiff_t begin = block * kDotBlock;
    const std::ptrdiff_t end = std::min(count, begin + kDotBlock);
    T part = 0;
#pragma omp simd reduction(+ : part)
    for (std::ptrdiff_t i = begin; i < end; ++i) part += a[i] * b[i];
    sum += part;
  }
  return static_cast<double>(sum);
}

template <typename T>
void FillKernel(T* dst, std::size_t n, T value) {
  const std::ptrdiff_t count = static_cast<std::ptrdiff_t>(n);
#pragma omp parallel for simd schedule(static)
  for (std::ptrdiff_t i = 0; i < count; ++i) dst[i] = value;
}

// curand_uniform: x·2^-32 + 2^-33, in float.
inline float Uniform(uint32_t x) {
  return static_cast<float>(x) * 2.3283064365386963e-10f + 1.1641532182693481e-10f;
}

class CpuBackend final : public Backend {
 public:
  std::string_view name() const override { return "cpu"; }

  Result<std::vector<DeviceInfo>> Devices() override {
    DeviceInfo device;
    device.index = 0;
    device.name = CpuModel();
    device.vendor = CpuVendor(device.name);
    Json& p = device.properties;
    p["threads"] = ThreadCount();
    p["openmp"] = fmt::format("{}", _OPENMP);
    Json blas = Json::object();
    blas["name"] = "OpenBLAS";
    if (const char* config = openblas_get_config(); config != nullptr && *config != '\0') {
      blas["config"] = config;
    }
    if (const char* core = openblas_get_corename(); core != nullptr && *core != '\0') {
      blas["core"] = core;
    }
    p["blas"] = blas;
    const dnnl_version_t* v = dnnl_version();
    p["onednn"] = {{"version", fmt::format("{}.{}.{}", v->major, v->minor, v->patch)},
                   {"isa", IsaName(dnnl::get_effective_cpu_isa())}};
    p["rng"] = "Random123 philox4x32-10";
    return std::vector<DeviceInfo>{device};
  }

  Status Open(int index) override {
    if (index != 0) {
      return Status::Unavailable(fmt::format("cpu backend has one device (0), not {}", index));
    }
    omp_set_num_threads(ThreadCount());
    openblas_set_num_threads(ThreadCount());
    return Status::Ok();
  }

  Result<void*> Allocate(std::size_t bytes, MemoryKind kind) override {
    if (kind == MemoryKind::kHostPinned) {
      return Status::Unavailable(
          "the cpu backend has no separate device memory: page-locked staging buffers do not "
          "apply");
    }
    const std::size_t alignment = bytes >= kLargeAlignment ? kLargeAlignment : kSmallAlignment;
    const std::size_t rounded =
        (std::max<std::size_t>(bytes, 1) + alignment - 1) / alignment * alignment;
    void* ptr = std::aligned_alloc(alignment, rounded);
    if (ptr == nullptr) {
      return Status::Unavailable(fmt::format("cannot allocate {} bytes of host memory", bytes));
    }
    return ptr;
  }

  void Free(void* ptr, MemoryKind) override { std::free(ptr); }

  Status Copy(void* dst, MemoryKind, const void* src, MemoryKind, std::size_t bytes) override {
    std::memcpy(dst, src, bytes);
    return Status::Ok();
  }

  Status Fill(void* dst, DType dtype, std::size_t n, double value) override {
    if (dtype == DType::kFloat64) {
      FillKernel(static_cast<double*>(dst), n, value);
    } else if (dtype == DType::kFloat32) {
      FillKernel(static_cast<float*>(dst), n, static_cast<float>(value));
    } else {
      return Unsupported("Fill", dtype);
    }
    return Status::Ok();
  }

  Status Stream(StreamOp op, DType dtype, void* a, void* b, void* c, std::size_t n,
                double scalar) override {
    if (dtype == DType::kFloat64) {
      StreamKernel(op, static_cast<double*>(a), static_cast<double*>(b), static_cast<double*>(c), n,
                   scalar);
    } else if (dtype == DType::kFloat32) {
      StreamKernel(op, static_cast<float*>(a), static_cast<float*>(b), static_cast<float*>(c), n,
                   static_cast<float>(scalar));
    } else {
      return Unsupported("stream kernels", dtype);
    }
    return Status::Ok();
  }

  Result<double> Dot(DType dtype, const void* a, const void* b, std::size_t n) override {
    if (dtype == DType::kFloat64) {
      return DotKernel(static_cast<const double*>(a), static_cast<const double*>(b), n);
    }
    if (dtype == DType::kFloat32) {
      return DotKernel(static_cast<const float*>(a), static_cast<const float*>(b), n);
    }
    return Unsupported("dot", dtype);
  }

  Status Gemm(DType dtype, GemmMath math, int64_t m, int64_t n, int64_t k, const void* a,
              const void* b, void* c) override {
    if (math == GemmMath::kTf32) {
      return Status::Unavailable(
          "cpu backend: no TF32 GEMM (TF32 is a tensor-core format of NVIDIA GPUs)");
    }
    if (dtype == DType::kFloat64) {
      cblas_dgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, m, n, k, 1.0,
                  static_cast<const double*>(a), k, static_cast<const double*>(b), n, 0.0,
                  static_cast<double*>(c), n);
      return Status::Ok();
    }
    if (dtype == DType::kFloat32) {
      cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, m, n, k, 1.0f,
                  static_cast<const float*>(a), k, static_cast<const float*>(b), n, 0.0f,
                  static_cast<float*>(c), n);
      return Status::Ok();
    }
    if (dtype == DType::kBFloat16) return GemmBf16(m, n, k, a, b, c);
    return Unsupported("GEMM", dtype);
  }

  std::string GemmImplementation(DType dtype, GemmMath math) override {
    if (math == GemmMath::kTf32) return "";
    if (dtype == DType::kFloat64 || dtype == DType::kFloat32) {
      const char* config = openblas_get_config();
      return fmt::format("{} cblas_{}gemm", config != nullptr ? config : "OpenBLAS",
                         dtype == DType::kFloat64 ? 'd' : 's');
    }
    if (dtype == DType::kBFloat16) {
      const dnnl_version_t* v = dnnl_version();
      return fmt::format("oneDNN {}.{}.{} matmul (bf16 x bf16 -> bf16, f32 accumulation, ISA {})",
                         v->major, v->minor, v->patch, IsaName(dnnl::get_effective_cpu_isa()));
    }
    return "";
  }

  Status PhiloxUniform(float* out, std::size_t n, uint64_t seed, uint64_t offset) override {
    if (offset % 4 != 0) {
      return Status::Internal(fmt::format("Philox offset {} is not a multiple of 4", offset));
    }
    using Philox = r123::Philox4x32_R<10>;
    const Philox::key_type key = {{static_cast<uint32_t>(seed), static_cast<uint32_t>(seed >> 32)}};
    const uint64_t first_block = offset / 4;
    const std::ptrdiff_t blocks = static_cast<std::ptrdiff_t>(n / 4);
#pragma omp parallel for schedule(static)
    for (std::ptrdiff_t i = 0; i < blocks; ++i) {
      const uint64_t block = first_block + static_cast<uint64_t>(i);
      const Philox::ctr_type counter = {
          {static_cast<uint32_t>(block), static_cast<uint32_t>(block >> 32), 0, 0}};
      const Philox::ctr_type r = Philox()(counter, key);
      for (int j = 0; j < 4; ++j) out[4 * i + j] = Uniform(r.v[j]);
    }
    if (const std::size_t tail = n % 4; tail != 0) {
      const uint64_t block = first_block + static_cast<uint64_t>(blocks);
      const Philox::ctr_type counter = {
          {static_cast<uint32_t>(block), static_cast<uint32_t>(block >> 32), 0, 0}};
      const Philox::ctr_type r = Philox()(counter, key);
      for (std::size_t j = 0; j < tail; ++j) out[4 * blocks + j] = Uniform(r.v[j]);
    }
    return Status::Ok();
  }

  Status EmptyKernel() override {
    // The barrier keeps the compiler from removing the region: the team is still forked and
    // joined, as a GPU launches an empty grid.
#pragma omp parallel
    { asm volatile("" ::: "memory"); }
    return Status::Ok();
  }

  Status Synchronize() override { return Status::Ok(); }

  Result<double> Time(const std::function<Status()>& work, Queuing) override {
    const auto start = std::chrono::steady_clock::now();
    PARITY_RETURN_IF_ERROR(work());
    auto stop = std::chrono::steady_clock::now();
    if (slowdown_ > 1.0) {
      // An injected slow device (parity fleet collect --inject slow): the work takes
      // `slowdown_` times as long, spent busy as a slower device would be.
      const auto until = start + (stop - start) * slowdown_;
      while ((stop = std::chrono::steady_clock::now()) < until) {
      }
    }
    return std::chrono::duration<double>(stop - start).count();
  }

 private:
  /// PARITY_INJECT_SLOWDOWN, set by parity fleet collect --inject slow:rank=R for that rank.
  const double slowdown_ = [] {
    const char* text = std::getenv("PARITY_INJECT_SLOWDOWN");
    const double f = text == nullptr ? 1.0 : std::strtod(text, nullptr);
    return f > 1.0 && f <= 100.0 ? f : 1.0;
  }();
  static Status Unsupported(std::string_view what, DType dtype) {
    return Status::Unavailable(fmt::format("cpu backend: no {} for {}", what, Name(dtype)));
  }

  // oneDNN's matmul primitive, bf16 × bf16 → bf16 with f32 accumulation; the primitive for the
  // last shape is kept, since creating one costs milliseconds.
  Status GemmBf16(int64_t m, int64_t n, int64_t k, const void* a, const void* b, void* c) {
    try {
      if (!bf16_ || bf16_->shape != std::make_tuple(m, n, k)) {
        Bf16Gemm g;
        g.shape = {m, n, k};
        g.engine = dnnl::engine(dnnl::engine::kind::cpu, 0);
        g.stream = dnnl::stream(g.engine);
        using dt = dnnl::memory::data_type;
        using tag = dnnl::memory::format_tag;
        g.a = dnnl::memory::desc({m, k}, dt::bf16, tag::ab);
        g.b = dnnl::memory::desc({k, n}, dt::bf16, tag::ab);
        g.c = dnnl::memory::desc({m, n}, dt::bf16, tag::ab);
        const dnnl::matmul::desc desc(g.a, g.b, g.c);
        const dnnl::matmul::primitive_desc pd(desc, g.engine);
        const std::string impl = pd.impl_info_str();
        if (impl.find("ref") != std::string::npos) {
          return Status::Unavailable(
              fmt::format("oneDNN has only its reference bfloat16 matmul ({}) on this CPU (ISA {})",
                          impl, IsaName(dnnl::get_effective_cpu_isa())));
        }
        g.primitive = dnnl::matmul(pd);
        bf16_ = std::move(g);
      }
      Bf16Gemm& g = *bf16_;
      dnnl::memory ma(g.a, g.engine, const_cast<void*>(a));
      dnnl::memory mb(g.b, g.engine, const_cast<void*>(b));
      dnnl::memory mc(g.c, g.engine, c);
      g.primitive.execute(g.stream,
                          {{DNNL_ARG_SRC, ma}, {DNNL_ARG_WEIGHTS, mb}, {DNNL_ARG_DST, mc}});
      g.stream.wait();
    } catch (const dnnl::error& e) {
      bf16_.reset();
      return Status::Unavailable(fmt::format("oneDNN bfloat16 matmul: {}", e.what()));
    }
    return Status::Ok();
  }

  struct Bf16Gemm {
    std::tuple<int64_t, int64_t, int64_t> shape;
    dnnl::engine engine;
    dnnl::stream stream;
    dnnl::memory::desc a, b, c;
    dnnl::matmul primitive;
  };
  std::optional<Bf16Gemm> bf16_;
};

}  // namespace

std::unique_ptr<Backend> NewCpuBackend() { return std::make_unique<CpuBackend>(); }

}  // namespace parity::bench
