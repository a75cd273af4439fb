#!/usr/bin/env bash
# Install Debian's chromium for the Playwright browser tests when it is missing.
# Under CI=true a failure is fatal (the browser tests must run there);
# elsewhere the tests skip and say why.
set -u
if command -v chromium >/dev/null 2>&1 || [ -x /usr/bin/chromium ]; then
  exit 0
fi
if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then
  echo "Installing Debian's chromium for the browser tests..."
  if (apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium) >/tmp/ensure_chromium.log 2>&1; then
    exit 0
  fi
  echo "apt-get install chromium failed; see /tmp/ensure_chromium.log"
else
  echo "chromium is not installed and this user cannot apt-get it: the browser tests will skip."
fi
[ "${CI:-}" = "true" ] && exit 1
exit 0
