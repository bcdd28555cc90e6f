#!/usr/bin/env bash
# Regenerates generated.proto and generated.pb.go of the versioned API (and the
# protobuf tags go-to-protobuf writes into types_*.go). Needs protoc
# (hack/install-deps.sh installs Debian's protobuf-compiler).
set -o errexit -o nounset -o pipefail
source "$(dirname "${BASH_SOURCE[0]}")/lib/common.sh"
cd "${ROOT}"

command -v protoc >/dev/null || die "protoc not found: run hack/install-deps.sh"
MODULE="$(go list -m)"
BIN="${CODEGEN_GOBIN:-${ROOT}/_output/tools}"
mkdir -p "${BIN}"
# Versions come from the tool lines of go.mod.
GOBIN="${BIN}" go install k8s.io/code-generator/cmd/go-to-protobuf \
  k8s.io/code-generator/cmd/go-to-protobuf/protoc-gen-gogo golang.org/x/tools/cmd/goimports

# go-to-protobuf and protoc address every .proto by Go import path, GOPATH
# style: build a throw-away GOPATH of symlinks to this module and its deps.
gopath="$(mktemp -d)"
trap 'rm -rf "${gopath}"' EXIT
link() {
  mkdir -p "$(dirname "${gopath}/src/$1")"
  ln -s "$2" "${gopath}/src/$1"
}
link "${MODULE}" "${ROOT}"
for m in k8s.io/apimachinery k8s.io/api github.com/gogo/protobuf; do
  link "${m}" "$(go list -m -f '{{.Dir}}' "${m}")"
done

# A leading "-" means: read for types, never write (they live in the
# read-only module cache and ship their own generated.proto).
PATH="${BIN}:${PATH}" "${BIN}/go-to-protobuf" \
  --go-header-file "${ROOT}/hack/boilerplate.go.txt" \
  --output-dir "${gopath}/src" \
  --proto-import "${gopath}/src" \
  --proto-import "${gopath}/src/github.com/gogo/protobuf/protobuf" \
  --apimachinery-packages "-k8s.io/apimachinery/pkg/util/intstr,-k8s.io/apimachinery/pkg/api/resource,-k8s.io/apimachinery/pkg/runtime/schema,-k8s.io/apimachinery/pkg/runtime,-k8s.io/apimachinery/pkg/apis/meta/v1,-k8s.io/api/core/v1" \
  --packages "${MODULE}/apis/virtualization/v1"
