package localrun

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"

	corev1 "k8s.io/api/core/v1"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	"sigs.k8s.io/yaml"

	"github.com/streambench/streambench-operator/api/v1alpha1"
	"github.com/streambench/streambench-operator/internal/driver"
	"github.com/streambench/streambench-operator/internal/ombdriver"
	"github.com/streambench/streambench-operator/internal/security"
)

// Secrets are the Secret manifests of `streambench run --secrets FILE`:
// in a cluster the run's spec.cluster.existing.tls and authentication
// name Secrets of its namespace; on this machine they come from the same
// manifests one would kubectl apply (v1 Secrets with data or stringData,
// several YAML documents or a v1 List).
type Secrets struct {
	// Path is the file they came from, for errors.
	Path    string
	secrets map[string]secretDoc
}

type secretDoc struct {
	namespace string
	data      map[string][]byte
}

// LoadSecrets reads a file of Secret manifests. Its errors name the
// document and never hold a value.
func LoadSecrets(path string) (*Secrets, error) {
	raw, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("--secrets: %w", err)
	}
	s := &Secrets{Path: path, secrets: map[string]secretDoc{}}
	r := utilyaml.NewYAMLReader(bufio.NewReader(bytes.NewReader(raw)))
	var errs []error
	for doc := 1; ; doc++ {
		b, err := r.Read()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return nil, fmt.Errorf("--secrets %s: document %d is not YAML: %w", path, doc, err)
		}
		if len(bytes.TrimSpace(b)) == 0 {
			continue
		}
		errs = append(errs, s.add(b, fmt.Sprintf("document %d", doc))...)
	}
	if err := errors.Join(errs...); err != nil {
		return nil, fmt.Errorf("--secrets %s: %w", path, err)
	}
	if len(s.secrets) == 0 {
		return nil, fmt.Errorf("--secrets %s holds no Secret; give the Secret manifests the run names (kubectl create secret generic NAME --from-file=KEY=FILE --dry-run=client -o yaml)", path)
	}
	return s, nil
}

// add reads one document: a Secret, or a List of them.
func (s *Secrets) add(b []byte, where string) []error {
	var head struct {
		APIVersion string            `json:"apiVersion"`
		Kind       string            `json:"kind"`
		Items      []json.RawMessage `json:"items"`
	}
	var fields map[string]any
	if err := yaml.Unmarshal(b, &fields); err != nil {
		return []error{fmt.Errorf("%s is not a Kubernetes object", where)}
	}
	if len(fields) == 0 {
		// Only comments.
		return nil
	}
	if err := yaml.Unmarshal(b, &head); err != nil {
		return []error{fmt.Errorf("%s is not a Kubernetes object", where)}
	}
	switch {
	case head.APIVersion == "v1" && head.Kind == "List":
		var errs []error
		for i, it := range head.Items {
			errs = append(errs, s.add(it, fmt.Sprintf("%s, item %d", where, i+1))...)
		}
		return errs
	case head.APIVersion != "v1" || head.Kind != "Secret":
		return []error{fmt.Errorf("%s is %s %s, not a v1 Secret; give only Secret manifests", where, head.APIVersion, head.Kind)}
	}
	// Strict: a misspelt stringData would leave a key silently empty.
	var sec corev1.Secret
	if err := yaml.UnmarshalStrict(b, &sec); err != nil {
		return []error{fmt.Errorf("%s (a Secret) cannot be read: %s", where, redactYAMLError(err))}
	}
	if sec.Name == "" {
		return []error{fmt.Errorf("%s (a Secret) has no metadata.name", where)}
	}
	if _, dup := s.secrets[sec.Name]; dup {
		return []error{fmt.Errorf("%s: Secret %s is given twice", where, sec.Name)}
	}
	d := secretDoc{namespace: sec.Namespace, data: map[string][]byte{}}
	for k, v := range sec.Data {
		d.data[k] = v
	}
	// As the API server does: stringData is merged into data, and wins.
	for k, v := range sec.StringData {
		d.data[k] = []byte(v)
	}
	s.secrets[sec.Name] = d
	return nil
}

// redactYAMLError keeps a decoding error to what it says about the
// fields: a base64 error is said in words.
func redactYAMLError(err error) string {
	msg := err.Error()
	if strings.Contains(msg, "illegal base64") {
		return "a data value is not base64 (put plain text under stringData instead)"
	}
	return msg
}

