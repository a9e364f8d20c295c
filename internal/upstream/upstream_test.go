package upstream

import (
	"archive/tar"
	"bufio"
	"bytes"
	"compress/gzip"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"io/fs"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

type entry struct {
	name, body, link string
}

// archive is a .tar.gz of entries: a directory entry for every name ending
// in /, a symbolic link where link is set, else a file.
func archive(t *testing.T, entries ...entry) []byte {
	t.Helper()
	var buf bytes.Buffer
	gz := gzip.NewWriter(&buf)
	tw := tar.NewWriter(gz)
	for _, e := range entries {
		h := &tar.Header{Name: e.name, Mode: 0o644, Size: int64(len(e.body)), Typeflag: tar.TypeReg}
		switch {
		case strings.HasSuffix(e.name, "/"):
			h.Typeflag, h.Mode, h.Size = tar.TypeDir, 0o755, 0
		case e.link != "":
			h.Typeflag, h.Linkname, h.Size = tar.TypeSymlink, e.link, 0
		}
		if err := tw.WriteHeader(h); err != nil {
			t.Fatal(err)
		}
		if _, err := tw.Write([]byte(e.body)); err != nil {
			t.Fatal(err)
		}
	}
	if err := tw.Close(); err != nil {
		t.Fatal(err)
	}
	if err := gz.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

var testPin = Archive{Name: "x-1.0-src.tar.gz", Without: strimziWithout, Keep: strimziKeep}

// cut is the mirror's form: a top directory of its own, no system tests
// but their pom.xml, no CI files.
func cut(t *testing.T) []byte {
	return archive(t,
		entry{name: "x-1.0/"},
		entry{name: "x-1.0/pom.xml", body: "<project/>"},
		entry{name: "x-1.0/api/A.java", body: "class A {}"},
		entry{name: "x-1.0/docs/api", link: "../api"},
		entry{name: "x-1.0/systemtest/"},
		entry{name: "x-1.0/systemtest/pom.xml", body: "<module/>"},
	)
}

func digest(t *testing.T, a Archive, b []byte) string {
	t.Helper()
	d, err := a.TreeDigest(bytes.NewReader(b))
	if err != nil {
		t.Fatal(err)
	}
	return d
}

// TestTreeDigest: the mirror's cut and GitHub's archive of the same commit
// (another top directory, a pax header, the system tests and CI files the
// cut leaves out, other modes) give one digest; any change of a kept
// file's content, path or link target, or a kept file missing, another.
func TestTreeDigest(t *testing.T) {
	want := digest(t, testPin, cut(t))
	github := func(mutate func([]entry) []entry) []byte {
		es := []entry{
			{name: "x-abc123/"},
			{name: "x-abc123/.github/workflows/ci.yaml", body: "on: push"},
			{name: "x-abc123/api/A.java", body: "class A {}"},
			{name: "x-abc123/docs/api", link: "../api"},
			{name: "x-abc123/pom.xml", body: "<project/>"},
			{name: "x-abc123/systemtest/pom.xml", body: "<module/>"},
			{name: "x-abc123/systemtest/src/T.java", body: "class T {}"},
			{name: "x-abc123/development-docs/README.md", body: "# dev"},
		}
		if mutate != nil {
			es = mutate(es)
		}
		return archive(t, es...)
	}
	if got := digest(t, testPin, github(nil)); got != want {
		t.Errorf("GitHub's form: digest %s, the cut's %s", got, want)
	}
	for name, mutate := range map[string]func([]entry) []entry{
		"a kept file changed":     func(es []entry) []entry { es[2].body = "class A { int x; }"; return es },
		"a kept file renamed":     func(es []entry) []entry { es[2].name = "x-abc123/api/B.java"; return es },
		"a link elsewhere":        func(es []entry) []entry { es[3].link = "../other"; return es },
		"a kept file missing":     func(es []entry) []entry { return append(es[:4], es[5:]...) },
		"the kept pom.xml change": func(es []entry) []entry { es[5].body = "<other/>"; return es },
		"a file added":            func(es []entry) []entry { return append(es, entry{name: "x-abc123/api/C.java", body: "c"}) },
	} {
		if got := digest(t, testPin, github(mutate)); got == want {
			t.Errorf("%s: the digest did not change", name)
		}
	}
	if _, err := testPin.TreeDigest(bytes.NewReader(archive(t, entry{name: "a/f", body: "1"}, entry{name: "b/g", body: "2"}))); err == nil ||
		!strings.Contains(err.Error(), "outside the archive's top directory") {
		t.Errorf("two top directories: err %v, want one naming the top directory", err)
	}
	if _, err := testPin.TreeDigest(strings.NewReader("not gzip")); err == nil {
		t.Error("a file that is no .tar.gz: no error")
	}
}

// TestFetch: from a mirror and from upstream (a real HTTP server) the
// pin is checked; a file that does not match is refused, named with both
// digests, and nothing of it is kept; a checked copy is served from the
// cache afterwards.
func TestFetch(t *testing.T) {
	good, bad := cut(t), archive(t, entry{name: "x-1.0/pom.xml", body: "<tampered/>"})
	pin := testPin
	pin.Digest = digest(t, pin, good)
	ctx := context.Background()

	t.Run("mirror", func(t *testing.T) {
		mirror, cache := t.TempDir(), t.TempDir()
		if err := os.WriteFile(filepath.Join(mirror, pin.Name), bad, 0o644); err != nil {
			t.Fatal(err)
		}
		_, err := Fetch(ctx, pin, cache, mirror)
		if err == nil || !strings.Contains(err.Error(), pin.Digest) || !strings.Contains(err.Error(), filepath.Join(mirror, pin.Name)) {
			t.Fatalf("a tampered mirror copy: err %v, want a refusal naming the pin and the mirror's file", err)
		}
		expectEmpty(t, cache)
		if err := os.WriteFile(filepath.Join(mirror, pin.Name), good, 0o644); err != nil {
			t.Fatal(err)
		}
		path, err := Fetch(ctx, pin, cache, mirror)
		if err != nil {
			t.Fatal(err)
		}
		if b, _ := os.ReadFile(path); !bytes.Equal(b, good) {
			t.Errorf("%s is not the mirror's file", path)
		}
		// Checked once: the cache answers even when the mirror is gone.
		if err := os.Remove(filepath.Join(mirror, pin.Name)); err != nil {
			t.Fatal(err)
		}
		if again, err := Fetch(ctx, pin, cache, mirror); err != nil || again != path {
			t.Errorf("from the cache: %q, %v; want %q", again, err, path)
		}
	})

	t.Run("upstream", func(t *testing.T) {
		serve := bad
		srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { w.Write(serve) }))
		defer srv.Close()
		pin := pin
		pin.URL = srv.URL + "/archive/abc123.tar.gz"
		cache := t.TempDir()
		if _, err := Fetch(ctx, pin, cache, ""); err == nil || !strings.Contains(err.Error(), "refusing") || !strings.Contains(err.Error(), pin.URL) {
			t.Fatalf("a tampered download: err %v, want a refusal naming the URL", err)
		}
		expectEmpty(t, cache)
		serve = good
		if _, err := Fetch(ctx, pin, cache, ""); err != nil {
			t.Fatal(err)
		}
	})

	t.Run("unreachable", func(t *testing.T) {
		pin := pin
		pin.URL = "http://127.0.0.1:1/none.tar.gz"
		_, err := Fetch(ctx, pin, t.TempDir(), "")
		if err == nil || !strings.Contains(err.Error(), MirrorEnv) {
			t.Errorf("upstream unreachable: err %v, want one saying to set %s", err, MirrorEnv)
		}
	})
}

