package cicheck

import (
	"encoding/json"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"testing"

	"github.com/onsi/ginkgo/v2/types"
	"sigs.k8s.io/yaml"
)

// root is the repository's top directory.
var root = filepath.Join("..", "..")

type workflow struct {
	Jobs map[string]struct {
		TimeoutMinutes int `json:"timeout-minutes"`
		Strategy       struct {
			Matrix map[string][]string `json:"matrix"`
		} `json:"strategy"`
		Steps []struct {
			Name           string            `json:"name"`
			Uses           string            `json:"uses"`
			Run            string            `json:"run"`
			With           map[string]string `json:"with"`
			If             string            `json:"if"`
			TimeoutMinutes int               `json:"timeout-minutes"`
		} `json:"steps"`
	} `json:"jobs"`
}

func readWorkflow(t *testing.T) workflow {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(root, ".github", "workflows", "test.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	var w workflow
	if err := yaml.Unmarshal(b, &w); err != nil {
		t.Fatal(err)
	}
	if len(w.Jobs) == 0 {
		t.Fatal("the workflow has no jobs")
	}
	return w
}

// makeCmd is make in the repository, without .ci/run's STAGE_TIMES: `make
// -n` still runs a recipe line that calls $(MAKE), and one wrapped in
// hack/timed.sh would add a stage record to CI's table.
func makeCmd(args ...string) *exec.Cmd {
	cmd := exec.Command("make", args...)
	cmd.Dir = root
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "STAGE_TIMES=") {
			cmd.Env = append(cmd.Env, kv)
		}
	}
	return cmd
}

// makeVars evaluates the Makefile's variables as a recipe would see them.
func makeVars(t *testing.T, names ...string) map[string]string {
	t.Helper()
	rule := "cicheck-print-vars: ; $(foreach n," + strings.Join(names, " ") + ",$(info $(n)=$($(n))))@:"
	cmd := makeCmd("-s", "--no-print-directory", "--eval", rule, "cicheck-print-vars")
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("make --eval: %v", err)
	}
	vars := map[string]string{}
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		k, v, _ := strings.Cut(line, "=")
		vars[k] = v
	}
	return vars
}

// makeTargets are the targets the workflow's run steps call with make.
func makeTargets(w workflow) map[string]bool {
	targets := map[string]bool{}
	re := regexp.MustCompile(`\bmake ([\w$.{}\- ]+)`)
	for _, job := range w.Jobs {
		for _, s := range job.Steps {
			for _, m := range re.FindAllStringSubmatch(s.Run, -1) {
				for _, f := range strings.Fields(m[1]) {
					if f == "${{" || f == "}}" || strings.HasPrefix(f, "-") {
						continue
					}
					if f == "matrix.target" {
						for _, t := range job.Strategy.Matrix["target"] {
							targets[t] = true
						}
						continue
					}
					targets[f] = true
				}
			}
		}
	}
	return targets
}

// TestWorkflowJobs: every job and step has a time budget, the steps'
// budgets fit their job's, every make target a step calls exists, a cache
// has files to key on, and the failure step reads the kubeconfig the
// Makefile writes.
func TestWorkflowJobs(t *testing.T) {
	w := readWorkflow(t)
	for name, job := range w.Jobs {
		if job.TimeoutMinutes == 0 || job.TimeoutMinutes > 90 {
			t.Errorf("job %s: timeout-minutes %d, want a budget of at most 90 (a job past it is cut off anyway)", name, job.TimeoutMinutes)
		}
		sum := 0
		for _, s := range job.Steps {
			if s.Uses != "" {
				if s.Uses == "actions/setup-java@v4" && s.With["cache"] == "maven" {
					glob := s.With["cache-dependency-path"]
					if glob == "" {
						t.Errorf("job %s: setup-java's Maven cache keys on pom.xml, which the repository has none of: give cache-dependency-path", name)
					} else if n := countMatches(t, glob); n == 0 {
						t.Errorf("job %s: setup-java's cache-dependency-path %q matches no file", name, glob)
					}
				}
				continue
			}
			if s.TimeoutMinutes == 0 {
				t.Errorf("job %s, step %q: no timeout-minutes", name, s.Name)
			}
			sum += s.TimeoutMinutes
		}
		if sum > job.TimeoutMinutes {
			t.Errorf("job %s: its steps' budgets sum to %d min, over the job's %d", name, sum, job.TimeoutMinutes)
		}
	}
	for target := range makeTargets(w) {
		cmd := makeCmd("-n", target)
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Errorf("the workflow runs make %s, which make cannot run: %v\n%s", target, err, out)
		}
	}
	v := makeVars(t, "KIND_KUBECONFIG", "CURDIR")
	kubeconfig, _ := filepath.Rel(v["CURDIR"], v["KIND_KUBECONFIG"])
	for name, job := range w.Jobs {
		for _, s := range job.Steps {
			if strings.Contains(s.Run, "--kubeconfig") && !strings.Contains(s.Run, "--kubeconfig "+kubeconfig) {
				t.Errorf("job %s, step %q: reads a kubeconfig other than the Makefile's KIND_KUBECONFIG (%s)", name, s.Name, kubeconfig)
			}
		}
	}
}