// lookup is one key of a Secret, with the error that says what is
// missing and how to give it.
func (s *Secrets) lookup(ref security.Ref, namespace string) ([]byte, error) {
	fix := fmt.Sprintf("kubectl create secret generic %s --from-file=%s=FILE --dry-run=client -o yaml >> %s", ref.Name, ref.Key, s.Path)
	d, ok := s.secrets[ref.Name]
	if !ok {
		return nil, fmt.Errorf("%s names Secret %s (key %s), which is not in --secrets %s; add it: %s", ref.Field, ref.Name, ref.Key, s.Path, fix)
	}
	if namespace != "" && d.namespace != "" && d.namespace != namespace {
		return nil, fmt.Errorf("%s names Secret %s, which --secrets %s gives in namespace %s, not the run's namespace %s; a run reads Secrets of its own namespace", ref.Field, ref.Name, s.Path, d.namespace, namespace)
	}
	v, ok := d.data[ref.Key]
	if !ok {
		keys := slices.Sorted(func(yield func(string) bool) {
			for k := range d.data {
				if !yield(k) {
					return
				}
			}
		})
		has := "no keys"
		if len(keys) > 0 {
			has = "only " + strings.Join(keys, ", ")
		}
		return nil, fmt.Errorf("%s names key %s of Secret %s, which in --secrets %s has %s; add the key under data (base64) or stringData, or name the key the Secret has", ref.Field, ref.Key, ref.Name, s.Path, has)
	}
	if len(v) == 0 {
		return nil, fmt.Errorf("%s names key %s of Secret %s, which is empty in --secrets %s", ref.Field, ref.Key, ref.Name, s.Path)
	}
	return v, nil
}

// runSecurity is what a local run's clients get in driver.Config.Security,
// and the private directory that holds its secret material (removed by
// cleanup when the run ends).
type runSecurity struct {
	driver  *driver.Security
	dir     string
	cleanup func()
	// origins are where each private file's content came from, by path:
	// an error of the drivers names the file, which is gone after the run.
	origins map[string]string
}

// explain rewrites the private files' paths in err as where their
// content came from ("Secret bench, key password, of --secrets s.yaml").
func (rs *runSecurity) explain(err error) error {
	if err == nil || rs == nil || len(rs.origins) == 0 {
		return err
	}
	msg := err.Error()
	for p, o := range rs.origins {
		msg = strings.ReplaceAll(msg, p, o)
	}
	if msg == err.Error() {
		return err
	}
	return &explained{msg: msg, err: err}
}

type explained struct {
	msg string
	err error
}

func (e *explained) Error() string { return e.msg }
func (e *explained) Unwrap() error { return e.err }

// fileOrigins are the driver file's keys that gave each written file.
func fileOrigins(s *ombdriver.Security, d *driver.Security, driverFile string) map[string]string {
	o := map[string]string{}
	add := func(path, from string) {
		if path != "" && from != "" {
			o[path] = fmt.Sprintf("%s of --driver %s", from, driverFile)
		}
	}
	add(d.PasswordFile, s.Password.From)
	add(d.TokenFile, s.Token.From)
	if t, st := d.TLS, s.TLS; t != nil && st != nil {
		if st.Trust != nil {
			add(t.CAFile, st.Trust.Key)
		}
		if st.Client != nil {
			add(t.CertFile, st.Client.Key)
			add(t.KeyFile, st.Client.Key)
		}
	}
	if d.OAuth2 != nil && s.OAuth2 != nil {
		from := s.OAuth2.ClientSecret.From
		if s.OAuth2.KeyFile.Set() {
			from = s.OAuth2.KeyFile.From
		}
		add(d.OAuth2.ClientSecretFile, from)
	}
	return o
}

