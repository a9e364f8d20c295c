package controllers

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"time"

	. "github.com/onsi/gomega"

	"github.com/streambench/streambench-operator/internal/provision/pulsar"
)

const (
	testChartVersion = "0.1.0"
	testImage        = "docker.io/streambench/streambench:test"
)

// chartServer is a Helm chart repository on loopback serving a small chart
// named pulsar, standing in for the Apache Pulsar chart (unreachable from
// these machines). It renders the StatefulSets and init Jobs by the names
// the real chart uses, and the bookie and broker configData it was given,
// so the test can check that the durability reaches Helm.
type chartServer struct {
	*httptest.Server
	archive []byte
}

func newChartServer() *chartServer {
	archive := testChartArchive()
	sum := sha256.Sum256(archive)
	cs := &chartServer{archive: archive}
	mux := http.NewServeMux()
	mux.HandleFunc("/index.yaml", func(w http.ResponseWriter, _ *http.Request) {
		fmt.Fprintf(w, `apiVersion: v1
entries:
  pulsar:
  - apiVersion: v2
    name: pulsar
    version: %s
    digest: %s
    urls: [pulsar-%s.tgz]
    created: %q
generated: %q
`, testChartVersion, hex.EncodeToString(sum[:]), testChartVersion, time.Now().Format(time.RFC3339), time.Now().Format(time.RFC3339))
	})
	mux.HandleFunc("/pulsar-"+testChartVersion+".tgz", func(w http.ResponseWriter, _ *http.Request) {
		_, _ = w.Write(cs.archive)
	})
	cs.Server = httptest.NewServer(mux)
	return cs
}

func testChartArchive() []byte {
	files := map[string]string{
		"Chart.yaml": "apiVersion: v2\nname: pulsar\nversion: " + testChartVersion + "\n",
		"templates/config.yaml": `apiVersion: v1
kind: ConfigMap
metadata:
  name: {{ .Release.Name }}-bookie-config
data:
{{- range $k, $v := .Values.bookkeeper.configData }}
  {{ $k }}: {{ $v | quote }}
{{- end }}
`,
	}
	var sts, jobs strings.Builder
	for _, name := range pulsar.StatefulSetNames("RELEASE") {
		component := strings.TrimPrefix(name, "RELEASE-")
		fmt.Fprintf(&sts, `---
apiVersion: apps/v1
kind: StatefulSet
metadata:
  name: {{ .Release.Name }}-%[1]s
spec:
  replicas: 1
  serviceName: {{ .Release.Name }}-%[1]s
  selector:
    matchLabels: {component: %[1]s, release: {{ .Release.Name }}}
  template:
    metadata:
      labels: {component: %[1]s, release: {{ .Release.Name }}}
    spec:
      containers:
      - name: %[1]s
        image: docker.io/apachepulsar/pulsar-all:test
`, component)
	}
	jobs.WriteString("{{- if .Release.IsInstall }}\n")
	for _, name := range pulsar.InitJobNames("RELEASE") {
		fmt.Fprintf(&jobs, `---
apiVersion: batch/v1
kind: Job
metadata:
  name: {{ .Release.Name }}-%s
spec:
  template:
    spec:
      restartPolicy: Never
      containers:
      - name: init
        image: docker.io/apachepulsar/pulsar-all:test
`, strings.TrimPrefix(name, "RELEASE-"))
	}
	jobs.WriteString("{{- end }}\n")
	files["templates/statefulsets.yaml"] = sts.String()
	files["templates/jobs.yaml"] = jobs.String()

	var buf bytes.Buffer
	gz := gzip.NewWriter(&buf)
	tw := tar.NewWriter(gz)
	for name, body := range files {
		Expect(tw.WriteHeader(&tar.Header{Name: "pulsar/" + name, Mode: 0o644, Size: int64(len(body)), ModTime: time.Now()})).To(Succeed())
		_, err := tw.Write([]byte(body))
		Expect(err).NotTo(HaveOccurred())
	}
	Expect(tw.Close()).To(Succeed())
	Expect(gz.Close()).To(Succeed())
	return buf.Bytes()
}
