#include "files.hpp"

#include <nlohmann/json.hpp>

namespace cove::pnetcdf {
namespace {

using nlohmann::json;

constexpr char kHex[] = "0123456789abcdef";

json att_json(const Att& a) {
  std::string hex;
  hex.reserve(a.data.size() * 2);
  for (char c : a.data) {
    hex += kHex[(static_cast<unsigned char>(c) >> 4) & 15];
    hex += kHex[static_cast<unsigned char>(c) & 15];
  }
  return {{"name", a.name}, {"type", a.type}, {"len", a.len}, {"data", hex}};
}

Att att_of(const json& j) {
  Att a{j.at("name").get<std::string>(), j.at("type").get<nc_type>(), j.at("len").get<MPI_Offset>(), {}};
  const auto hex = j.at("data").get<std::string>();
  auto nibble = [](char c) { return c <= '9' ? c - '0' : c - 'a' + 10; };
  for (std::size_t i = 0; i + 1 < hex.size(); i += 2) a.data.push_back(static_cast<char>(nibble(hex[i]) << 4 | nibble(hex[i + 1])));
  return a;
}

}  // namespace

std::string Schema::serialize() const {
  json j{{"cmode", cmode}, {"unlimdim", unlimdim}, {"fill_mode", fill_mode}, {"numrecs", numrecs}, {"writer", writer}};
  if (layout.xsz > 0) {
    j["layout"] = {{"xsz", layout.xsz}, {"begin_var", layout.begin_var}, {"begin_rec", layout.begin_rec},
                   {"recsize", layout.recsize}, {"begin", layout.begin}};
  }
  j["dims"] = json::array();
  for (const auto& d : dims) j["dims"].push_back({{"name", d.name}, {"len", d.len}});
  j["atts"] = json::array();
  for (const auto& a : atts) j["atts"].push_back(att_json(a));
  j["vars"] = json::array();
  for (const auto& v : vars) {
    json jv{{"name", v.name}, {"type", v.type}, {"dims", v.dims}, {"no_fill", v.no_fill}, {"atts", json::array()}};
    if (!v.key.empty()) jv["key"] = v.key;
    if (!v.fill_tag.empty()) jv["fill_tag"] = v.fill_tag;
    for (const auto& a : v.atts) jv["atts"].push_back(att_json(a));
    j["vars"].push_back(std::move(jv));
  }
  return j.dump();
}

Schema Schema::parse(const std::string& text) {
  const json j = json::parse(text);
  Schema s;
  s.cmode = j.at("cmode").get<int>();
  s.unlimdim = j.at("unlimdim").get<int>();
  s.numrecs = j.at("numrecs").get<MPI_Offset>();
  s.fill_mode = j.value("fill_mode", NC_NOFILL);
  s.writer = j.at("writer").get<std::uint64_t>();
  if (j.contains("layout")) {
    const auto& l = j.at("layout");
    s.layout.xsz = l.at("xsz").get<MPI_Offset>();
    s.layout.begin_var = l.at("begin_var").get<MPI_Offset>();
    s.layout.begin_rec = l.at("begin_rec").get<MPI_Offset>();
    s.layout.recsize = l.at("recsize").get<MPI_Offset>();
    s.layout.begin = l.at("begin").get<std::vector<MPI_Offset>>();
  }
  for (const auto& d : j.at("dims")) s.dims.push_back({d.at("name").get<std::string>(), d.at("len").get<MPI_Offset>()});
  for (const auto& a : j.at("atts")) s.atts.push_back(att_of(a));
  for (const auto& v : j.at("vars")) {
    Var var{v.at("name").get<std::string>(), v.at("type").get<nc_type>(), v.at("dims").get<std::vector<int>>(), {}, true, {}, {}};
    var.no_fill = v.value("no_fill", true);
    var.key = v.value("key", std::string());
    var.fill_tag = v.value("fill_tag", std::string());
    for (const auto& a : v.at("atts")) var.atts.push_back(att_of(a));
    s.vars.push_back(std::move(var));
  }
  return s;
}

}  // namespace cove::pnetcdf
