// Errors a user can cause are exceptions with a message that names the file
// or field and what was expected. Asserts are for our own bugs.
#pragma once

#include <stdexcept>
#include <string>

namespace attn {

// Bad input: a file, a shape, a parameter value. The CLI exits with 2 on it.
struct InputError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

// A job was superseded or cancelled by the user; not an error to report.
struct Cancelled : std::runtime_error {
  Cancelled() : std::runtime_error("cancelled") {}
};

}  // namespace attn