// countMatches counts the repository's files a workflow glob matches
// (**/ any directories, then a file pattern).
func countMatches(t *testing.T, glob string) int {
	t.Helper()
	dirPart, pattern := "", glob
	if i := strings.LastIndex(glob, "/"); i >= 0 {
		dirPart, pattern = glob[:i], glob[i+1:]
	}
	n := 0
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && (d.Name() == ".git" || d.Name() == "bin") {
			return filepath.SkipDir
		}
		if d.IsDir() {
			return nil
		}
		rel, _ := filepath.Rel(root, path)
		dir := filepath.ToSlash(filepath.Dir(rel))
		if ok, _ := filepath.Match(pattern, d.Name()); ok && (dirPart == "**" || dirPart == dir || (dirPart == "" && dir == ".")) {
			n++
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return n
}

// TestKindTargets: the kind targets' paths and images are right without
// Docker to try them: the kubeconfig is not under the kind binary's path,
// the install files exist, the node image is pinned by digest to the
// Kubernetes minor the project pins, the operator image is the one ko
// loads into kind, and the Strimzi images are ones kind can pull.
func TestKindTargets(t *testing.T) {
	v := makeVars(t, "KIND", "KIND_KUBECONFIG", "KIND_NODE_IMAGE", "K8S_VERSION", "KIND_IMG",
		"KIND_STRIMZI_OPERATOR", "E2E_STRIMZI_INSTALL", "CURDIR")
	if strings.HasPrefix(v["KIND_KUBECONFIG"], v["KIND"]+"/") || v["KIND_KUBECONFIG"] == v["KIND"] {
		t.Errorf("KIND_KUBECONFIG %s is under KIND %s, a file: mkdir fails", v["KIND_KUBECONFIG"], v["KIND"])
	}
	m := regexp.MustCompile(`^kindest/node:v(\d+\.\d+)\.\d+@sha256:[0-9a-f]{64}$`).FindStringSubmatch(v["KIND_NODE_IMAGE"])
	if m == nil {
		t.Errorf("KIND_NODE_IMAGE %q is not kindest/node:vX.Y.Z pinned by its sha256 digest", v["KIND_NODE_IMAGE"])
	} else if !strings.HasPrefix(v["K8S_VERSION"], m[1]+".") {
		t.Errorf("KIND_NODE_IMAGE runs Kubernetes %s, the project pins %s (K8S_VERSION)", m[1], v["K8S_VERSION"])
	}
	if !strings.HasPrefix(v["KIND_IMG"], "kind.local/") || !strings.Contains(v["KIND_IMG"], ":") {
		t.Errorf("KIND_IMG %q: want kind.local/NAME:TAG, the name ko loads into kind under", v["KIND_IMG"])
	}
	for _, k := range []string{"KIND_STRIMZI_OPERATOR", "E2E_STRIMZI_INSTALL"} {
		dir := v[k]
		if !strings.HasPrefix(dir, v["CURDIR"]+"/") {
			t.Errorf("%s %s is outside the repository: a clone elsewhere has no such directory", k, dir)
			continue
		}
		b, err := os.ReadFile(filepath.Join(dir, "060-Deployment-strimzi-cluster-operator.yaml"))
		if err != nil {
			t.Errorf("%s: %v", k, err)
			continue
		}
		for _, img := range regexp.MustCompile(`quay\.io/strimzi/[\w.:-]+`).FindAllString(string(b), -1) {
			if !strings.Contains(img, ":") {
				t.Errorf("%s deploys %s without a tag", k, img)
			}
		}
		if !strings.Contains(string(b), "image: quay.io/strimzi/operator:") {
			t.Errorf("%s's Deployment does not run quay.io/strimzi/operator, which kind pulls", k)
		}
	}
	// kind-up loads exactly KIND_IMG: ko's repository and tag from it.
	cmd := makeCmd("-n", "kind-up")
	out, err := cmd.Output()
	if err != nil {
		t.Fatal(err)
	}
	repo, tag, _ := strings.Cut(v["KIND_IMG"], ":")
	if !strings.Contains(string(out), "KO_DOCKER_REPO="+repo+" ") || !strings.Contains(string(out), "--bare --tags="+tag) ||
		!strings.Contains(string(out), "--image "+v["KIND_NODE_IMAGE"]) {
		t.Errorf("make kind-up does not create the cluster on KIND_NODE_IMAGE and load %s with ko --bare:\n%s", v["KIND_IMG"], out)
	}
}

// spec is one It of the e2e suite, as Ginkgo's dry run reports it.
type spec struct {
	text   string
	labels []string
}

// e2eSpecs compiles the e2e suite with tags and returns the specs a label
// filter selects ("" for all), by Ginkgo's dry run: no cluster is needed.
func e2eSpecs(t *testing.T, bin, filter string) map[string]spec {
	t.Helper()
	report := filepath.Join(t.TempDir(), "report.json")
	args := []string{"-ginkgo.dry-run", "-ginkgo.json-report=" + report}
	if filter != "" {
		args = append(args, "-ginkgo.label-filter="+filter)
	}
	cmd := exec.Command(bin, args...)
	cmd.Dir = filepath.Join(root, "test", "e2e")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("the e2e suite's dry run with --label-filter=%q: %v\n%s", filter, err, out)
	}
	b, err := os.ReadFile(report)
	if err != nil {
		t.Fatal(err)
	}
	var reports []types.Report
	if err := json.Unmarshal(b, &reports); err != nil {
		t.Fatal(err)
	}
	specs := map[string]spec{}
	for _, r := range reports {
		for _, s := range r.SpecReports {
			if s.LeafNodeType != types.NodeTypeIt || s.State != types.SpecStatePassed {
				continue // a setup node, or a spec the filter left out
			}
			specs[s.FullText()] = spec{text: s.FullText(), labels: s.Labels()}
		}
	}
	if len(specs) == 0 {
		t.Fatalf("--label-filter=%q selects no spec", filter)
	}
	return specs
}

