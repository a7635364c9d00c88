// SPDX-License-Identifier: Apache-2.0
// The thin portability layer between the CUDA and HIP runtimes (as BabelStream's and
// PyTorch's hipify do it): one name, gpu*, for each runtime call and type the GPU backends use.
// Device code (launchers.cu) is compiled by nvcc, or by hipcc with PARITY_GPU_HIP; the backend
// classes by the host compiler.
#ifndef PARITY_BENCH_GPU_GPU_RUNTIME_H_
#define PARITY_BENCH_GPU_GPU_RUNTIME_H_

#if defined(PARITY_GPU_HIP)
#if defined(__HIPCC__)
#include <hip/hip_runtime.h>
#else
// Host code (the backend class) is compiled by the host compiler against the runtime's C API.
#ifndef __HIP_PLATFORM_AMD__
#define __HIP_PLATFORM_AMD__
#endif
#include <hip/hip_runtime_api.h>
#endif

#define PARITY_GPU_RUNTIME_NAME "HIP"
#define PARITY_GPU_API_PREFIX "hip"
using gpuError_t = hipError_t;
using gpuStream_t = hipStream_t;
using gpuEvent_t = hipEvent_t;
using gpuDeviceProp = hipDeviceProp_t;
using gpuMemcpyKind = hipMemcpyKind;
inline constexpr gpuError_t gpuSuccess = hipSuccess;
inline constexpr gpuMemcpyKind gpuMemcpyDefault = hipMemcpyDefault;
#define gpuGetDeviceCount hipGetDeviceCount
#define gpuSetDevice hipSetDevice
#define gpuGetDeviceProperties hipGetDeviceProperties
#define gpuDeviceGetAttribute hipDeviceGetAttribute
#define gpuDeviceGetPCIBusId hipDeviceGetPCIBusId
#define gpuDriverGetVersion hipDriverGetVersion
#define gpuRuntimeGetVersion hipRuntimeGetVersion
#define gpuMemGetInfo hipMemGetInfo
#define gpuMalloc hipMalloc
#define gpuFree hipFree
#define gpuHostAlloc hipHostMalloc
#define gpuHostAllocDefault hipHostMallocDefault
#define gpuFreeHost hipHostFree
#define gpuMemcpyAsync hipMemcpyAsync
#define gpuStreamCreateWithFlags hipStreamCreateWithFlags
#define gpuStreamNonBlocking hipStreamNonBlocking
#define gpuStreamDestroy hipStreamDestroy
#define gpuStreamSynchronize hipStreamSynchronize
#define gpuEventCreate hipEventCreate
#define gpuEventDestroy hipEventDestroy
#define gpuEventRecord hipEventRecord
#define gpuEventSynchronize hipEventSynchronize
#define gpuEventElapsedTime hipEventElapsedTime
#define gpuGetLastError hipGetLastError
#define gpuGetErrorName hipGetErrorName
#define gpuGetErrorString hipGetErrorString
#define gpuDevAttrMultiProcessorCount hipDeviceAttributeMultiprocessorCount
#define gpuDevAttrMaxThreadsPerMultiProcessor hipDeviceAttributeMaxThreadsPerMultiProcessor
#define gpuDevAttrClockRate hipDeviceAttributeClockRate
#define gpuDevAttrMemoryClockRate hipDeviceAttributeMemoryClockRate
#define gpuDevAttrGlobalMemoryBusWidth hipDeviceAttributeMemoryBusWidth
#define gpuDevAttrL2CacheSize hipDeviceAttributeL2CacheSize
#define gpuDevAttrEccEnabled hipDeviceAttributeEccEnabled
#define gpuDeviceCanAccessPeer hipDeviceCanAccessPeer
#define gpuDeviceEnablePeerAccess hipDeviceEnablePeerAccess
#define gpuDeviceDisablePeerAccess hipDeviceDisablePeerAccess
#define gpuMemcpyPeerAsync hipMemcpyPeerAsync
inline constexpr gpuError_t gpuErrorPeerAccessAlreadyEnabled = hipErrorPeerAccessAlreadyEnabled;
inline constexpr gpuError_t gpuErrorPeerAccessNotEnabled = hipErrorPeerAccessNotEnabled;
#define gpuStreamWaitEvent hipStreamWaitEvent
#define gpuEventCreateWithFlags hipEventCreateWithFlags
#define gpuEventDisableTiming hipEventDisableTiming
#define gpuHostGetDevicePointer hipHostGetDevicePointer
/// Pinned host memory the device reads while it spins (the held queue's flag): mapped, and
/// coherent so the host's store reaches a running kernel.
#define gpuHostAllocLatch (hipHostMallocMapped | hipHostMallocCoherent)
inline constexpr gpuError_t gpuErrorNoKernelImage = hipErrorNoBinaryForGpu;
#else
#include <cuda_runtime.h>

