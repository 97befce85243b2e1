#pragma once
// The one project exception type. Library code throws it with a message that names
// the file, field and value; cli/ catches it and exits 3.
#include <stdexcept>
#include <string>

namespace fabscope {

class Error : public std::runtime_error {
 public:
  explicit Error(const std::string& what) : std::runtime_error(what) {}
};

// Thrown for bad command-line usage: cli/ prints it with a hint to --help, exit 3.
class UsageError : public Error {
 public:
  explicit UsageError(const std::string& what) : Error(what) {}
};

}  // namespace fabscope
