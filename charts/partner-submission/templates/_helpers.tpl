{{/*
Names, labels and the per-service settings every template shares.
*/}}

{{- define "partner.name" -}}
{{- default .Chart.Name .Values.nameOverride | trunc 63 | trimSuffix "-" }}
{{- end }}

{{/* Prefix of every object; short enough that "<fullname>-submission-grpc" fits in 63 characters. */}}
{{- define "partner.fullname" -}}
{{- default .Release.Name .Values.fullnameOverride | trunc 40 | trimSuffix "-" }}
{{- end }}

{{- define "partner.chart" -}}
{{- printf "%s-%s" .Chart.Name .Chart.Version | replace "+" "_" | trunc 63 | trimSuffix "-" }}
{{- end }}

{{/* Selector labels of a component: dict "root" $ "component" "gateway". */}}
{{- define "partner.selectorLabels" -}}
app.kubernetes.io/name: {{ include "partner.name" .root }}
app.kubernetes.io/instance: {{ .root.Release.Name }}
app.kubernetes.io/component: {{ .component }}
{{- end }}

{{/* Labels of the release's pods, whatever the component (the default-deny policy selects these). */}}
{{- define "partner.releaseSelector" -}}
app.kubernetes.io/name: {{ include "partner.name" . }}
app.kubernetes.io/instance: {{ .Release.Name }}
{{- end }}

{{- define "partner.labels" -}}
{{ include "partner.selectorLabels" . }}
app.kubernetes.io/part-of: partner-submission-service
app.kubernetes.io/version: {{ .root.Chart.AppVersion | quote }}
app.kubernetes.io/managed-by: {{ .root.Release.Service }}
helm.sh/chart: {{ include "partner.chart" .root }}
{{- end }}

{{- define "partner.image" -}}
{{- if .Values.image.digest -}}
{{ .Values.image.repository }}@{{ .Values.image.digest }}
{{- else -}}
{{ .Values.image.repository }}:{{ .Values.image.tag | default .Chart.AppVersion }}
{{- end }}
{{- end }}

{{- define "partner.serviceAccountName" -}}
{{- if .Values.serviceAccount.create }}
{{- default (include "partner.fullname" .) .Values.serviceAccount.name }}
{{- else }}
{{- default "default" .Values.serviceAccount.name }}
{{- end }}
{{- end }}

{{/*
Effective settings of one service as JSON: `default`, with every key the service sets replacing the
same key (whole key). Use: $cfg := include "partner.config" (dict "root" $ "name" "gateway") | fromJson
*/}}
{{- define "partner.config" -}}
{{- $svc := index .root.Values.services .name | default dict }}
{{- $cfg := deepCopy .root.Values.default }}
{{- range $k, $v := $svc }}
{{- $_ := set $cfg $k $v }}
{{- end }}
{{- $_ := set $cfg "name" .name }}
{{- toJson $cfg }}
{{- end }}

{{/* gRPC address of a service, as clients dial it (dns:/// with round_robin over the headless Service). */}}
{{- define "partner.grpcAddress" -}}
{{- $cfg := include "partner.config" (dict "root" .root "name" .name) | fromJson }}
{{- if not $cfg.grpc }}
{{- fail (printf "services.%s has no grpc port, but another service dials it" .name) }}
{{- end }}
{{- printf "%s-%s-grpc.%s.svc.%s:%d" (include "partner.fullname" .root) .name .root.Release.Namespace .root.Values.clusterDomain (int $cfg.grpc.port) }}
{{- end }}

{{/* In-cluster HTTP base URL of a service's public listener (the gateway reads the JWKS through it). */}}
{{- define "partner.httpAddress" -}}
{{- $cfg := include "partner.config" (dict "root" .root "name" .name) | fromJson }}
{{- printf "http://%s-%s.%s.svc.%s:%d" (include "partner.fullname" .root) .name .root.Release.Namespace .root.Values.clusterDomain (int $cfg.http.port) }}
{{- end }}

{{/* Host (and port when not the default) of baseUrl: the environment's scope is "<this>/access". */}}
{{- define "partner.apiHost" -}}
{{- (urlParse .Values.baseUrl).host }}
{{- end }}

