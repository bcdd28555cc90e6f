#!/usr/bin/env bash
# Puts a snapshot of backup.sh back as the platform's whole store, etcd's
# documented restore (docs/cluster.md "Backup and restore"): every object
# of virtualization.kubevirt.io goes back to the snapshot's time.
#   1. Checks the snapshot (its sha256 against FILE.json, etcdutl) and the
#      cluster (running, in a known mode) before touching anything.
#   2. Stops virt-apiserver (scale to 0, waits until its pods are gone) and,
#      in the HA mode, the etcd members: nothing writes during the restore.
#   3. `etcdutl snapshot restore` into a NEW data directory per member, with
#      the member's own name, peer URL, initial cluster and token (embedded:
#      apiserver/etcd's single member; HA: the StatefulSet's arguments),
#      owned by the user of the old one. --bump-revision and
#      --mark-compacted: the store's revision jumps 10^9 past the higher of
#      the snapshot's and the old store's, beyond any its clients have seen,
#      so every watch from before the restore ends "compacted" and its
#      informer lists again instead of waiting for, or missing, revisions.
#   4. Swaps the new directory in; the old one is kept beside it as
#      <dir>.before-restore-<time>, never deleted.
#   5. Starts the members and virt-apiserver as they were, waits for the
#      APIService to be Available, creates the namespaces the restored
#      objects are in that Kubernetes does not have (a cluster rebuilt with
#      `make down PURGE=1`), and prints what came back.
# On a failure before the swap the old store is started again, unchanged.
#
# Usage: restore.sh [BACKUP=]FILE   (make restore BACKUP=FILE). Root.
# From a terminal it asks before it replaces the store; VIRT_RESTORE_CONFIRM=yes
# answers for it.
set -o errexit -o nounset -o pipefail
here="$(dirname "${BASH_SOURCE[0]}")"
source "${here}/lib.sh"
source "${here}/store-lib.sh"

# The bump Kubernetes' own restore documentation uses: far beyond the
# revisions any client can have seen of this store.
BUMP=1000000000

snapshot="${1:-${BACKUP:-}}"
snapshot="${snapshot#BACKUP=}"
if [ -z "${snapshot}" ]; then
  newest="$(ls -1t "${BACKUP_DIR}"/*.db 2>/dev/null | head -n 3 | sed 's/^/  /')" || true
  die "which snapshot? make restore BACKUP=FILE (make backup writes them${newest:+; the newest in ${BACKUP_DIR}:
${newest}})"
fi
[ -f "${snapshot}" ] || die "no snapshot at ${snapshot} (make backup writes them to ${BACKUP_DIR})"
snapshot="$(realpath "${snapshot}")"
[ "$(id -u)" -eq 0 ] || die "restore replaces the store's data directories on the node: run it as root"
etcd_tools
t0=$(date +%s.%N)

# 1. The snapshot, then the cluster.
meta="${snapshot}.json"
snap_mode="" snap_time=""
if [ -f "${meta}" ]; then
  want="$(metadata_field "${meta}" sha256)"
  have="$(sha256sum "${snapshot}" | cut -d' ' -f1)"
  [ "${want}" = "${have}" ] ||
    die "${snapshot} is not the file backup.sh wrote: its sha256 is ${have}, ${meta} says ${want} (a truncated or altered copy?)"
  snap_mode="$(metadata_field "${meta}" mode)"
  snap_time="$(metadata_field "${meta}" time)"
else
  log "no ${meta}: the snapshot is checked by etcdutl alone"
fi
status="$("${ETCDUTL}" snapshot status "${snapshot}" -w json 2>&1)" ||
  die "${snapshot} is not an etcd snapshot etcdutl can read: $(grep -m1 -E 'Error|panic' <<<"${status}" || head -n1 <<<"${status}")"
snap_rev="$(grep -o '"revision":[0-9]*' <<<"${status}" | cut -d: -f2)"
snap_keys="$(grep -o '"totalKey":[0-9]*' <<<"${status}" | cut -d: -f2)"

require_cluster
mode="$(store_mode)"
if [ -n "${snap_mode}" ] && [ "${snap_mode}" != "${mode}" ]; then
  log "the snapshot was taken in the ${snap_mode} mode, the platform runs in the ${mode} mode: restoring it into the ${mode} store (both keep the same keys)"
fi

# The members to restore: name, peer URL, data directory on this node.
names=() peer_urls=() dirs=()
if [ "${mode}" = embedded ]; then
  # apiserver/etcd: one member named virt-apiserver, peer on the pod's
  # loopback, etcd's default token, data in <--data-dir>/etcd
  # (apiserver/options.go), --data-dir being the volume "data".
  host_dir="$(kubectl -n virt-system get deployment virt-apiserver \
    -o jsonpath='{.spec.template.spec.volumes[?(@.name=="data")].hostPath.path}')"
  [ -n "${host_dir}" ] && [ -d "${host_dir}" ] ||
    die "virt-apiserver's volume data is no directory of this node (hostPath '${host_dir}'): restore.sh restores the cluster of make up; docs/cluster.md \"Backup and restore\" has the steps for others"
  args="$(kubectl -n virt-system get deployment virt-apiserver -o jsonpath='{.spec.template.spec.containers[0].args}')"
  peer_port="$(grep -o -- '--embedded-etcd-peer-port=[0-9]*' <<<"${args}" | cut -d= -f2 || true)"
  names=(virt-apiserver)
  peer_urls=("http://127.0.0.1:${peer_port:-2380}")
  dirs=("${host_dir}/etcd")
  initial_cluster="virt-apiserver=${peer_urls[0]}"
  token="etcd-cluster"
