#!/usr/bin/env bash
# The container image as a tested artifact: build the Dockerfile's runtime target with buildah and start
# every service from it, as its non-root user, against the test PostgreSQL and NATS until each one's
# /readyz answers 200 (scripts/image-smoke.mjs). .ci/run runs this; run it by hand the same way:
#   sudo scripts/image-smoke.sh            (root: buildah's vfs storage and chroot isolation need it)
#
# No Docker daemon and no registry here, so:
#   - the base image (the Dockerfile's NODE_IMAGE, node:22-bookworm-slim in a real build) is a stand-in
#     assembled from Debian packages: `debootstrap --variant=minbase bookworm`, plus this machine's Node
#     and npm in /usr/local (where the official node image has them) and its CA bundle;
#   - buildah builds with `--isolation chroot` on vfs storage, and runs the services the same way.
# The debootstrapped tree and the stand-in base are cached (IMAGE_SMOKE_CACHE, and buildah's storage),
# so a second run on the same machine only rebuilds the layers that changed.
set -euo pipefail
cd "$(dirname "$0")/.."

export STORAGE_DRIVER=vfs BUILDAH_ISOLATION=chroot
CACHE="${IMAGE_SMOKE_CACHE:-/var/cache/partner-image-smoke}"
MIRROR="${DEBIAN_MIRROR:-http://deb.debian.org/debian}"
IMAGE="${IMAGE_SMOKE_TAG:-localhost/partner-submission-service:smoke}"
node_version="$(node -p process.versions.node)"
BASE="localhost/partner-smoke-base:bookworm-node${node_version}"

step() { printf '\n== image smoke: %s (%ss)\n' "$*" "$SECONDS"; }
fail() { printf 'image smoke FAILED: %s\n' "$*" >&2; exit 1; }

[ "$(id -u)" = 0 ] || fail "run as root (buildah's vfs storage and chroot isolation need it)"
for tool in buildah debootstrap node; do command -v "$tool" >/dev/null || fail "$tool is not installed"; done

if buildah inspect --type image "$BASE" >/dev/null 2>&1; then
  step "stand-in base $BASE (cached)"
else
  rootfs="$CACHE/bookworm-minbase"
  if [ ! -e "$rootfs/.complete" ]; then
    step "debootstrap --variant=minbase bookworm into $rootfs"
    rm -rf "$rootfs"
    mkdir -p "$CACHE"
    debootstrap --variant=minbase bookworm "$rootfs" "$MIRROR" >"$CACHE/debootstrap.log" 2>&1 ||
      fail "debootstrap (log: $CACHE/debootstrap.log)"
    rm -rf "$rootfs"/var/cache/apt/archives/*.deb
    touch "$rootfs/.complete"
  fi
  step "stand-in base $BASE: minbase + Node $node_version + npm + CA bundle"
  npm_dir="$(dirname "$(dirname "$(readlink -f "$(command -v npm)")")")"
  ctr="$(buildah from scratch)"
  trap 'buildah rm "$ctr" >/dev/null 2>&1 || true' EXIT
  mnt="$(buildah mount "$ctr")"
  cp -a "$rootfs"/. "$mnt"/
  rm -f "$mnt/.complete"
  install -D -m 0755 "$(readlink -f "$(command -v node)")" "$mnt/usr/local/bin/node"
  mkdir -p "$mnt/usr/local/lib/node_modules"
  cp -a "$npm_dir" "$mnt/usr/local/lib/node_modules/npm"
  ln -sf ../lib/node_modules/npm/bin/npm-cli.js "$mnt/usr/local/bin/npm"
  ln -sf ../lib/node_modules/npm/bin/npx-cli.js "$mnt/usr/local/bin/npx"
  install -D -m 0644 /etc/ssl/certs/ca-certificates.crt "$mnt/etc/ssl/certs/ca-certificates.crt"
  buildah umount "$ctr" >/dev/null
  buildah config \
    --env PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin \
    --env NODE_EXTRA_CA_CERTS=/etc/ssl/certs/ca-certificates.crt \
    --env NPM_CONFIG_CAFILE=/etc/ssl/certs/ca-certificates.crt \
    --cmd node "$ctr"
  buildah commit --quiet --rm "$ctr" "$BASE" >/dev/null
  trap - EXIT
fi

step "buildah bud --target runtime (NODE_IMAGE=$BASE)"
buildah bud --quiet --isolation chroot --layers \
  --build-arg "NODE_IMAGE=$BASE" --target runtime --tag "$IMAGE" . >/dev/null ||
  fail "the Dockerfile does not build"
buildah images --format '{{.Name}}:{{.Tag}} {{.Size}}' "$IMAGE"

step "every service from the image, as its non-root user"
node scripts/image-smoke.mjs "$IMAGE"
step "passed"
