#!/usr/bin/env bash
# The Node packages of the workshop hub and the slide decks (deploy/package.json):
# configurable-http-proxy (JupyterHub's proxy) and reveal.js with what nbconvert's
# slide template loads (require.js, jQuery, MathJax 2, Font Awesome), so that
# `make hub` and `make slides` need no CDN at run time.
#
# Installs Node with apt-get when node or npm is missing (root only): Debian's nodejs
# and npm, or only nodejs where NodeSource's repository provides it (its nodejs
# includes npm and conflicts with Debian's npm package); then `npm ci` from deploy/package-lock.json (exact versions).  Under
# CI=true a failure is fatal (the hub and slide tests must run there); elsewhere
# those tests skip and say why.
set -u
cd "$(dirname "$0")/../deploy"
fail() { echo "ensure_node: $*"; [ "${CI:-}" = "true" ] && exit 1; exit 0; }

# Which packages: NodeSource's nodejs ships npm inside it and conflicts with Debian's npm
# package, so where NodeSource's nodejs is installed or is apt's candidate, only nodejs.
apt_packages() {
  local have cand
  have=$(dpkg-query -W -f='${Version}' nodejs 2>/dev/null || true)
  cand=$(apt-cache policy nodejs 2>/dev/null | awk '/Candidate:/ {print $2; exit}')
  if [[ "$have$cand" == *nodesource* ]]; then
    if [ -n "$have" ]; then echo "--reinstall nodejs"; else echo "nodejs"; fi
  elif command -v node >/dev/null 2>&1; then
    echo "npm"               # Debian's node without Debian's npm
  else
    echo "nodejs npm"
  fi
}

if ! command -v node >/dev/null 2>&1 || ! command -v npm >/dev/null 2>&1; then
  if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then
    apt-get update -qq >/tmp/ensure_node.log 2>&1 || true
    pkgs=$(apt_packages)
    echo "Installing $pkgs with apt-get for the hub's proxy and the slide decks..."
    # shellcheck disable=SC2086  # the package list is word-split on purpose
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq $pkgs >>/tmp/ensure_node.log 2>&1 \
      || fail "apt-get install $pkgs failed; see /tmp/ensure_node.log"
    command -v node >/dev/null 2>&1 && command -v npm >/dev/null 2>&1 \
      || fail "node or npm still missing after apt-get install $pkgs; see /tmp/ensure_node.log"
  else
    fail "node and npm are not installed and this user cannot apt-get them: the hub and slide tests will skip."
  fi
fi
# Up to date when node_modules was installed from this very lock file.
want=$(sha256sum package-lock.json | cut -d' ' -f1)
if [ "$(cat node_modules/.installed-from 2>/dev/null)" = "$want" ]; then
  exit 0
fi
echo "npm ci in deploy/ (configurable-http-proxy, reveal.js and the decks' scripts)..."
npm ci --no-audit --no-fund --loglevel=error >/tmp/ensure_node_npm.log 2>&1 \
  || fail "npm ci failed; see /tmp/ensure_node_npm.log"
echo "$want" > node_modules/.installed-from
exit 0
