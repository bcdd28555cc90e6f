#!/usr/bin/env bash
# Builds etcd's own binaries for the platform's HA mode (the etcd cluster of
# artifacts/etcd, image localhost/virt-etcd): the server `etcd`, `etcdctl`
# and `etcdutl`, from the Go module proxy at the version hack/etcd/go.mod
# pins (k8s.io/apiserver's), static (the image has no libc). Cached under
# ${VIRT_CACHE}/etcd/<version>-<hash of hack/etcd/go.sum>, so a new pin or a
# changed dependency graph builds afresh and anything else prints the cached
# directory at once. Prints that directory.
#
# With --install DIR, also puts etcdctl and etcdutl into DIR (up.sh: next to
# the cluster's kubectl) for operators. DIR's own `etcd` (kube-apiserver's,
# hack/kube) is a different program and is left alone.
# With --cached, builds nothing: prints the directory if it is built, else
# fails (exit 1) without a word (images.sh: the default mode uses no etcd
# of its own).
set -o errexit -o nounset -o pipefail
source "$(dirname "${BASH_SOURCE[0]}")/lib/common.sh"

install_dir="" cached_only=0
case "${1:-}" in
  --install) install_dir="${2:?--install needs a directory}" ;;
  --cached) cached_only=1 ;;
esac

MODULE_DIR="${ROOT}/hack/etcd"
ETCD_VERSION="$(awk '$1 == "go.etcd.io/etcd/server/v3" { print $2 }' "${MODULE_DIR}/go.mod")"
[ -n "${ETCD_VERSION}" ] || die "hack/etcd/go.mod requires no go.etcd.io/etcd/server/v3"
key="$(cat "${MODULE_DIR}/go.mod" "${MODULE_DIR}/go.sum" | sha256sum | cut -c1-12)"
dir="${VIRT_CACHE}/etcd/${ETCD_VERSION}-${key}"
TOOLS=(etcd etcdctl etcdutl)

have_all() {
  local t
  for t in "${TOOLS[@]}"; do [ -x "${dir}/${t}" ] || return 1; done
}

if [ "${cached_only}" = 1 ] && ! have_all; then
  exit 1
fi
if ! have_all; then
  log "building etcd ${ETCD_VERSION} (etcd, etcdctl, etcdutl; once: a cold build took 100 s on 2 cores, module downloads included)"
  start=$(date +%s)
  rm -rf "${dir}.tmp"
  mkdir -p "${dir}.tmp"
  (
    cd "${MODULE_DIR}"
    # The server's main package is the module's root: name its binary.
    # Each its own build: all three packages are named v3.
    for t in etcd:server etcdctl:etcdctl etcdutl:etcdutl; do
      CGO_ENABLED=0 go_build "${t%%:*} ${ETCD_VERSION}" -trimpath -ldflags="-s -w" -o "${dir}.tmp/${t%%:*}" -- "go.etcd.io/etcd/${t#*:}/v3"
    done
  ) >&2
  "${dir}.tmp/etcd" --version | grep -qx "etcd Version: ${ETCD_VERSION#v}" ||
    die "the etcd built is not ${ETCD_VERSION}: $("${dir}.tmp/etcd" --version | head -n1)"
  rm -rf "${dir}"
  mv "${dir}.tmp" "${dir}"
  # Earlier pins or graphs are never used again.
  find "${VIRT_CACHE}/etcd" -mindepth 1 -maxdepth 1 ! -name "$(basename "${dir}")" -exec rm -rf {} +
  log "built etcd ${ETCD_VERSION} in $(($(date +%s) - start))s into ${dir}"
fi

if [ -n "${install_dir}" ]; then
  mkdir -p "${install_dir}"
  for t in etcdctl etcdutl; do
    cmp -s "${dir}/${t}" "${install_dir}/${t}" || install -m 0755 "${dir}/${t}" "${install_dir}/${t}"
  done
fi
echo "${dir}"
