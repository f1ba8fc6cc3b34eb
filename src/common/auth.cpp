#include "common/auth.hpp"

#include "core/fail.hpp"

#include <sodium.h>

#include <map>
#include <mutex>

namespace cove::common {

namespace {

void start() {
  static const bool ok = sodium_init() >= 0;
  if (!ok) detail::fail(Code::Internal, "libsodium could not start (no source of randomness?)");
}

}  // namespace

std::vector<std::byte> random_bytes(std::size_t n) {
  start();
  std::vector<std::byte> out(n);
  randombytes_buf(out.data(), n);
  return out;
}

std::string random_hex(std::size_t n) {
  const auto bytes = random_bytes(n);
  std::string hex(2 * n + 1, '\0');
  sodium_bin2hex(hex.data(), hex.size(), reinterpret_cast<const unsigned char*>(bytes.data()), n);
  hex.pop_back();
  return hex;
}

std::vector<std::byte> prove(std::string_view secret, std::span<const std::byte> challenge) {
  start();
  // The HMAC key is a hash of the secret: secrets of any length.
  unsigned char key[crypto_auth_KEYBYTES];
  crypto_generichash(key, sizeof key, reinterpret_cast<const unsigned char*>(secret.data()), secret.size(), nullptr, 0);
  std::vector<std::byte> mac(crypto_auth_BYTES);
  crypto_auth(reinterpret_cast<unsigned char*>(mac.data()), reinterpret_cast<const unsigned char*>(challenge.data()),
              challenge.size(), key);
  sodium_memzero(key, sizeof key);
  return mac;
}

bool verify(std::string_view secret, std::span<const std::byte> challenge, std::span<const std::byte> proof) {
  if (proof.size() != crypto_auth_BYTES) return false;
  const auto expected = prove(secret, challenge);
  return sodium_memcmp(expected.data(), proof.data(), expected.size()) == 0;
}

namespace {

struct LocalSecrets {
  std::mutex mutex;
  std::map<std::string, std::string> by_address;
};

LocalSecrets& local_secrets() {
  static LocalSecrets* s = new LocalSecrets;  // never destroyed: servers may stop during exit
  return *s;
}

}  // namespace

void remember_local_secret(const std::string& address, const std::string& secret) {
  auto& s = local_secrets();
  std::lock_guard lock(s.mutex);
  s.by_address[address] = secret;
}

void forget_local_secret(const std::string& address) {
  auto& s = local_secrets();
  std::lock_guard lock(s.mutex);
  s.by_address.erase(address);
}

std::string local_secret(const std::string& address) {
  auto& s = local_secrets();
  std::lock_guard lock(s.mutex);
  auto it = s.by_address.find(address);
  return it == s.by_address.end() ? std::string() : it->second;
}

}  // namespace cove::common
