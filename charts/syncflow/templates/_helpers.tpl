{{/* Names */}}
{{- define "syncflow.name" -}}
{{- default .Chart.Name .Values.nameOverride | trunc 63 | trimSuffix "-" -}}
{{- end }}

{{- define "syncflow.fullname" -}}
{{- if .Values.fullnameOverride -}}
{{- .Values.fullnameOverride | trunc 63 | trimSuffix "-" -}}
{{- else -}}
{{- $name := default .Chart.Name .Values.nameOverride -}}
{{- if contains $name .Release.Name -}}
{{- .Release.Name | trunc 63 | trimSuffix "-" -}}
{{- else -}}
{{- printf "%s-%s" .Release.Name $name | trunc 63 | trimSuffix "-" -}}
{{- end -}}
{{- end -}}
{{- end }}

{{- define "syncflow.namespace" -}}
{{- default .Release.Namespace .Values.namespaceOverride -}}
{{- end }}

{{- define "syncflow.agentName" -}}
{{- .Values.agentName | default .Release.Name -}}
{{- end }}

{{- define "syncflow.chart" -}}
{{- printf "%s-%s" .Chart.Name .Chart.Version | replace "+" "_" | trunc 63 | trimSuffix "-" -}}
{{- end }}

{{- define "syncflow.serviceAccountName" -}}
{{- if .Values.serviceAccount.create -}}
{{- default (include "syncflow.fullname" .) .Values.serviceAccount.name -}}
{{- else -}}
{{- default "default" .Values.serviceAccount.name -}}
{{- end -}}
{{- end }}

{{- define "syncflow.image" -}}
{{- printf "%s:%s" .Values.image.repository (.Values.image.tag | default .Chart.AppVersion) -}}
{{- end }}

{{/* Labels: selector labels of one component ("watch", "worker", ...), then the full set. */}}
{{- define "syncflow.selectorLabels" -}}
app.kubernetes.io/name: {{ include "syncflow.name" .root }}
app.kubernetes.io/instance: {{ .root.Release.Name }}
app.kubernetes.io/component: {{ .component }}
{{- end }}

{{- define "syncflow.labels" -}}
{{ include "syncflow.selectorLabels" . }}
helm.sh/chart: {{ include "syncflow.chart" .root }}
app.kubernetes.io/version: {{ .root.Values.image.tag | default .root.Chart.AppVersion | quote }}
app.kubernetes.io/managed-by: {{ .root.Release.Service }}
app.kubernetes.io/part-of: syncflow
{{- with .root.Values.extraLabels }}
{{ toYaml . }}
{{- end }}
{{- end }}

{{/* Labels of objects that belong to the whole release (RBAC, ServiceAccount, CRDs). */}}
{{- define "syncflow.commonLabels" -}}
{{ include "syncflow.labels" (dict "root" . "component" "agent") }}
{{- end }}

{{- define "syncflow.imagePullSecrets" -}}
{{- range .Values.global.imagePullSecrets }}
{{- if kindIs "map" . }}
- {{ toYaml . | trim }}
{{- else }}
- name: {{ . }}
{{- end }}
{{- end }}
{{- end }}

{{/* The Redis URL as a container env entry. */}}
{{- define "syncflow.redisEnv" -}}
- name: SYNCFLOW_REDIS_URL
{{- if .Values.redis.enabled }}
  value: {{ printf "redis://%s-redis:6379/0" (include "syncflow.fullname" .) | quote }}
{{- else if .Values.redis.external.existingSecret }}
  valueFrom:
    secretKeyRef:
      name: {{ .Values.redis.external.existingSecret }}
      key: {{ .Values.redis.external.existingSecretKey }}
{{- else }}
  value: {{ required "redis.external.url or redis.external.existingSecret is required when redis.enabled is false" .Values.redis.external.url | quote }}
{{- end }}
{{- end }}

