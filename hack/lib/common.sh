# Shared settings of the hack/ scripts. Sourced, never run.
#
# Everything the project builds or downloads outside Go's own caches lives
# under VIRT_CACHE; everything a running cluster owns lives under VIRT_STATE.
# Both are outside the clone so that a fresh clone reuses earlier work.

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd -P)"
VIRT_CACHE="${VIRT_CACHE:-${HOME}/.cache/virt}"
VIRT_STATE="${VIRT_STATE:-/var/lib/virt-dev}"

# Kubernetes release of the local cluster; the commit stamps `--version`
# output (the module proxy's .info carries no VCS origin for this module).
KUBE_VERSION="v1.37.1"
KUBE_COMMIT="f78e722310e50bcaca9276be22276d9e91d91308"
KUBE_BUILD_DATE="2026-09-23T17:06:22Z"
KUBE_BIN="${VIRT_CACHE}/kube/${KUBE_VERSION}/bin"

export GOFLAGS="${GOFLAGS:--buildvcs=false}"
export GOTOOLCHAIN=local

log() { printf '%s %s\n' "$(date +%H:%M:%S)" "$*" >&2; }
die() { log "error: $*"; exit 1; }
