#!/usr/bin/env bash
# Regenerates the Go code of the node <-> launcher contract
# (launcher/api/v1/launcher.proto) with protoc and the protoc-gen-go /
# protoc-gen-go-grpc versions pinned by the tool lines of go.mod.
set -o errexit -o nounset -o pipefail
source "$(dirname "${BASH_SOURCE[0]}")/lib/common.sh"
cd "${ROOT}"

command -v protoc >/dev/null || die "protoc not found: run hack/install-deps.sh"
BIN="${CODEGEN_GOBIN:-${ROOT}/_output/tools}"
mkdir -p "${BIN}"
GOBIN="${BIN}" go install google.golang.org/protobuf/cmd/protoc-gen-go \
  google.golang.org/grpc/cmd/protoc-gen-go-grpc

dir=launcher/api/v1
protoc \
  --plugin=protoc-gen-go="${BIN}/protoc-gen-go" \
  --plugin=protoc-gen-go-grpc="${BIN}/protoc-gen-go-grpc" \
  --proto_path="${dir}" \
  --go_out="${dir}" --go_opt=paths=source_relative \
  --go-grpc_out="${dir}" --go-grpc_opt=paths=source_relative \
  "${dir}/launcher.proto"
