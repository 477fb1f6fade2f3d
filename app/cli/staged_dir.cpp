#include "app/cli/staged_dir.h"

#include "engine/error.h"
#include "engine/npy.h"

#include <unistd.h>

namespace fs = std::filesystem;

namespace attn {

StagedDir::StagedDir(fs::path out) : out_(out.has_filename() ? out : out.parent_path()) {  // "run/" → "run"
  const fs::path parent = out_.has_parent_path() ? out_.parent_path() : fs::path(".");
  std::error_code ec;
  if (!fs::is_directory(parent, ec))
    throw InputError("--out " + out_.string() + ": parent folder " + parent.string() + " does not exist");
  if (fs::exists(out_, ec) && !fs::is_directory(out_, ec))
    throw InputError("--out " + out_.string() + ": exists and is not a folder");
  // ".NAME.partial-PID" / ".NAME.old-PID", appended piecewise (GCC 12 misreports "." + string as -Wrestrict).
  auto beside = [&](const char* kind) {
    std::string name = ".";
    name += out_.filename().string();
    name += kind;
    name += std::to_string(::getpid());
    return parent / name;
  };
  stage_ = beside(".partial-");
  old_ = beside(".old-");
  fs::remove_all(stage_, ec);
  fs::create_directories(stage_, ec);
  if (ec) throw InputError("--out " + out_.string() + ": cannot create files in " + parent.string() + ": " + ec.message());
}

StagedDir::~StagedDir() {
  std::error_code ec;
  fs::remove_all(stage_, ec);
  fs::remove_all(old_, ec);
}

fs::path StagedDir::prepare(const std::string& rel) {
  const fs::path path = stage_ / rel;
  std::error_code ec;
  fs::create_directories(path.parent_path(), ec);
  if (ec) throw InputError("--out " + out_.string() + ": cannot create " + path.parent_path().string() + ": " + ec.message());
  return path;
}

void StagedDir::write(const std::string& rel, const std::string& bytes) { writeFileAtomic(prepare(rel), bytes); }

void StagedDir::commit() {
  std::error_code ec;
  const bool replacing = fs::exists(out_, ec);
  if (replacing) fs::rename(out_, old_, ec);
  if (!ec) fs::rename(stage_, out_, ec);
  if (ec) {
    const std::string why = ec.message();
    if (replacing && !fs::exists(out_, ec)) fs::rename(old_, out_, ec);  // put the earlier run back
    throw InputError("--out " + out_.string() + ": could not move the results into place: " + why);
  }
}

}  // namespace attn
