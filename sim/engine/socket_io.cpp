#include "sim/engine/socket_io.hpp"

#include <sys/socket.h>
#include <sys/types.h>

#include <cerrno>
#include <cstdint>
#include <cstring>

namespace racksim {

bool send_all(int fd, const char* data, std::size_t size) {
  while (size > 0) {
    const ssize_t n = ::send(fd, data, size, MSG_NOSIGNAL);  // a dead peer is an error, not a SIGPIPE
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return false;
    data += n;
    size -= static_cast<std::size_t>(n);
  }
  return true;
}

bool recv_all(int fd, char* data, std::size_t size) {
  while (size > 0) {
    const ssize_t n = ::recv(fd, data, size, 0);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return false;
    data += n;
    size -= static_cast<std::size_t>(n);
  }
  return true;
}

bool send_message(int fd, const std::string& message) {
  const std::uint64_t n = message.size();
  return send_all(fd, reinterpret_cast<const char*>(&n), sizeof n) && send_all(fd, message.data(), message.size());
}

bool recv_message(int fd, std::string& message) {
  std::uint64_t n = 0;
  if (!recv_all(fd, reinterpret_cast<char*>(&n), sizeof n)) return false;
  message.resize(n);
  return recv_all(fd, message.data(), n);
}

namespace {
// One byte of data and room for one descriptor: the message send_fd sends and recv_fd receives.
struct FdMessage {
  char byte = 'F';
  iovec iov{&byte, 1};
  alignas(cmsghdr) char control[CMSG_SPACE(sizeof(int))] = {};
  msghdr msg{};
  FdMessage() {
    msg.msg_iov = &iov;
    msg.msg_iovlen = 1;
    msg.msg_control = control;
    msg.msg_controllen = sizeof control;
  }
  FdMessage(const FdMessage&) = delete;  // msg points into this object
  FdMessage& operator=(const FdMessage&) = delete;
};
}  // namespace

bool send_fd(int via, int fd) {
  FdMessage m;
  msghdr& msg = m.msg;
  cmsghdr* c = CMSG_FIRSTHDR(&msg);
  c->cmsg_level = SOL_SOCKET;
  c->cmsg_type = SCM_RIGHTS;
  c->cmsg_len = CMSG_LEN(sizeof(int));
  std::memcpy(CMSG_DATA(c), &fd, sizeof fd);
  ssize_t n;
  while ((n = ::sendmsg(via, &msg, MSG_NOSIGNAL)) < 0 && errno == EINTR) {
  }
  return n == 1;
}

int recv_fd(int via) {
  FdMessage m;
  msghdr& msg = m.msg;
  ssize_t n;
  while ((n = ::recvmsg(via, &msg, MSG_CMSG_CLOEXEC)) < 0 && errno == EINTR) {
  }
  const cmsghdr* c = n == 1 ? CMSG_FIRSTHDR(&msg) : nullptr;
  if (c == nullptr || c->cmsg_level != SOL_SOCKET || c->cmsg_type != SCM_RIGHTS) return -1;
  int fd = -1;
  std::memcpy(&fd, CMSG_DATA(c), sizeof fd);
  return fd;
}

}  // namespace racksim
