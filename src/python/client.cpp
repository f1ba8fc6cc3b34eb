// cove.Client: the C++ client, with what Python needs on top of it. The
// arrays of put_local pieces and of puts in flight are held here (a strong
// reference, a buffer export and a weak reference, so that numpy refuses
// to resize them) until release() or completion; every blocking call runs
// with the GIL released.
#include "python/args.hpp"
#include "python/arrays.hpp"
#include "python/bindings.hpp"

#include "core/fail.hpp"

#include <cove/client.hpp>

#include <nanobind/stl/function.h>
#include <nanobind/stl/optional.h>
#include <nanobind/stl/pair.h>
#include <nanobind/stl/shared_ptr.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/tuple.h>
#include <nanobind/stl/unique_ptr.h>
#include <nanobind/stl/vector.h>

#include <algorithm>
#include <chrono>
#include <limits>
#include <map>
#include <memory>
#include <set>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

namespace nb = nanobind;
using namespace nb::literals;

namespace cove::python {

using detail::fail;

namespace {

Box region_of(const std::vector<Index>& start, const std::vector<Index>& count) {
  if (start.size() != count.size())
    fail(Code::InvalidArgument, "start has ", start.size(), " dimensions but the ", count.size() == 0 ? "array" : "count",
         " has ", count.size());
  return Box::from_start_count(start, count);
}

// A fill value: bytes of one element, or a value numpy converts to one.
std::vector<std::byte> fill_bytes(const std::string& var, DType dtype, nb::handle fill) {
  nb::bytes raw;
  if (nb::isinstance<nb::bytes>(fill)) {
    raw = nb::borrow<nb::bytes>(fill);
  } else {
    nb::object one = nb::module_::import_("numpy").attr("asarray")(fill, numpy_dtype(dtype));
    if (nb::cast<std::size_t>(one.attr("size")) != 1)
      fail(Code::InvalidArgument, "variable '", var, "': a fill value is one element, not ",
           nb::cast<std::size_t>(one.attr("size")));
    raw = nb::borrow<nb::bytes>(one.attr("tobytes")());
  }
  const auto* at = reinterpret_cast<const std::byte*>(raw.c_str());
  return std::vector<std::byte>(at, at + raw.size());
}

// Keeps an array's memory where it is: the object, a buffer export (a
// bytearray or array.array cannot resize under it) and a weak reference
// (numpy refuses to resize an array that has one, even with refcheck=False).
struct Pin {
  nb::object owner, view, weak;
  explicit Pin(nb::object o) : owner(std::move(o)) {
    PyObject* v = PyMemoryView_FromObject(owner.ptr());
    if (v) view = nb::steal(v); else PyErr_Clear();
    PyObject* w = PyWeakref_NewRef(owner.ptr(), nullptr);
    if (w) weak = nb::steal(w); else PyErr_Clear();
  }
};

// A put_async in flight and the array it reads.
struct AsyncPut {
  PutHandle handle;
  std::optional<Pin> pin;
};

// True once the interpreter is shutting down (threads must not take the GIL).
bool interpreter_gone() {
#if PY_VERSION_HEX >= 0x030D0000
  return !Py_IsInitialized() || Py_IsFinalizing();
#else
  return !Py_IsInitialized() || _Py_IsFinalizing();
#endif
}

// A Python object that may be dropped on a thread without the GIL (the
// subscription thread's copy of the callback).
struct GilObject {
  PyObject* obj;
  explicit GilObject(nb::handle h) : obj(h.inc_ref().ptr()) {}
  GilObject(const GilObject&) = delete;
  GilObject& operator=(const GilObject&) = delete;
  ~GilObject() {
    if (interpreter_gone()) return;  // the interpreter is gone: leak rather than crash
    nb::gil_scoped_acquire gil;
    Py_DECREF(obj);
  }
};

class PySubscription;
std::set<PySubscription*> live_subscriptions;  // under the GIL

class PySubscription {
 public:
  PySubscription(Subscription s, std::string what) : sub_(std::move(s)), what_(std::move(what)) {
    live_subscriptions.insert(this);
  }
  std::string repr() const { return "<cove.Subscription " + what_ + (cancelled_ ? " cancelled>" : ">"); }
  ~PySubscription() {
    live_subscriptions.erase(this);
    cancel();
  }
  PySubscription(const PySubscription&) = delete;
  PySubscription& operator=(const PySubscription&) = delete;
  // Waits for a running callback, which needs the GIL: released meanwhile.
  void cancel() {
    cancelled_ = true;
    nb::gil_scoped_release nogil;
    sub_.cancel();
  }