{{/* Checks of values the schema cannot express. */}}
{{- define "partner.validate" -}}
{{- range $url := list .Values.baseUrl .Values.authUrl }}
{{- $u := urlParse $url }}
{{- if or (not $u.hostname) (and $u.path (ne $u.path "/")) }}
{{- fail (printf "baseUrl and authUrl must be scheme://host[:port] without a path, got %q" $url) }}
{{- end }}
{{- if and (eq $.Values.environment "production") (ne $u.scheme "https") }}
{{- fail (printf "environment production needs https URLs, got %q" $url) }}
{{- end }}
{{- end }}
{{- range $name, $svc := .Values.services }}
{{- range $target := (concat ($svc.dials | default list) ($svc.dialsHttp | default list)) }}
{{- if not (hasKey $.Values.services $target) }}
{{- fail (printf "services.%s dials %q, which is not a service" $name $target) }}
{{- end }}
{{- end }}
{{- end }}
{{- $prod := eq .Values.environment "production" }}
{{- if and $prod (not .Values.image.digest) }}
{{- fail "environment production needs image.digest (sha256:…): a tag can be moved to other bytes, a digest cannot" }}
{{- end }}
{{- if and $prod .Values.prometheusRule.enabled (or (not .Values.prometheusRule.runbookBaseUrl) (contains "github.com/example/" .Values.prometheusRule.runbookBaseUrl)) }}
{{- fail (printf "environment production needs prometheusRule.runbookBaseUrl: where docs/operations.md is published (got the placeholder %q)" .Values.prometheusRule.runbookBaseUrl) }}
{{- end }}
{{- if and $prod .Values.networkPolicy.enabled }}
{{- range $peer := list "database" "nats" }}
{{- if not (index $.Values.networkPolicy $peer).to }}
{{- fail (printf "environment production needs networkPolicy.%s.to: with no peers every pod of the release may reach any address on port %v" $peer (index $.Values.networkPolicy $peer).port) }}
{{- end }}
{{- end }}
{{- end }}
{{- /* Transfers: the submission service holds the other end of every gateway transfer. */}}
{{- $gw := include "partner.config" (dict "root" . "name" "gateway") | fromJson }}
{{- $sub := include "partner.config" (dict "root" . "name" "submission") | fromJson }}
{{- if and $gw.enabled $sub.enabled (lt ($sub.drainSeconds | int) ($gw.drainSeconds | int)) }}
{{- fail (printf "services.submission.drainSeconds (%d) is shorter than services.gateway.drainSeconds (%d): a transfer the gateway lets finish would be cut at the submission service" ($sub.drainSeconds | int) ($gw.drainSeconds | int)) }}
{{- end }}
{{- $budget := include "partner.connectionBudget" . | fromJson }}
{{- if gt ($budget.total | int) (.Values.database.maxConnections | int) }}
{{- fail (printf "connection budget exceeded: %s = %d > database.maxConnections %d. Lower a services.<name>.database.poolMax or an autoscaler's maxReplicas, or raise max_connections on the server and database.maxConnections with it" $budget.formula ($budget.total | int) (.Values.database.maxConnections | int)) }}
{{- end }}
{{- end }}

{{/*
The most replicas a Deployment may run (the autoscaler's maximum, else its replicas), and the extra
pods a rolling update adds on top (maxSurge; a percentage rounds up, as the Deployment controller does).
Use: include "partner.replicaBounds" $cfg | fromJson → {max, surge}
*/}}
{{- define "partner.replicaBounds" -}}
{{- $max := int .replicas }}
{{- if and .keda .keda.enabled }}
{{- $max = int .keda.maxReplicas }}
{{- else if .hpa.enabled }}
{{- $max = int .hpa.maxReplicas }}
{{- end }}
{{- $surge := 0 }}
{{- if ne (.strategy.type | default "RollingUpdate") "Recreate" }}
{{- $s := "25%" }}
{{- if and .strategy.rollingUpdate (hasKey .strategy.rollingUpdate "maxSurge") }}
{{- $s = .strategy.rollingUpdate.maxSurge | toString }}
{{- end }}
{{- if hasSuffix "%" $s }}
{{- $pct := trimSuffix "%" $s | int }}
{{- $surge = div (add (mul $max $pct) 99) 100 }}
{{- else }}
{{- $surge = int $s }}
{{- end }}
{{- end }}
{{- dict "max" $max "surge" $surge | toJson }}
{{- end }}

