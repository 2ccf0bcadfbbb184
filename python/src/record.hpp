#pragma once
// The one conversion of a service-layer result record (api::Record, a JSON object) to Python: objects become dicts,
// arrays lists (an array of numbers a float64 numpy array), numbers int or float, null None. The command writes the
// same record as JSON, so the two front ends report the same fields with the same names.
#include <dualgibbs/api/common.hpp>

#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>

#include <string>

namespace dualgibbs::python {

/// `record` as a Python object (see above).
inline pybind11::object to_python(const api::Record& record) {
  namespace py = pybind11;
  switch (record.type()) {
    case api::Record::value_t::object: {
      py::dict d;
      for (const auto& [key, value] : record.items()) d[py::str(key)] = to_python(value);
      return std::move(d);
    }
    case api::Record::value_t::array: {
      bool numbers = !record.empty();
      for (const auto& v : record) numbers = numbers && v.is_number();
      if (numbers) {
        py::array_t<double> a(static_cast<py::ssize_t>(record.size()));
        double* out = a.mutable_data();
        for (const auto& v : record) *out++ = v.get<double>();
        return std::move(a);
      }
      py::list l;
      for (const auto& v : record) l.append(to_python(v));
      return std::move(l);
    }
    case api::Record::value_t::string:
      return py::str(record.get<std::string>());
    case api::Record::value_t::boolean:
      return py::bool_(record.get<bool>());
    case api::Record::value_t::number_integer:
      return py::int_(record.get<long long>());
    case api::Record::value_t::number_unsigned:
      return py::int_(record.get<unsigned long long>());
    case api::Record::value_t::number_float:
      return py::float_(record.get<double>());
    default:
      return py::none();
  }
}

}  // namespace dualgibbs::python
