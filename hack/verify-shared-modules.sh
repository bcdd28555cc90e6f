#!/usr/bin/env bash
# Fails when the platform's commands and the Kubernetes build (hack/kube)
# compile a Kubernetes module (k8s.io/..., sigs.k8s.io/...) at different
# versions. Go's build cache shares a compiled package between the two
# builds only when the package and all it imports are the same: one module
# a patch release apart (client-go v0.37.2 against v0.37.1, say) makes a
# cold `make up` compile some 760 k8s.io packages twice, a few minutes on
# two cores.
set -o errexit -o nounset -o pipefail
source "$(dirname "${BASH_SOURCE[0]}")/lib/common.sh"
cd "${ROOT}"

# modules PKGS...: "path version" of each Kubernetes module whose packages
# the packages import, the replacement's version where one is.
modules() {
  go list -deps -f '{{with .Module}}{{.Path}} {{with .Replace}}{{.Version}}{{else}}{{.Version}}{{end}}{{end}}' "$@" |
    grep -E '^(k8s\.io|sigs\.k8s\.io)/' | sort -u
}

tmp="$(mktemp -d)"
trap 'rm -rf "${tmp}"' EXIT
platform=()
for c in "${PLATFORM_CMDS[@]}"; do platform+=("./cmd/${c}"); done
kube=()
for c in "${KUBE_CMDS[@]}"; do kube+=("k8s.io/kubernetes/cmd/${c}"); done
for c in "${KUBE_LOCAL_CMDS[@]}"; do kube+=("./cmd/${c}"); done
modules "${platform[@]}" >"${tmp}/platform"
(cd hack/kube && modules "${kube[@]}") >"${tmp}/kube"

differ="$(join "${tmp}/platform" "${tmp}/kube" | awk '$2 != $3 {printf "  %s: %s in go.mod, %s in hack/kube/go.mod\n", $1, $2, $3}')"
if [ -n "${differ}" ]; then
  echo "the platform and the Kubernetes ${KUBE_VERSION} build require different versions of modules both compile:" >&2
  echo "${differ}" >&2
  echo "so a cold make up compiles them twice; require hack/kube's versions in go.mod (go get MODULE@VERSION)" >&2
  exit 1
fi
echo "the platform's commands share $(join "${tmp}/platform" "${tmp}/kube" | wc -l) Kubernetes modules with the Kubernetes build, at the same versions"
