#!/usr/bin/env bash
# Builds the local cluster's DNS, CoreDNS with only the plugins of
# hack/coredns/main.go (no forward plugin: nothing reaches the host's
# resolver), from the Go module proxy: a static binary (it runs in an image
# without libc), once per version and recipe. Later calls print the cached
# binary after a checksum. Prints its path.
#
# hack/coredns is its own module: the platform's module never inherits
# CoreDNS's dependency graph.
set -o errexit -o nounset -o pipefail
source "$(dirname "${BASH_SOURCE[0]}")/lib/common.sh"

SRC="${ROOT}/hack/coredns"
# The version go.mod pins; the key covers the plugins (main.go) and every
# dependency (go.sum) as well.
COREDNS_VERSION="$(cd "${SRC}" && awk '$1 == "require" && $2 == "github.com/coredns/coredns" {print $3}' go.mod)"
[ -n "${COREDNS_VERSION}" ] || die "hack/coredns/go.mod pins no github.com/coredns/coredns"
key="$(cat "${SRC}/go.mod" "${SRC}/go.sum" "${SRC}/main.go" | sha256sum | cut -c1-12)"

dir="${VIRT_CACHE}/coredns/${COREDNS_VERSION}-${key}"
bin="${dir}/coredns"
if [ -x "${bin}" ]; then
  echo "${bin}"
  exit 0
fi

log "building CoreDNS ${COREDNS_VERSION} (once; a cold build took 2 min 44 s on 2 cores, module downloads included)"
start=$(date +%s)
rm -rf "${dir}.tmp"
mkdir -p "${dir}.tmp"
# gitTag is what `coredns -version` prints.
(cd "${SRC}" && CGO_ENABLED=0 go_build "CoreDNS ${COREDNS_VERSION}" -trimpath \
  -ldflags="-s -w -X github.com/coredns/coredns/coremain.gitTag=${COREDNS_VERSION}" \
  -o "${dir}.tmp/coredns" -- .)
rm -rf "${dir}"
mv "${dir}.tmp" "${dir}"
# Older recipes of this version and older versions are of no further use.
find "${VIRT_CACHE}/coredns" -mindepth 1 -maxdepth 1 -type d ! -name "$(basename "${dir}")" -exec rm -rf {} +
log "built CoreDNS ${COREDNS_VERSION} in $(($(date +%s) - start))s into ${dir}"
echo "${bin}"
