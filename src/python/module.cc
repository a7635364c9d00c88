// SPDX-License-Identifier: Apache-2.0
// parity._parity: the Python extension under python/parity. Each function calls the library
// function the CLI's command calls (src/cli/cmd_*.cc) and returns the document that command
// writes with --json, as a string; python/parity wraps it in typed objects. Errors raise
// ParityError with the message the CLI prints after "parity: error: ". The GIL is released
// while parity reads and computes; arrays are read in place (arrays.h).
#include <fmt/format.h>
#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <map>
#include <optional>
#include <string>
#include <variant>
#include <vector>

#include "compare/compare.h"
#include "compare/entries.h"
#include "core/json_util.h"
#include "core/parallel.h"
#include "core/version.h"
#include "explain/explain.h"
#include "inspect/inspect.h"
#include "oracle/replay.h"
#include "python/arrays.h"
#include "quality/quality.h"
#include "rng/philox.h"

namespace py = pybind11;

namespace parity::python {
namespace {

/// A path, or a numpy array with its name and an optional parity dtype over its bits.
struct Input {
  std::optional<std::string> path;
  std::optional<py::array> array;
  std::string name;
  std::optional<std::string> dtype;
};

Input ToInput(const py::handle& object, const std::string& name,
              const std::optional<std::string>& dtype) {
  Input in;
  in.name = name;
  in.dtype = dtype;
  if (py::isinstance<py::str>(object)) {
    in.path = object.cast<std::string>();
  } else if (py::isinstance<py::array>(object)) {
    in.array = py::reinterpret_borrow<py::array>(object);
  } else {
    ThrowIfError(Status::Invalid(name, "expected a path (str) or a numpy array"));
  }
  return in;
}

// Opens an input as a compare side; arrays are viewed in place.
Result<Side> OpenInput(const Input& in) {
  if (in.path) return OpenSide(*in.path);
  return MemorySide(in.name, ArrayTensor(*in.array, in.name, in.dtype));
}

std::string JsonText(const Json& doc) {
  return doc.dump(-1, ' ', false, Json::error_handler_t::replace);
}

// Returns (the --json document, the human-readable report).
py::tuple Compare(const py::handle& a, const py::handle& b, const py::handle& golden,
                  const std::optional<std::string>& a_dtype,
                  const std::optional<std::string>& b_dtype, const std::string& tol,
                  std::optional<int64_t> k, const std::optional<std::string>& compute,
                  const std::vector<std::string>& only, std::optional<double> rtol,
                  std::optional<double> atol, double lambda, double ratio,
                  std::optional<double> tiny, int worst, const std::optional<std::string>& tol_file,
                  const std::string& op) {
  const Input in_a = ToInput(a, "a", a_dtype), in_b = ToInput(b, "b", b_dtype);
  std::optional<Input> in_golden;
  if (!golden.is_none()) in_golden = ToInput(golden, "golden", std::nullopt);
  CompareOptions options;
  options.tolerance.policy = tol;
  options.tolerance.k = k;
  options.tolerance.compute = compute;
  options.tolerance.rtol = rtol;
  options.tolerance.atol = atol;
  options.tolerance.lambda = lambda;
  options.only = only;
  options.ratio = ratio;
  options.tiny = tiny;
  options.worst = worst;
  options.op = op;
  // Views of the arrays are made with the GIL held; `in_*` keep the arrays alive.
  Result<Side> side_a = in_a.array ? OpenInput(in_a) : Result<Side>(Status::Internal(""));
  Result<Side> side_b = in_b.array ? OpenInput(in_b) : Result<Side>(Status::Internal(""));
  std::optional<Result<Side>> side_golden;
  if (in_golden && in_golden->array) side_golden = OpenInput(*in_golden);
  std::string text, human;
  Status status;
  {
    py::gil_scoped_release release;
    status = [&]() -> Status {
      if (tol_file) {
        PARITY_ASSIGN_OR_RETURN(options.rules, LoadToleranceRules(*tol_file));
      }
      if (in_a.path) side_a = OpenInput(in_a);
      PARITY_RETURN_IF_ERROR(side_a.status());
      if (in_b.path) side_b = OpenInput(in_b);
      PARITY_RETURN_IF_ERROR(side_b.status());
      if (in_golden && in_golden->path) side_golden = OpenInput(*in_golden);
      if (side_golden) PARITY_RETURN_IF_ERROR(side_golden->status());
      options.a = side_a->path;
      options.b = side_b->path;
      if (side_golden) options.golden = (*side_golden)->path;
      PARITY_ASSIGN_OR_RETURN(
          CompareReport report,
          CompareSides(options, *side_a, *side_b, side_golden ? &**side_golden : nullptr));
      if (report.tensors.empty()) {
        // The CLI's message for the same case (src/cli/cmd_compare.cc).
        return Status::Invalid("", options.only.empty()
                                       ? "nothing to compare: no tensors found"
                                       : "nothing to compare: --only matched no tensor");
      }
      text = JsonText(CompareReportJson(report));
      human = CompareReportText(report);
      return Status::Ok();
    }();
  }
  ThrowIfError(status);
  return py::make_tuple(py::str(text), py::str(human));
}

py::str InspectPaths(const std::vector<std::string>& paths) {
  Result<Json> doc = Status::Internal("");
  std::string text;
  {
    py::gil_scoped_release release;
    InspectOptions options;
    options.paths = paths;
    doc = RunInspect(options);
    if (doc.ok()) text = JsonText(*doc);
  }
  ThrowIfError(doc.status());
  return py::str(text);
}

py::str InspectArray(const py::array& array, const std::string& name,
                     const std::optional<std::string>& dtype) {
  const Tensor tensor = ArrayTensor(array, name, dtype);
  Result<Json> doc = Status::Internal("");
  std::string text;
  {
    py::gil_scoped_release release;
    doc = InspectTensorJson(tensor);
    if (doc.ok()) text = JsonText(*doc);
  }
  ThrowIfError(doc.status());
  return py::str(text);
}

// Runs `run` without the GIL: its report's JSON text (by `to_json`), or ParityError with its
// status, or with `empty` when the report holds no op (the CLI's message for that case).
template <typename Report, typename Run, typename ToJson>
py::str RunOps(Run run, ToJson to_json, const Status& empty) {
  std::string text;
  Status status;
  {
    py::gil_scoped_release release;
    Result<Report> report = run();
    if (!report.ok()) {
      status = report.status();
    } else if (report->ops.empty()) {
      status = empty;
    } else {
      text = JsonText(to_json(*report));
    }
  }
  ThrowIfError(status);
  return py::str(text);
}

py::str Explain(const std::string& a, const std::string& b, const std::optional<std::string>& name,
                int slowest) {
  ExplainOptions options;
  options.a = a;
  options.b = b;
  options.name = name;
  options.slowest = slowest;
  // src/cli/cmd_explain.cc's message for no records
  return RunOps<ExplainReport>(
      [&] { return RunExplain(options); }, ExplainReportJson,
      Status::Invalid(a, name ? "no record matches --name" : "the dumps hold no records"));
}

py::str Replay(const std::string& dump, std::optional<int64_t> seq,
               const std::optional<std::string>& name) {
  ReplayOptions options;
  options.dump = dump;
  options.seq = seq;
  options.name = name;
  // src/cli/cmd_replay.cc's message for no records
  return RunOps<ReplayReport>([&] { return RunReplay(options); }, ReplayReportJson,
                              Status::Invalid(dump, seq || name ? "no record matches --seq/--name"
                                                                : "the dump holds no records"));
}

// Quality's inputs: a path is read as the CLI reads it, an array (float64, one dimension,
// converted by python/parity) is taken as the values under `name`.
std::string QualityInput(const py::handle& object, const std::string& name,
                         std::map<std::string, std::vector<double>>* values) {
  if (py::isinstance<py::str>(object)) return object.cast<std::string>();
  auto array = py::array_t<double, py::array::c_style | py::array::forcecast>::ensure(object);
  if (!array) ThrowIfError(Status::Invalid(name, "expected a path (str) or a numpy array"));
  (*values)[name] = std::vector<double>(array.data(), array.data() + array.size());
  return name;
}

py::str Quality(const std::string& metric, const py::handle& labels, const py::list& a,
                const py::list& b, double margin, bool relative, int64_t bootstrap, uint64_t seed,
                double threshold, const std::optional<std::string>& column) {
  QualityOptions options;
  options.metric = metric;
  options.margin = margin;
  options.relative = relative;
  options.bootstrap = bootstrap;
  options.seed = seed;
  options.threshold = threshold;
  options.column = column;
  options.labels = QualityInput(labels, "labels", &options.values);
  for (std::size_t i = 0; i < a.size(); ++i) {
    options.a.push_back(
        QualityInput(a[i], a.size() == 1 ? "a" : fmt::format("a[{}]", i), &options.values));
  }
  for (std::size_t i = 0; i < b.size(); ++i) {
    options.b.push_back(
        QualityInput(b[i], b.size() == 1 ? "b" : fmt::format("b[{}]", i), &options.values));
  }
  Result<QualityReport> report = Status::Internal("");
  std::string text;
  {
    py::gil_scoped_release release;
    report = RunQuality(options);
    if (report.ok()) text = JsonText(QualityReportJson(*report));
  }
  ThrowIfError(report.status());
  return py::str(text);
}

py::array Philox(uint64_t seed, uint64_t subsequence, uint64_t offset, int64_t count,
                 const std::string& dist) {
  Result<Tensor> stream = Status::Internal("");
  {
    py::gil_scoped_release release;
    stream = PhiloxStream(seed, subsequence, offset, count, dist);
  }
  ThrowIfError(stream.status());
  return TensorArray(*stream);
}

}  // namespace
}  // namespace parity::python

