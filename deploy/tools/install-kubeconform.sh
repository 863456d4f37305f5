#!/usr/bin/env bash
# Installs the pinned kubeconform into .tools/bin/kubeconform (idempotent).
. "$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)/lib.sh"

target="$BIN_DIR/kubeconform"
want="${KUBECONFORM_VERSION}"
if [ -x "$target" ]; then
  have="$("$target" -v 2>/dev/null || true)"
  if [ "$have" = "$want" ]; then
    log "kubeconform $want already installed ($target)"
    exit 0
  fi
  log "kubeconform at $target is '${have:-unknown}', want $want: rebuilding"
fi

log "building kubeconform $want from the Go module proxy"
go_build_pinned github.com/yannh/kubeconform "$want" github.com/yannh/kubeconform/cmd/kubeconform "$target" \
  "-X main.version=$want"
have="$("$target" -v)"
[ "$have" = "$want" ] || { log "built kubeconform reports '$have', expected $want"; exit 1; }
log "kubeconform $have installed at $target"
