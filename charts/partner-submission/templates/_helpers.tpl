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
  value: {{ $root.Values.database.poolMax | int | quote }}
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
{{- if eq $name "gateway" }}
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
- name: AUTH_KEY_ENCRYPTION_KEY
  valueFrom:
    secretKeyRef:
      name: {{ required "auth.keyEncryptionKey.existingSecret is required" $root.Values.auth.keyEncryptionKey.existingSecret }}
      key: {{ $root.Values.auth.keyEncryptionKey.key }}
{{- end }}
{{- $secretNames := include "partner.secretEnvNames" $root | fromJsonArray }}
{{- range $k, $v := $cfg.env }}
{{- if has $k $secretNames }}
{{- fail (printf "%s must come from a Secret, not from env (default.env or services.%s.env); see values.yaml" $k $name) }}
{{- end }}
- name: {{ $k }}
  value: {{ $v | toString | quote }}
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
