#pragma once
// Where racksim keeps what only this user's racksim processes of this build may read: the engine daemon's
// socket (sim/engine/engine_server.cpp) and the parsed-file cache (sim/core/parsed_file_cache.hpp).
#include <string>

namespace racksim {

// $XDG_RUNTIME_DIR when it is this user's and private (mode 0700), else /tmp/racksim-UID, created 0700 and
// checked to be this user's private directory (not a link); "" when neither can be had.
std::string private_runtime_dir();

// A file by path, inode, size and modification time ("" when it cannot be read): what a rebuild changes.
std::string file_identity(const std::string& path);

// What tells this build apart from any other: the executable (/proc/self/exe) and the file holding this
// code when it is another one (the Python module), each by path, inode, size and modification time. A
// rebuild changes it. "" when neither can be read.
std::string build_identity();

}  // namespace racksim
