#include "net/protocol.hpp"

#include "core/fail.hpp"

namespace cove::net {

const char* op_name(Op op) noexcept {
  switch (op) {
    case Op::Define: return "define";
    case Op::Put: return "put";
    case Op::PutLocal: return "put_local";
    case Op::Release: return "release";
    case Op::Query: return "query";
    case Op::Latest: return "latest";
    case Op::Delete: return "delete";
    case Op::List: return "list";
    case Op::Stat: return "stat";
    case Op::Disconnect: return "disconnect";
    case Op::Stop: return "stop";
    case Op::IndexAdd: return "index_add";
    case Op::MetaPut: return "meta_put";
    case Op::MetaGet: return "meta_get";
    case Op::PutInline: return "put_inline";
    case Op::Pattern: return "pattern";
  }
  return "unknown";
}

Bytes error_reply(std::uint16_t type, std::uint64_t request_id, Code code, const std::string& message) {
  WireWriter w(type, request_id, code);
  w.str(message.size() > kMaxStringBytes ? message.substr(0, kMaxStringBytes) : message);
  return std::move(w).finish();
}

Header check_reply(std::span<const std::byte> reply, std::uint16_t expected_type, std::uint64_t request_id) {
  const Header h = read_header(reply);
  if (h.type != expected_type || h.request_id != request_id)
    detail::fail(Code::Protocol, "reply of type ", h.type, " for request ", h.request_id, " does not answer request ",
                 request_id, " of type ", expected_type);
  if (h.status != Code::Ok) {
    WireReader r(reply);
    std::string message;
    try {
      message = r.str();
    } catch (const Error&) {
      message = "(no message)";
    }
    throw Error(h.status, message);
  }
  return h;
}

}  // namespace cove::net
