#!/usr/bin/env bash
# Installs every deploy tool the manifest tests need (idempotent):
#   .tools/bin/kustomize, .tools/bin/kubeconform, .tools/k8s-schemas/<version>-standalone-strict/
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
bash "$here/install-kustomize.sh"
bash "$here/install-kubeconform.sh"
bash "$here/install-k8s-schemas.sh"
