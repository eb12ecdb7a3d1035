{{/*
The objects of one service, each taking dict "root" $ "cfg" $cfg (see partner.config). services.yaml
loops over the services and includes these.
*/}}

{{/* True when something other than the Deployment's replicas field sets the replica count. */}}
{{- define "partner.autoscaled" -}}
{{- if or .cfg.hpa.enabled (and .cfg.keda .cfg.keda.enabled) }}true{{ end }}
{{- end }}

{{- define "partner.deployment" -}}
{{- $root := .root }}
{{- $cfg := .cfg }}
{{- $labels := dict "root" $root "component" $cfg.name }}
apiVersion: apps/v1
kind: Deployment
metadata:
  name: {{ include "partner.fullname" $root }}-{{ $cfg.name }}
  labels:
    {{- include "partner.labels" $labels | nindent 4 }}
spec:
  {{- if not (include "partner.autoscaled" .) }}
  replicas: {{ $cfg.replicas }}
  {{- end }}
  revisionHistoryLimit: 5
  strategy:
    {{- toYaml $cfg.strategy | nindent 4 }}
  selector:
    matchLabels:
      {{- include "partner.selectorLabels" $labels | nindent 6 }}
  template:
    metadata:
      labels:
        {{- include "partner.labels" $labels | nindent 8 }}
        {{- with $cfg.podLabels }}
        {{- toYaml . | nindent 8 }}
        {{- end }}
      {{- if or $cfg.podAnnotations $root.Values.image.baseImage }}
      annotations:
        {{- with $cfg.podAnnotations }}
        {{- toYaml . | nindent 8 }}
        {{- end }}
        {{- with $root.Values.image.baseImage }}
        partner-submission/base-image: {{ . | quote }}
        {{- end }}
      {{- end }}
    spec:
      serviceAccountName: {{ include "partner.serviceAccountName" $root }}
      # No service needs the Kubernetes API.
      automountServiceAccountToken: false
      # Service links would put <SVC>_PORT-style variables next to the ones the services read.
      enableServiceLinks: false
      {{- with $root.Values.imagePullSecrets }}
      imagePullSecrets:
        {{- toYaml . | nindent 8 }}
      {{- end }}
      securityContext:
        {{- toYaml $cfg.podSecurityContext | nindent 8 }}
      # preStop sleep + the drain budget + 15 s (pools and telemetry after the drain, and slack).
      terminationGracePeriodSeconds: {{ add ($cfg.preStopSleepSeconds | int) ($cfg.drainSeconds | int) 15 }}
      {{- with $cfg.priorityClassName }}
      priorityClassName: {{ . }}
      {{- end }}
      {{- with $cfg.topologySpreadKeys }}
      topologySpreadConstraints:
        {{- range . }}
        - topologyKey: {{ . }}
          maxSkew: 1
          whenUnsatisfiable: ScheduleAnyway
          labelSelector:
            matchLabels:
              {{- include "partner.selectorLabels" $labels | nindent 14 }}
          # Count only this ReplicaSet's pods: during a rollout the old ones are about to go.
          matchLabelKeys:
            - pod-template-hash
        {{- end }}
      {{- end }}
      {{- with $cfg.nodeSelector }}
      nodeSelector:
        {{- toYaml . | nindent 8 }}
      {{- end }}
      {{- with $cfg.affinity }}
      affinity:
        {{- toYaml . | nindent 8 }}
      {{- end }}
      {{- with $cfg.tolerations }}
      tolerations:
        {{- toYaml . | nindent 8 }}
      {{- end }}
      containers:
        - name: {{ $cfg.name }}
          image: {{ include "partner.image" $root }}
          imagePullPolicy: {{ $root.Values.image.pullPolicy }}
          # The image's entrypoint is `tini -- node`; these are node's arguments.
          args:
            {{- range $cfg.nodeArgs }}
            - {{ . | quote }}
            {{- end }}
            - {{ $cfg.script | default (printf "services/%s/dist/main.js" $cfg.name) }}
          ports:
            {{- with $cfg.http }}
            - name: http
              containerPort: {{ .port }}
              protocol: TCP
            {{- end }}
            {{- with $cfg.grpc }}
            - name: grpc
              containerPort: {{ .port }}
              protocol: TCP
            {{- end }}
            - name: ops
              containerPort: {{ $cfg.opsPort }}
              protocol: TCP
          env:
            {{- include "partner.env" . | nindent 12 }}
          # Startup covers migrations on start; /livez answers once every listener is up.
          startupProbe:
            httpGet:
              path: /livez
              port: ops
            {{- toYaml $cfg.probes.startup | nindent 12 }}
          livenessProbe:
            {{- if $cfg.grpc }}
            # "liveness" stays SERVING through the drain (services/shared/src/grpc/server.ts).
            grpc:
              port: {{ $cfg.grpc.port }}
              service: liveness
            {{- else }}
            httpGet:
              path: /livez
              port: ops
            {{- end }}
            {{- toYaml $cfg.probes.liveness | nindent 12 }}
          # /readyz means "not draining and listening": a dependency outage answers each call with
          # UNAVAILABLE / 503 unavailable instead of emptying the Service.
          readinessProbe:
            httpGet:
              path: /readyz
              port: ops
            {{- toYaml $cfg.probes.readiness | nindent 12 }}
          {{- if $cfg.preStopSleepSeconds }}
          lifecycle:
            preStop:
              exec:
                command: ["sleep", {{ $cfg.preStopSleepSeconds | int | quote }}]
          {{- end }}
          resources:
            {{- toYaml $cfg.resources | nindent 12 }}
          securityContext:
            {{- toYaml $cfg.securityContext | nindent 12 }}
          volumeMounts:
            - name: tmp
              mountPath: /tmp
      volumes:
        {{- include "partner.tmpVolume" $cfg | nindent 8 }}
{{- end }}

