// cove::Error -> the Python exception of its code (cove._errors, one class
// per row of the status table), with the message without its code prefix.
#pragma once

#include <nanobind/nanobind.h>

namespace cove::python {

// Registers the translator and adds _status_table() to the module: the
// rows (value, name, text) that cove._errors is checked against.
void bind_errors(nanobind::module_& m);

}  // namespace cove::python
