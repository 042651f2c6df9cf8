// TempDir: a fresh directory under $TMPDIR (or /tmp) for one test, removed with its contents
// when the object goes away, unless DELAYBRIDGE_KEEP_TEST_DIRS is set (then its path is
// printed so a failure can be inspected).
//
// Thread-safety: one owner.
#pragma once

#include <string>

namespace delaybridge::testing {

class TempDir {
 public:
  explicit TempDir(const std::string& prefix);
  ~TempDir();
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;

  const std::string& path() const { return path_; }
  // path() + "/" + name
  std::string File(const std::string& name) const { return path_ + "/" + name; }

 private:
  std::string path_;
};

}  // namespace delaybridge::testing