{{/* A ClusterIP Service for the public port (if any) and the ops port (scraped by the ServiceMonitor). */}}
{{- define "partner.service" -}}
{{- $root := .root }}
{{- $cfg := .cfg }}
{{- $labels := dict "root" $root "component" $cfg.name }}
apiVersion: v1
kind: Service
metadata:
  name: {{ include "partner.fullname" $root }}-{{ $cfg.name }}
  labels:
    {{- include "partner.labels" $labels | nindent 4 }}
    {{ include "partner.name" $root }}/scrape: "true"
spec:
  type: ClusterIP
  selector:
    {{- include "partner.selectorLabels" $labels | nindent 4 }}
  ports:
    {{- with $cfg.http }}
    - name: http
      port: {{ .port }}
      targetPort: http
      protocol: TCP
    {{- end }}
    - name: ops
      port: {{ $cfg.opsPort }}
      targetPort: ops
      protocol: TCP
{{- end }}

{{/*
Headless Service for a gRPC server: DNS answers with every ready pod's address, and clients dialling
dns:///<name>:<port> balance calls over them with round_robin.
*/}}
{{- define "partner.grpcService" -}}
{{- $root := .root }}
{{- $cfg := .cfg }}
{{- $labels := dict "root" $root "component" $cfg.name }}
apiVersion: v1
kind: Service
metadata:
  name: {{ include "partner.fullname" $root }}-{{ $cfg.name }}-grpc
  labels:
    {{- include "partner.labels" $labels | nindent 4 }}
spec:
  clusterIP: None
  selector:
    {{- include "partner.selectorLabels" $labels | nindent 4 }}
  ports:
    - name: grpc
      port: {{ $cfg.grpc.port }}
      targetPort: grpc
      protocol: TCP
      appProtocol: grpc
{{- end }}

{{- define "partner.pdb" -}}
{{- $root := .root }}
{{- $cfg := .cfg }}
{{- $labels := dict "root" $root "component" $cfg.name }}
apiVersion: policy/v1
kind: PodDisruptionBudget
metadata:
  name: {{ include "partner.fullname" $root }}-{{ $cfg.name }}
  labels:
    {{- include "partner.labels" $labels | nindent 4 }}