{{/* DB_POOL_MAX of a service's pods: its pool plus the connections it holds beside it. */}}
{{- define "partner.poolSize" -}}
{{- add (.poolMax | int) (.writerLockConnections | default 0 | int) }}
{{- end }}

{{/*
The release's PostgreSQL connection budget as JSON: one row per enabled Deployment with a pool
({name, max, surge, pool, connections}), the migration hook Jobs (one connection each: `main.js
migrate` opens a pool of one), database.reservedConnections, the total and a formula naming every
number. partner.validate fails the render when total > database.maxConnections;
scripts/gen-connection-budget.mjs writes the table of docs/kubernetes.md from the rendered objects.
*/}}
{{- define "partner.connectionBudget" -}}
{{- $rows := list }}
{{- $terms := list }}
{{- $total := 0 }}
{{- $hooks := 0 }}
{{- range $name, $_ := .Values.services }}
{{- $cfg := include "partner.config" (dict "root" $ "name" $name) | fromJson }}
{{- if and $cfg.enabled $cfg.database }}
{{- $b := include "partner.replicaBounds" $cfg | fromJson }}
{{- $pool := include "partner.poolSize" $cfg.database | int }}
{{- $n := mul (add ($b.max | int) ($b.surge | int)) $pool }}
{{- $total = add $total $n }}
{{- $terms = append $terms (printf "%s (%d+%d)×%d" $name ($b.max | int) ($b.surge | int) $pool) }}
{{- $rows = append $rows (dict "name" $name "max" ($b.max | int) "surge" ($b.surge | int) "pool" $pool "connections" $n) }}
{{- if and $cfg.migrate $.Values.migrations.enabled }}
{{- $hooks = add $hooks 1 }}
{{- end }}
{{- end }}
{{- end }}
{{- $reserved := .Values.database.reservedConnections | default 0 | int }}
{{- $total = add $total $hooks $reserved }}
{{- $formula := printf "%s + %d migration hook Job(s)×1 + database.reservedConnections %d" (join " + " $terms) $hooks $reserved }}
{{- dict "rows" $rows "hooks" $hooks "reserved" $reserved "total" $total "formula" $formula | toJson }}
{{- end }}

{{/* The gateway's transfer deadlines, derived from its drainSeconds (partner.env). */}}
{{- define "partner.transferTimeoutVars" -}}
{{- list "REQUEST_RECEIVE_TIMEOUT_MS" "ATTACHMENT_TRANSFER_TIMEOUT_MS" | toJson }}
{{- end }}

{{/* webhooks.allowedPorts as a JSON list of integers. */}}
{{- define "partner.webhookPorts" -}}
{{- $ports := list }}
{{- range .Values.webhooks.allowedPorts }}{{ $ports = append $ports (int .) }}{{ end }}
{{- $ports | toJson }}
{{- end }}

{{/* Environment variables the chart sets from a Secret; `env` may not set them in clear. */}}
{{- define "partner.secretEnvNames" -}}
{{- list "DATABASE_URL" "AUTH_KEY_ENCRYPTION_KEY" "NATS_URL" "POLICY_CURSOR_SECRET" "CLIENT_SECRET" | toJson }}
{{- end }}

{{/*
Environment of a service's container (also of its migration Job): dict "root" $ "cfg" $cfg.
*/}}
{{- define "partner.env" -}}
{{- $root := .root }}
{{- $cfg := .cfg }}
{{- $name := $cfg.name }}
- name: HOST
  value: "0.0.0.0"
- name: OPS_PORT
  value: {{ $cfg.opsPort | int | quote }}
- name: LOG_LEVEL
  value: {{ $cfg.logLevel | quote }}
