// The connection file: written privately and exclusively, never through a
// planted link, read only when it is a regular file this user may read.
#include "common/connection_file.hpp"

#include <gtest/gtest.h>

#include "expect_error.hpp"

#include <chrono>
#include <fcntl.h>
#include <filesystem>
#include <fstream>
#include <sys/stat.h>
#include <unistd.h>

namespace {

using cove::Code;
using cove_test::expect_error;
namespace common = cove::common;
namespace fs = std::filesystem;

class ConnectionFile : public ::testing::Test {
 protected:
  fs::path dir = fs::path(::testing::TempDir()) / ("cove-connection-" + std::to_string(::getpid()));
  fs::path path = dir / "cove.conn";
  const common::ConnectionInfo info{{"local:@a|ucx:127.0.0.1:4000", "local:@b"}, std::string(64, 'f')};
  void SetUp() override { fs::create_directories(dir); }
  void TearDown() override { fs::remove_all(dir); }
  static std::string text_of(const fs::path& p) {
    std::ifstream in(p);
    return {std::istreambuf_iterator<char>(in), {}};
  }
};

TEST_F(ConnectionFile, WrittenPrivatelyAndReadBack) {
  common::create_connection_file(path, info);
  struct stat st {};
  ASSERT_EQ(::stat(path.c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0600u);
  const auto back = common::read_connection_file(path, 0);
  EXPECT_EQ(back.servers, info.servers);
  EXPECT_EQ(back.secret, info.secret);
  EXPECT_EQ(std::distance(fs::directory_iterator(dir), fs::directory_iterator()), 1) << "a temporary file was left";
}

TEST_F(ConnectionFile, CreatingNeverReplacesAnything) {
  common::create_connection_file(path, info);
  common::ConnectionInfo other = info;
  other.secret = std::string(64, 'e');
  expect_error(Code::AlreadyExists, "already exists", [&] { common::create_connection_file(path, other); });
  EXPECT_EQ(common::read_connection_file(path, 0).secret, info.secret);
  common::replace_connection_file(path, other);  // what a stale file gets
  EXPECT_EQ(common::read_connection_file(path, 0).secret, other.secret);
}

TEST_F(ConnectionFile, APlantedLinkIsNotFollowedWhenWriting) {
  const fs::path victim = dir / "victim";
  std::ofstream(victim) << "precious\n";
  fs::create_symlink(victim, path);
  expect_error(Code::AlreadyExists, "already exists", [&] { common::create_connection_file(path, info); });
  EXPECT_EQ(text_of(victim), "precious\n");
  // Replacing puts a file where the link was; the link's target is untouched.
  common::replace_connection_file(path, info);
  EXPECT_FALSE(fs::is_symlink(path));
  EXPECT_EQ(text_of(victim), "precious\n");
}

TEST_F(ConnectionFile, AnythingButARegularFileIsRefusedAtOnce) {
  ASSERT_EQ(::mkfifo(path.c_str(), 0600), 0);
  const auto t0 = std::chrono::steady_clock::now();
  expect_error(Code::InvalidArgument, "is not a regular file", [&] { common::read_connection_file(path, 5000); });
  EXPECT_LT(std::chrono::steady_clock::now() - t0, std::chrono::seconds(4)) << "the FIFO was waited on";
  expect_error(Code::InvalidArgument, "is not a regular file", [&] { common::read_connection_file(dir, 0); });
  expect_error(Code::InvalidArgument, "is not a regular file", [&] { common::read_connection_file("/dev/zero", 0); });
}

TEST_F(ConnectionFile, MissingUnreadableAndMalformedFiles) {
  expect_error(Code::Unavailable, "no connection file at", [&] { common::read_connection_file(path, 30); });
  std::ofstream(path) << "version = 1\nservers = [\"local:@a\"]\nsecret = \"short\"\n";
  expect_error(Code::Protocol, "a secret of 5 bytes", [&] { common::read_connection_file(path, 0); });
  std::ofstream(path) << "version = 1\nservers = []\n";
  expect_error(Code::Protocol, "lists no servers", [&] { common::read_connection_file(path, 0); });
  if (::geteuid() != 0) {  // root reads anything
    common::replace_connection_file(path, info);
    ::chmod(path.c_str(), 0);
    expect_error(Code::PermissionDenied, "permission denied", [&] { common::read_connection_file(path, 5000); });
  }
}

}  // namespace
