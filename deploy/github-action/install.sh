#!/usr/bin/env bash
# Installs the seedance release VERSION (a tag, or latest) for this runner
# from GitHub Releases with the gh CLI that GitHub's runners carry, after
# checking it against the release's checksums.
set -euo pipefail

os=$(uname -s | tr '[:upper:]' '[:lower:]')
case "$(uname -m)" in
  x86_64) arch=amd64 ;;
  aarch64 | arm64) arch=arm64 ;;
  *) echo "seedance-action: no seedance build for $(uname -m)" >&2; exit 1 ;;
esac
tag=${VERSION:-latest}
dir=$(mktemp -d)
args=(release download --repo seedance/seedance --dir "$dir" --pattern "seedance_*_${os}_${arch}.tar.gz" --pattern checksums.txt)
if [[ "$tag" != latest ]]; then
  args+=("$tag")
fi
gh "${args[@]}"
(cd "$dir" && sha256sum --check --ignore-missing checksums.txt)
tar -xzf "$dir"/seedance_*_"${os}_${arch}".tar.gz -C "$dir" seedance
install -m 0755 "$dir/seedance" "${RUNNER_TEMP:-/usr/local/bin}/seedance"
if [[ -n "${RUNNER_TEMP:-}" && -n "${GITHUB_PATH:-}" ]]; then
  echo "$RUNNER_TEMP" >> "$GITHUB_PATH"
fi
