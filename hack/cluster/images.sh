#!/usr/bin/env bash
# Builds the platform's container images without a registry: Go binaries,
# then docker-archive tarballs written by hack/mkimage, cached under
# ${VIRT_CACHE}/images by a hash of their inputs (an unchanged image costs a
# checksum). With --import, also imports them into the local cluster's
# containerd (k8s.io namespace) unless it has them already, and writes the
# content tags to ${VIRT_STATE}/images.tags for deploy.sh.
#
# Every image is tagged localhost/<name>:dev and localhost/<name>:<hash>,
# the hash being that of its inputs. Images are built for the commands that
# exist, so components are picked up as they land:
#   pause                  hack/pause (static), containerd's sandbox image
#   test-httpd             hack/testhttpd (static), the e2e tests' HTTP server pod
#   virt-apiserver, virt-controller, virt-handler
#                          cmd/<name> on a glibc base layer (built with the
#                          same cgo setting as the tests, sharing their cache)
#   virt-launcher          cmd/virt-launcher + static cmd/virt-imagecopy on a
#                          Debian rootfs with libvirt and QEMU (launcher-rootfs.sh),
#                          and QEMU's capabilities probed in it (launcher_seed)
#   guest-kernel, guest-disk
#                          the test guest of hack/build-guest.sh as a kernelBoot
#                          image (/boot/vmlinuz, /boot/initrd.gz) and a
#                          containerDisk image (/disk/<file>)
#   local-path-provisioner, local-path-helper
#                          the cluster's storage provisioner and its helper
#                          pods' busybox (local-path-images.sh)
#   virt-etcd              etcd, etcdctl, etcdutl of hack/build-etcd.sh
#                          (static): the etcd cluster of the HA mode, built
#                          once that mode is asked for
#   coredns                the cluster's DNS, static (hack/build-coredns.sh)
set -o errexit -o nounset -o pipefail
here="$(dirname "${BASH_SOURCE[0]}")"
source "${here}/lib.sh"

import=0
[ "${1:-}" = "--import" ] && import=1

IMAGES="${VIRT_CACHE}/images"
BIN="${ROOT}/_output/images/bin"
MKIMAGE="${VIRT_CACHE}/tools/mkimage"
mkdir -p "${IMAGES}" "${BIN}" "$(dirname "${MKIMAGE}")"
t0=$(date +%s)

(cd "${ROOT}/hack/mkimage" && go build -o "${MKIMAGE}" .)

# Binaries. The platform's cgo-enabled commands are built in one go build
# so that they share its work; the copy tool and pause must be static, as
# they run in images that have no libc. Every Go binary is built with
# grpc-go's grpcnotrace tag (PLATFORM_GO_TAGS, lib.sh): without it gRPC
# imports golang.org/x/net/trace, whose html/template disables the linker's
# dead-code elimination of methods; the launcher, one per VMI, is 23%
# smaller and maps fewer of its pages (docs/launcher.md "Memory").
# VIRT_COMPONENTS narrows the platform's commands built (default: those
# that exist); pause and the guest images are always built.
has_cmd() {
  [[ " ${VIRT_COMPONENTS-virt-apiserver virt-controller virt-handler virt-launcher} " == *" $1 "* ]] &&
    compgen -G "${ROOT}/cmd/$1/*.go" >/dev/null
}
cgo_cmds=()
for c in "${PLATFORM_CMDS[@]}"; do
  if has_cmd "${c}"; then cgo_cmds+=("./cmd/${c}"); fi
done
# virtctl too: up.sh installs it from here rather than building it again.
static_cmds=(./hack/pause ./hack/testhttpd ./cmd/virtctl)
if has_cmd virt-launcher && compgen -G "${ROOT}/cmd/virt-imagecopy/*.go" >/dev/null; then
  static_cmds+=(./cmd/virt-imagecopy)
