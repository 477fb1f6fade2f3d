#include "app/shared/config_dir.h"

#include <cstdlib>

namespace attn {

std::filesystem::path userConfigDir() {
  const char* xdg = std::getenv("XDG_CONFIG_HOME");
  const char* home = std::getenv("HOME");
  std::filesystem::path base;
  if (xdg && *xdg)
    base = xdg;
  else if (home && *home)
    base = std::filesystem::path(home) / ".config";
  else
    base = std::filesystem::temp_directory_path();
  return base / "attnlab";
}

}  // namespace attn
