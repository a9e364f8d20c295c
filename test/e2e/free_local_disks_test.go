package e2e

// No build tag, as readme_test.go: without a cluster, the node pool's
// volumes are Retain, README tells how to free them with the command the e2e
// spec runs (disks_test.go), and hack/free-local-disks.sh frees nothing it
// was not told was wiped, and wipes nothing but the inside of a volume's
// directory (a fake kubectl stands for the cluster).

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	storagev1 "k8s.io/api/storage/v1"
	"sigs.k8s.io/yaml"
)

// freeLocalDisksCommand is README's command to free the local disks after
// a run, on each node that holds them; freeLocalDisks runs it as written,
// once per node (fill).
const freeLocalDisksCommand = "hack/free-local-disks.sh local-nvme --wipe-local --node <nvme-node>"

func TestNodePoolVolumesAreRetain(t *testing.T) {
	var sc storagev1.StorageClass
	if err := yaml.UnmarshalStrict([]byte(repoFile(t, "config/nodepool/storageclass-local-nvme.yaml")), &sc); err != nil {
		t.Fatal(err)
	}
	if sc.ReclaimPolicy == nil || *sc.ReclaimPolicy != corev1.PersistentVolumeReclaimRetain {
		t.Errorf("StorageClass local-nvme reclaimPolicy %v, want Retain", sc.ReclaimPolicy)
	}
	var pv corev1.PersistentVolume
	if err := yaml.UnmarshalStrict([]byte(repoFile(t, "config/nodepool/local-nvme-pv.yaml")), &pv); err != nil {
		t.Fatal(err)
	}
	if pv.Spec.PersistentVolumeReclaimPolicy != corev1.PersistentVolumeReclaimRetain {
		t.Errorf("local-nvme-pv.yaml persistentVolumeReclaimPolicy %q, want Retain: a static local volume has no deleter, Delete leaves it Failed", pv.Spec.PersistentVolumeReclaimPolicy)
	}
}

func TestREADMEFreesLocalDisksWithTheScript(t *testing.T) {
	_, section, _ := strings.Cut(repoFile(t, readmeFile), "\n"+readmeSection+"\n")
	if !strings.Contains(section, "`"+freeLocalDisksCommand+"`") {
		t.Errorf("%s's %q does not say `%s`, the command the e2e spec runs (disks_test.go)", readmeFile, readmeSection, freeLocalDisksCommand)
	}
}

// freeScript runs hack/free-local-disks.sh with args against a kubectl
// that lists pvs (one "name|class|phase|policy|node|path" line each) and
// records every other call; it returns the exit code, the output and the
// recorded calls.
func freeScript(t *testing.T, pvs string, args ...string) (int, string, string) {
	t.Helper()
	dir := t.TempDir()
	list, calls := filepath.Join(dir, "pvs"), filepath.Join(dir, "calls")
	if err := os.WriteFile(list, []byte(pvs), 0o644); err != nil {
		t.Fatal(err)
	}
	fake := "#!/usr/bin/env bash\nif [ \"$1\" = get ]; then cat " + list + "; else echo \"$*\" >>" + calls + "; fi\n"
	if err := os.WriteFile(filepath.Join(dir, "kubectl"), []byte(fake), 0o755); err != nil {
		t.Fatal(err)
	}
	// The wipe runs as root here: a find that deletes only inside this
	// test's directories, and records any other call, so a script that
	// stopped refusing / fails the test instead of wiping the machine.
	realFind, err := exec.LookPath("find")
	if err != nil {
		t.Fatal(err)
	}
	find := "#!/usr/bin/env bash\ncase $1 in " + filepath.Dir(dir) + "/*) exec " + realFind + " \"$@\" ;; esac\necho \"find $*\" >>" + calls + "\nexit 1\n"
	if err := os.WriteFile(filepath.Join(dir, "find"), []byte(find), 0o755); err != nil {
		t.Fatal(err)
	}
	// go test runs in the package's folder (the build is -trimpath).
	script, err := filepath.Abs(filepath.Join("..", "..", "hack", "free-local-disks.sh"))
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(script, args...)
	cmd.Env = append(os.Environ(), "KUBECTL="+filepath.Join(dir, "kubectl"), "PATH="+dir+string(os.PathListSeparator)+os.Getenv("PATH"))
	out, err := cmd.CombinedOutput()
	code := 0
	if ee, ok := err.(*exec.ExitError); ok {
		code = ee.ExitCode()
	} else if err != nil {
		t.Fatal(err)
	}
	recorded, _ := os.ReadFile(calls)
	return code, string(out), string(recorded)
}

