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
# The Kubernetes commands build-kube.sh builds in hack/kube, and those of
# that module itself: etcd for kube-apiserver (go.etcd.io/etcd/server/v3
# embed, the version k8s.io/apiserver pins).
KUBE_CMDS=(kube-apiserver kube-controller-manager kube-scheduler kubelet kubectl kube-proxy)
KUBE_LOCAL_CMDS=(etcd)
# The platform's cgo commands, built in one go build (images.sh). They share
# the compiled k8s.io packages of the Kubernetes build only while both
# modules require the same versions (hack/verify-shared-modules.sh).
PLATFORM_CMDS=(virt-apiserver virt-controller virt-handler virt-launcher)
# Build tags of the platform's binaries (images.sh, `make build`):
# grpcnotrace keeps golang.org/x/net/trace, and with it html/template, out of
# them (see images.sh).
PLATFORM_GO_TAGS="grpcnotrace"

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

# go_build WHAT [GO BUILD FLAGS...] -- PACKAGES...: `go build` in the
# current directory that says how far it got every VIRT_PROGRESS_EVERY
# seconds (30): a cold build of Kubernetes takes a quarter of an hour on 2
# cores and must not look hung. The count is of packages compiled so far
# (go build -v; cached ones are not compiled, so a warm build ends below
# the total) against the build's whole dependency graph (go list -deps,
# which also fetches the modules the build needs). A failed build prints
# go's errors, not its package list.
go_build() {
  local what="$1" flags=() pkgs out total pid lpid rc=0 start every="${VIRT_PROGRESS_EVERY:-30}" next
  shift
  while [ $# -gt 0 ] && [ "$1" != "--" ]; do flags+=("$1"); shift; done
  [ "${1:-}" = "--" ] || die "go_build ${what}: no -- before the packages"
  shift
  pkgs=("$@")
  out="$(mktemp -d)"
  start=$(date +%s)
  # Both in the background: the build does not wait for the count.
  (go list -deps "${pkgs[@]}" 2>/dev/null | wc -l >"${out}/total.tmp" && mv "${out}/total.tmp" "${out}/total") &
  lpid=$!
  go build -v "${flags[@]}" "${pkgs[@]}" 2>"${out}/log" &
  pid=$!
  next=$((start + every))
  while kill -0 "${pid}" 2>/dev/null; do
    sleep 1
    if [ "$(date +%s)" -ge "${next}" ] && kill -0 "${pid}" 2>/dev/null; then
      total="$(cat "${out}/total" 2>/dev/null || echo '?')"
      log "  building ${what}: $(grep -c -E '^[[:alnum:]_./~+-]+$' "${out}/log" || true) of ${total} packages compiled, $(($(date +%s) - start))s"
      next=$((next + every))
    fi
  done
  wait "${pid}" || rc=$?
  wait "${lpid}" || true # the count
  if [ "${rc}" -ne 0 ]; then
    grep -v -E '^[[:alnum:]_./~+-]+$' "${out}/log" >&2 || true
  fi
  rm -rf "${out}"
  return "${rc}"
}
