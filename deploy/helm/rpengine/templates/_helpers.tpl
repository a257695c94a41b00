{{/* The engine's config for one engine id, as TOML: conf.rpengine with the
paths and listener the pod's volumes and probes depend on. */}}
{{- define "rpengine.config" -}}
{{- $c := deepCopy .root.Values.conf.rpengine -}}
{{- $_ := set $c "engine" (merge (dict "id" .id "state_file" "/var/lib/rpengine/state.json") ($c.engine | default dict)) -}}
{{- $_ := set $c "plugin" (merge (dict "cache_dir" "/var/cache/rpengine/wazero") ($c.plugin | default dict)) -}}
{{- $_ := set $c "server" (merge (dict "listen" (printf "0.0.0.0:%v" .root.Values.endpoints.rpengine.port.http.default)) ($c.server | default dict)) -}}
{{- if .root.Values.conf.coord -}}
{{- $_ := set $c "coord" .root.Values.conf.coord -}}
{{- end -}}
{{- include "rpengine.ints" $c -}}
{{- toToml $c -}}
{{- end -}}

{{/* Values come from YAML as float64: whole numbers go back to integers,
which the engine's strict config requires (unhealthy_after = 3, not 3.0). */}}
{{- define "rpengine.ints" -}}
{{- range $k, $v := . -}}
{{- if kindIs "map" $v -}}
{{- include "rpengine.ints" $v -}}
{{- else if and (kindIs "float64" $v) (eq (float64 (int64 $v)) $v) -}}
{{- $_ := set $ $k (int64 $v) -}}
{{- end -}}
{{- end -}}
{{- end -}}

{{- define "rpengine.labels" -}}
application: rpengine
component: engine
release_group: {{ .Values.release_group | default .Release.Name }}
{{- end -}}

{{/* Keystone's internal URL, from endpoints.identity. */}}
{{- define "rpengine.keystoneURL" -}}
{{- $e := .Values.endpoints.identity -}}
{{- printf "%s://%s.%s.svc.%s:%v%s" $e.scheme.default $e.hosts.internal .Release.Namespace .Values.endpoints.cluster_domain_suffix $e.port.api.internal $e.path.default -}}
{{- end -}}

{{/* The pod template shared by the Deployment and the StatefulSet. */}}
{{- define "rpengine.pod" -}}
{{- $v := .Values -}}
metadata:
  labels:
{{ include "rpengine.labels" . | indent 4 }}
  annotations:
    configmap-etc-hash: {{ include (print $.Template.BasePath "/configmap-etc.yaml") . | sha256sum }}
spec:
{{- if $v.manifests.rbac }}
  serviceAccountName: {{ .Release.Name }}
{{- else }}
  automountServiceAccountToken: false
{{- end }}
  nodeSelector:
    {{ $v.labels.engine.node_selector_key }}: {{ $v.labels.engine.node_selector_value | quote }}
  securityContext:
{{ toYaml $v.pod.security_context.engine.pod | indent 4 }}
  terminationGracePeriodSeconds: {{ $v.pod.termination_grace_period }}
  initContainers:
    - name: dep-check
      image: {{ $v.images.tags.dep_check }}
      imagePullPolicy: {{ $v.images.pull_policy }}
      securityContext:
{{ toYaml $v.pod.security_context.engine.container.engine | indent 8 }}
      env:
        - name: NAMESPACE
          valueFrom:
            fieldRef:
              fieldPath: metadata.namespace
        - name: DEPENDENCY_SERVICE
          value: {{ include "rpengine.depServices" . | quote }}
        - name: COMMAND
          value: "echo done"
      command: ["kubernetes-entrypoint"]
  containers:
    - name: engine
      image: {{ $v.images.tags.rpengine }}
      imagePullPolicy: {{ $v.images.pull_policy }}
      args: ["run", "--config", {{ .configPath | quote }}]
      env:
        - name: POD_NAME
          valueFrom:
            fieldRef:
              fieldPath: metadata.name
      securityContext:
{{ toYaml $v.pod.security_context.engine.container.engine | indent 8 }}
{{- if $v.pod.resources.enabled }}
      resources:
{{ toYaml $v.pod.resources.engine | indent 8 }}
{{- end }}
      ports:
        - name: http
          containerPort: {{ $v.endpoints.rpengine.port.http.default }}
          protocol: TCP
{{- if $v.pod.probes.engine.liveness.enabled }}
      livenessProbe:
        httpGet:
          path: /livez
          port: http
{{ toYaml $v.pod.probes.engine.liveness.params | indent 8 }}
{{- end }}
{{- if $v.pod.probes.engine.readiness.enabled }}
      readinessProbe:
        httpGet:
          path: /readyz
          port: http
{{ toYaml $v.pod.probes.engine.readiness.params | indent 8 }}
{{- end }}
      volumeMounts:
        - name: etc
          mountPath: /etc/rpengine
          readOnly: true
        - name: state
          mountPath: /var/lib/rpengine
        - name: cache
          mountPath: /var/cache/rpengine
        - name: tmp
          mountPath: /tmp
  volumes:
    - name: etc
      projected:
        sources:
          - configMap:
              name: {{ .Release.Name }}-etc
          - secret:
              name: {{ $v.secrets.identity.rpengine }}
{{- if $v.secrets.etcd }}
          - secret:
              name: {{ $v.secrets.etcd }}
              items:
                - {key: ca.crt, path: etcd/ca.crt}
                - {key: tls.crt, path: etcd/tls.crt}
                - {key: tls.key, path: etcd/tls.key}
{{- end }}
{{- if .stateEmptyDir }}
    - name: state
      emptyDir: {}
{{- end }}
    - name: cache
      emptyDir: {}
    - name: tmp
      emptyDir:
        medium: Memory
        sizeLimit: 64Mi
{{- end -}}

{{/* kubernetes-entrypoint's DEPENDENCY_SERVICE: namespace:service, comma-separated. */}}
{{- define "rpengine.depServices" -}}
{{- $out := list -}}
{{- range .Values.dependencies.static.engine.services -}}
{{- $e := index $.Values.endpoints .service -}}
{{- $h := index $e.hosts .endpoint | default $e.hosts.default -}}
{{- $out = append $out (printf "%s:%s" $.Release.Namespace $h) -}}
{{- end -}}
{{- join "," $out -}}
{{- end -}}
