// Everything in Cove's C++ API.
#pragma once

#include <cove/box.hpp>
#include <cove/client.hpp>
#include <cove/dataflow.hpp>
#include <cove/decomposition.hpp>
#include <cove/dtype.hpp>
#include <cove/error.hpp>
#include <cove/layout.hpp>
#include <cove/region_copy.hpp>
#include <cove/reorg.hpp>
#include <cove/server.hpp>
#include <cove/spatial_index.hpp>