func compileE2E(t *testing.T, tags string) string {
	t.Helper()
	bin := filepath.Join(t.TempDir(), "e2e.test")
	cmd := exec.Command("go", "test", "-c", "-tags", tags, "-o", bin, "./test/e2e")
	cmd.Dir = root
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("compiling the e2e suite (tags %s): %v\n%s", tags, err, out)
	}
	return bin
}

func hasLabel(s spec, l string) bool {
	for _, x := range s.labels {
		if x == l {
			return true
		}
	}
	return false
}

// TestLabelFiltersSelectEverySpecOnce: the kind jobs' two filters split
// the whole suite (e2e and e2e_managed) between them, every spec once, the
// managed ones on the managed job; what .ci/run runs (test-e2e-all)
// selects every spec of the local build; the environment every selected
// spec needs (its needs-VAR labels, and what every spec needs) is set by
// the kind targets, and a path it names is in the repository.
func TestLabelFiltersSelectEverySpecOnce(t *testing.T) {
	v := makeVars(t, "KIND_LABELS", "KIND_MANAGED_LABELS", "KIND_E2E_ENV", "E2E_ENV", "KIND_IMG", "CURDIR")
	kind := compileE2E(t, "e2e e2e_managed")
	all := e2eSpecs(t, kind, "")
	plain, managed := e2eSpecs(t, kind, v["KIND_LABELS"]), e2eSpecs(t, kind, v["KIND_MANAGED_LABELS"])
	for name, s := range all {
		_, inPlain := plain[name]
		_, inManaged := managed[name]
		switch {
		case inPlain && inManaged:
			t.Errorf("%q runs in both kind jobs", name)
		case !inPlain && !inManaged:
			t.Errorf("%q runs in no kind job", name)
		case inPlain && hasLabel(s, "managed"):
			t.Errorf("%q is managed but runs in the kind job of the others (KIND_LABELS %q)", name, v["KIND_LABELS"])
		}
	}
	t.Logf("kind: %d specs, %d on the managed job", len(all), len(managed))

	envOf := func(assignments string) map[string]string {
		env := map[string]string{}
		for _, m := range regexp.MustCompile(`(?:^|\s)([A-Z][A-Z0-9_]*)=(\S*)`).FindAllStringSubmatch(assignments, -1) {
			env[m[1]] = m[2]
		}
		return env
	}
	kindEnv := envOf(v["KIND_E2E_ENV"])
	for _, k := range []string{"KUBECONFIG", "E2E_IMG", "E2E_KUBECTL", "E2E_BROKER_HOST"} {
		if kindEnv[k] == "" {
			t.Errorf("KIND_E2E_ENV does not set %s, which every spec needs (E2E_BROKER_HOST's default is the local cluster's gateway)", k)
		}
	}
	if kindEnv["E2E_IMG"] != v["KIND_IMG"] {
		t.Errorf("the kind specs deploy the operator from E2E_IMG=%s, kind-up loads KIND_IMG=%s", kindEnv["E2E_IMG"], v["KIND_IMG"])
	}
	for _, set := range []map[string]spec{plain, managed} {
		for name, s := range set {
			for _, l := range s.labels {
				need, ok := strings.CutPrefix(l, "needs-")
				if !ok {
					continue
				}
				val := kindEnv[need]
				if val == "" {
					t.Errorf("%q needs %s, which KIND_E2E_ENV does not set", name, need)
				} else if strings.HasPrefix(val, "/") {
					if !strings.HasPrefix(val, v["CURDIR"]+"/") {
						t.Errorf("%q needs %s=%s, outside the repository", name, need, val)
					} else if _, err := os.Stat(val); err != nil {
						t.Errorf("%q needs %s: %v", name, need, err)
					}
				}
			}
		}
	}

	// .ci/run's one run of the suite (make test-e2e-all) on the local
	// cluster: every spec of its build.
	filter := regexp.MustCompile(`--label-filter='([^']*)'`).FindStringSubmatch(makeDryRun(t, "test-e2e-all"))
	if filter == nil {
		t.Fatal("make test-e2e-all passes no --label-filter")
	}
	local := compileE2E(t, "e2e")
	everything, selected := e2eSpecs(t, local, ""), e2eSpecs(t, local, filter[1])
	var missing []string
	for name := range everything {
		if _, ok := selected[name]; !ok {
			missing = append(missing, name)
		}
	}
	sort.Strings(missing)
	if len(missing) > 0 {
		t.Errorf("make test-e2e-all (--label-filter=%q) leaves out: %q", filter[1], missing)
	}
	localEnv := envOf(v["E2E_ENV"])
	for name, s := range selected {
		for _, l := range s.labels {
			if need, ok := strings.CutPrefix(l, "needs-"); ok && localEnv[need] == "" {
				t.Errorf("%q needs %s, which E2E_ENV does not set", name, need)
			}
		}
	}
}