spec:
  {{- if hasKey $cfg.pdb "minAvailable" }}
  minAvailable: {{ $cfg.pdb.minAvailable }}
  {{- else }}
  maxUnavailable: {{ $cfg.pdb.maxUnavailable | default 1 }}
  {{- end }}
  {{- with $cfg.pdb.unhealthyPodEvictionPolicy }}
  unhealthyPodEvictionPolicy: {{ . }}
  {{- end }}
  selector:
    matchLabels:
      {{- include "partner.selectorLabels" $labels | nindent 6 }}
{{- end }}

{{- define "partner.hpa" -}}
{{- $root := .root }}
{{- $cfg := .cfg }}
{{- $labels := dict "root" $root "component" $cfg.name }}
apiVersion: autoscaling/v2
kind: HorizontalPodAutoscaler
metadata:
  name: {{ include "partner.fullname" $root }}-{{ $cfg.name }}
  labels:
    {{- include "partner.labels" $labels | nindent 4 }}
spec:
  scaleTargetRef:
    apiVersion: apps/v1
    kind: Deployment
    name: {{ include "partner.fullname" $root }}-{{ $cfg.name }}
  minReplicas: {{ $cfg.hpa.minReplicas }}
  maxReplicas: {{ $cfg.hpa.maxReplicas }}
  metrics:
    - type: Resource
      resource:
        name: cpu
        target:
          type: Utilization
          averageUtilization: {{ $cfg.hpa.targetCPUUtilizationPercentage }}
  behavior:
    scaleDown:
      # Scale in slowly: a worker or gateway pod that goes drains its in-flight work first.
      stabilizationWindowSeconds: 300
{{- end }}

{{/*
KEDA ScaledObject (replaces the HPA). keda.trigger picks the signal:
- nats-jetstream (worker): the lag of the durable consumer "workers" on <prefix>_JOBS (stream and
  consumer names of services/shared/src/nats/client.ts natsNames), read from the NATS servers'
  monitoring port through the NATS chart's headless Service (partner.natsMonitoringEndpoint);
- prometheus (dispatcher): how late the most overdue webhook delivery is,
  max(partner_webhook_oldest_pending_age_seconds) of this release's dispatchers.
fallback holds a replica count while the signal cannot be read; the HPA's behavior is set too.
*/}}
{{- define "partner.scaledObject" -}}
{{- $root := .root }}
{{- $cfg := .cfg }}
{{- $labels := dict "root" $root "component" $cfg.name }}
{{- $trigger := $cfg.keda.trigger | default "nats-jetstream" }}
apiVersion: keda.sh/v1alpha1
kind: ScaledObject
metadata:
  name: {{ include "partner.fullname" $root }}-{{ $cfg.name }}
  labels:
    {{- include "partner.labels" $labels | nindent 4 }}
spec:
  scaleTargetRef:
    name: {{ include "partner.fullname" $root }}-{{ $cfg.name }}
  minReplicaCount: {{ $cfg.keda.minReplicas }}
  maxReplicaCount: {{ $cfg.keda.maxReplicas }}
  pollingInterval: {{ $cfg.keda.pollingInterval }}
  cooldownPeriod: {{ $cfg.keda.cooldownPeriod }}
  {{- with $cfg.keda.fallback }}
  fallback:
    failureThreshold: {{ .failureThreshold }}
    replicas: {{ .replicas }}
  {{- end }}
  {{- with $cfg.keda.behavior }}
  advanced:
    horizontalPodAutoscalerConfig:
      behavior:
        {{- toYaml . | nindent 8 }}
  {{- end }}
  triggers:
    {{- if eq $trigger "nats-jetstream" }}
    - type: nats-jetstream
      metadata:
        natsServerMonitoringEndpoint: {{ include "partner.natsMonitoringEndpoint" $root | quote }}
        useHttps: {{ $root.Values.nats.monitoringUseHttps | default false | toString | quote }}
        account: "$G"
        stream: {{ printf "%s_JOBS" $root.Values.nats.prefix | quote }}
        consumer: "workers"
        lagThreshold: {{ $cfg.keda.lagThreshold | int | quote }}
    {{- else if eq $trigger "prometheus" }}
    - type: prometheus
      metadata:
        serverAddress: {{ required (printf "services.%s.keda.prometheusServerAddress is required" $cfg.name) $cfg.keda.prometheusServerAddress | quote }}
        query: {{ printf "max(partner_webhook_oldest_pending_age_seconds{namespace=\"%s\",job=\"%s-%s\"})" $root.Release.Namespace (include "partner.fullname" $root) $cfg.name | quote }}
        threshold: {{ $cfg.keda.oldestPendingAgeSeconds | int | quote }}
        # No dispatcher reporting (all scaled in or just started): count as 0, not as an error.
        ignoreNullValues: "true"
    {{- else }}
    {{- fail (printf "services.%s.keda.trigger %q is neither nats-jetstream nor prometheus" $cfg.name $trigger) }}
    {{- end }}
{{- end }}

