#pragma once
// Files racksim writes appear whole or not at all. An AtomicFile writes to a temporary name in the
// target's own directory (".<name>.tmp-XXXXXX", so the final rename never crosses a file system),
// fsyncs it and renames it over the target on commit(). Until then the target is untouched; if the run
// fails (an exception unwinds past the AtomicFile), the temporary file is removed, and so are the
// directories it created. A killed process can leave a ".<name>.tmp-*" file, never a cut target.
//
// Open every output before computing: a bad path is then an InputError before any work is done, and a
// command that writes several files commits them only once all are written.
#include <string>
#include <string_view>
#include <vector>

namespace racksim {

class AtomicFile {
 public:
  // `option` names where the path came from in errors ("--trace", "--out-dir"). Missing parent
  // directories are created when `create_parents` is set. InputError when the path is empty, too long,
  // under a regular file, a directory, or not writable.
  AtomicFile(std::string path, std::string option, bool create_parents = false);
  ~AtomicFile();  // removes the temporary file (and created directories) unless committed
  AtomicFile(const AtomicFile&) = delete;
  AtomicFile& operator=(const AtomicFile&) = delete;
  AtomicFile(AtomicFile&& other) noexcept;
  AtomicFile& operator=(AtomicFile&&) = delete;

  void write(std::string_view text);  // InputError on a write error (a full disk)
  // fsync, close and rename over the target; InputError on failure (the temporary file is removed).
  void commit();
  const std::string& path() const { return path_; }

 private:
  void discard() noexcept;
  std::string path_, option_, temp_;
  std::vector<std::string> created_dirs_;  // deepest last
  int fd_ = -1;
  bool committed_ = false;
};

// The whole of `text` to `path` in one step (AtomicFile, written and committed).
void write_file_atomically(const std::string& path, std::string_view text, const std::string& option,
                           bool create_parents = false);

}  // namespace racksim