 private:
  Subscription sub_;
  std::string what_;
  bool cancelled_ = false;
};

class PyClient {
 public:
  explicit PyClient(Client c) : client_(std::move(c)) {}
  ~PyClient() { close(); }
  PyClient(const PyClient&) = delete;
  PyClient& operator=(const PyClient&) = delete;

  // A copy of the handle, taken with the GIL held: a call that releases the
  // GIL keeps its connection alive even if another thread closes meanwhile.
  Client client() const {
    if (!client_) fail(Code::InvalidArgument, "this client is closed");
    return *client_;
  }

  // f(client) with the GIL released, on that copy: every call that may
  // block goes through here.
  template <class F>
  auto call(F&& f) {
    Client cl = client();
    nb::gil_scoped_release nogil;
    return f(cl);
  }

  VariableDefinition definition(const std::string& var, std::int64_t timeout_ms = 0) {
    return call([&](Client& cl) { return cl.definition(var, timeout_ms); });
  }

  // Waits for puts in flight, releases the put_local pieces (each waits for
  // its readers), then disconnects; the arrays are let go only after that.
  void close() {
    if (!client_) return;
    std::vector<PutHandle> in_flight;
    for (auto& p : pending_) in_flight.push_back(p->handle);
    std::vector<std::tuple<std::string, std::uint64_t, Box>> pieces;
    for (auto& [key, held] : local_) pieces.emplace_back(std::get<0>(key), std::get<1>(key), held.box);
    {
      std::optional<Client> last = std::move(client_);
      client_.reset();
      nb::gil_scoped_release nogil;
      for (auto& h : in_flight) {
        try {
          h.wait();
        } catch (...) {
        }
      }
      for (auto& [var, version, box] : pieces) {
        try {
          last->release(var, version, box);
        } catch (...) {
          // The connection is closing: the servers drop its pieces anyway.
        }
      }
      last.reset();
    }
    local_.clear();
    pending_.clear();
  }

  // InvalidArgument unless `given` is the variable's dtype.
  void check_dtype(const std::string& var, DType given, const char* what) {
    const DType held = definition(var).dtype;
    if (!(held == given))
      fail(Code::InvalidArgument, what, " has dtype ", given.name(), " but variable '", var, "' holds ", held.name());
  }

  void put(const std::string& var, VersionArg version_arg, StartArg start_arg, nb::handle array) {
    const std::uint64_t version = version_arg;
    const std::vector<Index> start = start_arg;
    const ArrayView a = import_array(array, false, "array");
    const Box box = region_of(start, a.shape);
    check_dtype(var, a.dtype, "array");
    call([&](Client& cl) { cl.put(var, version, box, a.data, a.bytes, a.layout, a.memory); });
  }

  void put_local(const std::string& var, VersionArg version_arg, StartArg start_arg, nb::handle array) {
    const std::uint64_t version = version_arg;
    const std::vector<Index> start = start_arg;
    const ArrayView a = import_array(array, false, "array");
    const Box box = region_of(start, a.shape);
    check_dtype(var, a.dtype, "array");
    const auto key = std::make_tuple(var, version, box.to_string());
    if (local_.count(key))
      fail(Code::AlreadyExists, "put_local of '", var, "' version ", version, " region ", box.to_string(),
           " is held already; release() it first");
    local_.emplace(key, Held{box, Pin(a.owner)});
    try {
      call([&](Client& cl) { cl.put_local(var, version, box, a.data, a.bytes, a.layout, a.memory); });
    } catch (...) {
      local_.erase(key);
      throw;
    }
  }

  std::size_t release(const std::string& var, VersionArg version_arg, StartArg start, CountArg count) {
    const std::uint64_t version = version_arg;
    const Box box = region_of(start, count);
    const std::size_t dropped = call([&](Client& cl) { return cl.release(var, version, box); });
    local_.erase(std::make_tuple(var, version, box.to_string()));  // no reader copies from it now
    return dropped;
  }

  std::shared_ptr<AsyncPut> put_async(const std::string& var, VersionArg version_arg, StartArg start_arg,
                                      nb::handle array) {
    const std::uint64_t version = version_arg;
    const std::vector<Index> start = start_arg;
    forget_finished();
    const ArrayView a = import_array(array, false, "array");
    const Box box = region_of(start, a.shape);
    check_dtype(var, a.dtype, "array");
    auto p = std::make_shared<AsyncPut>();
    p->pin.emplace(a.owner);
    p->handle = call([&](Client& cl) { return cl.put_async(var, version, box, a.data, a.bytes, a.layout, a.memory); });
    pending_.push_back(p);  // the array stays pinned until the put ends, handle or no handle
    return p;
  }

