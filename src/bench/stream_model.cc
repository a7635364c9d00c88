// SPDX-License-Identifier: Apache-2.0
#include "bench/stream_model.h"

#include <array>

namespace parity::bench {
namespace {

constexpr std::array<StreamKernelInfo, 5> kClassic = {{
    {"stream.copy", StreamOp::kCopy, 2},
    {"stream.mul", StreamOp::kMul, 2},
    {"stream.add", StreamOp::kAdd, 3},
    {"stream.triad", StreamOp::kTriad, 3},
    {"stream.dot", std::nullopt, 2},
}};
constexpr StreamKernelInfo kNstream = {"stream.nstream", StreamOp::kNstream, 4};

}  // namespace

std::span<const StreamKernelInfo> ClassicStreamKernels() { return kClassic; }

const StreamKernelInfo& NstreamKernel() { return kNstream; }

std::vector<int> StreamArraysWritten(StreamOp op) {
  switch (op) {
    case StreamOp::kCopy:
    case StreamOp::kAdd:
      return {2};
    case StreamOp::kMul:
      return {1};
    case StreamOp::kTriad:
    case StreamOp::kNstream:
      return {0};
  }
  return {};
}

}  // namespace parity::bench