#define PARITY_GPU_RUNTIME_NAME "CUDA"
#define PARITY_GPU_API_PREFIX "cuda"
using gpuError_t = cudaError_t;
using gpuStream_t = cudaStream_t;
using gpuEvent_t = cudaEvent_t;
using gpuDeviceProp = cudaDeviceProp;
using gpuMemcpyKind = cudaMemcpyKind;
inline constexpr gpuError_t gpuSuccess = cudaSuccess;
inline constexpr gpuMemcpyKind gpuMemcpyDefault = cudaMemcpyDefault;
#define gpuGetDeviceCount cudaGetDeviceCount
#define gpuSetDevice cudaSetDevice
#define gpuGetDeviceProperties cudaGetDeviceProperties
#define gpuDeviceGetAttribute cudaDeviceGetAttribute
#define gpuDeviceGetPCIBusId cudaDeviceGetPCIBusId
#define gpuDriverGetVersion cudaDriverGetVersion
#define gpuRuntimeGetVersion cudaRuntimeGetVersion
#define gpuMemGetInfo cudaMemGetInfo
#define gpuMalloc cudaMalloc
#define gpuFree cudaFree
#define gpuHostAlloc cudaHostAlloc
#define gpuHostAllocDefault cudaHostAllocDefault
#define gpuFreeHost cudaFreeHost
#define gpuMemcpyAsync cudaMemcpyAsync
#define gpuStreamCreateWithFlags cudaStreamCreateWithFlags
#define gpuStreamNonBlocking cudaStreamNonBlocking
#define gpuStreamDestroy cudaStreamDestroy
#define gpuStreamSynchronize cudaStreamSynchronize
#define gpuEventCreate cudaEventCreate
#define gpuEventDestroy cudaEventDestroy
#define gpuEventRecord cudaEventRecord
#define gpuEventSynchronize cudaEventSynchronize
#define gpuEventElapsedTime cudaEventElapsedTime
#define gpuGetLastError cudaGetLastError
#define gpuGetErrorName cudaGetErrorName
#define gpuGetErrorString cudaGetErrorString
#define gpuDevAttrMultiProcessorCount cudaDevAttrMultiProcessorCount
#define gpuDevAttrMaxThreadsPerMultiProcessor cudaDevAttrMaxThreadsPerMultiProcessor
#define gpuDevAttrClockRate cudaDevAttrClockRate
#define gpuDevAttrMemoryClockRate cudaDevAttrMemoryClockRate
#define gpuDevAttrGlobalMemoryBusWidth cudaDevAttrGlobalMemoryBusWidth
#define gpuDevAttrL2CacheSize cudaDevAttrL2CacheSize
#define gpuDevAttrEccEnabled cudaDevAttrEccEnabled
#define gpuDeviceCanAccessPeer cudaDeviceCanAccessPeer
#define gpuDeviceEnablePeerAccess cudaDeviceEnablePeerAccess
#define gpuDeviceDisablePeerAccess cudaDeviceDisablePeerAccess
#define gpuMemcpyPeerAsync cudaMemcpyPeerAsync
inline constexpr gpuError_t gpuErrorPeerAccessAlreadyEnabled = cudaErrorPeerAccessAlreadyEnabled;
inline constexpr gpuError_t gpuErrorPeerAccessNotEnabled = cudaErrorPeerAccessNotEnabled;
#define gpuStreamWaitEvent cudaStreamWaitEvent
#define gpuEventCreateWithFlags cudaEventCreateWithFlags
#define gpuEventDisableTiming cudaEventDisableTiming
#define gpuHostGetDevicePointer cudaHostGetDevicePointer
/// Pinned host memory the device reads while it spins (the held queue's flag).
#define gpuHostAllocLatch cudaHostAllocMapped
inline constexpr gpuError_t gpuErrorNoKernelImage = cudaErrorNoKernelImageForDevice;
#endif

#endif  // PARITY_BENCH_GPU_GPU_RUNTIME_H_