  nb::object get(const std::string& var, std::optional<std::uint64_t> version, const std::vector<Index>& start,
                 const std::vector<Index>& count, nb::handle dtype, nb::handle out, const std::string& order,
                 std::optional<double> timeout, std::uint64_t* got) {
    const Box box = region_of(start, count);
    std::int64_t ms = timeout_ms(timeout);
    // A reader may come first: the definition is waited for within the
    // timeout, and the data within what is left of it.
    const auto asked = std::chrono::steady_clock::now();
    const VariableDefinition def = definition(var, ms);
    if (ms > 0) {
      const auto spent =
          std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::steady_clock::now() - asked).count();
      ms = std::max<std::int64_t>(1, ms - spent);
    }
    nb::object result, converted_to;
    ArrayView target;
    if (!out.is_none()) {
      if (!dtype.is_none()) fail(Code::InvalidArgument, "give dtype or out, not both (out's dtype is the one read)");
      target = import_array(out, true, "out");
      if (!(target.dtype == def.dtype))
        fail(Code::InvalidArgument, "out has dtype ", target.dtype.name(), " but variable '", var, "' holds ",
             def.dtype.name());
      if (target.shape != count) {
        std::string shape, want;
        for (Index e : target.shape) shape += (shape.empty() ? "" : ", ") + std::to_string(e);
        for (Index e : count) want += (want.empty() ? "" : ", ") + std::to_string(e);
        fail(Code::InvalidArgument, "out has shape (", shape, ") but count is (", want, ")");
      }
      result = nb::borrow(out);
    } else {
      if (order != "C" && order != "F") fail(Code::InvalidArgument, "order = '", order, "' must be 'C' or 'F'");
      if (!dtype.is_none()) {
        const DType wanted = dtype_of(dtype);
        if (!(wanted == def.dtype)) converted_to = numpy_dtype(wanted);
      }
      nb::list shape;
      for (Index e : count) shape.append(e);
      nb::object empty = nb::module_::import_("numpy").attr("empty");
      result = empty(nb::tuple(shape), "dtype"_a = numpy_dtype(def.dtype), "order"_a = order);
      target = import_array(result, true, "result");
    }
    const std::uint64_t v = call([&](Client& cl) {
      if (!version) return cl.get_latest(var, box, target.data, target.bytes, ms, target.layout, target.memory);
      cl.get(var, *version, box, target.data, target.bytes, ms, target.layout, target.memory);
      return *version;
    });
    if (got) *got = v;
    if (converted_to.is_valid()) result = result.attr("astype")(converted_to, "order"_a = order);
    return result;
  }

  std::unique_ptr<PySubscription> subscribe(const std::string& var, nb::handle region, nb::handle callback) {
    if (!PyCallable_Check(callback.ptr()))
      throw nb::type_error(("callback must be callable, not " + std::string(nb::type_name(callback.type()).c_str())).c_str());
    if (PyUnicode_Check(region.ptr()) || !PySequence_Check(region.ptr()) || PySequence_Size(region.ptr()) != 2) {
      PyErr_Clear();
      fail(Code::InvalidArgument, "region must be a pair (start, count), not ", nb::type_name(region.type()).c_str(), " ",
           nb::cast<std::string>(nb::repr(region)));
    }
    const Box box = region_of(to_extents(region[0], "region start"), to_extents(region[1], "region count"));
    auto fn = std::make_shared<GilObject>(callback);
    auto notify = [fn](const std::string& name, std::uint64_t version) {
      if (interpreter_gone()) return;
      nb::gil_scoped_acquire gil;
      try {
        nb::handle(fn->obj)(name, version);
      } catch (nb::python_error& e) {
        // The callback's own exception: reported with its traceback, and
        // the subscription goes on.
        e.discard_as_unraisable("cove: subscription callback");
      } catch (const std::exception& e) {
        PyErr_SetString(PyExc_RuntimeError, e.what());
        PyErr_WriteUnraisable(fn->obj);
      }
    };
    return std::make_unique<PySubscription>(call([&](Client& cl) { return cl.subscribe(var, box, notify); }),
                                            "'" + var + "' " + box.to_string());
  }

