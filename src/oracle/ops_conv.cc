// SPDX-License-Identifier: Apache-2.0
// conv1d and conv2d (stride, padding including "same"/"valid", dilation, groups), in float64:
// im2col, then one product per image and group. conv1d runs as conv2d over a height of 1.
// aten's convolution and convolution_backward go through the same geometry.
#include <fmt/format.h>

#include <array>

#include "io/tensor.h"
#include "oracle/kernels.h"

namespace parity::oracle {
namespace {

struct Geometry {
  int64_t batch, channels, height, width;  // input (N, C, H, W)
  int64_t out_channels, kernel_h, kernel_w;
  int64_t stride_h, stride_w, pad_top, pad_left, dilation_h, dilation_w, groups;
  int64_t out_h, out_w;
};

// Padding per side of one spatial dimension: (before, after).
Result<std::pair<int64_t, int64_t>> Padding(const OpCall& call, std::size_t dim, std::size_t dims,
                                            int64_t kernel, int64_t dilation) {
  const auto it = call.attrs.find("padding");
  if (it != call.attrs.end() && it->is_string()) {
    const std::string mode = it->get<std::string>();
    if (mode == "valid") return std::make_pair(int64_t{0}, int64_t{0});
    if (mode == "same") {
      const int64_t total = dilation * (kernel - 1);
      return std::make_pair(total / 2, total - total / 2);
    }
    return Unfit(fmt::format("padding mode '{}'", mode));
  }
  PARITY_ASSIGN_OR_RETURN(std::vector<int64_t> pad, AttrInts(call, "padding", dims, 0));
  return std::make_pair(pad[dim], pad[dim]);
}

// The geometry of a conv1d/conv2d call on input `x` (batched) with weight `w`, checked.
Result<Geometry> GeometryOf(const OpCall& call, const Array& x, const Array& w) {
  const bool one_d = call.op == "conv1d";
  const std::size_t dims = one_d ? 1 : 2;
  PARITY_ASSIGN_OR_RETURN(std::vector<int64_t> stride, AttrInts(call, "stride", dims, 1));
  PARITY_ASSIGN_OR_RETURN(std::vector<int64_t> dilation, AttrInts(call, "dilation", dims, 1));
  PARITY_ASSIGN_OR_RETURN(std::vector<int64_t> groups, AttrInts(call, "groups", 1, 1));
  Geometry g{};
  g.batch = x.shape[0];
  g.channels = x.shape[1];
  g.height = one_d ? 1 : x.shape[2];
  g.width = x.shape.back();
  g.out_channels = w.shape[0];
  g.kernel_h = one_d ? 1 : w.shape[2];
  g.kernel_w = w.shape.back();
  g.stride_h = one_d ? 1 : stride[0];
  g.stride_w = stride.back();
  g.dilation_h = one_d ? 1 : dilation[0];
  g.dilation_w = dilation.back();
  g.groups = groups[0];
  int64_t pad_bottom = 0, pad_right = 0;
  if (!one_d) {
    PARITY_ASSIGN_OR_RETURN(auto ph, Padding(call, 0, dims, g.kernel_h, g.dilation_h));
    g.pad_top = ph.first;
    pad_bottom = ph.second;
  }
  PARITY_ASSIGN_OR_RETURN(auto pw, Padding(call, dims - 1, dims, g.kernel_w, g.dilation_w));
  g.pad_left = pw.first;
  pad_right = pw.second;
  if (g.groups < 1 || g.channels % g.groups != 0 || g.out_channels % g.groups != 0 ||
      w.shape[1] != g.channels / g.groups) {
    return Unfit(fmt::format("weight {} does not fit {} input channels in {} groups",
                             ShapeString(w.shape), g.channels, g.groups));
  }
  if (g.stride_h < 1 || g.stride_w < 1 || g.dilation_h < 1 || g.dilation_w < 1) {
    return Unfit("stride and dilation must be positive");
  }
  constexpr int64_t kLimit = int64_t{1} << 16;  // beyond any real convolution; bounds memory
  for (int64_t v : {g.stride_h, g.stride_w, g.dilation_h, g.dilation_w}) {
    if (v > kLimit) return Unfit(fmt::format("stride or dilation {} is implausibly large", v));
  }
  for (int64_t v : {g.pad_top, pad_bottom, g.pad_left, pad_right}) {
    if (v < 0 || v > kLimit) return Unfit(fmt::format("padding {} out of range", v));
  }
  g.out_h =
      (g.height + g.pad_top + pad_bottom - g.dilation_h * (g.kernel_h - 1) - 1) / g.stride_h + 1;
  g.out_w =
      (g.width + g.pad_left + pad_right - g.dilation_w * (g.kernel_w - 1) - 1) / g.stride_w + 1;
  if (g.out_h < 1 || g.out_w < 1) return Unfit("the kernel is larger than the padded input");
  return g;
}

// Calls f(column row, input index) for every (channel, ky, kx) row and output pixel of image
// n's group `grp`: the input element that pixel's window reads there, or -1 in the padding.
template <typename F>
void ForEachPatch(const Geometry& g, int64_t n, int64_t grp, F&& f) {
  const int64_t cin_g = g.channels / g.groups, pixels = g.out_h * g.out_w;
  for (int64_t c = 0; c < cin_g; ++c) {
    const int64_t plane = ((n * g.channels) + grp * cin_g + c) * g.height * g.width;
    for (int64_t ky = 0; ky < g.kernel_h; ++ky) {
      for (int64_t kx = 0; kx < g.kernel_w; ++kx) {
        const int64_t row = ((c * g.kernel_h + ky) * g.kernel_w + kx) * pixels;
        for (int64_t oy = 0; oy < g.out_h; ++oy) {
          const int64_t iy = oy * g.stride_h - g.pad_top + ky * g.dilation_h;
          for (int64_t ox = 0; ox < g.out_w; ++ox) {
            const int64_t ix = ox * g.stride_w - g.pad_left + kx * g.dilation_w;
            const bool inside = iy >= 0 && iy < g.height && ix >= 0 && ix < g.width;
            f(row + oy * g.out_w + ox, inside ? plane + iy * g.width + ix : -1);
          }
        }
      }
    }
  }
}

// The conv call's input (batched, and whether it was) and weight, checked against its op.
struct ConvOperands {
  Array x;
  const Array* w = nullptr;
  bool unbatched = false;
};

Result<ConvOperands> OperandsOf(const OpCall& call) {
  const std::size_t dims = call.op == "conv1d" ? 1 : 2;
  if (call.inputs.empty()) return Unfit("conv needs an input");
  ConvOperands o{call.inputs[0], call.Param("weight"), false};
  if (o.w == nullptr && call.inputs.size() > 1) o.w = &call.inputs[1];
  if (o.w == nullptr || o.w->shape.size() != dims + 2) return Unfit("conv needs a weight");
  o.unbatched = o.x.shape.size() == dims + 1;
  if (o.unbatched) o.x.shape.insert(o.x.shape.begin(), 1);
  if (o.x.shape.size() != dims + 2) {
    return Unfit(fmt::format("input {} for {}", ShapeString(call.inputs[0].shape), call.op));
  }
  return o;
}

// A conv1d/conv2d call from aten's convolution or convolution_backward arguments.
Result<OpCall> FunctionalConv(const OpCall& call, const Array& x, const Array& w,
                              const Array* bias) {
  PARITY_ASSIGN_OR_RETURN(bool transposed, AttrBool(call, "transposed", false));
  if (transposed) return Unfit("transposed convolution has no float64 replay");
  if (w.shape.size() != 3 && w.shape.size() != 4) {
    return Unfit(fmt::format("a {}-d convolution has no float64 replay",
                             static_cast<int>(w.shape.size()) - 2));
  }
  OpCall conv;
  conv.op = w.shape.size() == 3 ? "conv1d" : "conv2d";
  for (const char* key : {"stride", "padding", "dilation", "groups"}) {
    if (call.attrs.contains(key)) conv.attrs[key] = call.attrs.at(key);
  }
  conv.inputs = {x};
  conv.params = {{"weight", w}};
  if (bias != nullptr) conv.params.emplace_back("bias", *bias);
  return conv;
}

}  // namespace

Outputs Conv(const OpCall& call) {
  PARITY_ASSIGN_OR_RETURN(ConvOperands o, OperandsOf(call));
  const Array& x = o.x;
  const Array* w = o.w;
  PARITY_ASSIGN_OR_RETURN(Geometry g, GeometryOf(call, x, *w));
  const bool one_d = call.op == "conv1d";
  const int64_t cin_g = g.channels / g.groups, cout_g = g.out_channels / g.groups;
  const int64_t patch = cin_g * g.kernel_h * g.kernel_w, pixels = g.out_h * g.out_w;
  std::vector<int64_t> shape = {g.batch, g.out_channels};
  if (!one_d) shape.push_back(g.out_h);
  shape.push_back(g.out_w);
  // out_h and out_w come from attrs (padding up to 2^16): bounded by what was recorded.
  PARITY_RETURN_IF_ERROR(CheckOutputSize(call, 0, g.batch * g.out_channels * pixels));
  Array out = Array::Filled(shape);
  std::vector<double> columns(static_cast<std::size_t>(patch * pixels));
  for (int64_t n = 0; n < g.batch; ++n) {
    for (int64_t grp = 0; grp < g.groups; ++grp) {
      // im2col: one column per output pixel, one row per (channel, ky, kx).
      ForEachPatch(g, n, grp,
                   [&](int64_t at, int64_t from) { columns[at] = from < 0 ? 0.0 : x.data[from]; });
      Gemm(w->data.data() + grp * cout_g * patch, columns.data(),
           out.data.data() + (n * g.out_channels + grp * cout_g) * pixels, cout_g, pixels, patch,
           false);
    }
  }
  const Array* bias = call.Param("bias");
  if (bias == nullptr && call.inputs.size() > 2) bias = &call.inputs[2];
  if (bias != nullptr) {
    if (bias->numel() != g.out_channels) return Unfit("bias size differs from the out channels");
    for (int64_t n = 0; n < g.batch; ++n) {
      for (int64_t c = 0; c < g.out_channels; ++c) {
        double* plane = out.data.data() + (n * g.out_channels + c) * pixels;
        for (int64_t p = 0; p < pixels; ++p) plane[p] += bias->data[c];
      }
    }
  }
  if (o.unbatched) out.shape.erase(out.shape.begin());
  return std::vector<Array>{std::move(out)};
}

// aten::convolution(input, weight, bias, stride, padding, dilation, transposed, output_padding,
// groups): a 1-d or 2-d convolution by the weight's rank; transposed ones have no replay.
Outputs Convolution(const OpCall& call) {
  const Array* x = Arg(call, "input", 0);
  const Array* w = Arg(call, "weight", 1);
  const Array* bias = call.input_args.empty() ? nullptr : Arg(call, "bias", 2);
  if (x == nullptr || w == nullptr) return Unfit("convolution needs an input and a weight");
  PARITY_ASSIGN_OR_RETURN(OpCall conv, FunctionalConv(call, *x, *w, bias));
  return Conv(conv);
}

// convolution_backward(grad_output, input, weight, bias_sizes, stride, padding, dilation,
// transposed, output_padding, groups, output_mask) -> (grad_input, grad_weight, grad_bias),
// those output_mask asks for: per image and group, with the input's columns C and the
// gradient G (out channels × pixels), grad_weight += G·Cᵀ and the columns' gradient Wᵀ·G is
// added back to the input elements it read.
Outputs ConvolutionBackward(const OpCall& call) {
  const Array* grad = Arg(call, "grad_output", 0);
  const Array* x = Arg(call, "input", 1);
  const Array* w = Arg(call, "weight", 2);
  if (grad == nullptr || x == nullptr || w == nullptr) {
    return Unfit("convolution_backward needs grad_output, input and weight");
  }
  PARITY_ASSIGN_OR_RETURN(const auto mask, OutputMask(call));
  PARITY_ASSIGN_OR_RETURN(OpCall conv, FunctionalConv(call, *x, *w, nullptr));
  PARITY_ASSIGN_OR_RETURN(ConvOperands o, OperandsOf(conv));
  PARITY_ASSIGN_OR_RETURN(Geometry g, GeometryOf(conv, o.x, *w));
  const int64_t cin_g = g.channels / g.groups, cout_g = g.out_channels / g.groups;
  const int64_t patch = cin_g * g.kernel_h * g.kernel_w, pixels = g.out_h * g.out_w;
  if (grad->numel() != g.batch * g.out_channels * pixels) {
    return Unfit(
        fmt::format("grad_output {} does not fit the convolution", ShapeString(grad->shape)));
  }
  Array dx = Array::Filled(x->shape), dw = Array::Filled(w->shape),
        db = Array::Filled({g.out_channels});
  std::vector<double> columns(static_cast<std::size_t>(patch * pixels));
  std::vector<double> wt(static_cast<std::size_t>(patch * cout_g));
  for (int64_t grp = 0; grp < g.groups; ++grp) {
    const double* wg = w->data.data() + grp * cout_g * patch;
    for (int64_t co = 0; co < cout_g; ++co) {
      for (int64_t p = 0; p < patch; ++p) wt[p * cout_g + co] = wg[co * patch + p];
    }
    for (int64_t n = 0; n < g.batch; ++n) {
      const double* gg = grad->data.data() + (n * g.out_channels + grp * cout_g) * pixels;
      if (mask[1]) {
        ForEachPatch(g, n, grp, [&](int64_t at, int64_t from) {
          columns[at] = from < 0 ? 0.0 : o.x.data[from];
        });
        Gemm(gg, columns.data(), dw.data.data() + grp * cout_g * patch, cout_g, patch, pixels,
             /*transpose_b=*/true, /*accumulate=*/true);
      }
      if (mask[0]) {
        Gemm(wt.data(), gg, columns.data(), patch, pixels, cout_g, false);
        ForEachPatch(g, n, grp, [&](int64_t at, int64_t from) {
          if (from >= 0) dx.data[from] += columns[at];
        });
      }
    }
  }
  for (int64_t n = 0; n < g.batch; ++n) {
    for (int64_t c = 0; c < g.out_channels; ++c) {
      for (int64_t p = 0; p < pixels; ++p)
        db.data[c] += grad->data[(n * g.out_channels + c) * pixels + p];
    }
  }
  return Masked(mask, std::move(dx), std::move(dw), std::move(db));
}

}  // namespace parity::oracle
