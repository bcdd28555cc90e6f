# The images of the local cluster's storage provisioner (local-path.sh).
# Sourced by images.sh (uses its image function and ${IMAGES}).
#   localhost/local-path-provisioner:dev  the static binary of
#                                         hack/build-local-path.sh
#   localhost/local-path-helper:dev       Debian's busybox-static as /bin/sh
#                                         and its applets: the helper pods
#                                         that make and remove the volumes'
#                                         directories run its sh, mkdir, rm

# local_path_helper_layer prints a directory holding busybox-static and a
# link per applet, built once per busybox version. The fast path does not
# ask apt (seconds): delete ${IMAGES}/local-path-helper-* for a newer busybox.
local_path_helper_layer() {
  local recipe=1 current ver dir work applet
  current="${IMAGES}/local-path-helper-current-${recipe}"
  if [ -x "${current}/bin/busybox" ]; then
    readlink -f "${current}"
    return 0
  fi
  ver="$(apt-cache policy busybox-static | awk '/Candidate:/{print $2; exit}')"
  [ -n "${ver}" ] && [ "${ver}" != "(none)" ] ||
    die "apt knows no busybox-static: run 'apt-get update' as root"
  dir="${IMAGES}/local-path-helper-busybox${ver//[:+~]/_}-${recipe}"
  if [ ! -x "${dir}/bin/busybox" ]; then
    work="$(mktemp -d)"
    # apt-get download writes into the current directory as _apt.
    chmod 777 "${work}"
    (cd "${work}" && apt-get download -qq "busybox-static=${ver}" >&2)
    dpkg -x "${work}"/busybox-static_*.deb "${work}/deb"
    rm -rf "${dir}.tmp"
    mkdir -p "${dir}.tmp/bin"
    cp "${work}/deb/bin/busybox" "${dir}.tmp/bin/busybox"
    for applet in $("${dir}.tmp/bin/busybox" --list); do
      case "${applet}" in busybox | linuxrc) continue ;; esac
      ln -s busybox "${dir}.tmp/bin/${applet}"
    done
    rm -rf "${work}" "${dir}"
    mv "${dir}.tmp" "${dir}"
  fi
  ln -sfn "$(basename "${dir}")" "${current}"
  echo "${dir}"
}

local_path_bin="$("${ROOT}/hack/build-local-path.sh")"
image local-path-provisioner "" -- --add "/usr/bin/local-path-provisioner=${local_path_bin}:0755" \
  --entrypoint /usr/bin/local-path-provisioner
local_path_helper="$(local_path_helper_layer)"
image local-path-helper "${local_path_helper}" -- --layer "${local_path_helper}" --entrypoint /bin/sh
