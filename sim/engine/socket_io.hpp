#pragma once
// Messages over the engine server's and daemon's sockets: length-prefixed byte strings, and descriptors
// passed between processes (SCM_RIGHTS). A peer that went away is a false return, never a SIGPIPE.
#include <cstddef>
#include <string>

namespace racksim {

bool send_all(int fd, const char* data, std::size_t size);
bool recv_all(int fd, char* data, std::size_t size);
bool send_message(int fd, const std::string& message);
// false at end of input (or a broken peer).
bool recv_message(int fd, std::string& message);
// One byte carrying `fd` over the Unix socket `via`.
bool send_fd(int via, int fd);
// The descriptor sent by send_fd, or -1 at end of input.
int recv_fd(int via);

}  // namespace racksim
