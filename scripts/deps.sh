#!/usr/bin/env bash
# Installs the Debian 12 packages AttnLab builds and runs with (apt-get; sudo
# where not root), or, given arguments, exactly those packages (the training
# script's). Does nothing when they are all present already.
set -euo pipefail

if [ $# -gt 0 ]; then
  packages=("$@")
else
  packages=(
    cmake g++ make pkg-config ninja-build lld
    libeigen3-dev libopenblas-openmp-dev nlohmann-json3-dev libcli11-dev libicu-dev libpcre2-dev libsentencepiece-dev zlib1g-dev
    libglfw3-dev libimgui-dev libstb-dev libgl1-mesa-dri
    qt6-base-dev qt6-svg-dev
    libgtest-dev libgmock-dev libbenchmark-dev
    xvfb xauth poppler-utils python3-sentencepiece python3-pil python3-numpy
    python3-pytest python3-nbclient python3-ipykernel python3-torch python3-venv
    fonts-dejavu-core fonts-noto-cjk chromium
    clang-14 libclang-rt-14-dev libomp-14-dev
  )

  # node and npm run the GPT-2 tokenizer reference (tests/tokenizer_expected.js);
  # a Node.js that bundles its own npm needs no Debian npm package.
  command -v node >/dev/null || packages+=(nodejs)
  command -v npm >/dev/null || packages+=(npm)
fi

missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
[ ${#missing[@]} -eq 0 ] && exit 0

echo "attnlab: installing Debian packages: ${missing[*]}"
sudo=""
[ "$(id -u)" -eq 0 ] || sudo="sudo"
export DEBIAN_FRONTEND=noninteractive
$sudo apt-get update -q
$sudo apt-get install -y -q --no-install-recommends "${missing[@]}"
