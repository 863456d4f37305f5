#!/usr/bin/env bash
# Removes what an interrupted `make test-deploy` may have left: its pods (named as
# test/podman/cluster.ts names them), its networks (tessera-deploy-<pid>) and its secrets
# (tessera-secrets-<hash>) and its volumes (<pod>-<volume>). make test-deploy removes them itself, also when a step fails; this is
# for a run that was killed outright (.ci/run calls it on exit).
set -uo pipefail
cd "$(dirname "$0")/../.."
command -v podman >/dev/null || exit 0
export CONTAINERS_CONF="$PWD/deploy/podman/containers.conf"
podman pod ls --format '{{.Name}}' | grep -E '^tessera-(edge|redis|ferretdb|(data|auth|console)-[0-9]+)$' \
  | xargs -r podman pod rm --force --time 5 >/dev/null
podman volume ls --format '{{.Name}}' | grep -E '^tessera-(redis|ferretdb|(data|auth|console)-[0-9]+)-' \
  | xargs -r podman volume rm --force >/dev/null
podman network ls --format '{{.Name}}' | grep -E '^tessera-deploy-[0-9]+$' | xargs -r podman network rm --force >/dev/null
podman secret ls --format '{{.Name}}' | grep -E '^tessera-secrets-' | xargs -r podman secret rm >/dev/null
exit 0