- name: ENVIRONMENT
  value: {{ $root.Values.environment | quote }}
- name: SHUTDOWN_DRAIN_MS
  value: {{ mul ($cfg.drainSeconds | int) 1000 | quote }}
{{- with $cfg.http }}
- name: {{ .portEnv }}
  value: {{ .port | int | quote }}
{{- end }}
{{- with $cfg.grpc }}
- name: {{ upper $name }}_GRPC_PORT
  value: {{ .port | int | quote }}
{{- end }}
{{- range $target := $cfg.dials }}
- name: {{ upper $target }}_GRPC_ADDR
  value: {{ include "partner.grpcAddress" (dict "root" $root "name" $target) | quote }}
{{- end }}
{{- if $cfg.database }}
- name: DATABASE_URL
  valueFrom:
    secretKeyRef:
      name: {{ required "database.existingSecret is required" $root.Values.database.existingSecret }}
      key: {{ $root.Values.database.urlKey }}
- name: DB_POOL_MAX
  value: {{ include "partner.poolSize" $cfg.database | quote }}
{{- end }}
{{- if $cfg.nats }}
- name: NATS_URL
{{- if $root.Values.nats.existingSecret }}
  valueFrom:
    secretKeyRef:
      name: {{ $root.Values.nats.existingSecret }}
      key: {{ $root.Values.nats.urlKey }}
{{- else }}
  value: {{ required "nats.url is required" $root.Values.nats.url | quote }}
{{- end }}
- name: NATS_PREFIX
  value: {{ $root.Values.nats.prefix | quote }}
- name: JOBS_STREAM_REPLICAS
  value: {{ $root.Values.nats.streamReplicas | int | quote }}
{{- end }}
{{- if and (eq $name "policy") $root.Values.policy.cursorSecret.existingSecret }}
- name: POLICY_CURSOR_SECRET
  valueFrom:
    secretKeyRef:
      name: {{ $root.Values.policy.cursorSecret.existingSecret }}
      key: {{ $root.Values.policy.cursorSecret.key }}
{{- end }}
{{- if or (eq $name "gateway") (eq $name "dispatcher") }}
- name: WEBHOOK_ALLOW_LOOPBACK_TARGETS
  value: {{ $root.Values.webhooks.allowLoopbackTargets | quote }}
{{- end }}
{{- if has $name (list "gateway" "events" "dispatcher") }}
{{- /* Checked at registration (gateway), before a delivery (events, dispatcher); the dispatcher's
NetworkPolicy opens the same ports. */}}
- name: WEBHOOK_ALLOWED_PORTS
  value: {{ include "partner.webhookPorts" $root | fromJsonArray | join "," | quote }}
{{- end }}
{{- if eq $name "gateway" }}
{{- /* A transfer may not outlive the drain that protects it: both deadlines are drainSeconds, and a
shorter one may be set in env (a longer one fails the render). */}}
{{- $drainMs := mul ($cfg.drainSeconds | int) 1000 }}
{{- range $var := include "partner.transferTimeoutVars" $root | fromJsonArray }}
{{- $ms := $drainMs }}
{{- if hasKey ($cfg.env | default dict) $var }}
{{- $ms = index $cfg.env $var | int }}
{{- if gt $ms $drainMs }}
{{- fail (printf "services.gateway.env.%s (%d ms) is longer than the gateway's drain (drainSeconds %d): a rollout would cut such a transfer; raise drainSeconds instead" $var $ms ($cfg.drainSeconds | int)) }}
{{- end }}
{{- end }}
- name: {{ $var }}
  value: {{ $ms | quote }}
{{- end }}
- name: BASE_URL
  value: {{ $root.Values.baseUrl | trimSuffix "/" | quote }}
- name: AUTH_ISSUER
  value: {{ $root.Values.authUrl | trimSuffix "/" | quote }}
- name: AUTH_AUDIENCE
  value: {{ $root.Values.auth.audience | quote }}
