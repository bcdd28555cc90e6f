#!/usr/bin/env bash
# Regenerates every generated file of the API: deepcopy, conversion and
# defaulters beside the types; OpenAPI; protobuf (hack/update-protobuf.sh);
# clientset, listers, informers and apply configurations under generated/.
set -o errexit -o nounset -o pipefail
source "$(dirname "${BASH_SOURCE[0]}")/lib/common.sh"
cd "${ROOT}"

MODULE="$(go list -m)"
# Generator binaries stay inside the tree so that two checkouts pinned to
# different code-generator versions never overwrite each other's tools.
export GOBIN="${CODEGEN_GOBIN:-${ROOT}/_output/tools}"
mkdir -p "${GOBIN}"
go mod download k8s.io/code-generator
CODEGEN_PKG="$(go list -m -f '{{.Dir}}' k8s.io/code-generator)"
# shellcheck source=/dev/null
source "${CODEGEN_PKG}/kube_codegen.sh"
# Our types embed core/v1 types (affinity, tolerations, resource lists); their
# OpenAPI definitions come from k8s.io/api, which we read but never write.
KUBE_CODEGEN_READONLY_PKGS+=(k8s.io/api/core/v1)
# The scale subresource of replica sets serves autoscaling/v1 Scale, so its
# OpenAPI definition must be ours too.
KUBE_CODEGEN_READONLY_PKGS+=(k8s.io/api/autoscaling/v1)
BOILERPLATE="${ROOT}/hack/boilerplate.go.txt"

# A stale generated.pb.go (a field was removed) stops every later generator
# from compiling the package; it is regenerated below anyway.
rm -f "${ROOT}/apis/virtualization/v1/generated.pb.go"

kube::codegen::gen_helpers --boilerplate "${BOILERPLATE}" "${ROOT}/apis"

kube::codegen::gen_openapi \
  --output-dir "${ROOT}/generated/openapi" \
  --output-pkg "${MODULE}/generated/openapi" \
  --output-model-name-file zz_generated.model_name.go \
  --extra-pkgs k8s.io/api/core/v1 \
  --extra-pkgs k8s.io/api/autoscaling/v1 \
  --extra-pkgs k8s.io/apimachinery/pkg/util/intstr \
  --report-filename "${ROOT}/hack/api-rules-violations.list" \
  ${UPDATE_API_KNOWN_VIOLATIONS:+--update-report} \
  --boilerplate "${BOILERPLATE}" \
  "${ROOT}/apis"

"${ROOT}/hack/update-protobuf.sh"

kube::codegen::gen_client \
  --with-watch \
  --with-applyconfig \
  --applyconfig-openapi-schema <(go run ./hack/models-schema) \
  --prefers-protobuf \
  --output-dir "${ROOT}/generated" \
  --output-pkg "${MODULE}/generated" \
  --boilerplate "${BOILERPLATE}" \
  "${ROOT}/apis"
