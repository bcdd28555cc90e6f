#!/usr/bin/env bash
# Runs `make SUITE` for each suite named, in order, stopping at the first
# that fails, and prints how long each took at the end (also when one
# failed), so a slow suite is visible in every CI log (issue 28).
set -o errexit -o nounset -o pipefail
source "$(dirname "${BASH_SOURCE[0]}")/lib/common.sh"

names=() secs=() results=()
summary() {
  local total=0 i
  printf '\n%-20s %8s  %s\n' "suite" "seconds" "result" >&2
  for i in "${!names[@]}"; do
    printf '%-20s %8d  %s\n' "${names[$i]}" "${secs[$i]}" "${results[$i]}" >&2
    total=$((total + secs[i]))
  done
  printf '%-20s %8d  (%dm%02ds)\n' "total" "${total}" $((total / 60)) $((total % 60)) >&2
}
trap summary EXIT

for suite in "$@"; do
  start=$(date +%s)
  rc=0
  "${MAKE:-make}" --no-print-directory "${suite}" || rc=$?
  names+=("${suite}") secs+=($(($(date +%s) - start)))
  if [ "${rc}" -ne 0 ]; then
    results+=("FAIL (exit ${rc})")
    exit "${rc}"
  fi
  results+=("ok")
done