- name: AUTH_JWKS_URL
  value: {{ printf "%s/.well-known/jwks.json" (include "partner.httpAddress" (dict "root" $root "name" "auth")) | quote }}
{{- /* The issuer's token lifetime: the gateway refuses tokens claiming a longer one. */}}
- name: AUTH_TOKEN_TTL_SECONDS
  value: {{ $root.Values.auth.tokenTtlSeconds | int | quote }}
{{- /* Rate limits are enforced per replica (each takes 1/N of a client's limit). Under an HPA the
count moves; the minimum is used, so the fleet allows more than the limit once it scales out. */}}
- name: RATE_LIMIT_REPLICAS
  value: {{ ternary $cfg.hpa.minReplicas $cfg.replicas (and $cfg.hpa.enabled true) | int | quote }}
- name: CONSOLE_SESSION_CACHE_MS
  value: {{ $root.Values.console.sessionCacheMs | int | quote }}
{{- end }}
{{- if eq $name "auth" }}
- name: AUTH_ISSUER
  value: {{ $root.Values.authUrl | trimSuffix "/" | quote }}
- name: AUTH_AUDIENCE
  value: {{ $root.Values.auth.audience | quote }}
- name: AUTH_SCOPES
  value: {{ prepend $root.Values.auth.extraScopes (printf "%s/access" (include "partner.apiHost" $root)) | uniq | join "," | quote }}
- name: AUTH_TOKEN_TTL_SECONDS
  value: {{ $root.Values.auth.tokenTtlSeconds | int | quote }}
- name: TRUST_PROXY
  value: {{ $root.Values.auth.trustProxy | toString | quote }}
- name: CONSOLE_SESSION_TTL_SECONDS
  value: {{ $root.Values.console.sessionTtlSeconds | int | quote }}
- name: AUTH_KEY_ENCRYPTION_KEY
  valueFrom:
    secretKeyRef:
      name: {{ required "auth.keyEncryptionKey.existingSecret is required" $root.Values.auth.keyEncryptionKey.existingSecret }}
      key: {{ $root.Values.auth.keyEncryptionKey.key }}
{{- end }}
{{- if eq $name "submission" }}
{{- /* Receipts (docs/api.md "Signed receipts"): iss is {base_url}; the receipt keys are sealed under the
same key-encryption key as the token keys (one Secret, one rotation procedure). */}}
- name: BASE_URL
  value: {{ $root.Values.baseUrl | trimSuffix "/" | quote }}
{{- end }}
{{- if has $name (list "submission" "events" "dispatcher") }}
{{- /* The submission service seals its receipt keys, the events service and the dispatcher the
webhook signing secrets, under the same key-encryption key list as auth's token keys. */}}
- name: AUTH_KEY_ENCRYPTION_KEY
  valueFrom:
    secretKeyRef:
      name: {{ required "auth.keyEncryptionKey.existingSecret is required" $root.Values.auth.keyEncryptionKey.existingSecret }}
      key: {{ $root.Values.auth.keyEncryptionKey.key }}
{{- end }}
{{- $secretNames := include "partner.secretEnvNames" $root | fromJsonArray }}
{{- $derived := ternary (include "partner.transferTimeoutVars" $root | fromJsonArray) list (eq $name "gateway") }}
{{- range $k, $v := $cfg.env }}
{{- if has $k $secretNames }}
{{- fail (printf "%s must come from a Secret, not from env (default.env or services.%s.env); see values.yaml" $k $name) }}
{{- end }}
{{- if eq $k "WEBHOOK_ALLOWED_PORTS" }}
{{- fail "WEBHOOK_ALLOWED_PORTS is webhooks.allowedPorts (the same list opens the dispatcher's egress), not env" }}
{{- end }}
{{- if not (has $k $derived) }}
- name: {{ $k }}
  value: {{ $v | toString | quote }}
{{- end }}
{{- end }}
{{- with $cfg.extraEnv }}
{{ toYaml . }}
{{- end }}
{{- end }}

{{/* The writable /tmp every container gets (the root filesystem is read-only). */}}
{{- define "partner.tmpVolume" -}}
- name: tmp
  emptyDir:
    sizeLimit: {{ .tmpSizeLimit }}
{{- end }}