// prepareSecurity resolves the run's security before anything starts:
// the Secrets that spec.cluster.existing.tls and authentication name,
// from --secrets, or the driver file's security keys. Every Secret key
// the run needs, and nothing else, is written to a private directory
// (0700, files 0600) that goes when the run ends. A missing Secret or key
// fails here, naming the field, the Secret, the key and the fix.
func prepareSecurity(run *v1alpha1.BenchmarkRun, secretsFile string, fileSec *ombdriver.Security, driverFile string) (*runSecurity, []string, error) {
	none := &runSecurity{cleanup: func() {}}
	var notes []string
	spec := &run.Spec
	e := spec.Cluster.Existing
	specSec := e != nil && (e.TLS != nil || e.Authentication != nil)
	switch {
	case fileSec != nil && spec.Cluster.Managed != nil:
		return nil, nil, fmt.Errorf("--driver %s sets security (%s), but the brokers local mode starts listen in plaintext without authentication; the security keys apply to an existing cluster (spec.cluster.existing): remove them, or run against the secured cluster", driverFile, strings.Join(fileSec.Keys, ", "))
	case fileSec != nil && specSec:
		return nil, nil, fmt.Errorf("--driver %s sets security (%s) and so does spec.cluster.existing (tls, authentication); give it once: remove the driver file's keys, or spec.cluster.existing.tls and authentication", driverFile, strings.Join(fileSec.Keys, ", "))
	case fileSec != nil && spec.System == v1alpha1.SystemPulsar && fileSec.TLS != nil && e != nil &&
		(!strings.HasPrefix(e.ServiceURL, "pulsar+ssl://") || (e.AdminURL != "" && !strings.HasPrefix(e.AdminURL, "https://"))):
		return nil, nil, fmt.Errorf("--driver %s asks for TLS (%s), but spec.cluster.existing.serviceURL %s and adminURL %s are not pulsar+ssl:// and https://; give the brokers' TLS addresses", driverFile, strings.Join(fileSec.Keys, ", "), e.ServiceURL, e.AdminURL)
	}
	refs := security.Refs(spec)
	if secretsFile != "" && len(refs) == 0 {
		notes = append(notes, fmt.Sprintf("--secrets %s: the run names no Secret (spec.cluster.existing.tls and authentication), so none is read", secretsFile))
	}
	if fileSec == nil && !specSec {
		return none, notes, nil
	}
	var secrets *Secrets
	if len(refs) > 0 {
		if secretsFile == "" {
			var names []string
			for _, r := range refs {
				names = append(names, fmt.Sprintf("%s (Secret %s, key %s)", r.Field, r.Name, r.Key))
			}
			return nil, nil, fmt.Errorf("%s: in local mode give these Secrets with --secrets FILE, the Secret manifests you would kubectl apply (kubectl get secret NAME -o yaml, or kubectl create secret generic NAME --from-file=KEY=FILE --dry-run=client -o yaml)", strings.Join(names, "; "))
		}
		var err error
		if secrets, err = LoadSecrets(secretsFile); err != nil {
			return nil, nil, err
		}
		var errs []error
		for _, r := range refs {
			if _, err := secrets.lookup(r, run.Namespace); err != nil {
				errs = append(errs, err)
			}
		}
		if err := errors.Join(errs...); err != nil {
			return nil, nil, err
		}
	}
	dir, err := os.MkdirTemp("", "streambench-secrets-")
	if err != nil {
		return nil, nil, err
	}
	rs := &runSecurity{dir: dir, cleanup: func() { _ = os.RemoveAll(dir) }}
	if fileSec != nil {
		if rs.driver, err = fileSec.Write(dir); err != nil {
			rs.cleanup()
			return nil, nil, fmt.Errorf("--driver %s: %w", driverFile, err)
		}
		rs.origins = fileOrigins(fileSec, rs.driver, driverFile)
		return rs, notes, nil
	}
	paths := map[v1alpha1.SecretKeyRef]string{}
	rs.origins = map[string]string{}
	for i, r := range refs {
		v, _ := secrets.lookup(r, run.Namespace)
		// Named by position: a key may be any of [-._a-zA-Z0-9]+, "..".
		p := filepath.Join(dir, fmt.Sprintf("%02d-%s", i, r.Key))
		if err := os.WriteFile(p, v, 0o600); err != nil {
			rs.cleanup()
			return nil, nil, fmt.Errorf("writing Secret %s key %s to the run's private directory: %w", r.Name, r.Key, err)
		}
		paths[r.SecretKeyRef] = p
		rs.origins[p] = fmt.Sprintf("Secret %s, key %s, of --secrets %s", r.Name, r.Key, secretsFile)
	}
	rs.driver, err = security.Resolve(spec, func(ref v1alpha1.SecretKeyRef) string { return paths[ref] })
	if err != nil {
		rs.cleanup()
		return nil, nil, err
	}
	return rs, notes, nil
}

// DescribeSecurity says how the clients reach the brokers, without a
// secret value: "SASL_SSL, SCRAM-SHA-512 as alice, CA from ...".
func DescribeSecurity(system v1alpha1.System, s *driver.Security) string {
	if s == nil {
		return "plaintext, no authentication"
	}
	var parts []string
	switch {
	case system == v1alpha1.SystemPulsar && s.TLS != nil:
		parts = append(parts, "pulsar+ssl")
	case system == v1alpha1.SystemPulsar:
		parts = append(parts, "pulsar (no TLS)")
	case s.TLS != nil && s.Mechanism != "":
		parts = append(parts, "SASL_SSL")
	case s.TLS != nil:
		parts = append(parts, "SSL")
	case s.Mechanism != "":
		parts = append(parts, "SASL_PLAINTEXT")
	}
	switch {
	case s.Mechanism == "" && s.TLS != nil && s.TLS.CertFile != "":
		parts = append(parts, "client certificate")
	case s.Username != "":
		parts = append(parts, s.Mechanism+" as "+s.Username)
	case s.OAuth2 != nil:
		parts = append(parts, s.Mechanism+" as client "+s.OAuth2.ClientID)
	case s.Mechanism != "":
		parts = append(parts, s.Mechanism)
	}
	if t := s.TLS; t != nil {
		if t.CertFile != "" && s.Mechanism != "" {
			parts = append(parts, "client certificate")
		}
		switch t.Verification() {
		case "none":
			parts = append(parts, "brokers' certificates NOT verified (insecureSkipVerify)")
		case "no-hostname":
			parts = append(parts, "hostname not verified")
		}
		if t.CAFile == "" {
			parts = append(parts, "system CAs")
		}
	}
	return strings.Join(parts, ", ")
}
