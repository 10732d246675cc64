#!/usr/bin/env bash
# Installs the system packages pacpfl's full test suite needs, and only those
# that are missing. Idempotent. Fails, naming the packages, where it cannot
# install (not root, or no apt-get).
set -euo pipefail

# dataset-fashion-mnist: the Fashion-MNIST files under /usr/share/datasets
# (tests write their own small IDX files; the CLI's fmnist runs need these).
pkgs=(libopenblas-dev liblapacke-dev qemu-user-static dataset-fashion-mnist)

missing=()
for p in "${pkgs[@]}"; do
	if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed"; then
		missing+=("$p")
	fi
done

if [ ${#missing[@]} -eq 0 ]; then
	echo "deps: all present (${pkgs[*]})"
	exit 0
fi

if ! command -v apt-get >/dev/null 2>&1; then
	echo "deps: missing packages: ${missing[*]}; no apt-get here, install them by hand" >&2
	exit 1
fi
if [ "$(id -u)" -ne 0 ]; then
	echo "deps: missing packages: ${missing[*]}; run 'sudo apt-get install ${missing[*]}' (not root)" >&2
	exit 1
fi

echo "deps: installing ${missing[*]}"
export DEBIAN_FRONTEND=noninteractive
apt-get update -qq
apt-get install -y -qq --no-install-recommends "${missing[@]}"
echo "deps: installed ${missing[*]}"