func makeDryRun(t *testing.T, target string) string {
	t.Helper()
	cmd := makeCmd("-n", target)
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("make -n %s: %v", target, err)
	}
	return string(out)
}

// TestDockerfileCopiesWhatTheBinaryBuildsFrom: every directory of the
// repository that cmd/streambench's packages (and their embedded files)
// come from is copied into the Dockerfile's build stage.
func TestDockerfileCopiesWhatTheBinaryBuildsFrom(t *testing.T) {
	b, err := os.ReadFile(filepath.Join(root, "Dockerfile"))
	if err != nil {
		t.Fatal(err)
	}
	copied := map[string]bool{}
	for _, m := range regexp.MustCompile(`(?m)^COPY (\S+)/ `).FindAllStringSubmatch(string(b), -1) {
		copied[m[1]] = true
	}
	cmd := exec.Command("go", "list", "-deps", "-f", "{{if not .Standard}}{{.ImportPath}} {{.Module}}{{end}}", "./cmd/streambench")
	cmd.Dir = root
	out, err := cmd.Output()
	if err != nil {
		t.Fatal(err)
	}
	modCmd := exec.Command("go", "list", "-m")
	modCmd.Dir = root
	mod, err := modCmd.Output()
	if err != nil {
		t.Fatal(err)
	}
	prefix := strings.TrimSpace(string(mod)) + "/"
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		pkg, _, _ := strings.Cut(line, " ")
		rel, ok := strings.CutPrefix(pkg, prefix)
		if !ok {
			continue
		}
		top, _, _ := strings.Cut(rel, "/")
		if !copied[top] {
			t.Errorf("the Dockerfile does not COPY %s/, which %s is built from", top, pkg)
		}
	}
}
