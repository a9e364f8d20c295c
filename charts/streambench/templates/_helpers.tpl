{{/* The name of every object of the release. */}}
{{- define "streambench.fullname" -}}
{{- if contains .Chart.Name .Release.Name -}}
{{- .Release.Name | trunc 63 | trimSuffix "-" -}}
{{- else -}}
{{- printf "%s-%s" .Release.Name .Chart.Name | trunc 63 | trimSuffix "-" -}}
{{- end -}}
{{- end -}}

{{- define "streambench.selectorLabels" -}}
app.kubernetes.io/name: {{ .Chart.Name }}
app.kubernetes.io/instance: {{ .Release.Name }}
app.kubernetes.io/component: manager
{{- end -}}

{{- define "streambench.labels" -}}
{{ include "streambench.selectorLabels" . }}
app.kubernetes.io/version: {{ .Chart.AppVersion | quote }}
app.kubernetes.io/managed-by: {{ .Release.Service }}
helm.sh/chart: {{ printf "%s-%s" .Chart.Name .Chart.Version }}
{{- end -}}

{{- define "streambench.image" -}}
{{- printf "%s:%s" .Values.image.repository (.Values.image.tag | default .Chart.AppVersion) -}}
{{- end -}}

{{/*
The manager's rules: controller-gen's ClusterRole (config/rbac/role.yaml,
copied to files/ by make manifests), so the chart grants what the code's
+kubebuilder:rbac markers ask for, no more.
*/}}
{{- define "streambench.managerRules" -}}
{{- (.Files.Get "files/manager-role.yaml" | trimPrefix "---\n" | fromYaml).rules | toYaml -}}
{{- end -}}

{{/*
The resources of those rules that are cluster-scoped: a Role cannot grant
them, so in watchNamespaces mode they stay in a (small) ClusterRole. A new
cluster-scoped resource in the markers must be added here; the chart's test
fails until it is (the rendered rules must equal the generated ones).
*/}}
{{- define "streambench.clusterScopedResources" -}}
{{- list "namespaces" "nodes" "persistentvolumes" "storageclasses" "customresourcedefinitions" | toYaml -}}
{{- end -}}

{{/*
splitRules: {"namespaced": [...], "cluster": [...]}, each rule of the
manager's rules cut in two by the scope of its resources.
*/}}
{{- define "streambench.splitRules" -}}
{{- $cluster := include "streambench.clusterScopedResources" . | fromYamlArray -}}
{{- $nsRules := list -}}
{{- $clusterRules := list -}}
{{- range (include "streambench.managerRules" . | fromYamlArray) -}}
{{- $n := list -}}
{{- $c := list -}}
{{- range .resources -}}
{{- if has . $cluster -}}{{- $c = append $c . -}}{{- else -}}{{- $n = append $n . -}}{{- end -}}
{{- end -}}
{{- if $n -}}{{- $nsRules = append $nsRules (dict "apiGroups" .apiGroups "resources" $n "verbs" .verbs) -}}{{- end -}}
{{- if $c -}}{{- $clusterRules = append $clusterRules (dict "apiGroups" .apiGroups "resources" $c "verbs" .verbs) -}}{{- end -}}
{{- end -}}
{{- dict "namespaced" $nsRules "cluster" $clusterRules | toYaml -}}
{{- end -}}