{{/*
The NATS monitoring endpoint as KEDA must dial it: the NATS chart's headless Service, fully
qualified. KEDA's operator runs in its own namespace, so a bare host (nats-headless:8222) is
qualified as nats-headless.<namespace>.svc.<clusterDomain>:8222. Against a cluster KEDA asks /varz
for the server names and dials <server_name>.<this host>:<port>, i.e.
nats-0.nats-headless.<namespace>.svc.<clusterDomain>:8222: the per-pod names only a headless Service
(the StatefulSet's serviceName) serves.
*/}}
{{- define "partner.natsMonitoringEndpoint" -}}
{{- $ep := .Values.nats.monitoringEndpoint }}
{{- $parts := splitList ":" $ep }}
{{- $host := first $parts }}
{{- if contains "." $host }}{{ $ep }}{{ else }}{{ printf "%s.%s.svc.%s" $host .Release.Namespace .Values.clusterDomain }}{{ if gt (len $parts) 1 }}:{{ last $parts }}{{ end }}{{ end }}
{{- end }}

{{/* Peers (NetworkPolicyPeer list) selecting the pods of the given components of this release. */}}
{{- define "partner.componentPeers" -}}
{{- $root := .root }}
{{- range .components }}
- podSelector:
    matchLabels:
      {{- include "partner.selectorLabels" (dict "root" $root "component" .) | nindent 6 }}
{{- end }}
{{- end }}

{{/* Egress rules every pod of the release needs: DNS. */}}
{{- define "partner.dnsEgress" -}}
- ports:
    - port: 53
      protocol: UDP
    - port: 53
      protocol: TCP
  {{- with .Values.networkPolicy.dns.to }}
  to:
    {{- toYaml . | nindent 4 }}
  {{- end }}
{{- end }}

{{- define "partner.databaseEgress" -}}
- ports:
    - port: {{ .Values.networkPolicy.database.port }}
      protocol: TCP
  {{- with .Values.networkPolicy.database.to }}
  to:
    {{- toYaml . | nindent 4 }}
  {{- end }}
{{- end }}

{{/*
Allow-lists of one service. Callers are computed from the other services' `dials`/`dialsHttp`, so the
policy follows the values that also set the addresses. A rule is only written when it has peers: an
empty `from`/`to` would mean "everyone".
*/}}
{{- define "partner.networkPolicy" -}}
{{- $root := .root }}
{{- $cfg := .cfg }}
{{- $name := $cfg.name }}
{{- $labels := dict "root" $root "component" $name }}
{{- $np := $root.Values.networkPolicy }}
{{- $grpcCallers := list }}
{{- $httpCallers := list }}
{{- range $other, $_ := $root.Values.services }}
{{- $o := include "partner.config" (dict "root" $root "name" $other) | fromJson }}
{{- if and $o.enabled (has $name ($o.dials | default list)) }}
{{- $grpcCallers = append $grpcCallers $other }}
{{- end }}
{{- if and $o.enabled (has $name ($o.dialsHttp | default list)) }}
{{- $httpCallers = append $httpCallers $other }}
{{- end }}
{{- end }}
{{- $public := or (eq $name "gateway") (eq $name "auth") }}
{{- if and $public $root.Values.tests.enabled }}
{{- $httpCallers = append $httpCallers "helm-test" }}
{{- end }}
apiVersion: networking.k8s.io/v1
kind: NetworkPolicy
metadata:
  name: {{ include "partner.fullname" $root }}-{{ $name }}
  labels:
    {{- include "partner.labels" $labels | nindent 4 }}