  // A server index from Python (an int that may be negative) for put_on
  // and become_worker, which check the upper bound themselves.
  static std::size_t server_index(IntArg arg, const char* call) {
    const std::int64_t server = arg.get("server", std::numeric_limits<std::int64_t>::min(),
                                        std::numeric_limits<std::int64_t>::max());
    if (server < 0) fail(Code::OutOfRange, call, ": server ", server, " is not a server index (0 or more)");
    return static_cast<std::size_t>(server);
  }

  void put_on(IntArg server, const std::string& var, VersionArg version_arg, StartArg start_arg,
              nb::handle array) {
    const std::uint64_t version = version_arg;
    const std::vector<Index> start = start_arg;
    const std::size_t on = server_index(server, "put_on");
    const ArrayView a = import_array(array, false, "array");
    const Box box = region_of(start, a.shape);
    check_dtype(var, a.dtype, "array");
    call([&](Client& cl) { cl.put_on(on, var, version, box, a.data, a.bytes, a.layout, a.memory); });
  }

  std::size_t put_placed(const std::string& var, VersionArg version_arg, StartArg start_arg,
                         nb::handle array) {
    const std::uint64_t version = version_arg;
    const std::vector<Index> start = start_arg;
    const ArrayView a = import_array(array, false, "array");
    const Box box = region_of(start, a.shape);
    check_dtype(var, a.dtype, "array");
    return call([&](Client& cl) { return cl.put_placed(var, version, box, a.data, a.bytes, a.layout, a.memory); });
  }

  std::size_t held_locally() const { return local_.size(); }

  std::string repr() const {
    if (!client_) return "<cove.Client closed>";
    const auto servers = client_->servers();
    std::string names;
    for (const auto& a : servers) names += (names.empty() ? "" : ", ") + a;
    return "<cove.Client of " + std::to_string(servers.size()) + (servers.size() == 1 ? " server " : " servers ") +
           names + ">";
  }

  std::size_t pending_puts() {
    forget_finished();
    return pending_.size();
  }

 private:
  struct Held {
    Box box;
    Pin pin;
  };
  void forget_finished() {
    std::erase_if(pending_, [](const std::shared_ptr<AsyncPut>& p) { return p->handle.test(); });
  }

  std::optional<Client> client_;
  std::map<std::tuple<std::string, std::uint64_t, std::string>, Held> local_;
  std::vector<std::shared_ptr<AsyncPut>> pending_;
};

}  // namespace

