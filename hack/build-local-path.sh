#!/usr/bin/env bash
# Builds rancher's local-path-provisioner, the local cluster's dynamic
# provisioner (StorageClass local-path, hack/cluster/local-path/), from the Go
# module proxy: a static binary (it runs in an image without libc), once.
# Later calls print the cached binary at once. Prints its path.
#
# It is built with `go install module@version`, outside the platform's and
# hack/kube's modules: it pins client-go v0.30, which neither may inherit.
set -o errexit -o nounset -o pipefail
source "$(dirname "${BASH_SOURCE[0]}")/lib/common.sh"

# The only version the module proxy serves.
LOCAL_PATH_VERSION="v0.0.30"
MODULE="github.com/rancher/local-path-provisioner"

dir="${VIRT_CACHE}/kube/local-path-provisioner/${LOCAL_PATH_VERSION}"
bin="${dir}/local-path-provisioner"
if [ -x "${bin}" ]; then
  echo "${bin}"
  exit 0
fi

log "building local-path-provisioner ${LOCAL_PATH_VERSION} (once; a cold build took 2 min on 2 cores, module downloads included)"
start=$(date +%s)
rm -rf "${dir}.tmp"
mkdir -p "${dir}.tmp"
# main.VERSION is what `local-path-provisioner --version` prints.
GOBIN="${dir}.tmp" CGO_ENABLED=0 go install \
  -ldflags="-s -w -X main.VERSION=${LOCAL_PATH_VERSION}" "${MODULE}@${LOCAL_PATH_VERSION}" >&2
mkdir -p "${dir}"
mv "${dir}.tmp/local-path-provisioner" "${bin}"
rmdir "${dir}.tmp"
log "built local-path-provisioner ${LOCAL_PATH_VERSION} in $(($(date +%s) - start))s into ${dir}"
echo "${bin}"
