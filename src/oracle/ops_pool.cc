// SPDX-License-Identifier: Apache-2.0
// aten's 2-d pooling over (N, C, H, W) or (C, H, W) inputs, in float64: max_pool2d_with_indices,
// avg_pool2d and _adaptive_avg_pool2d, and the average poolings' backward.
#include <fmt/format.h>

#include <cmath>
#include <limits>
#include <optional>

#include "io/tensor.h"
#include "oracle/kernels.h"

namespace parity::oracle {
namespace {

constexpr int64_t kLimit = int64_t{1} << 16;  // beyond any real pooling window; bounds memory

// The planes (N·C) and the plane size of a 3-d or 4-d input.
struct Planes {
  int64_t count = 0, height = 0, width = 0;
  std::vector<int64_t> leading;  // the output's leading dims: (N, C) or (C)
};

Result<Planes> PlanesOf(const OpCall& call, const Array& x) {
  if (x.shape.size() != 3 && x.shape.size() != 4) {
    return Unfit(fmt::format("{} needs a 3-d or 4-d input, not {}", call.op, ShapeString(x.shape)));
  }
  Planes p;
  p.leading.assign(x.shape.begin(), x.shape.end() - 2);
  p.count = 1;
  for (int64_t d : p.leading) p.count *= d;
  p.height = x.shape[x.shape.size() - 2];
  p.width = x.shape.back();
  return p;
}

// Window geometry of one spatial dim: kernel, stride, padding, dilation, output size.
struct Window {
  int64_t kernel = 1, stride = 1, pad = 0, dilation = 1, out = 0;
};

// torch's pooling output size: floor (or ceil) of the padded extent over the stride, plus
// one, less one where the last window would start in the right padding.
Result<Window> MakeWindow(const OpCall& call, int64_t size, int64_t kernel, int64_t stride,
                          int64_t pad, int64_t dilation, bool ceil_mode) {
  Window w{kernel, stride, pad, dilation, 0};
  for (int64_t v : {kernel, stride, dilation}) {
    if (v < 1 || v > kLimit)
      return Unfit(fmt::format("{}: window value {} out of range", call.op, v));
  }
  if (pad < 0 || pad > kernel / 2) {
    return Unfit(
        fmt::format("{}: padding {} is more than half the kernel {}", call.op, pad, kernel));
  }
  const int64_t extent = size + 2 * pad - dilation * (kernel - 1) - 1;
  if (extent < 0) return Unfit(fmt::format("{}: the window is larger than the input", call.op));
  w.out = (ceil_mode ? (extent + stride - 1) / stride : extent / stride) + 1;
  if (ceil_mode && (w.out - 1) * stride >= size + pad) --w.out;
  return w;
}

// kernel_size, stride (empty: the kernel), padding and dilation attrs for both dims.
Result<std::pair<Window, Window>> Windows(const OpCall& call, const Planes& p, bool dilated) {
  PARITY_ASSIGN_OR_RETURN(std::vector<int64_t> kernel, AttrInts(call, "kernel_size", 2, 1));
  std::vector<int64_t> stride = kernel;
  const auto it = call.attrs.find("stride");
  if (it != call.attrs.end() && !(it->is_array() && it->empty()) && !it->is_null()) {
    PARITY_ASSIGN_OR_RETURN(stride, AttrInts(call, "stride", 2, 1));
  }
  PARITY_ASSIGN_OR_RETURN(std::vector<int64_t> pad, AttrInts(call, "padding", 2, 0));
  std::vector<int64_t> dilation = {1, 1};
  if (dilated) {
    PARITY_ASSIGN_OR_RETURN(dilation, AttrInts(call, "dilation", 2, 1));
  }
  PARITY_ASSIGN_OR_RETURN(bool ceil_mode, AttrBool(call, "ceil_mode", false));
  PARITY_ASSIGN_OR_RETURN(
      Window h, MakeWindow(call, p.height, kernel[0], stride[0], pad[0], dilation[0], ceil_mode));
  PARITY_ASSIGN_OR_RETURN(
      Window w, MakeWindow(call, p.width, kernel[1], stride[1], pad[1], dilation[1], ceil_mode));
  return std::make_pair(h, w);
}

std::vector<int64_t> OutShape(const Planes& p, int64_t oh, int64_t ow) {
  std::vector<int64_t> shape = p.leading;
  shape.push_back(oh);
  shape.push_back(ow);
  return shape;
}

}  // namespace

// -> (output, indices): the first maximum of each window (the last NaN, where there is one),
// its flat index in the plane; padding never wins.
Outputs MaxPool2dWithIndices(const OpCall& call) {
  const Array* x = Arg(call, "self", 0);
  if (x == nullptr) return Unfit("max_pool2d_with_indices needs self");
  PARITY_ASSIGN_OR_RETURN(Planes p, PlanesOf(call, *x));
  PARITY_ASSIGN_OR_RETURN(auto windows, Windows(call, p, /*dilated=*/true));
  const auto& [wh, ww] = windows;
  PARITY_RETURN_IF_ERROR(CheckOutputSize(call, 0, p.count * wh.out * ww.out));
  Array out = Array::Filled(OutShape(p, wh.out, ww.out));
  Array indices = Array::Filled(out.shape);
  for (int64_t n = 0; n < p.count; ++n) {
    const double* plane = x->data.data() + n * p.height * p.width;
    for (int64_t oy = 0; oy < wh.out; ++oy) {
      for (int64_t ox = 0; ox < ww.out; ++ox) {
        double best = -std::numeric_limits<double>::infinity();
        int64_t at = -1;
        for (int64_t ky = 0; ky < wh.kernel; ++ky) {
          const int64_t iy = oy * wh.stride - wh.pad + ky * wh.dilation;
          if (iy < 0 || iy >= p.height) continue;
          for (int64_t kx = 0; kx < ww.kernel; ++kx) {
            const int64_t ix = ox * ww.stride - ww.pad + kx * ww.dilation;
            if (ix < 0 || ix >= p.width) continue;
            const double v = plane[iy * p.width + ix];
            if (at < 0 || v > best || std::isnan(v)) {
              best = v;
              at = iy * p.width + ix;
            }
          }
        }
        const int64_t o = (n * wh.out + oy) * ww.out + ox;
        out.data[o] = best;
        indices.data[o] = static_cast<double>(at);
      }
    }
  }
  return std::vector<Array>{std::move(out), std::move(indices)};
}

namespace {

// One output cell of an average pooling: its window [y0, y1) × [x0, x1), clipped to the input,
// and what its sum is divided by.
struct AvgCell {
  int64_t y0, y1, x0, x1;
  double divisor;
};

struct AvgWindows {
  int64_t out_h = 0, out_w = 0;
  std::vector<AvgCell> cells;  // row-major over (out_h, out_w)
};

// avg_pool2d: divided by divisor_override, else by the window clipped to the padded input
// (count_include_pad) or to the input. _adaptive_avg_pool2d (output_size, or `adaptive_out`
// for its backward): cell o of n covers [floor(o·H/n), ceil((o+1)·H/n)).
Result<AvgWindows> AvgWindowsOf(const OpCall& call, const Planes& p, bool adaptive,
                                std::optional<std::pair<int64_t, int64_t>> adaptive_out) {
  AvgWindows a;
  if (adaptive) {
    std::pair<int64_t, int64_t> size;
    if (adaptive_out) {
      size = *adaptive_out;
    } else {
      PARITY_ASSIGN_OR_RETURN(std::vector<int64_t> s, AttrInts(call, "output_size", 2, 1));
      size = {s[0], s[1]};
    }
    a.out_h = size.first;
    a.out_w = size.second;
    if (a.out_h < 0 || a.out_w < 0 || a.out_h > kLimit || a.out_w > kLimit) {
      return Unfit("output_size out of range");
    }
    // One cell per output position of a plane: no more than the record's output holds.
    PARITY_RETURN_IF_ERROR(CheckOutputSize(call, 0, a.out_h * a.out_w));
    for (int64_t oy = 0; oy < a.out_h; ++oy) {
      const int64_t y0 = oy * p.height / a.out_h,
                    y1 = ((oy + 1) * p.height + a.out_h - 1) / a.out_h;
      for (int64_t ox = 0; ox < a.out_w; ++ox) {
        const int64_t x0 = ox * p.width / a.out_w,
                      x1 = ((ox + 1) * p.width + a.out_w - 1) / a.out_w;
        a.cells.push_back({y0, y1, x0, x1, static_cast<double>((y1 - y0) * (x1 - x0))});
      }
    }
    return a;
  }
  PARITY_ASSIGN_OR_RETURN(auto windows, Windows(call, p, /*dilated=*/false));
  const auto& [wh, ww] = windows;
  PARITY_ASSIGN_OR_RETURN(bool include_pad, AttrBool(call, "count_include_pad", true));
  PARITY_ASSIGN_OR_RETURN(double divisor_override, AttrNumber(call, "divisor_override", 0.0));
  a.out_h = wh.out;
  a.out_w = ww.out;
  for (int64_t oy = 0; oy < wh.out; ++oy) {
    int64_t y0 = oy * wh.stride - wh.pad, y1 = std::min(y0 + wh.kernel, p.height + wh.pad);
    const int64_t padded_h = y1 - y0;
    y0 = std::max<int64_t>(y0, 0);
    y1 = std::min(y1, p.height);
    for (int64_t ox = 0; ox < ww.out; ++ox) {
      int64_t x0 = ox * ww.stride - ww.pad, x1 = std::min(x0 + ww.kernel, p.width + ww.pad);
      const int64_t padded_w = x1 - x0;
      x0 = std::max<int64_t>(x0, 0);
      x1 = std::min(x1, p.width);
      const double divisor = divisor_override != 0.0 ? divisor_override
                             : include_pad           ? static_cast<double>(padded_h * padded_w)
                                                     : static_cast<double>((y1 - y0) * (x1 - x0));
      a.cells.push_back({y0, y1, x0, x1, divisor});
    }
  }
  return a;
}

}  // namespace

// avg_pool2d and _adaptive_avg_pool2d: each window's sum over its divisor.
Outputs AvgPool2d(const OpCall& call) {
  const Array* x = Arg(call, "self", 0);
  if (x == nullptr) return Unfit(fmt::format("{} needs self", call.op));
  PARITY_ASSIGN_OR_RETURN(Planes p, PlanesOf(call, *x));
  PARITY_ASSIGN_OR_RETURN(AvgWindows a,
                          AvgWindowsOf(call, p, call.op.starts_with("_adaptive"), std::nullopt));
  PARITY_RETURN_IF_ERROR(CheckOutputSize(call, 0, p.count * a.out_h * a.out_w));
  Array out = Array::Filled(OutShape(p, a.out_h, a.out_w));
  const std::size_t cells = a.cells.size();
  for (int64_t n = 0; n < p.count; ++n) {
    const double* plane = x->data.data() + n * p.height * p.width;
    for (std::size_t o = 0; o < cells; ++o) {
      const AvgCell& c = a.cells[o];
      double sum = 0.0;
      for (int64_t iy = c.y0; iy < c.y1; ++iy) {
        for (int64_t ix = c.x0; ix < c.x1; ++ix) sum += plane[iy * p.width + ix];
      }
      out.data[static_cast<std::size_t>(n) * cells + o] = sum / c.divisor;
    }
  }
  return std::vector<Array>{std::move(out)};
}

// avg_pool2d_backward(grad_output, self, ...) and _adaptive_avg_pool2d_backward(grad_output,
// self): each gradient over its window's divisor, added to every input cell of the window.
Outputs AvgPool2dBackward(const OpCall& call) {
  const Array* g = Arg(call, "grad_output", 0);
  const Array* x = Arg(call, "self", 1);
  if (g == nullptr || x == nullptr)
    return Unfit(fmt::format("{} needs grad_output and self", call.op));
  PARITY_ASSIGN_OR_RETURN(Planes p, PlanesOf(call, *x));
  const bool adaptive = call.op.starts_with("_adaptive");
  if (g->shape.size() != x->shape.size()) return Unfit("grad_output differs in rank from self");
  const std::pair<int64_t, int64_t> out_size = {g->shape[g->shape.size() - 2], g->shape.back()};
  PARITY_ASSIGN_OR_RETURN(AvgWindows a, AvgWindowsOf(call, p, adaptive, out_size));
  if (OutShape(p, a.out_h, a.out_w) != g->shape)
    return Unfit("grad_output does not fit the pooling");
  Array out = Array::Filled(x->shape);
  const std::size_t cells = a.cells.size();
  for (int64_t n = 0; n < p.count; ++n) {
    double* plane = out.data.data() + n * p.height * p.width;
    for (std::size_t o = 0; o < cells; ++o) {
      const AvgCell& c = a.cells[o];
      const double v = g->data[static_cast<std::size_t>(n) * cells + o] / c.divisor;
      for (int64_t iy = c.y0; iy < c.y1; ++iy) {
        for (int64_t ix = c.x0; ix < c.x1; ++ix) plane[iy * p.width + ix] += v;
      }
    }
  }
  return std::vector<Array>{std::move(out)};
}

}  // namespace parity::oracle
