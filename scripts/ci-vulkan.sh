#!/usr/bin/env bash
# Installs what the GPU tests need on a Debian-like CI machine with no GPU: the Vulkan loader
# (libvulkan1) and Mesa's CPU Vulkan driver, lavapipe (mesa-vulkan-drivers). Does nothing
# where both are there already; fails, saying why, where they are missing and cannot be
# installed (not root, no apt-get, no network).
set -euo pipefail

have_driver() {
    # Not 'grep -q': with pipefail, ldconfig killed by the early exit reads as a failure.
    [ -n "$(ldconfig -p 2>/dev/null | grep 'libvulkan\.so\.1')" ] &&
        compgen -G '/usr/share/vulkan/icd.d/lvp_icd*.json' >/dev/null
}

if have_driver; then
    echo "ci-vulkan: the Vulkan loader and lavapipe are installed"
    exit 0
fi
fail() { echo "ci-vulkan: $*" >&2; exit 1; }
[ "$(id -u)" = 0 ] || fail "libvulkan1 and mesa-vulkan-drivers are missing and this is not root"
command -v apt-get >/dev/null || fail "libvulkan1 and mesa-vulkan-drivers are missing and apt-get is not here"
opts=(-o DPkg::Lock::Timeout=120 -o Acquire::Retries=3)
log=$(mktemp)
apt-get "${opts[@]}" update -qq >"$log" 2>&1 || { tail -n 20 "$log" >&2; fail "apt-get update failed"; }
DEBIAN_FRONTEND=noninteractive apt-get "${opts[@]}" install -y -qq --no-install-recommends \
    libvulkan1 mesa-vulkan-drivers >"$log" 2>&1 ||
    { tail -n 20 "$log" >&2; fail "apt-get install libvulkan1 mesa-vulkan-drivers failed"; }
have_driver || fail "installed, yet the loader or lavapipe's ICD file is not where expected"
echo "ci-vulkan: installed libvulkan1 and mesa-vulkan-drivers"
