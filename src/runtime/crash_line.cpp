#include "runtime/crash_line.h"

#include <arpa/inet.h>
#include <fcntl.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <ctime>
#include <stdexcept>

#include "protocols/check.h"

namespace hapair {
namespace {

std::int64_t monotonic_ms() {
  timespec ts{};
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return static_cast<std::int64_t>(ts.tv_sec) * 1000 + ts.tv_nsec / 1'000'000;
}

int open_placeholder() {
  const int fd = ::open("/dev/null", O_RDONLY | O_CLOEXEC);
  if (fd < 0) throw std::runtime_error(std::string("crash line: cannot open /dev/null: ") + std::strerror(errno));
  return fd;
}

// The address of `host` (an IPv4 address, an IPv6 one in brackets as in an endpoint, or a name),
// for bind and connect; "*" and "0.0.0.0": any IPv4 address.
struct SocketAddress {
  sockaddr_storage storage{};
  socklen_t length = 0;
  int family() const { return storage.ss_family; }
  const sockaddr* get() const { return reinterpret_cast<const sockaddr*>(&storage); }
};

SocketAddress address_of(const std::string& endpoint_host, int port) {
  SocketAddress out;
  std::string host = endpoint_host;
  if (host.size() >= 2 && host.front() == '[' && host.back() == ']') host = host.substr(1, host.size() - 2);
  if (host == "*" || host == "0.0.0.0") {
    auto* v4 = reinterpret_cast<sockaddr_in*>(&out.storage);
    v4->sin_family = AF_INET;
    v4->sin_port = htons(static_cast<std::uint16_t>(port));
    v4->sin_addr.s_addr = htonl(INADDR_ANY);
    out.length = sizeof(sockaddr_in);
    return out;
  }
  // An IPv6 address as such; a name or an IPv4 address as IPv4 first (as ZeroMQ resolves the
  // data endpoint beside it), IPv6 when the name has only that.
  addrinfo hints{};
  hints.ai_family = host.find(':') != std::string::npos ? AF_INET6 : AF_INET;
  hints.ai_socktype = SOCK_STREAM;
  addrinfo* found = nullptr;
  const std::string service = std::to_string(port);
  if (getaddrinfo(host.c_str(), service.c_str(), &hints, &found) != 0 || found == nullptr) {
    hints.ai_family = AF_UNSPEC;
    if (found != nullptr) freeaddrinfo(found);
    found = nullptr;
    if (getaddrinfo(host.c_str(), service.c_str(), &hints, &found) != 0 || found == nullptr)
      throw std::runtime_error("crash line: cannot resolve host '" + endpoint_host + "'");
  }
  std::memcpy(&out.storage, found->ai_addr, found->ai_addrlen);
  out.length = found->ai_addrlen;
  freeaddrinfo(found);
  return out;
}

int port_of(const sockaddr_storage& address) {
  return address.ss_family == AF_INET6 ? ntohs(reinterpret_cast<const sockaddr_in6*>(&address)->sin6_port)
                                       : ntohs(reinterpret_cast<const sockaddr_in*>(&address)->sin_port);
}

}  // namespace

bool split_tcp_endpoint(const std::string& endpoint, std::string& host, std::string& port) {
  const std::string prefix = "tcp://";
  if (endpoint.rfind(prefix, 0) != 0) return false;
  const std::size_t colon = endpoint.rfind(':');
  if (colon == std::string::npos || colon < prefix.size()) return false;
  host = endpoint.substr(prefix.size(), colon - prefix.size());
  port = endpoint.substr(colon + 1);
  return !host.empty() && !port.empty();
}

// ---- CrashLineSlots -------------------------------------------------------------------------

CrashLineSlots::CrashLineSlots() {
  for (Slot& slot : slots_) slot.fd = open_placeholder();
}

CrashLineSlots::~CrashLineSlots() {
  for (Slot& slot : slots_)
    if (slot.fd >= 0) ::close(slot.fd);
}

int CrashLineSlots::take(int fd) {
  for (Slot& slot : slots_) {
    if (slot.used) continue;
    // dup3 replaces the placeholder atomically; the file status flags (O_NONBLOCK) go along.
    if (::dup3(fd, slot.fd, O_CLOEXEC) < 0) return fd;
    ::close(fd);
    slot.used = true;
    return slot.fd;
  }
  return fd;
}

void CrashLineSlots::release(int fd) {
  for (Slot& slot : slots_) {
    if (slot.fd != fd || !slot.used) continue;
    const int placeholder = open_placeholder();
    ::dup3(placeholder, slot.fd, O_CLOEXEC);  // closes the line's socket and keeps the slot low
    ::close(placeholder);
    slot.used = false;
    return;
  }
  ::close(fd);
}

// ---- CrashLineListener ----------------------------------------------------------------------

CrashLineListener::CrashLineListener(CrashLineSlots& slots, const std::string& data_endpoint, int port)
    : slots_(slots) {
  std::string host;
  std::string data_port;
  if (!split_tcp_endpoint(data_endpoint, host, data_port))
    throw std::runtime_error("crash line: the data endpoint '" + data_endpoint + "' is not tcp://HOST:PORT");
  HAPAIR_CHECK_MSG(port >= 0 && port <= 65535, "crash line port " << port);
  const SocketAddress address = address_of(host, port);
  listen_fd_ = ::socket(address.family(), SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
  if (listen_fd_ < 0) throw std::runtime_error(std::string("crash line: socket: ") + std::strerror(errno));
  const int one = 1;
  ::setsockopt(listen_fd_, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
  if (::bind(listen_fd_, address.get(), address.length) != 0 || ::listen(listen_fd_, 8) != 0) {
    const std::string why = std::strerror(errno);
    ::close(listen_fd_);
    throw std::runtime_error("crash line: cannot listen on " + host + ":" + std::to_string(port) + ": " + why);
  }
  sockaddr_storage bound{};
  socklen_t length = sizeof bound;
  ::getsockname(listen_fd_, reinterpret_cast<sockaddr*>(&bound), &length);
  endpoint_ = "tcp://" + host + ":" + std::to_string(port_of(bound));
}

CrashLineListener::~CrashLineListener() {
  for (const int fd : accepted_) slots_.release(fd);
  if (listen_fd_ >= 0) ::close(listen_fd_);
}

void CrashLineListener::add_poll_items(std::vector<zmq::pollitem_t>& items) const {
  items.push_back({nullptr, listen_fd_, ZMQ_POLLIN, 0});
  for (const int fd : accepted_) items.push_back({nullptr, fd, ZMQ_POLLIN, 0});
}

bool CrashLineListener::pending() const {
  // Called between slices of operator work: no allocation, one system call.
  std::array<pollfd, 1 + 2 * CrashLineSlots::kSlots> items{};
  std::size_t n = 0;
  items[n++] = pollfd{listen_fd_, POLLIN, 0};
  for (const int fd : accepted_) {
    if (n == items.size()) break;
    items[n++] = pollfd{fd, POLLIN, 0};
  }
  return ::poll(items.data(), n, 0) > 0;
}

void CrashLineListener::serve() {
  for (;;) {
    const int fd = ::accept4(listen_fd_, nullptr, nullptr, SOCK_NONBLOCK | SOCK_CLOEXEC);
    if (fd < 0) break;
    accepted_.push_back(slots_.take(fd));
  }
  // A partner never writes on its line: readable means it went away (or wrote garbage, which
  // is dropped). Its own watch reports the loss; here the slot is freed for its next incarnation.
  for (auto it = accepted_.begin(); it != accepted_.end();) {
    char buffer[64];
    const ssize_t n = ::recv(*it, buffer, sizeof buffer, MSG_DONTWAIT);
    if (n == 0 || (n < 0 && errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR)) {
      slots_.release(*it);
      it = accepted_.erase(it);
    } else {
      ++it;
    }
  }
}

// ---- CrashLine ------------------------------------------------------------------------------

CrashLine::CrashLine(std::string endpoint) : endpoint_(std::move(endpoint)) {
  std::string port;
  if (!split_tcp_endpoint(endpoint_, host_, port))
    throw std::runtime_error("crash line: the endpoint '" + endpoint_ + "' is not tcp://HOST:PORT");
  try {
    port_ = std::stoi(port);
  } catch (const std::exception&) {
    throw std::runtime_error("crash line: the endpoint '" + endpoint_ + "' has no port number");
  }
  connect_now();
}

CrashLine::~CrashLine() { close_line(); }

void CrashLine::connect_now() {
  retry_at_ms_ = monotonic_ms() + kRetryMs;
  const SocketAddress address = address_of(host_, port_);
  fd_ = ::socket(address.family(), SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
  if (fd_ < 0) return;
  if (::connect(fd_, address.get(), address.length) != 0 && errno != EINPROGRESS) {
    close_line();
    return;
  }
}

void CrashLine::close_line() {
  if (fd_ >= 0) ::close(fd_);
  fd_ = -1;
  established_ = false;
}

short CrashLine::poll_events() const { return established_ ? ZMQ_POLLIN : static_cast<short>(ZMQ_POLLIN | ZMQ_POLLOUT); }

bool CrashLine::pending() const {
  if (fd_ < 0) return monotonic_ms() >= retry_at_ms_;
  pollfd item{fd_, static_cast<short>(established_ ? POLLIN : (POLLIN | POLLOUT)), 0};
  return ::poll(&item, 1, 0) > 0;
}

std::int64_t CrashLine::retry_in_ms() const {
  if (fd_ >= 0) return -1;
  return std::max<std::int64_t>(retry_at_ms_ - monotonic_ms(), 0);
}

bool CrashLine::ended() {
  if (fd_ < 0) {
    if (monotonic_ms() >= retry_at_ms_) connect_now();
    return false;
  }
  if (!established_) {
    pollfd item{fd_, POLLOUT, 0};
    if (::poll(&item, 1, 0) <= 0) return false;
    int error = 0;
    socklen_t length = sizeof error;
    ::getsockopt(fd_, SOL_SOCKET, SO_ERROR, &error, &length);
    if (error != 0) {
      close_line();  // the partner is not listening (yet, or any more): try again later
      return false;
    }
    established_ = true;
  }
  char buffer[64];
  const ssize_t n = ::recv(fd_, buffer, sizeof buffer, MSG_DONTWAIT);
  if (n > 0 || (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR))) return false;
  close_line();
  retry_at_ms_ = monotonic_ms() + kRetryMs;
  return true;
}

}  // namespace hapair