{{/* Env of every syncflow container: agent, Redis, settings file, log format, extraEnv. */}}
{{- define "syncflow.env" -}}
- name: SYNCFLOW_AGENT_NAME
  value: {{ include "syncflow.agentName" . | quote }}
{{- if and (eq .Values.mode "clusters") (not .Values.clusters.onlyCluster) }}
# The central clusters syncflow keeps its Lease in the workspace and its state Secrets in each Cluster.
- name: SYNCFLOW_NAMESPACE
  value: {{ .Values.clusters.namespace | quote }}
{{- else }}
# The Lease and the state Secrets live in the Pod's namespace.
- name: SYNCFLOW_NAMESPACE
  valueFrom:
    fieldRef:
      apiVersion: v1
      fieldPath: metadata.namespace
{{- end }}
{{ include "syncflow.redisEnv" . }}
- name: SYNCFLOW_LOG_FORMAT
  value: {{ .Values.logFormat | quote }}
{{- if .Values.settings }}
- name: SYNCFLOW_CONFIG
  value: /etc/syncflow/config/config.yaml
{{- end }}
{{- if .Values.metrics.enabled }}
- name: SYNCFLOW_METRICS_ADDRESS
  value: {{ printf "0.0.0.0:%d" (int .Values.metrics.port) | quote }}
{{- end }}
{{- with .Values.extraEnv }}
{{ toYaml . }}
{{- end }}
{{- end }}

{{/* Env of the processes that talk to clusters (watch, worker; beat too outside publish mode, as the
     modes' commands check kcp before any role starts). The modes' own values are flags (syncflow.args). */}}
{{- define "syncflow.clusterEnv" -}}
- name: SYNCFLOW_KCP_KUBECONFIG
  value: /etc/syncflow/kcp/kubeconfig
{{- if .Values.kubeconfig }}
- name: SYNCFLOW_KUBECONFIG
  value: /etc/syncflow/cluster/kubeconfig
{{- end }}
{{- if eq .Values.mode "publish" }}
- name: SYNCFLOW_APIEXPORTENDPOINTSLICE_REF
  value: {{ required "apiExportEndpointSliceName is required in publish mode" .Values.apiExportEndpointSliceName | quote }}
{{- with .Values.publishedResourceSelector }}
- name: SYNCFLOW_PUBLISHED_RESOURCE_SELECTOR
  value: {{ . | quote }}
{{- end }}
{{- end }}
- name: SYNCFLOW_ENABLE_LEADER_ELECTION
  value: {{ .Values.enableLeaderElection | quote }}
{{- end }}

{{/* Container args of one process (.role: watch, worker or beat) in the chosen mode: publish runs
     'syncflow <role>', the other modes 'syncflow <mode> --role <role>' with the flags of their block
     (as their bootstraps' manifests do). */}}
{{- define "syncflow.args" -}}
{{- $values := .root.Values -}}
{{- if eq $values.mode "publish" }}
- {{ .role }}
{{- if eq .role "worker" }}
- --concurrency={{ $values.worker.concurrency }}
{{- with $values.worker.queues }}
- --queues={{ . }}
{{- end }}
{{- else if eq .role "beat" }}
- --schedule=/var/lib/syncflow/beat-schedule
{{- end }}
{{- else }}
- {{ $values.mode }}
- --role={{ .role }}
{{- if eq $values.mode "workload" }}
- {{ printf "--sync-target-name=%s" (required "workload.syncTargetName (the SyncTarget to serve) is required in workload mode" $values.workload.syncTargetName) | quote }}
- {{ printf "--sync-target-uid=%s" (required "workload.syncTargetUID (the SyncTarget's UID, as syncflow workload sync prints it) is required in workload mode" $values.workload.syncTargetUID) | quote }}
- {{ printf "--workspace-cluster=%s" (required "workload.workspaceCluster (the SyncTarget's workspace) is required in workload mode" $values.workload.workspaceCluster) | quote }}
{{- else if eq $values.mode "edge" }}
- {{ printf "--workspace=%s" (required "edge.workspace (the mailbox workspace) is required in edge mode" $values.edge.workspace) | quote }}
{{- else if eq $values.mode "clusters" }}
- {{ printf "--workspace-cluster=%s" (required "clusters.workspaceCluster (the workspace of the Clusters) is required in clusters mode" $values.clusters.workspaceCluster) | quote }}
- {{ printf "--resources=%s" (join "," $values.clusters.resources) | quote }}
{{- with $values.clusters.onlyCluster }}
- {{ printf "--only-cluster=%s" . | quote }}
{{- end }}
{{- if $values.clusters.allowLinkLocalServers }}
- --allow-link-local-servers
{{- end }}
{{- end }}
{{- if eq .role "worker" }}
- --workers={{ $values.worker.concurrency }}
{{- else if eq .role "beat" }}
- --data-dir=/var/lib/syncflow
{{- end }}
{{- end }}
{{- range (index $values .role).extraFlags }}
- {{ . | quote }}
{{- end }}
{{- end }}

