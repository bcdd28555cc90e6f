#!/usr/bin/env bash
# Builds the Kubernetes binaries of the local cluster from the Go module proxy
# into ${KUBE_BIN}, once: later calls return at once when every binary is
# there and reports the pinned version.
set -o errexit -o nounset -o pipefail
source "$(dirname "${BASH_SOURCE[0]}")/lib/common.sh"

# A binary of another version means a new KUBE_VERSION: rebuild everything.
# Otherwise build only what is missing (a command added to KUBE_CMDS or
# KUBE_LOCAL_CMDS, hack/lib/common.sh).
todo=()
if [ -x "${KUBE_BIN}/kube-apiserver" ] &&
  "${KUBE_BIN}/kube-apiserver" --version 2>/dev/null | grep -qx "Kubernetes ${KUBE_VERSION}"; then
  for c in "${KUBE_CMDS[@]}" "${KUBE_LOCAL_CMDS[@]}"; do
    [ -x "${KUBE_BIN}/${c}" ] || todo+=("${c}")
  done
else
  rm -rf "${KUBE_BIN}"
  todo=("${KUBE_CMDS[@]}" "${KUBE_LOCAL_CMDS[@]}")
fi
if [ ${#todo[@]} -eq 0 ]; then
  exit 0
fi

log "building Kubernetes ${KUBE_VERSION} (${todo[*]}); a cold build of all takes 12-16 min on 2 cores"
ldflags="-s -w"
for p in k8s.io/component-base/version k8s.io/client-go/pkg/version; do
  ldflags+=" -X ${p}.gitVersion=${KUBE_VERSION} -X ${p}.gitMajor=1 -X ${p}.gitMinor=37"
  ldflags+=" -X ${p}.gitCommit=${KUBE_COMMIT} -X ${p}.gitTreeState=clean -X ${p}.buildDate=${KUBE_BUILD_DATE}"
done
rm -rf "${KUBE_BIN}.tmp"
mkdir -p "${KUBE_BIN}.tmp" "${KUBE_BIN}"
pkgs=()
for c in "${todo[@]}"; do
  if [[ " ${KUBE_LOCAL_CMDS[*]} " == *" ${c} "* ]]; then
    pkgs+=("./cmd/${c}")
  else
    pkgs+=("k8s.io/kubernetes/cmd/${c}")
  fi
done
start=$(date +%s)
(cd "${ROOT}/hack/kube" && go_build "Kubernetes ${KUBE_VERSION}" -ldflags="${ldflags}" -o "${KUBE_BIN}.tmp/" -- "${pkgs[@]}")
mv "${KUBE_BIN}.tmp"/* "${KUBE_BIN}/"
rmdir "${KUBE_BIN}.tmp"
log "built Kubernetes ${KUBE_VERSION} in $(( $(date +%s) - start ))s into ${KUBE_BIN}"
