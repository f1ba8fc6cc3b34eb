// DTF's three calls (Martsinkevich et al.), for programs already written
// against DTF. Close is Cove's synchronization point, so they are mostly
// bookkeeping: dtf_transfer on a writer publishes the file's data now
// (without waiting for the reader, unlike DTF); on a reader it has nothing
// left to do, since every get has already completed.
#include "files.hpp"

#include <cstdlib>

using namespace cove::pnetcdf;

extern "C" {

// component_name becomes COVE_COMPONENT unless that is set; a config_file
// ending in .toml becomes COVE_PNETCDF_CONFIG unless that is set (DTF's INI
// files are not read: the coupled files are named in the TOML file).
COVE_PNETCDF_API int dtf_init(const char* config_file, const char* component_name) {
  if (component_name != nullptr && *component_name != '\0') setenv("COVE_COMPONENT", component_name, 0);
  if (config_file != nullptr) {
    const std::string path = config_file;
    if (path.size() > 5 && path.compare(path.size() - 5, 5, ".toml") == 0) setenv("COVE_PNETCDF_CONFIG", config_file, 0);
  }
  return 0;
}

COVE_PNETCDF_API int dtf_transfer(const char* filename) {
  if (filename == nullptr) return NC_EINVAL;
  File* f = find_file(std::string(filename));
  if (f == nullptr) return 0;  // not coupled, or not open: nothing to transfer
  if (!f->writer || f->published) return 0;
  if (f->define_mode) return NC_EINDEFINE;
  return publish(*f);
}

COVE_PNETCDF_API int dtf_finalize(void) { return 0; }

}  // extern "C"
