// Where AttnLab keeps the user's files: the GUI's settings and the user's
// own lessons.
#pragma once

#include <filesystem>

namespace attn {

// $XDG_CONFIG_HOME/attnlab, else ~/.config/attnlab, else attnlab in the temp directory.
std::filesystem::path userConfigDir();

}  // namespace attn
