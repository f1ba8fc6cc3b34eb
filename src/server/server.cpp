// The public Server handle over the service (service.hpp).
#include <cove/server.hpp>

#include "server/service.hpp"

namespace cove {

Server::Server(const ServerOptions& options) : impl_(std::make_shared<server::Service>(options)) { impl_->start(); }
Server::~Server() = default;
std::string Server::address() const { return impl_->address(); }
std::string Server::secret() const { return impl_->secret(); }
void Server::join_group(const std::vector<std::string>& addresses, int rank, const std::string& secret) {
  impl_->join_group(addresses, rank, secret);
}
void Server::write_connection_file(const std::string& path) { impl_->write_connection_file(path); }
ServerStats Server::stats() const { return impl_->stats(); }
std::size_t Server::members_lost() const { return impl_->members_lost(); }
void Server::stop() { impl_->stop(); }
void Server::wait() { impl_->wait(); }

}  // namespace cove
