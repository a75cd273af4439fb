#!/usr/bin/env bash
# Install a CJK font (Debian's fonts-noto-cjk) when none is present, so that the
# glossary's Chinese terms (chapter 11) render in chromium and in matplotlib
# instead of empty boxes.  Binder gets the same package from apt.txt.
# Under CI=true a failure is fatal (the browser tests check the glyphs there);
# elsewhere the course still works and this prints what is missing.
set -u
if command -v fc-list >/dev/null 2>&1 && fc-list :lang=zh family | grep -q .; then
  exit 0
fi
if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then
  echo "Installing Debian's fonts-noto-cjk (the glossary's Chinese terms)..."
  if (apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq fonts-noto-cjk) \
       >/tmp/ensure_cjk_fonts.log 2>&1; then
    exit 0
  fi
  echo "apt-get install fonts-noto-cjk failed; see /tmp/ensure_cjk_fonts.log"
else
  echo "No CJK font found and this user cannot apt-get one: the glossary's Chinese terms"
  echo "may show as boxes (install fonts-noto-cjk, or your system's Noto Sans CJK)."
fi
[ "${CI:-}" = "true" ] && exit 1
exit 0
