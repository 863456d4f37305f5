# Shared helpers for deploy/tools/install-*.sh (sourced, not executed).
set -euo pipefail

TOOLS_DIR_SCRIPT="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
REPO_ROOT="$(cd "$TOOLS_DIR_SCRIPT/../.." && pwd)"
# shellcheck source=versions.env
. "$TOOLS_DIR_SCRIPT/versions.env"

TOOLS_DIR="${TOOLS_DIR:-$REPO_ROOT/.tools}"
BIN_DIR="$TOOLS_DIR/bin"
mkdir -p "$BIN_DIR"

log() { printf '[deploy-tools] %s\n' "$*" >&2; }

need_go() {
  command -v go >/dev/null 2>&1 || { log "go is required (Go >= 1.24) to build the deploy tools"; exit 1; }
}

# go_build_pinned MODULE VERSION PACKAGE OUTPUT [EXTRA_LDFLAGS]
# Builds PACKAGE from MODULE@VERSION into OUTPUT. Uses a throwaway module so that
# an exact version is resolved with `go get` (some module proxies refuse version
# lists, which plain `go install pkg@version` can need); no git state is touched.
go_build_pinned() {
  local module="$1" version="$2" package="$3" output="$4" ldflags="-s -w ${5:-}" work
  need_go
  log "go build $package ($module@$version) -> $output"
  work="$(mktemp -d)"
  trap 'rm -rf "$work"' RETURN
  (
    cd "$work"
    export GOTOOLCHAIN="${GOTOOLCHAIN:-local}" GOFLAGS="${GOFLAGS:-} -buildvcs=false" GOWORK=off
    go mod init tessera.local/deploytools >/dev/null 2>&1
    go get "$package@$version" >&2
    CGO_ENABLED=0 go build -trimpath -ldflags "$ldflags" -o "$output.tmp" "$package" >&2
  )
  mv -f "$output.tmp" "$output"
}
