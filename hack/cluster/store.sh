#!/usr/bin/env bash
# make backup / make restore on the local cluster: runs `virt-apiserver
# store backup|restore` (apiserver/store; docs/cluster.md "Backup and
# restore") with the local cluster's kubeconfig and, for the HA mode, the
# operator's etcd client certificate. Everything else is the Go command's.
#
# Usage: store.sh backup [[BACKUP=]FILE]   FILE defaults to
#          ${VIRT_BACKUPS:-~/.cache/virt/backups}/<UTC time>.db, outside
#          ${VIRT_STATE} so that `make down PURGE=1` keeps it; prints FILE
#        store.sh restore [BACKUP=]FILE
#          asks first from a terminal; VIRT_RESTORE_CONFIRM=yes answers
set -o errexit -o nounset -o pipefail
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

op="${1:-}"
file="${2:-${BACKUP:-}}"
file="${file#BACKUP=}"
backups="${VIRT_BACKUPS:-${VIRT_CACHE}/backups}"
[ -r "${ADMIN_KUBECONFIG}" ] ||
  die "cannot read ${ADMIN_KUBECONFIG}: run as root (sudo), and bring the cluster up with make up if it never ran"

bin="${ROOT}/_output/bin/virt-apiserver"
(cd "${ROOT}" && go build -tags "${PLATFORM_GO_TAGS}" -o "${bin}" ./cmd/virt-apiserver) || die "cannot build virt-apiserver"
case "${op}" in
  backup)
    exec "${bin}" store backup --kubeconfig "${ADMIN_KUBECONFIG}" --dir "${backups}" \
      --etcd-cafile "${PKI}/virt-etcd-ca.crt" --etcd-certfile "${PKI}/virt-etcd-admin.crt" \
      --etcd-keyfile "${PKI}/virt-etcd-admin.key" ${file:+"${file}"}
    ;;
  restore)
    if [ -z "${file}" ]; then
      newest="$(ls -1t "${backups}"/*.db 2>/dev/null | head -n 3 | sed 's/^/  /')" || true
      die "which snapshot? make restore BACKUP=FILE (make backup writes them${newest:+; the newest in ${backups}:
${newest}})"
    fi
    yes=()
    [ "${VIRT_RESTORE_CONFIRM:-}" != yes ] || yes=(--yes)
    exec "${bin}" store restore --kubeconfig "${ADMIN_KUBECONFIG}" "${yes[@]}" "${file}"
    ;;
  *) die "usage: store.sh backup [FILE] | restore FILE" ;;
esac
