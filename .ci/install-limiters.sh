#!/usr/bin/env bash
# Installs the real rate limiters the limiter end-to-end tests and benchmark B5 start themselves
# (nginx and haproxy, from Debian packages) when they are missing. Idempotent and quiet. The tests run
# each binary as a child process on a free 127.0.0.1 port with a config in a temp dir, so the system
# services are never wanted: if the package install started them, they are stopped and disabled again
# so ports 80 and others stay free.
set -euo pipefail

missing=()
command -v nginx >/dev/null 2>&1 || [ -x /usr/sbin/nginx ] || missing+=(nginx)
command -v haproxy >/dev/null 2>&1 || [ -x /usr/sbin/haproxy ] || missing+=(haproxy)
[ ${#missing[@]} -eq 0 ] && exit 0

if ! command -v apt-get >/dev/null 2>&1; then
  echo "install-limiters: apt-get not found; install ${missing[*]} by hand (the limiter tests need them)" >&2
  exit 1
fi

# policy-rc.d answering 101 tells Debian's maintainer scripts not to start services; it is removed
# again afterwards unless it was already there.
policy=/usr/sbin/policy-rc.d
own_policy=false
if [ ! -e "$policy" ]; then
  printf '#!/bin/sh\nexit 101\n' >"$policy"
  chmod +x "$policy"
  own_policy=true
fi
cleanup() { if $own_policy; then rm -f "$policy"; fi; }
trap cleanup EXIT

export DEBIAN_FRONTEND=noninteractive
apt-get update -qq >/dev/null
apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null

# In case a service was started anyway (no policy-rc.d support, systemd present): stop it.
for service in "${missing[@]}"; do
  if command -v systemctl >/dev/null 2>&1 && systemctl is-active --quiet "$service" 2>/dev/null; then
    systemctl stop "$service" >/dev/null 2>&1 || true
    systemctl disable "$service" >/dev/null 2>&1 || true
  elif command -v service >/dev/null 2>&1; then
    service "$service" stop >/dev/null 2>&1 || true
  fi
done
echo "install-limiters: installed ${missing[*]}"
