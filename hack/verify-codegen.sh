#!/usr/bin/env bash
# Fails, with a diff, when a generated file is not what the generators make
# from the current types: someone changed a type without `make generate`.
# Works on a copy of the tree, so the working tree is never modified.
set -o errexit -o nounset -o pipefail
source "$(dirname "${BASH_SOURCE[0]}")/lib/common.sh"
cd "${ROOT}"

tmp="$(mktemp -d)"
trap 'rm -rf "${tmp}"' EXIT
tar --exclude=./_output --exclude=./.git -cf - . | tar -C "${tmp}" -xf -
# Reuse the generator binaries of the real tree.
export CODEGEN_GOBIN="${ROOT}/_output/tools"
if ! (cd "${tmp}" && hack/update-codegen.sh >/dev/null && hack/update-launcher-proto.sh >/dev/null); then
  echo "code generation fails on the current types (see above): fix them, run 'make generate' and commit the result" >&2
  echo "(a field in only one of apis/virtualization and apis/virtualization/v1 needs a hand-written conversion)" >&2
  exit 1
fi

status=0
for path in apis generated hack/api-rules-violations.list launcher/api; do
  if ! diff -Naupr "${path}" "${tmp}/${path}"; then
    status=1
  fi
done
if [ "${status}" -ne 0 ]; then
  echo "generated code is stale: run 'make generate' and commit the result" >&2
fi
exit "${status}"