else
  # artifacts/etcd: the members and their peer URLs are the StatefulSet's
  # --initial-cluster; each member's data is --data-dir inside its claim
  # data-<member> (local-path: a directory of this node).
  args="$(kubectl -n virt-system get statefulset virt-etcd -o jsonpath='{.spec.template.spec.containers[0].args}')"
  initial_cluster="$(grep -o -- '--initial-cluster=[^"]*' <<<"${args}" | cut -d= -f2-)"
  token="$(grep -o -- '--initial-cluster-token=[^"]*' <<<"${args}" | cut -d= -f2-)"
  data_arg="$(grep -o -- '--data-dir=[^"]*' <<<"${args}" | cut -d= -f2-)"
  mount="$(kubectl -n virt-system get statefulset virt-etcd \
    -o jsonpath='{.spec.template.spec.containers[0].volumeMounts[?(@.name=="data")].mountPath}')"
  [ -n "${initial_cluster}" ] && [ -n "${token}" ] && [ -n "${mount}" ] && [[ "${data_arg}" == "${mount}/"* ]] ||
    die "cannot read the members from StatefulSet virt-etcd (--initial-cluster, --initial-cluster-token, --data-dir under the volume data)"
  for pair in ${initial_cluster//,/ }; do
    name="${pair%%=*}"
    pv="$(kubectl -n virt-system get pvc "data-${name}" -o jsonpath='{.spec.volumeName}' 2>/dev/null || true)"
    path=""
    [ -z "${pv}" ] || path="$(kubectl get pv "${pv}" -o jsonpath='{.spec.hostPath.path}{.spec.local.path}')"
    [ -n "${path}" ] && [ -d "${path}" ] ||
      die "member ${name}'s claim data-${name} is no directory of this node (volume '${pv}', path '${path}'): restore.sh restores the cluster of make up; docs/cluster.md \"Backup and restore\" has the steps for others"
    names+=("${name}")
    peer_urls+=("${pair#*=}")
    dirs+=("${path}/${data_arg#"${mount}"/}")
  done
fi

if [ -t 0 ] && [ "${VIRT_RESTORE_CONFIRM:-}" != yes ]; then
  cat >&2 <<EOF
This replaces the platform's whole store (${mode} mode, ${#names[@]} member(s)) with
  ${snapshot}
  (revision ${snap_rev}, ${snap_keys} keys${snap_time:+, taken ${snap_time}})
Every VM, VMI and other object of virtualization.kubevirt.io goes back to that
time: what was created since is gone, what was deleted since comes back.
virt-apiserver is down meanwhile. The old data is kept, never deleted.
EOF
  read -r -p "Type yes to restore: " answer
  [ "${answer}" = yes ] || die "nothing done"
fi

# 2. Stop every writer: virt-apiserver, then the members.
api_replicas="$(kubectl -n virt-system get deployment virt-apiserver -o jsonpath='{.spec.replicas}')"
etcd_replicas=""
[ "${mode}" = ha ] && etcd_replicas="$(kubectl -n virt-system get statefulset virt-etcd -o jsonpath='{.spec.replicas}')"
stamp="$(date -u +%Y%m%dT%H%M%SZ)"
stopped=0 swapped=0
new_dirs=() old_dirs=()

# start_again starts the members, waits until they are a quorum (ready:
# virt-apiserver would otherwise start on no store, fail and be restarted),
# then virt-apiserver.
start_again() {
  if [ -n "${etcd_replicas}" ]; then
    kubectl -n virt-system scale statefulset/virt-etcd --replicas="${etcd_replicas}" >/dev/null
    kubectl -n virt-system rollout status statefulset/virt-etcd --timeout=300s >/dev/null ||
      die "the etcd members did not become ready: kubectl -n virt-system describe pods -l ${ETCD_SELECTOR}"
  fi
  kubectl -n virt-system scale deployment/virt-apiserver --replicas="${api_replicas}" >/dev/null
}

# A failure before the swap leaves the old store as it was: start it again.
on_exit() {
  local rc=$? d
  [ "${rc}" -ne 0 ] || return 0
  if [ "${stopped}" = 1 ] && [ "${swapped}" = 0 ]; then
    for d in "${new_dirs[@]}"; do rm -rf --one-file-system "${d}"; done
    log "restore failed before the store was replaced: starting the old store again, unchanged"
    start_again || log "could not scale virt-apiserver back to ${api_replicas}: kubectl -n virt-system scale deployment/virt-apiserver --replicas=${api_replicas}"
  elif [ "${swapped}" = 1 ]; then
    log "the restored store is in place, the old data is kept in: ${old_dirs[*]}"
  fi
}
trap on_exit EXIT

# stop KIND/NAME SELECTOR scales to 0 and waits until the pods are gone.
stop() {
  kubectl -n virt-system scale "$1" --replicas=0 >/dev/null
  # wait fails when nothing matches, which is what it waits for.
  kubectl -n virt-system wait --for=delete pod -l "$2" --timeout=120s >/dev/null 2>&1 ||
    [ -z "$(kubectl -n virt-system get pods -l "$2" -o name)" ] ||
    die "the pods of $1 did not stop within 120s: kubectl -n virt-system get pods -l $2"
}
log "stopping virt-apiserver (${api_replicas} replica(s))"
stopped=1
down_at=$(date +%s.%N)
stop deployment/virt-apiserver "${APISERVER_SELECTOR}"
if [ "${mode}" = ha ]; then
  log "stopping the etcd members (${etcd_replicas})"
  stop statefulset/virt-etcd "${ETCD_SELECTOR}"
fi

# The bump must take the store past every revision its clients saw: the
# old store's revision may be beyond the snapshot's + BUMP (an older
# snapshot after an earlier restore bumped it), so it counts from the
# higher of the two. Read offline from the stopped members' databases.
current=0
for dir in "${dirs[@]}"; do
  [ -f "${dir}/member/snap/db" ] || continue
  rev="$(snapshot_field "${dir}/member/snap/db" revision)" || rev=""
  [ -n "${rev}" ] || die "cannot read the revision of ${dir}/member/snap/db (etcdutl snapshot status)"
  [ "${rev}" -le "${current}" ] || current="${rev}"
done
bump="${BUMP}"
[ "${current}" -le "${snap_rev}" ] || bump=$((BUMP + current - snap_rev))
log "the store was at revision ${current}, the snapshot is at ${snap_rev}: the restored store starts at $((snap_rev + bump))"

# 3. A new data directory per member, next to the old one (one file
# system: the swap is a rename).
for i in "${!names[@]}"; do
  dir="${dirs[i]}"
  new="${dir}.restoring-${stamp}"
  owner="$(stat -c %u:%g "${dir}" 2>/dev/null || stat -c %u:%g "$(dirname "${dir}")")"
  new_dirs+=("${new}")
  out="$("${ETCDUTL}" snapshot restore "${snapshot}" --data-dir="${new}" \
    --name="${names[i]}" --initial-advertise-peer-urls="${peer_urls[i]}" \
    --initial-cluster="${initial_cluster}" --initial-cluster-token="${token}" \
    --bump-revision="${bump}" --mark-compacted 2>&1)" ||
    die "etcdutl snapshot restore for ${names[i]} into ${new} failed: $(tail -n 3 <<<"${out}")"
  chown -R "${owner}" "${new}"
  chmod 700 "${new}"
  log "restored member ${names[i]} into ${new} (owner ${owner})"
done

# 4. Swap: the old directory stays, renamed.
for i in "${!dirs[@]}"; do
  dir="${dirs[i]}"
  old="${dir}.before-restore-${stamp}"
  if [ -e "${dir}" ]; then
    mv "${dir}" "${old}"
    old_dirs+=("${old}")
  fi
  swapped=1
  mv "${new_dirs[i]}" "${dir}"
done
new_dirs=()

# 5. Start what was stopped; the members first.
log "starting the restored store"
start_again
kubectl -n virt-system rollout status deployment/virt-apiserver --timeout=180s >/dev/null ||
  die "virt-apiserver did not become ready on the restored store: kubectl -n virt-system logs -l ${APISERVER_SELECTOR}"
kubectl wait --for=condition=Available "apiservice/${APISERVICE}" --timeout=120s >/dev/null ||
  die "APIService ${APISERVICE} not Available after the restore: $(kubectl get apiservice "${APISERVICE}" -o jsonpath='{.status.conditions[0].message}')"
downtime="$(seconds_since "${down_at}")"

# Namespaces are Kubernetes', not the platform's store's: a rebuilt
# cluster lacks those of the restored objects, and without them no
# launcher pod can be created there.
for ns in $(kubectl get vm,vmi -A -o jsonpath='{range .items[*]}{.metadata.namespace}{"\n"}{end}' | sort -u); do
  if ! kubectl get namespace "${ns}" >/dev/null 2>&1; then
    kubectl create namespace "${ns}" >/dev/null
    log "created namespace ${ns}: restored objects are in it, Kubernetes had no such namespace"
  fi
done

vms="$(kubectl get vm -A -o name | wc -l)"
vmis="$(kubectl get vmi -A -o name | wc -l)"
log "restore done: APIService Available ${downtime} s after virt-apiserver stopped, $(seconds_since "${t0}") s in all"
log "VMIs whose launcher pod is gone end Failed; VMs with runStrategy Always then start new ones (docs/cluster.md \"Backup and restore\")"
cat <<EOF
restored: ${snapshot}
mode: ${mode}
snapshot revision: ${snap_rev}
store revision: $((snap_rev + bump))
virtualmachines: ${vms}
virtualmachineinstances: ${vmis}
old data: ${old_dirs[*]:-none}
EOF