spec:
  podSelector:
    matchLabels:
      {{- include "partner.selectorLabels" $labels | nindent 6 }}
  policyTypes:
    - Ingress
    - Egress
  ingress:
    {{- if $cfg.http }}
    {{- if and $public $root.Values.ingress.enabled (not $np.ingressController.from) }}
    # Public listener, reached through the ingress controller (from anywhere: no peers configured).
    - ports:
        - port: {{ $cfg.http.port }}
          protocol: TCP
    {{- else if or $httpCallers (and $public $root.Values.ingress.enabled) }}
    - ports:
        - port: {{ $cfg.http.port }}
          protocol: TCP
      from:
        {{- if and $public $root.Values.ingress.enabled }}
        {{- toYaml $np.ingressController.from | nindent 8 }}
        {{- end }}
        {{- include "partner.componentPeers" (dict "root" $root "components" $httpCallers) | nindent 8 }}
    {{- end }}
    {{- end }}
    {{- if and $cfg.grpc $grpcCallers }}
    - ports:
        - port: {{ $cfg.grpc.port }}
          protocol: TCP
      from:
        {{- include "partner.componentPeers" (dict "root" $root "components" $grpcCallers) | nindent 8 }}
    {{- end }}
    - ports:
        - port: {{ $cfg.opsPort }}
          protocol: TCP
      {{- with $np.metrics.from }}
      from:
        {{- toYaml . | nindent 8 }}
      {{- end }}
  egress:
    {{- include "partner.dnsEgress" $root | nindent 4 }}
    {{- range $target := $cfg.dials }}
    {{- $t := include "partner.config" (dict "root" $root "name" $target) | fromJson }}
    - ports:
        - port: {{ $t.grpc.port }}
          protocol: TCP
      to:
        {{- include "partner.componentPeers" (dict "root" $root "components" (list $target)) | nindent 8 }}
    {{- end }}
    {{- range $target := $cfg.dialsHttp }}
    {{- $t := include "partner.config" (dict "root" $root "name" $target) | fromJson }}
    - ports:
        - port: {{ $t.http.port }}
          protocol: TCP
      to:
        {{- include "partner.componentPeers" (dict "root" $root "components" (list $target)) | nindent 8 }}
    {{- end }}
    {{- if $cfg.database }}
    {{- include "partner.databaseEgress" $root | nindent 4 }}
    {{- end }}
    {{- if $cfg.nats }}
    - ports:
        - port: {{ $np.nats.port }}
          protocol: TCP
      {{- with $np.nats.to }}
      to:
        {{- toYaml . | nindent 8 }}
      {{- end }}
    {{- end }}
    {{- if $cfg.webhookEgress }}
    # Partners' webhook receivers on webhooks.allowedPorts (the gateway accepts no other port at
    # registration): the internet, not the cluster's or the cloud's private ranges.
    - ports:
        {{- range include "partner.webhookPorts" $root | fromJsonArray }}
        - port: {{ . }}
          protocol: TCP
        {{- end }}
      to:
        - ipBlock:
            cidr: 0.0.0.0/0
            except:
              {{- toYaml $np.webhookEgress.exceptIPv4 | nindent 14 }}
        - ipBlock:
            cidr: ::/0
            except:
              {{- toYaml $np.webhookEgress.exceptIPv6 | nindent 14 }}
    {{- end }}
    {{- with $np.extraEgress }}
    {{- toYaml . | nindent 4 }}
    {{- end }}
{{- end }}
