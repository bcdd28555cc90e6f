#!/usr/bin/env bash
# Takes an etcd snapshot of the platform's store (every VM, VMI and other
# object of virtualization.kubevirt.io, docs/cluster.md "Backup and
# restore"), in whichever mode the local cluster runs:
#   embedded  the etcd inside virt-apiserver, reached through a
#             port-forward to its pod's 127.0.0.1:2379 (the image has no
#             etcdctl, and etcd listens on the pod's loopback only)
#   ha        one healthy member of virt-etcd, through a port-forward to its
#             client port, TLS with the operator's certificate virt-etcd-admin
# `etcdctl snapshot save` is etcd's consistent online snapshot: the store
# keeps serving while it is taken.
#
# Usage: backup.sh [[BACKUP=]FILE]   (make backup [BACKUP=FILE])
# FILE defaults to ${VIRT_BACKUPS:-~/.cache/virt/backups}/<UTC time>.db,
# outside ${VIRT_STATE} so that `make down PURGE=1` keeps it. Next to it,
# FILE.json: the mode, the time, the store's revision, how many keys each
# resource has under /registry/, the size and the sha256 (restore.sh checks
# it). The snapshot is checked with `etcdutl snapshot status` before it is
# kept. Prints FILE.
set -o errexit -o nounset -o pipefail
here="$(dirname "${BASH_SOURCE[0]}")"
source "${here}/lib.sh"
source "${here}/store-lib.sh"

target="${1:-${BACKUP:-}}"
target="${target#BACKUP=}"
stamp="$(date -u +%Y%m%dT%H%M%SZ)"
[ -n "${target}" ] || target="${BACKUP_DIR}/${stamp}.db"
[ ! -e "${target}" ] || die "${target} exists: name another file (BACKUP=...), a backup is never overwritten"
mkdir -p "$(dirname "${target}")"
target="$(realpath "$(dirname "${target}")")/$(basename "${target}")"

require_cluster
mode="$(store_mode)"
etcd_tools
t0=$(date +%s.%N)

# The source: a Ready pod whose etcd answers.
if [ "${mode}" = ha ]; then
  candidates="$(ready_pods "${ETCD_SELECTOR}")"
  [ -n "${candidates}" ] || die "no etcd member of virt-etcd is Ready: kubectl -n virt-system get pods -l ${ETCD_SELECTOR}"
else
  candidates="$(ready_pods "${APISERVER_SELECTOR}")"
  [ -n "${candidates}" ] || die "virt-apiserver has no Ready pod, so its embedded etcd cannot be reached: kubectl -n virt-system get pods -l ${APISERVER_SELECTOR}"
fi
trap stop_port_forward EXIT
source_pod=""
for pod in ${candidates}; do
  port_forward "${pod}" 2379 || continue
  if etcdctl_at "${mode}" endpoint health >/dev/null 2>&1; then
    source_pod="${pod}"
    break
  fi
  log "etcd in ${pod} is not healthy; trying the next"
  stop_port_forward
done
[ -n "${source_pod}" ] || die "no healthy etcd among ${candidates//$'\n'/ } (${mode} mode)"

partial="${target}.partial"
rm -f "${partial}"
log "snapshot of the ${mode} store from pod ${source_pod} into ${target}"
out="$(etcdctl_at "${mode}" snapshot save "${partial}" 2>&1)" ||
  { rm -f "${partial}"; die "etcdctl snapshot save from ${source_pod} failed: $(tail -n 3 <<<"${out}")"; }
save_seconds="$(seconds_since "${t0}")"

# A snapshot that etcdutl cannot read is no backup.
status="$("${ETCDUTL}" snapshot status "${partial}" -w json 2>&1)" ||
  { rm -f "${partial}"; die "the snapshot does not verify (etcdutl snapshot status): $(grep -m1 -E 'Error|panic' <<<"${status}" || head -n1 <<<"${status}")"; }
revision="$(grep -o '"revision":[0-9]*' <<<"${status}" | cut -d: -f2)"
total_keys="$(grep -o '"totalKey":[0-9]*' <<<"${status}" | cut -d: -f2)"
etcd_version="$(grep -o '"version":"[^"]*"' <<<"${status}" | cut -d'"' -f4)"

# Keys per resource at the snapshot's revision (etcd keeps it readable for
# minutes: virt-apiserver compacts what is older than its last compaction,
# every 5 min). A key is /registry/<group>/<resource>/[<namespace>/]<name>.
keys="$(etcdctl_at "${mode}" get "${STORE_PREFIX}" --prefix --keys-only --rev="${revision}")" ||
  die "cannot list the keys at revision ${revision}: etcdctl get ${STORE_PREFIX} --prefix --rev=${revision}"
counts="$(awk -v p="${STORE_PREFIX}" 'index($0, p) == 1 { split(substr($0, length(p) + 1), f, "/"); n[f[1] "/" f[2]]++ }
  END { for (r in n) print r, n[r] }' <<<"${keys}" | sort)"
stop_port_forward

sha="$(sha256sum "${partial}" | cut -d' ' -f1)"
size="$(stat -c %s "${partial}")"
{
  echo "{"
  echo "  \"snapshot\": \"$(basename "${target}")\","
  echo "  \"sha256\": \"${sha}\","
  echo "  \"size\": ${size},"
  echo "  \"mode\": \"${mode}\","
  echo "  \"source\": \"virt-system/${source_pod}\","
  echo "  \"time\": \"$(date -u -d "@${t0%.*}" +%Y-%m-%dT%H:%M:%SZ)\","
  echo "  \"revision\": ${revision},"
  echo "  \"totalKeys\": ${total_keys},"
  echo "  \"etcdVersion\": \"${etcd_version}\","
  echo "  \"prefix\": \"${STORE_PREFIX}\","
  echo "  \"keys\": {"
  sep=""
  while read -r resource n; do
    [ -n "${resource}" ] || continue
    printf '%s    "%s": %s' "${sep}" "${resource}" "${n}"
    sep=$',\n'
  done <<<"${counts}"
  echo
  echo "  }"
  echo "}"
} >"${target}.json.partial"
chmod 600 "${partial}" "${target}.json.partial"
mv "${target}.json.partial" "${target}.json"
mv "${partial}" "${target}"

summary="$(awk '{ sub(/.*\//, "", $1); printf "%s%s %s", sep, $2, $1; sep = ", " }' <<<"${counts}")"
log "backup done: revision ${revision}, ${total_keys} keys (${summary:-no objects}), $((size / 1024)) KiB, snapshot ${save_seconds} s, all $(seconds_since "${t0}") s"
echo "${target}"
