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

# debian_mirror SUITE VAR: the Debian mirror for SUITE, VAR's value when set,
# else the one the host's apt sources use for that suite (apt's index
# targets). The project names no mirror of its own: on a host whose sources
# have none for SUITE, VAR must say which to use.
debian_mirror() {
  local suite="$1" var="$2" uri
  if [ -n "${!var:-}" ]; then
    echo "${!var}"
    return
  fi
  uri="$(apt-get indextargets --format '$(RELEASE) $(REPO_URI)' 'Identifier: Packages' 2>/dev/null |
    awk -v s="${suite}" '$1 == s {print $2; exit}')" || true
  [ -n "${uri}" ] || die "the host's apt sources name no mirror for Debian ${suite}: set ${var} to the URL of a Debian mirror (e.g. ${var}=http://<mirror>/debian)"
  echo "${uri}"
}
