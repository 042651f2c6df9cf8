// TempDir: a fresh directory under $TMPDIR (or /tmp, or /dev/shm: Place) for one test, removed
// with its contents when the object goes away, unless DELAYBRIDGE_KEEP_TEST_DIRS is set or Keep()
// was called (then its path is printed so a failure can be inspected).
//
// Thread-safety: one owner.
#pragma once

#include <string>

namespace delaybridge::testing {

class TempDir {
 public:
  // Where the directory goes: under $TMPDIR (or /tmp), or on a memory file system when the
  // machine has one (/dev/shm), for tests whose subject is logic, not durability, and that would
  // otherwise spend minutes in fdatasync.
  enum class Place { kTmp, kMemory };
  explicit TempDir(const std::string& prefix = "delaybridge-test", Place place = Place::kTmp);
  ~TempDir();
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;

  const std::string& path() const { return path_; }
  // path() + "/" + name
  std::string File(const std::string& name) const { return path_ + "/" + name; }
  // Leaves the directory in place, e.g. for a test that failed.
  void Keep() { keep_ = true; }

 private:
  std::string path_;
  bool keep_ = false;
};

}  // namespace delaybridge::testing
