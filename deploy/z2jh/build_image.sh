#!/usr/bin/env bash
# Build the learners' image for Zero to JupyterHub from environment.yml + postBuild
# with repo2docker (every Python package at its version in requirements.lock, which
# environment.yml's pip list is held to with `-c requirements.lock`), and push it:
#
#   bash deploy/z2jh/build_image.sh registry.example.org/interconnect-city 2026.12
#
# Needs docker (or podman) and `pip install jupyter-repo2docker`.  The image is
# built from a clean export of the committed tree WITHOUT solutions/ (answers and
# hidden tests) and .git, so nothing a learner can read in the image gives the
# answers away.  The course lands in /srv/interconnect-city (outside the home,
# which Kubernetes mounts over); deploy/z2jh/config.yaml copies the chapters into
# each learner's home on first start.
set -euo pipefail
image=${1:?usage: build_image.sh IMAGE TAG}
tag=${2:?usage: build_image.sh IMAGE TAG}
repo=$(cd "$(dirname "$0")/../.." && pwd)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
git -C "$repo" archive --format=tar HEAD | tar -x -C "$work"
rm -rf "$work/solutions" "$work/deploy/node_modules"
jupyter-repo2docker --no-run --user-name jovyan --user-id 1000 \
  --target-repo-dir /srv/interconnect-city \
  --image-name "$image:$tag" "$work"
docker push "$image:$tag"
