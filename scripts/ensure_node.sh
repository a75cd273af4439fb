#!/usr/bin/env bash
# The Node packages of the workshop hub and the slide decks (deploy/package.json):
# configurable-http-proxy (JupyterHub's proxy) and reveal.js with what nbconvert's
# slide template loads (require.js, jQuery, MathJax 2, Font Awesome), so that
# `make hub` and `make slides` need no CDN at run time.
#
# Installs Debian's nodejs and npm with apt-get when node or npm is missing (root
# only), then `npm ci` from deploy/package-lock.json (exact versions).  Under
# CI=true a failure is fatal (the hub and slide tests must run there); elsewhere
# those tests skip and say why.
set -u
cd "$(dirname "$0")/../deploy"
fail() { echo "ensure_node: $*"; [ "${CI:-}" = "true" ] && exit 1; exit 0; }

if ! command -v node >/dev/null 2>&1 || ! command -v npm >/dev/null 2>&1; then
  if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then
    echo "Installing Debian's nodejs and npm for the hub's proxy and the slide decks..."
    (apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq nodejs npm) \
      >/tmp/ensure_node.log 2>&1 || fail "apt-get install nodejs npm failed; see /tmp/ensure_node.log"
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
