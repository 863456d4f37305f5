#!/usr/bin/env bash
# Installs the pinned kustomize into .tools/bin/kustomize (idempotent).
. "$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)/lib.sh"

target="$BIN_DIR/kustomize"
want="${KUSTOMIZE_VERSION}"
if [ -x "$target" ]; then
  have="$("$target" version 2>/dev/null || true)"
  if [ "$have" = "$want" ]; then
    log "kustomize $want already installed ($target)"
    exit 0
  fi
  log "kustomize at $target is '${have:-unknown}', want $want: rebuilding"
fi

log "building kustomize $want from the Go module proxy"
go_build_pinned sigs.k8s.io/kustomize/kustomize/v5 "$want" sigs.k8s.io/kustomize/kustomize/v5 "$target"
have="$("$target" version)"
[ "$have" = "$want" ] || { log "built kustomize reports '$have', expected $want"; exit 1; }
log "kustomize $have installed at $target"