// disk makes a volume's directory holding what a broker leaves: a file and
// a folder with a file.
func disk(t *testing.T) string {
	t.Helper()
	d := filepath.Join(t.TempDir(), "nvme0")
	if err := os.MkdirAll(filepath.Join(d, "kafka-log0"), 0o755); err != nil {
		t.Fatal(err)
	}
	for _, f := range []string{"meta.properties", "kafka-log0/00000000000000000000.log"} {
		if err := os.WriteFile(filepath.Join(d, f), []byte("x"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return d
}

func entries(t *testing.T, dir string) int {
	t.Helper()
	e, err := os.ReadDir(dir)
	if err != nil {
		t.Fatalf("%s: %v (the wipe must keep the directory)", dir, err)
	}
	return len(e)
}

func TestFreeLocalDisksScript(t *testing.T) {
	const patch = `patch pv pv-a --type json -p [{"op":"remove","path":"/spec/claimRef"}]` + "\n"

	t.Run("without a flag it frees nothing and says what to wipe where", func(t *testing.T) {
		d := disk(t)
		code, out, calls := freeScript(t, "pv-a|local-nvme|Released|Retain|node-1|"+d+"\n")
		if code != 1 || calls != "" || entries(t, d) != 2 {
			t.Fatalf("exit %d, calls %q, %d entries left; output:\n%s", code, calls, entries(t, d), out)
		}
		for _, want := range []string{"node-1", d, "--wiped"} {
			if !strings.Contains(out, want) {
				t.Errorf("output does not name %q:\n%s", want, out)
			}
		}
	})

	t.Run("--wiped frees without touching the disk", func(t *testing.T) {
		d := disk(t)
		code, out, calls := freeScript(t, "pv-a|local-nvme|Failed|Retain|node-1|"+d+"\n", "--wiped")
		if code != 0 || calls != patch || entries(t, d) != 2 {
			t.Fatalf("exit %d, calls %q, %d entries left; output:\n%s", code, calls, entries(t, d), out)
		}
	})

	t.Run("--wipe-local empties the directory, keeps it, frees the volume and makes a Delete one Retain", func(t *testing.T) {
		d := disk(t)
		code, out, calls := freeScript(t, "pv-a|local-nvme|Released|Delete|node-1|"+d+"\n", "local-nvme", "--wipe-local", "--node", "node-1")
		want := `patch pv pv-a --type json -p [{"op":"remove","path":"/spec/claimRef"},{"op":"replace","path":"/spec/persistentVolumeReclaimPolicy","value":"Retain"}]` + "\n"
		if code != 0 || calls != want || entries(t, d) != 0 {
			t.Fatalf("exit %d, calls %q, %d entries left; output:\n%s", code, calls, entries(t, d), out)
		}
	})

	t.Run("only Released and Failed volumes of the class", func(t *testing.T) {
		d := disk(t)
		pvs := "pv-b|local-nvme|Bound|Retain|node-1|" + d + "\n" +
			"pv-c|local-nvme|Available|Retain|node-1|" + d + "\n" +
			"pv-d|other|Released|Retain|node-1|" + d + "\n"
		code, out, calls := freeScript(t, pvs, "--wipe-local", "--node", "node-1")
		if code != 0 || calls != "" || entries(t, d) != 2 {
			t.Fatalf("exit %d, calls %q, %d entries left; output:\n%s", code, calls, entries(t, d), out)
		}
	})

	for _, path := range []string{"", "/", "/..", "relative/nvme0", "/does/not/exist"} {
		t.Run("--wipe-local refuses path "+path, func(t *testing.T) {
			code, out, calls := freeScript(t, "pv-a|local-nvme|Released|Retain|node-1|"+path+"\n", "--wipe-local", "--node", "node-1")
			if code == 0 || calls != "" {
				t.Fatalf("exit %d, calls %q; output:\n%s", code, calls, out)
			}
		})
	}

	// Three NVMe nodes each have a disk nvme0 (at /mnt/nvme0/<node>): a
	// wipe on one must not take another node's volume for its own.
	t.Run("--wipe-local wipes and frees only the volumes of the nodes named", func(t *testing.T) {
		d1, d2 := disk(t), disk(t)
		pvs := "pv-a|local-nvme|Released|Retain|node-1|" + d1 + "\n" + "pv-b|local-nvme|Released|Retain|node-2|" + d2 + "\n"
		code, out, calls := freeScript(t, pvs, "--wipe-local", "--node", "node-1")
		if code != 0 || calls != patch || entries(t, d1) != 0 || entries(t, d2) != 2 {
			t.Fatalf("exit %d, calls %q, %d and %d entries left; output:\n%s", code, calls, entries(t, d1), entries(t, d2), out)
		}
		if !strings.Contains(out, "pv-b: on node node-2, not node-1: left alone") {
			t.Errorf("output does not say pv-b was left alone:\n%s", out)
		}
		code, out, calls = freeScript(t, pvs, "--wipe-local", "--node", "node-1", "--node", "node-2")
		if code != 0 || strings.Count(calls, "patch pv") != 2 || entries(t, d2) != 0 {
			t.Fatalf("both nodes named: exit %d, calls %q, %d entries left on node-2's; output:\n%s", code, calls, entries(t, d2), out)
		}
	})

	t.Run("without --node, --wipe-local takes this host's name for the node", func(t *testing.T) {
		d := disk(t)
		code, out, calls := freeScript(t, "pv-a|local-nvme|Released|Retain|not-this-host|"+d+"\n", "--wipe-local")
		if code != 0 || calls != "" || entries(t, d) != 2 {
			t.Fatalf("exit %d, calls %q, %d entries left; output:\n%s", code, calls, entries(t, d), out)
		}
	})

	t.Run("--node goes with --wipe-local", func(t *testing.T) {
		if code, out, calls := freeScript(t, "", "--wiped", "--node", "node-1"); code != 2 || calls != "" {
			t.Fatalf("exit %d, calls %q; output:\n%s", code, calls, out)
		}
	})

	t.Run("one of --wipe-local and --wiped", func(t *testing.T) {
		if code, out, calls := freeScript(t, "", "--wiped", "--wipe-local"); code != 2 || calls != "" {
			t.Fatalf("exit %d, calls %q; output:\n%s", code, calls, out)
		}
	})
}