void bind_client(nb::module_& m) {
  nb::class_<AsyncPut>(m, "PutHandle", "The completion of a put_async(); the client keeps its array until it ends.")
      .def("__repr__",
           [](AsyncPut& p) { return std::string("<cove.PutHandle ") + (p.handle.test() ? "ended>" : "in flight>"); })
      .def("test", [](AsyncPut& p) { return p.handle.test(); }, "True once the put has ended (done or failed); never blocks.")
      .def(
          "wait",
          [](AsyncPut& p) {
            PutHandle h = p.handle;
            nb::gil_scoped_release nogil;
            h.wait();
          },
          "Blocks until the put has ended; raises what the put raised.");

  nb::class_<PySubscription>(m, "Subscription",
                             "A standing interest in a region (Client.subscribe). A context manager: leaving it cancels.")
      .def("cancel", &PySubscription::cancel,
           "Stops the callbacks; waits for a running one to return (do not call it from inside the callback).")
      .def("__repr__", [](PySubscription& s) { return s.repr(); })
      .def("__enter__", [](nb::handle self) { return nb::borrow(self); })
      .def("__exit__", [](PySubscription& s, nb::args) { s.cancel(); });

  m.def("_cancel_all_subscriptions", [] {
    for (auto* s : std::vector<PySubscription*>(live_subscriptions.begin(), live_subscriptions.end())) s->cancel();
  });

  nb::class_<PyClient>(m, "Client", "A connection to a Cove server group; see cove.connect().")
      .def_static(
          "_connect",
          [](const std::string& target, std::optional<double> timeout, const std::string& secret, bool group_started) {
            ConnectOptions o;
            o.timeout_ms = timeout_ms(timeout, "connect timeout");
            o.secret = secret;
            o.group_started = group_started;
            std::optional<Client> c;
            {
              nb::gil_scoped_release nogil;
              c = Client::connect(target, o);
            }
            return std::make_unique<PyClient>(std::move(*c));
          },
          "target"_a, "timeout"_a.none(), "secret"_a, "group_started"_a)
      .def("close", &PyClient::close,
           "Waits for puts in flight, releases this client's put_local pieces (waiting for their readers) and "
           "disconnects. Idempotent; the client is unusable afterwards.")
      .def("__repr__", [](PyClient& c) { return c.repr(); })
      .def("__enter__", [](nb::handle self) { return nb::borrow(self); })
      .def("__exit__", [](PyClient& c, nb::args) { c.close(); })
      .def(
          "define",
          [](PyClient& c, const std::string& name, nb::handle dtype, nb::handle shape_arg, nb::handle ndim_arg,
             std::optional<std::string> reorg, std::optional<std::vector<std::string>> layouts, nb::handle fill) {
            const DType dt = dtype_of(dtype);
            std::optional<std::vector<Index>> shape;
            if (!shape_arg.is_none()) shape = to_extents(shape_arg, "shape");
            std::optional<int> ndim;
            if (!ndim_arg.is_none()) ndim = static_cast<int>(to_int(ndim_arg, "ndim", 1, kMaxDims));
            if (!shape && !ndim) fail(Code::InvalidArgument, "define('", name, "'): give shape or ndim");
            const int n = ndim ? *ndim : static_cast<int>(shape->size());
            VariableOptions o;
            if (reorg) o.reorg = parse_reorg(*reorg);
            if (layouts)
              for (const auto& l : *layouts) o.layouts.push_back(Layout::parse(l));
            if (!fill.is_none()) o.fill = fill_bytes(name, dt, fill);
            const std::vector<Index> extents = shape.value_or(std::vector<Index>{});
            c.call([&](Client& cl) { cl.define(name, dt, n, extents, o); });
          },
          "name"_a, "dtype"_a, "shape"_a = nb::none(), nb::kw_only(), "ndim"_a = nb::none(), "reorg"_a = nb::none(),
          "layouts"_a = nb::none(), "fill"_a = nb::none(),
          "Defines a variable (again with the same definition: no-op; another: InvalidArgument). fill: what cells "
          "of a sealed version that no put covered read as: a value numpy converts to one element of dtype, or "
          "bytes of its size.")
      .def(
          "seal",
          [](PyClient& c, const std::string& var, VersionArg version_arg) {
            const std::uint64_t version = version_arg;
            return c.call([&](Client& cl) { return cl.seal(var, version); });
          },
          "var"_a, "version"_a,
          "Seals a version on every server: gets of it never wait (uncovered cells read as the fill value, or "
          "NotFound without one) and puts into it raise InvalidArgument. Returns whether it was sealed already.")
      .def(
          "derive",
          [](PyClient& c, nb::handle vars, VersionArg from_arg, VersionArg to_arg) {
            const std::uint64_t from = from_arg, to = to_arg;
            std::vector<std::string> names;
            if (nb::isinstance<nb::str>(vars))
              names.push_back(nb::cast<std::string>(vars));
            else
              names = nb::cast<std::vector<std::string>>(vars);
            return c.call([&](Client& cl) { return cl.derive(names, from, to); });
          },
          "vars"_a, "source"_a, "version"_a,
          "Version `version` of each variable in `vars` (a name or a list of names) starts as version `source`, "
          "sharing its pieces without copying; puts into it then override them. All or nothing. Returns the "
          "pieces shared.")
      .def("put", &PyClient::put, "var"_a, "version"_a, "start"_a, "array"_a,
           "Stores a copy of `array` (any dense axis order) at `start`; the array may be reused on return.")
      .def("put_local", &PyClient::put_local, "var"_a, "version"_a, "start"_a, "array"_a,
           "Indexes `array` where it is: readers copy from it. The client holds it (it cannot be resized) until "
           "release().")
      .def("release", &PyClient::release, "var"_a, "version"_a, "start"_a, "count"_a,
           "Withdraws a put_local piece once no reader copies from it; returns the pieces the servers dropped.")
      .def("put_async", &PyClient::put_async, "var"_a, "version"_a, "start"_a, "array"_a,
           "Like put() but returns a PutHandle at once; the client keeps the array until the put ends.")
      .def(
          "get",
          [](PyClient& c, const std::string& var, VersionArg version, StartArg start, CountArg count, nb::handle dtype,
             nb::handle out, const std::string& order, std::optional<double> timeout) {
            return c.get(var, static_cast<std::uint64_t>(version), start, count, dtype, out, order, timeout, nullptr);
          },
          "var"_a, "version"_a, "start"_a, "count"_a, "dtype"_a = nb::none(), "out"_a = nb::none(), "order"_a = "C",
          "timeout"_a = nb::none(),
          "The region (start, count) of `version` as a new numpy array in `order` ('C' or 'F'), converted to "
          "`dtype` if given; or written into `out` (its dtype the variable's, its shape `count`, any dense axis "
          "order). timeout in seconds: 0 answers at once (NotFound if not covered), None waits as long as it "
          "takes, else Timeout after it.")
      .def(
          "get_latest",
          [](PyClient& c, const std::string& var, StartArg start, CountArg count, nb::handle dtype, nb::handle out,
             const std::string& order, std::optional<double> timeout) {
            std::uint64_t v = 0;
            nb::object a = c.get(var, std::nullopt, start, count, dtype, out, order, timeout, &v);
            return nb::make_tuple(v, a);
          },
          "var"_a, "start"_a, "count"_a, "dtype"_a = nb::none(), "out"_a = nb::none(), "order"_a = "C",
          "timeout"_a = nb::none(), "(version, array): get() of the newest version covering the region.")
      .def("subscribe", &PyClient::subscribe, "var"_a, "region"_a, "callback"_a,
           "Calls callback(var, version), with the GIL, on the subscription's thread, for new versions covering "
           "region = (start, count). An exception in the callback is reported through sys.unraisablehook and the "
           "subscription goes on.")
      .def(
          "_steps",
          [](PyClient& c, std::vector<std::string> vars, nb::handle regions, std::uint64_t stride, bool newest,
             std::optional<std::uint64_t> after) {
            std::vector<Box> boxes;
            if (!regions.is_none())
              for (nb::handle r : regions)
                boxes.push_back(region_of(to_extents(r[0], "start"), to_extents(r[1], "count")));
            StepOptions o;
            o.stride = stride;
            o.newest = newest;
            o.after = after;
            return c.client().steps(std::move(vars), std::move(boxes), o);
          },
          "vars"_a, "regions"_a.none(), "stride"_a, "newest"_a, "after"_a.none())
      .def(
          "end_steps",
          [](PyClient& c, nb::handle vars, nb::handle last) {
            std::vector<std::string> names;
            if (nb::isinstance<nb::str>(vars))
              names.push_back(nb::cast<std::string>(vars));
            else
              names = nb::cast<std::vector<std::string>>(vars);
            std::optional<std::uint64_t> l;
            if (!last.is_none()) l = to_version(last, "last");
            c.call([&](Client& cl) { cl.end_steps(names, l); });
          },
          "vars"_a, "last"_a = nb::none(),
          "Ends the stream of `vars` (a name or a list of names): readers' steps() yield the steps up to `last` "
          "(None: each variable's newest version now) and then stop. Call it after the last step's puts.")
      .def(
          "put_meta",
          [](PyClient& c, const std::string& name, VersionArg version_arg, nb::handle data) {
            const std::uint64_t version = version_arg;
            Py_buffer view;
            if (PyObject_GetBuffer(data.ptr(), &view, PyBUF_C_CONTIGUOUS) != 0) {
              PyErr_Clear();
              throw nb::type_error(("metadata must be bytes or a contiguous buffer, not " +
                                    std::string(nb::type_name(data.type()).c_str()))
                                       .c_str());
            }
            std::vector<std::byte> bytes(static_cast<const std::byte*>(view.buf),
                                         static_cast<const std::byte*>(view.buf) + view.len);
            PyBuffer_Release(&view);
            c.call([&](Client& cl) { cl.put_meta(name, version, bytes); });
          },
          "name"_a, "version"_a, "data"_a, "Stores a small blob (bytes or any contiguous buffer, at most 1 MiB).")
      .def(
          "_get_meta",
          [](PyClient& c, const std::string& name, int mode, VersionArg version_arg, std::optional<double> timeout) {
            const std::uint64_t version = version_arg;
            const std::int64_t ms = timeout_ms(timeout);
            const Metadata md = c.call([&](Client& cl) {
              return mode == 0 ? cl.get_meta(name, version, ms)
                               : mode == 1 ? cl.get_meta_next(name, version, ms) : cl.get_meta_latest(name, ms);
            });
            return std::make_pair(md.version, nb::bytes(reinterpret_cast<const char*>(md.data.data()), md.data.size()));
          },
          "name"_a, "mode"_a, "version"_a, "timeout"_a.none())
      .def(
          "lock_read",
          [](PyClient& c, const std::string& name, const std::vector<Index>& start, const std::vector<Index>& count,
             double timeout) {
            const std::int64_t ms = timeout_ms(timeout);
            c.call([&](Client& cl) { cl.lock_read(name, start, count, ms); });
          },
          "name"_a, "start"_a = std::vector<Index>{}, "count"_a = std::vector<Index>{}, "timeout"_a = 30.0,
          "Takes a shared lock on `name`, or on the region (start, count) of it; waits up to `timeout` seconds "
          "(0: only if free now), then raises Timeout. The lock lasts until unlock() or until the client closes.")
      .def(
          "lock_write",
          [](PyClient& c, const std::string& name, const std::vector<Index>& start, const std::vector<Index>& count,
             double timeout) {
            const std::int64_t ms = timeout_ms(timeout);
            c.call([&](Client& cl) { cl.lock_write(name, start, count, ms); });
          },
          "name"_a, "start"_a = std::vector<Index>{}, "count"_a = std::vector<Index>{}, "timeout"_a = 30.0,
          "Takes an exclusive lock, as lock_read() does a shared one.")
      .def(
          "unlock",
          [](PyClient& c, const std::string& name, const std::vector<Index>& start, const std::vector<Index>& count) {
            c.call([&](Client& cl) { cl.unlock(name, start, count); });
          },
          "name"_a, "start"_a = std::vector<Index>{}, "count"_a = std::vector<Index>{},
          "Releases this client's lock on exactly that region. NotFound when nobody holds it, PermissionDenied "
          "when another client does.")
      .def("put_on", &PyClient::put_on, "server"_a, "var"_a, "version"_a, "start"_a, "array"_a,
           "put() onto server `server` (an index into `servers`) instead of the one the sharding names; readers "
           "find it wherever it is. OutOfRange for an index outside the group.")
      .def("put_placed", &PyClient::put_placed, "var"_a, "version"_a, "start"_a, "array"_a,
           "put() onto the server the group's placement component (server 0) chooses by the variable's policy; "
           "when placement fails or is off for the variable, where put() puts it (never lost). Returns the index "
           "of the server it went to.")
      .def(
          "task_done",
          [](PyClient& c, const std::string& var, StartArg start, CountArg count, double seconds) {
            const Box box = region_of(start, count);
            c.call([&](Client& cl) { cl.task_done(var, box, seconds); });
          },
          "var"_a, "start"_a, "count"_a, "seconds"_a,
          "Reports to the placement component that the consumer task reading the region (start, count) of `var` "
          "ran `seconds`. InvalidArgument for a negative or non-finite time.")
      .def(
          "placements",
          [](PyClient& c, IntArg max_arg) {
            const auto max = static_cast<std::size_t>(max_arg.get("max", 0, std::numeric_limits<std::int64_t>::max()));
            const auto decisions = c.call([&](Client& cl) { return cl.placements(max); });
            nb::list out;
            for (const PlacementDecision& d : decisions) {
              std::vector<Index> start(d.box.lo.begin(), d.box.lo.begin() + d.box.ndim), count;
              for (int i = 0; i < d.box.ndim; ++i) count.push_back(d.box.count(i));
              nb::dict e;
              e["sequence"] = d.sequence;
              e["var"] = d.var;
              e["start"] = nb::tuple(nb::cast(start));
              e["count"] = nb::tuple(nb::cast(count));
              e["bytes"] = d.bytes;
              e["policy"] = d.policy;
              e["applied"] = d.applied;
              e["server"] = d.server;
              e["slot"] = d.slot;
              e["eet"] = d.eet;
              e["dat"] = d.dat;
              e["eat"] = d.eat;
              e["ect"] = d.ect;
              e["min_ect"] = d.min_ect;
              e["group"] = d.group;
              e["affinity"] = d.affinity;
              e["candidates"] = d.candidates;
              out.append(e);
            }
            return out;
          },
          "max"_a = 16,
          "Server 0's newest `max` (1..1024) placement decisions, oldest first, each a dict with the variable, "
          "start, count, bytes, configured and applied policy, server, slot, eet, dat, eat, ect, min_ect, group, "
          "affinity and candidates (docs/placement.md, \"Decision log\"). InvalidArgument for max 0 or above 1024.")
      .def(
          "monitor_reads", [](PyClient& c, bool on) { c.call([&](Client& cl) { cl.monitor_reads(on); }); }, "on"_a,
          "The paper's task monitor: with on, each get ends the task that read the previous get's region and "
          "reports the time between the two requests as its execution time (task_done); end_read_task() ends the "
          "last one.")
      .def(
          "end_read_task", [](PyClient& c) { c.call([&](Client& cl) { cl.end_read_task(); }); },
          "Ends the task of the last get under monitor_reads: reports the time since that get was asked for.")
      .def(
          "register_dataflow",
          [](PyClient& c, nb::handle path) {
            const std::string p = nb::cast<std::string>(nb::module_::import_("os").attr("fspath")(path));
            c.call([&](Client& cl) { cl.register_dataflow(p); });
          },
          "path"_a,
          "Hands the consumer's dataflow graph (a .json or .toml file, str or os.PathLike) to the placement "
          "component, for the data and hybrid policies. NotFound for a missing file; InvalidArgument naming the "
          "file and the culprit (a cycle, an unknown object, a parse error).")
      .def(
          "_become_worker",
          [](PyClient& c, IntArg server, const std::string& name) {
            const std::size_t s = PyClient::server_index(server, "become_worker");
            const WorkerSlot w = c.call([&](Client& cl) { return cl.become_worker(s, name); });
            return nb::make_tuple(w.slot, w.slots, w.workers);
          },
          "server"_a, "name"_a)
      .def(
          "locate",
          [](PyClient& c, const std::string& var, VersionArg version_arg, StartArg start, CountArg count,
             std::optional<double> timeout) {
            const std::uint64_t version = version_arg;
            const Box box = region_of(start, count);
            const std::int64_t ms = timeout_ms(timeout);
            return c.call([&](Client& cl) { return cl.locate(var, version, box, ms); });
          },
          "var"_a, "version"_a, "start"_a, "count"_a, "timeout"_a = nb::none(),
          "The bytes of the region (start, count) of `version` held by each server, as a list in `servers` order "
          "(put_local pieces count for none). Waits for the version as get() does.")
      .def(
          "bytes_read", [](PyClient& c) { return c.client().bytes_read(); },
          "The bytes this client's gets have read so far from each server, as a list in `servers` order (put_local "
          "pieces read from writers count for none).")
      .def(
          "definition",
          [](PyClient& c, const std::string& var, std::optional<double> timeout) {
            const VariableDefinition d = c.definition(var, timeout_ms(timeout));
            nb::object shape = nb::none();
            if (d.shape) {
              nb::list l;
              for (Index e : d.shape->count()) l.append(e);
              shape = nb::tuple(l);
            }
            return nb::make_tuple(numpy_dtype(d.dtype), d.ndim, shape);
          },
          "var"_a, "timeout"_a.none() = 0.0,
          "(dtype, ndim, shape or None) of a variable, waiting up to `timeout` seconds (None: as long as it "
          "takes) for a writer to define it: Timeout then; with 0, NotFound at once.")
      .def(
          "latest",
          [](PyClient& c, const std::string& var) { return c.call([&](Client& cl) { return cl.latest(var); }); },
          "var"_a)
      .def(
          "remove",
          [](PyClient& c, const std::string& var, VersionArg version_arg) {
            const std::uint64_t version = version_arg;
            return c.call([&](Client& cl) { cl.remove(var, version); });
          },
          "var"_a, "version"_a)
      .def(
          "undefine",
          [](PyClient& c, const std::string& var) { return c.call([&](Client& cl) { return cl.undefine(var); }); },
          "var"_a)
      .def("list",
           [](PyClient& c) { return c.call([&](Client& cl) { return cl.list(); }); })
      .def("stat",
           [](PyClient& c) { return c.call([&](Client& cl) { return cl.stat(); }); })
      .def("stat_each",
           [](PyClient& c) { return c.call([&](Client& cl) { return cl.stat_each(); }); })
      .def("stop_server",
           [](PyClient& c) { return c.call([&](Client& cl) { cl.stop_server(); }); })
      .def_prop_ro("servers", [](PyClient& c) { return c.client().servers(); })
      .def_prop_ro("address", [](PyClient& c) { return c.client().address(); })
      .def_prop_ro("held_locally", &PyClient::held_locally, "How many put_local arrays this client holds until release().")
      .def_prop_ro("pending_puts", &PyClient::pending_puts, "How many put_async calls have not ended yet.");

  m.def(
      "_resolve_target",
      [](const std::string& target, std::optional<double> timeout) {
        ConnectTarget t;
        {
          const std::int64_t ms = timeout_ms(timeout, "connect timeout");
          nb::gil_scoped_release nogil;
          t = Client::resolve_target(target, ms);
        }
        return nb::make_tuple(t.servers, t.secret, t.from_file);
      },
      "target"_a, "timeout"_a.none());
}

}  // namespace cove::python