{{/* Volumes and mounts. "cluster": also the kubeconfig Secrets. */}}
{{- define "syncflow.volumes" -}}
- name: tmp
  emptyDir: {}
- name: state
  emptyDir: {}
{{- if .root.Values.settings }}
- name: config
  configMap:
    name: {{ include "syncflow.fullname" .root }}-config
{{- end }}
{{- if .cluster }}
- name: kcp-kubeconfig
  secret:
    secretName: {{ required "kcpKubeconfig (a Secret with the kcp kubeconfig) is required" .root.Values.kcpKubeconfig | quote }}
{{- with .root.Values.kubeconfig }}
- name: cluster-kubeconfig
  secret:
    secretName: {{ . | quote }}
{{- end }}
{{- end }}
{{- with .root.Values.extraVolumes }}
{{ toYaml . }}
{{- end }}
{{- end }}

{{- define "syncflow.volumeMounts" -}}
- name: tmp
  mountPath: /tmp
- name: state
  mountPath: /var/lib/syncflow
{{- if .root.Values.settings }}
- name: config
  mountPath: /etc/syncflow/config
  readOnly: true
{{- end }}
{{- if .cluster }}
- name: kcp-kubeconfig
  mountPath: /etc/syncflow/kcp
  readOnly: true
{{- if .root.Values.kubeconfig }}
- name: cluster-kubeconfig
  mountPath: /etc/syncflow/cluster
  readOnly: true
{{- end }}
{{- end }}
{{- with .root.Values.extraVolumeMounts }}
{{ toYaml . }}
{{- end }}
{{- end }}

{{/* Pod-level scheduling and security shared by every Pod of the chart. */}}
{{- define "syncflow.podSpec" -}}
{{- if .Values.global.imagePullSecrets }}
imagePullSecrets:
  {{- include "syncflow.imagePullSecrets" . | trim | nindent 2 }}
{{- end }}
{{- if .Values.hostAliases.enabled }}
hostAliases:
  {{- toYaml .Values.hostAliases.values | nindent 2 }}
{{- end }}
{{- with .Values.securityContext.pod }}
securityContext:
  {{- toYaml . | nindent 2 }}
{{- end }}
{{- with .Values.nodeSelector }}
nodeSelector:
  {{- toYaml . | nindent 2 }}
{{- end }}
{{- with .Values.affinity }}
affinity:
  {{- toYaml . | nindent 2 }}
{{- end }}
{{- with .Values.tolerations }}
tolerations:
  {{- toYaml . | nindent 2 }}
{{- end }}
{{- end }}

{{- define "syncflow.podAnnotations" -}}
{{- if .Values.settings }}
checksum/config: {{ toYaml .Values.settings | sha256sum }}
{{- end }}
{{- with .Values.extraAnnotations }}
{{ toYaml . }}
{{- end }}
{{- end }}

{{- define "syncflow.metricsPort" -}}
{{- if .Values.metrics.enabled }}
- name: metrics
  containerPort: {{ .Values.metrics.port }}
  protocol: TCP
{{- end }}
{{- end }}
