#!/usr/bin/env python3
"""Writes the C++ wrappers of every ncmpi_* entry point that takes an ncid,
from the prototypes in PnetCDF's own header, so that no typed variant is
missed or copied by hand.

    generate_wrappers.py PNETCDF_H OUTPUT HANDWRITTEN_CPP...

- data calls (ncmpi_[i|b]{put,get}_var[1|a|s|m|n][_TYPE][_all]) forward to
  cove::pnetcdf::access() with the call's shape;
- mput/mget calls (ncmpi_m{put,get}_var[1|a|s|m][_TYPE][_all]) forward to
  cove::pnetcdf::multi_access(), one access per variable;
- typed attribute calls forward to put_att()/get_att();
- every other call whose first parameter is the ncid passes through for
  files Cove does not couple, and fails with NC_ENOTSUPPORT for those it does;
- the entry points defined in HANDWRITTEN_CPP files are left out.
"""
import re
import sys

DATA = re.compile(r"^ncmpi_(?P<nb>i|b)?(?P<op>put|get)_var(?P<kind>1|a|s|m|n)?"
                  r"(?:_(?!all$)(?P<type>[a-z]+))?(?P<all>_all)?$")
MDATA = re.compile(r"^ncmpi_m(?P<op>put|get)_var(?P<kind>1|a|s|m)?"
                   r"(?:_(?!all$)(?P<type>[a-z]+))?(?P<all>_all)?$")
ATT = re.compile(r"^ncmpi_(?P<op>put|get)_att_(?P<type>[a-z]+)$")
PROTO = re.compile(r"extern\s+int\s+(ncmpi_\w+)\s*\(([^;]*?)\)\s*;", re.S)
DEFINED = re.compile(r"^(?:COVE_PNETCDF_API\s+)?int\s+(ncmpi_\w+|dtf_\w+)\s*\(", re.M)

# Memory type of each name suffix (long: see kMemLong in convert.hpp).
MEMORY = {
    "text": "NC_CHAR", "schar": "NC_BYTE", "uchar": "NC_UBYTE", "ubyte": "NC_UBYTE",
    "short": "NC_SHORT", "ushort": "NC_USHORT", "int": "NC_INT", "uint": "NC_UINT",
    "long": "kMemLong", "float": "NC_FLOAT", "double": "NC_DOUBLE",
    "longlong": "NC_INT64", "ulonglong": "NC_UINT64",
}
FIELDS = ("start", "count", "stride", "imap", "num", "starts", "counts", "bufcount", "buftype")


def parameters(text):
    params = [p.strip() for p in " ".join(text.split()).split(",") if p.strip()]
    names = [re.findall(r"\w+", p)[-1] for p in params]
    return params, names


def wrapper(name, params, names, body):
    sig = ", ".join(params)
    args = ", ".join(names)
    return (f"COVE_PNETCDF_API int {name}({sig}) {{\n"
            f"  static const auto real = real_fn<decltype(&::{name})>(\"{name}\");\n"
            f"  const Route r = route(ncid);\n"
            f"  if (r == Route::real) return real({args});\n"
            f"{body}}}\n\n")


def data_body(m, names, name):
    # NC_ERANGE still wrote the in-range values (and fills): Cove stores the same.
    lines = ["  if (r == Route::both) {\n", f"    const int rc = real({', '.join(names)});\n",
             "    if (rc != NC_NOERR && rc != NC_ERANGE) return rc;\n", "  }\n", "  Access a;\n",
             f"  a.name = \"{name}\";\n", f"  a.put = {'true' if m['op'] == 'put' else 'false'};\n",
             f"  a.kind = '{m['kind'] or '_'}';\n",
             f"  a.nonblocking = {repr(m['nb']) if m['nb'] else 0};\n",
             f"  a.all = {'true' if m['all'] else 'false'};\n",
             f"  a.mem = {MEMORY[m['type']] if m['type'] else 'NC_NAT'};\n",
             "  a.ncid = ncid;\n  a.varid = varid;\n"]
    for f in FIELDS:
        if f in names:
            lines.append(f"  a.{f} = {f};\n")
    buf = "op" if "op" in names else "ip"
    lines.append(f"  a.buf = const_cast<void*>(static_cast<const void*>({buf}));\n")
    if "req" in names:
        lines.append("  a.req = r == Route::both ? nullptr : req;\n")
    lines.append("  return access(a);\n")
    return "".join(lines)