PYBIND11_MODULE(_parity, m) {
  using namespace parity::python;
  m.doc() = "parity's C++ libraries (python/parity wraps them; see docs/PYTHON.md)";
  m.attr("__version__") = parity::kParityVersion;
  static py::exception<StatusError> error(m, "ParityError", PyExc_ValueError);
  py::register_exception_translator([](std::exception_ptr p) {
    try {
      if (p) std::rethrow_exception(p);
    } catch (const StatusError& e) {
      error(e.status.message().c_str());
    }
  });
  m.def("compare", &Compare, py::arg("a"), py::arg("b"), py::arg("golden"), py::arg("a_dtype"),
        py::arg("b_dtype"), py::arg("tol"), py::arg("k"), py::arg("compute"), py::arg("only"),
        py::arg("rtol"), py::arg("atol"), py::arg("lambda_"), py::arg("ratio"), py::arg("tiny"),
        py::arg("worst"), py::arg("tol_file"), py::arg("op"));
  m.def("inspect_paths", &InspectPaths, py::arg("paths"));
  m.def("inspect_array", &InspectArray, py::arg("array"), py::arg("name"), py::arg("dtype"));
  m.def("explain", &Explain, py::arg("a"), py::arg("b"), py::arg("name"), py::arg("slowest"));
  m.def("replay", &Replay, py::arg("dump"), py::arg("seq"), py::arg("name"));
  m.def("quality", &Quality, py::arg("metric"), py::arg("labels"), py::arg("a"), py::arg("b"),
        py::arg("margin"), py::arg("relative"), py::arg("bootstrap"), py::arg("seed"),
        py::arg("threshold"), py::arg("column"));
  m.def("philox", &Philox, py::arg("seed"), py::arg("subsequence"), py::arg("offset"),
        py::arg("count"), py::arg("dist"));
  m.def("set_threads", &parity::SetThreadCount, py::arg("threads"),
        "Worker threads for parity's parallel loops (0: one per CPU), as the CLI's --threads.");
  m.def("thread_count", &parity::ThreadCount);
}