fi
(
  cd "${ROOT}"
  if [ ${#cgo_cmds[@]} -gt 0 ]; then go_build "the platform's commands" -tags "${PLATFORM_GO_TAGS}" -o "${BIN}/" -- "${cgo_cmds[@]}"; fi
  CGO_ENABLED=0 go_build "the static commands" -tags "${PLATFORM_GO_TAGS}" -ldflags="-s -w" -o "${BIN}/" -- "${static_cmds[@]}"
)
log "binaries built ($(($(date +%s) - t0))s): ${cgo_cmds[*]} ${static_cmds[*]}"

# glibc_layer prints a directory holding the host's glibc (Debian libc6,
# which the cgo binaries were linked against) in the usr-merged layout.
glibc_layer() {
  local ver dir p parent
  ver="$(dpkg-query -W -f='${Version}' libc6)"
  dir="${IMAGES}/glibc-${ver}-1"
  if [ ! -d "${dir}" ]; then
    rm -rf "${dir}.tmp"
    mkdir -p "${dir}.tmp"/{etc,tmp,usr/lib,usr/lib64}
    chmod 1777 "${dir}.tmp/tmp"
    ln -s usr/lib "${dir}.tmp/lib"
    ln -s usr/lib64 "${dir}.tmp/lib64"
    while read -r p; do
      [ -d "${p}" ] && continue
      case "${p}" in
        */gconv/* | /usr/share/* | /etc/* | */bin/* | */sbin/* | /usr/libexec/*) continue ;;
      esac
      parent="$(cd "$(dirname "${p}")" && pwd -P)"
      mkdir -p "${dir}.tmp${parent}"
      cp -a "${p}" "${dir}.tmp${parent}/"
    done < <(dpkg -L libc6)
    printf 'root:x:0:0:root:/root:/sbin/nologin\nnobody:x:65534:65534:nobody:/nonexistent:/sbin/nologin\n' >"${dir}.tmp/etc/passwd"
    printf 'root:x:0:\nnogroup:x:65534:\n' >"${dir}.tmp/etc/group"
    printf 'passwd: files\ngroup: files\nhosts: files dns\n' >"${dir}.tmp/etc/nsswitch.conf"
    mv "${dir}.tmp" "${dir}"
  fi
  echo "${dir}"
}

# check_libs BINARY ROOT_LIST fails unless every shared library BINARY
# needs is in ROOT_LIST (a file of absolute paths inside the image).
check_libs() {
  local bin="$1" list="$2" lib
  for lib in $(ldd "${bin}" 2>/dev/null | grep -o '/[^ ]*' || true); do
    lib="$(cd "$(dirname "${lib}")" && pwd -P)/$(basename "${lib}")"
    grep -qxF "${lib}" "${list}" ||
      die "$(basename "${bin}") needs ${lib}, which its image does not have"
  done
}

# list_of PATH prints a file listing the absolute paths of a layer directory
# or gzip'd layer tarball, cached beside it.
list_of() {
  local src="$1" list="$1.list"
  if [ ! -s "${list}" ]; then
    if [ -d "${src}" ]; then
      (cd "${src}" && find . -mindepth 1 | sed 's|^\.||')
    else
      tar -tzf "${src}" | sed -e 's|^\./|/|' -e 's|^\([^/]\)|/\1|' -e 's|/$||'
    fi | sort >"${list}.tmp"
    mv "${list}.tmp" "${list}"
  fi
  echo "${list}"
}

tags_out=()

# image NAME LAYER_IDS -- MKIMAGE_ARGS... builds localhost/NAME unless the
# tarball of the same inputs exists, then imports it if asked. LAYER_IDS
# names the --layer inputs cheaply (their paths carry their versions);
# --add files are hashed.
image() {
  local name="$1" ids="$2"
  shift 3
  local a key
  key="$(
    {
      echo "${name} ${ids} $*"
      for a in "$@"; do
        case "${a}" in /*=*) sha256sum "$(echo "${a#*=}" | sed 's/:[0-7]*$//')" ;; esac
      done
      sha256sum "${MKIMAGE}"
    } | sha256sum | cut -c1-12
  )"
  local ref="localhost/${name}:${key}" tar="${IMAGES}/${name}-${key}.tar"
  if [ ! -s "${tar}" ]; then
    local t=$(date +%s)
    "${MKIMAGE}" -o "${tar}" -t "localhost/${name}:dev" -t "${ref}" "$@" >/dev/null
    log "built ${ref} ($(du -m "${tar}" | cut -f1) MiB, $(($(date +%s) - t))s)"
    find "${IMAGES}" -maxdepth 1 -name "${name}-*.tar" ! -name "$(basename "${tar}")" -delete
  fi
  tags_out+=("${name} ${ref}")
  [ "${import}" = 1 ] || return 0
  # Not `ctr ... | grep -q`: grep's early exit would fail the pipeline.
  local have
  have="$(ctr -n k8s.io images ls -q)"
  if ! grep -qxF "${ref}" <<<"${have}"; then
    local t=$(date +%s)
    ctr -n k8s.io images import "${tar}" >/dev/null
    log "imported ${ref} ($(($(date +%s) - t))s)"
  fi
  # Older builds: only their content tags are removed; containerd keeps
  # what running containers still use.
  local old
  for old in $(grep -E "^localhost/${name}:[0-9a-f]{12}$" <<<"${have}" | grep -vxF "${ref}" || true); do
    ctr -n k8s.io images rm "${old}" >/dev/null
  done
}

image pause "" -- --add "/pause=${BIN}/pause:0755" --entrypoint /pause
# The e2e tests' HTTP peer of a guest (pods and Services it reaches).
image test-httpd "" -- --add "/testhttpd=${BIN}/testhttpd:0755" --entrypoint /testhttpd

glibc="$(glibc_layer)"
for c in virt-apiserver virt-controller virt-handler; do
  has_cmd "${c}" || continue
  check_libs "${BIN}/${c}" "$(list_of "${glibc}")"
  # virt-apiserver and virt-controller need no privilege at all and run as
  # 65532 (their Deployments say so too); virt-handler is the node's agent,
  # root with a few capabilities (its DaemonSet).
  user=()
  [ "${c}" = virt-handler ] || user=(--user 65532:65532)
  image "${c}" "${glibc}" -- --layer "${glibc}" --add "/usr/bin/${c}=${BIN}/${c}:0755" \
    "${user[@]}" --entrypoint "/usr/bin/${c}"
done

# launcher_seed ROOTFS prints a directory of QEMU capabilities libvirt
# cached probing the rootfs's QEMU as the launchers' user (uid 107, no
# /dev/kvm, as in a launcher pod) through virt-launcher
# --write-capabilities-seed, chrooted into the unpacked rootfs. The launcher
# image carries them read-only (docs/launcher.md "The capabilities seed").
# libvirt checks an entry against the kernel and CPU it runs on: the key
# holds this host's, so a new kernel or CPU gets a new seed, and a node of
# another kind just probes again; seed-N changes with what the manifest
# records. Built once per key (~5-10 s).
launcher_seed() {
  local rootfs="$1" key dir work r
  key="$({
    echo "seed-2 ${rootfs} 107"
    uname -r
    grep -m4 -E '^(vendor_id|cpu family|model|microcode)' /proc/cpuinfo || true
  } | sha256sum | cut -c1-12)"
  dir="${IMAGES}/launcher-seed-${key}"
  if [ ! -s "${dir}/seed.json" ]; then
    local t=$(date +%s)
    mkdir -p "${VIRT_CACHE}/tmp"
    work="$(mktemp -d "${VIRT_CACHE}/tmp/launcher-seed.XXXXXX")"
    r="${work}/root"
    mkdir -p "${r}"
    tar -xzf "${rootfs}" -C "${r}" --numeric-owner
    install -m 0755 "${BIN}/virt-launcher" "${r}/usr/bin/virt-launcher"
    mkdir -p "${r}/seed" "${r}/tmp" && chown 107:107 "${r}/seed" && chmod 1777 "${r}/tmp"
    # A private mount and PID namespace: /proc, a read-only /sys and the
    # few devices QEMU opens (no /dev/kvm: pods have none) disappear with it.
    if ! unshare --mount --propagation private --pid --fork --mount-proc="${r}/proc" bash -c '
        set -e
        r="$1"
        mount -t sysfs -o ro,nosuid,nodev,noexec sysfs "${r}/sys"
        for d in null zero full random urandom; do
          touch "${r}/dev/${d}" && mount --bind "/dev/${d}" "${r}/dev/${d}"
        done
        exec chroot --userspec=107:107 "${r}" env -i PATH=/usr/bin:/bin HOME=/nonexistent \
          /usr/bin/virt-launcher --write-capabilities-seed /seed' _ "${r}" >"${work}/seed.log" 2>&1; then
      tail -20 "${work}/seed.log" >&2
      rm -rf "${work}"
      die "probing QEMU for the launcher's capabilities seed failed (log above)"
    fi
    rm -rf "${dir}" && mkdir -p "${dir}"
    cp "${r}"/seed/*.xml "${r}/seed/seed.json" "${dir}/"
    rm -rf "${work}"
    log "launcher capabilities seed: $(ls "${dir}" | wc -l) files in ${dir} ($(($(date +%s) - t))s)"
    find "${IMAGES}" -maxdepth 1 -name 'launcher-seed-*' ! -name "$(basename "${dir}")" -exec rm -rf {} +
  fi
  echo "${dir}"
}

if has_cmd virt-launcher; then
  rootfs="$("${here}/launcher-rootfs.sh")"
  check_libs "${BIN}/virt-launcher" "$(list_of "${rootfs}")"
  adds=(--add "/usr/bin/virt-launcher=${BIN}/virt-launcher:0755")
  seed="$(launcher_seed "${rootfs}")"
  for f in "${seed}"/*; do
    adds+=(--add "/usr/share/virt-launcher/capabilities-seed/$(basename "${f}")=${f}:0444")
  done
  if [ -x "${BIN}/virt-imagecopy" ] && compgen -G "${ROOT}/cmd/virt-imagecopy/*.go" >/dev/null; then
    adds+=(--add "/usr/bin/virt-imagecopy=${BIN}/virt-imagecopy:0755")
  fi
  image virt-launcher "${rootfs}" -- --layer "${rootfs}" "${adds[@]}" \
    --entrypoint /usr/bin/virt-launcher
fi

source "${here}/guest-images.sh"
source "${here}/local-path-images.sh"
# The HA mode's etcd cluster (artifacts/etcd), with etcdctl and etcdutl for
# `kubectl exec`: built the first time the HA mode is asked for (`make up
# HA=1`; about 100 s cold, which the default mode has no use for), then
# kept in every mode, so later switches need no build.
if etcd_dir="$("${ROOT}/hack/build-etcd.sh" --cached)" ||
  { [ "$(platform_mode)" = ha ] && log "the HA mode needs etcd's own image: building it" &&
    etcd_dir="$("${ROOT}/hack/build-etcd.sh")"; }; then
  image virt-etcd "" -- --add "/usr/bin/etcd=${etcd_dir}/etcd:0755" \
    --add "/usr/bin/etcdctl=${etcd_dir}/etcdctl:0755" --add "/usr/bin/etcdutl=${etcd_dir}/etcdutl:0755" \
    --user 65532:65532 --entrypoint /usr/bin/etcd
fi
# The cluster's DNS (dns.sh).
coredns_bin="$("${ROOT}/hack/build-coredns.sh")"
image coredns "" -- --add "/usr/bin/coredns=${coredns_bin}:0755" --entrypoint /usr/bin/coredns

if [ "${import}" = 1 ]; then
  printf '%s\n' "${tags_out[@]}" | write_file "${VIRT_STATE}/images.tags" || true
fi
log "images ready ($(($(date +%s) - t0))s)"