def mdata_body(m, names, name):
    # mput/mget: one access per variable, through multi_access().
    field = lambda f: f if f in names else "nullptr"
    buf = "bufs" if "bufs" in names else "buf"
    lines = ["  if (r == Route::both) {\n", f"    const int rc = real({', '.join(names)});\n",
             "    if (rc != NC_NOERR && rc != NC_ERANGE) return rc;\n", "  }\n", "  Access a;\n",
             f"  a.name = \"{name}\";\n", f"  a.put = {'true' if m['op'] == 'put' else 'false'};\n",
             f"  a.kind = '{m['kind'] or '_'}';\n", f"  a.all = {'true' if m['all'] else 'false'};\n",
             f"  a.mem = {MEMORY[m['type']] if m['type'] else 'NC_NAT'};\n", "  a.ncid = ncid;\n",
             f"  return multi_access(a, num, varids, {field('starts')}, {field('counts')}, {field('strides')}, "
             f"{field('imaps')}, reinterpret_cast<void* const*>({buf}), {field('bufcounts')}, {field('datatypes')});\n"]
    return "".join(lines)


def att_body(m, names):
    mem = MEMORY[m["type"]]
    if m["op"] == "put":
        if m["type"] == "text":
            call = f"put_att(ncid, varid, {names[2]}, NC_CHAR, {names[3]}, {names[4]}, NC_CHAR)"
        else:
            call = f"put_att(ncid, varid, {names[2]}, {names[3]}, {names[4]}, {names[5]}, {mem})"
        return ("  if (r == Route::both) {\n"
                f"    const int rc = real({', '.join(names)});\n"
                "    if (rc != NC_NOERR && rc != NC_ERANGE) return rc;\n  }\n"
                f"  return {call};\n")
    return f"  return get_att(ncid, varid, {names[2]}, {names[3]}, {mem});\n"


def main():
    header, output, *handwritten = sys.argv[1:]
    protos = PROTO.findall(open(header).read())
    defined = set()
    for path in handwritten:
        defined.update(DEFINED.findall(open(path).read()))
    out = ["// Generated by src/pnetcdf/generate_wrappers.py from pnetcdf.h: do not edit.\n",
           "#include \"convert.hpp\"\n#include \"interpose.hpp\"\n\n",
           "using namespace cove::pnetcdf;\n\nextern \"C\" {\n\n"]
    counts = {"data": 0, "mdata": 0, "att": 0, "other": 0}
    seen = set()
    for name, text in protos:
        if name in defined or name in seen:
            continue
        seen.add(name)
        params, names = parameters(text)
        if not names or names[0] != "ncid":
            continue  # no file handle: it never concerns a coupled file
        m = DATA.match(name)
        if m and (m["type"] is None or m["type"] in MEMORY):
            out.append(wrapper(name, params, names, data_body(m, names, name)))
            counts["data"] += 1
            continue
        m = MDATA.match(name)
        if m and (m["type"] is None or m["type"] in MEMORY):
            out.append(wrapper(name, params, names, mdata_body(m, names, name)))
            counts["mdata"] += 1
            continue
        m = ATT.match(name)
        if m and m["type"] in MEMORY:
            out.append(wrapper(name, params, names, att_body(m, names)))
            counts["att"] += 1
            continue
        out.append(wrapper(name, params, names, f"  return unsupported(ncid, \"{name}\");\n"))
        counts["other"] += 1
    out.append("}  // extern \"C\"\n")
    out.append(f"// {counts['data']} data calls, {counts['mdata']} mput/mget calls, {counts['att']} attribute calls, "
               f"{counts['other']} others refused for coupled files\n")
    with open(output, "w") as f:
        f.write("".join(out))


if __name__ == "__main__":
    main()
