#!/usr/bin/env bash
# Makes sure the external binaries the tests and the demo use are present:
# haproxy (validation, traffic) and kubectl (the fake Kubernetes API's client tests).
# With --bench also wrk (bench/dataplane_rps.py's load generator).
# Installs Debian's packages when running as root; otherwise says how to install them.
set -euo pipefail

missing=()
command -v haproxy >/dev/null 2>&1 || [ -x /usr/sbin/haproxy ] || missing+=(haproxy)
command -v kubectl >/dev/null 2>&1 || missing+=(kubectl)
if [ "${1:-}" = "--bench" ]; then command -v wrk >/dev/null 2>&1 || missing+=(wrk); fi
[ ${#missing[@]} -eq 0 ] && exit 0

pkgs=()
for m in "${missing[@]}"; do
  case "$m" in
    haproxy) pkgs+=(haproxy) ;;
    kubectl) pkgs+=(kubernetes-client) ;;
    wrk) pkgs+=(wrk) ;;
  esac
done

if [ "$(id -u)" -eq 0 ] && command -v apt-get >/dev/null 2>&1; then
  echo "ensure-tools: installing Debian packages: ${pkgs[*]}"
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -qq
  apt-get install -y -qq --no-install-recommends "${pkgs[@]}" >/dev/null
else
  echo "ensure-tools: missing ${missing[*]}." >&2
  echo "Install them with: sudo apt-get install ${pkgs[*]}" >&2
  [[ " ${missing[*]} " == *" haproxy "* ]] && exit 1
fi
exit 0