func expectEmpty(t *testing.T, dir string) {
	t.Helper()
	es, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range es {
		t.Errorf("a refused fetch left %s in the cache", e.Name())
	}
}

// TestPinnedArchives fetches every pinned archive for real and checks it
// against its pin: from $STREAMBENCH_MIRROR where that is set (machines
// without internet; .ci/run sets it), else from GitHub (where GitHub's
// archive of the commit must give the digest the mirror's cut gives).
func TestPinnedArchives(t *testing.T) {
	mirror := os.Getenv(MirrorEnv)
	for name, a := range Archives {
		if a.Name != name || !strings.HasPrefix(a.URL, "https://github.com/") || len(a.Digest) != 64 {
			t.Errorf("%s: pin %+v: want its own name, a GitHub URL and a sha256 digest", name, a)
			continue
		}
		if _, err := Fetch(context.Background(), a, t.TempDir(), mirror); err != nil {
			t.Errorf("%s: %v", name, err)
		}
	}
}

// TestVendoredFilesMatchSHA256SUMS: every file under testdata/upstream is
// the upstream file SHA256SUMS pins, and every pinned file is there.
func TestVendoredFilesMatchSHA256SUMS(t *testing.T) {
	dir := filepath.Join("..", "..", "testdata", "upstream")
	f, err := os.Open(filepath.Join(dir, "SHA256SUMS"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	pinned := map[string]string{}
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		sum, name, ok := strings.Cut(sc.Text(), "  ")
		if !ok {
			t.Fatalf("SHA256SUMS: a line not in sha256sum's form: %q", sc.Text())
		}
		pinned[name] = sum
	}
	const regen = "(after a deliberate change: cd testdata/upstream && find . -type f ! -name SHA256SUMS ! -name README.md | sed 's|^./||' | LC_ALL=C sort | xargs sha256sum > SHA256SUMS)"
	seen := 0
	err = filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		rel, _ := filepath.Rel(dir, path)
		if rel == "SHA256SUMS" || rel == "README.md" {
			return nil
		}
		b, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		sum := sha256.Sum256(b)
		switch want, ok := pinned[filepath.ToSlash(rel)]; {
		case !ok:
			t.Errorf("%s is not pinned in SHA256SUMS %s", rel, regen)
		case want != hex.EncodeToString(sum[:]):
			t.Errorf("%s differs from the upstream file SHA256SUMS pins %s", rel, regen)
		default:
			seen++
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if seen != len(pinned) {
		t.Errorf("SHA256SUMS pins %d files, %d are there %s", len(pinned), seen, regen)
	}
}
