#include "transports/shared_secret.hpp"

#include <fcntl.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>

#include "transports/transport.hpp"

namespace sluice::transport {
namespace {

std::string mode_text(mode_t mode) {
  char text[8];
  std::snprintf(text, sizeof text, "%04o", static_cast<unsigned>(mode & 07777));
  return text;
}

}  // namespace

Result<std::string> make_shared_secret() {
  unsigned char bytes[k_generated_secret_bytes];
  std::size_t got = 0;
  while (got < sizeof bytes) {
    const ssize_t n = ::getrandom(bytes + got, sizeof bytes - got, 0);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return error(StatusCode::internal, std::string("getrandom: ") + std::strerror(errno));
    got += static_cast<std::size_t>(n);
  }
  static constexpr char k_hex[] = "0123456789abcdef";
  std::string secret;
  for (unsigned char b : bytes) {
    secret.push_back(k_hex[b >> 4]);
    secret.push_back(k_hex[b & 0xf]);
  }
  return secret;
}

Result<std::string> read_shared_secret_file(const std::string& path) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
  if (fd < 0)
    return error(StatusCode::invalid_argument, path + ": cannot open the secret file: " + std::strerror(errno));
  struct stat st {};
  std::string text;
  std::string problem;
  if (::fstat(fd, &st) != 0) {
    problem = std::string("cannot stat: ") + std::strerror(errno);
  } else if (!S_ISREG(st.st_mode)) {
    problem = "not a regular file";
  } else if ((st.st_mode & (S_IROTH | S_IWOTH)) != 0) {
    problem = "mode " + mode_text(st.st_mode) + " lets other users read or write it; chmod o-rw " + path;
  } else if (static_cast<std::uint64_t>(st.st_size) > k_max_secret_file_bytes) {
    problem = std::to_string(st.st_size) + " bytes, more than " + std::to_string(k_max_secret_file_bytes);
  } else {
    char buf[k_max_secret_file_bytes];
    ssize_t n = 0;
    while ((n = ::read(fd, buf, sizeof buf)) > 0 && text.size() < k_max_secret_file_bytes) text.append(buf, n);
    if (n < 0) problem = std::string("cannot read: ") + std::strerror(errno);
  }
  ::close(fd);
  if (!problem.empty()) return error(StatusCode::invalid_argument, path + ": secret file: " + problem);
  const std::size_t eol = text.find('\n');
  if (eol != std::string::npos) text.resize(eol);
  if (!text.empty() && text.back() == '\r') text.pop_back();
  if (text.size() < k_min_shared_secret_bytes || text.size() > k_max_shared_secret_bytes) {
    return error(StatusCode::invalid_argument, path + ": secret file: the secret on its first line has " +
                                                   std::to_string(text.size()) + " bytes, outside " +
                                                   std::to_string(k_min_shared_secret_bytes) + ".." +
                                                   std::to_string(k_max_shared_secret_bytes));
  }
  return text;
}

Status write_shared_secret_file(const std::string& path, const std::string& secret) {
  const int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC | O_NOFOLLOW, 0600);
  if (fd < 0) return error(StatusCode::io_error, path + ": cannot create the secret file: " + std::strerror(errno));
  const std::string line = secret + "\n";
  const bool written =
      ::fchmod(fd, 0600) == 0 && ::write(fd, line.data(), line.size()) == static_cast<ssize_t>(line.size());
  const int saved = errno;
  ::close(fd);
  if (!written) return error(StatusCode::io_error, path + ": cannot write the secret file: " + std::strerror(saved));
  return ok_status();
}

}  // namespace sluice::transport
