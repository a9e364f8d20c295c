package docscheck

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestSlug(t *testing.T) {
	for heading, want := range map[string]string{
		"Durability levels":                      "durability-levels",
		"What does corrected p99 mean?":          "what-does-corrected-p99-mean",
		"Faults: `spec.faults`":                  "faults-specfaults",
		"streambench.io/v1alpha1":                "streambenchiov1alpha1",
		"A newcomer's first hour (issue 63)":     "a-newcomers-first-hour-issue-63",
		"Repeats, intervals and differences":     "repeats-intervals-and-differences",
		"Coming from [OMB](https://example.com)": "coming-from-omb",
		"Secured clusters — TLS":                 "secured-clusters--tls",
		"snake_case stays":                       "snake_case-stays",
	} {
		if got := Slug(heading); got != want {
			t.Errorf("Slug(%q) = %q, want %q", heading, got, want)
		}
	}
}

// TestCheck: each broken link of a page is found, and only those. The
// fixture site has links that work; each case adds one line to its index.
func TestCheck(t *testing.T) {
	good, err := os.ReadFile("testdata/site/index.md")
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		name, line, reason string
	}{
		{"none", "", ""},
		{"missing file", "See [gone](gone.md).", "no such file"},
		{"missing anchor here", "See [x](#no-such-heading).", "no heading whose anchor is #no-such-heading"},
		{"missing anchor there", "See [x](sub/page.md#b-section).", "no heading whose anchor is #b-section"},
		{"anchor as written, not as slugged", "See [x](#What-does-corrected-p99-mean).", "no heading"},
		{"third of two same headings", "See [x](#faults-specfaults-2).", "no heading"},
		{"image", "![gone](sub/gone.png)", "no such file"},
		{"reference definition", "[gone]: sub/gone.md", "no such file"},
		{"absolute path", "See [x](/docs/page.md).", "an absolute path"},
	} {
		t.Run(c.name, func(t *testing.T) {
			dir := t.TempDir()
			if err := os.CopyFS(dir, os.DirFS("testdata/site")); err != nil {
				t.Fatal(err)
			}
			index := filepath.Join(dir, "index.md")
			if err := os.WriteFile(index, append(good, []byte("\n"+c.line+"\n")...), 0o644); err != nil {
				t.Fatal(err)
			}
			broken, err := Check([]string{index, filepath.Join(dir, "sub", "page.md")})
			if err != nil {
				t.Fatal(err)
			}
			if c.reason == "" {
				if len(broken) != 0 {
					t.Fatalf("the fixture's good links are reported broken: %v", broken)
				}
				return
			}
			if len(broken) != 1 || !strings.Contains(broken[0].Reason, c.reason) || broken[0].Line != strings.Count(string(good), "\n")+2 {
				t.Fatalf("want one broken link on the added line (%q), got %v", c.reason, broken)
			}
		})
	}
}

// TestRepositoryLinks: every relative link of the README and docs/ leads
// to a file that exists and, for a Markdown page, to one of its headings.
func TestRepositoryLinks(t *testing.T) {
	root := filepath.Join("..", "..")
	files, err := RepoFiles(root)
	if err != nil {
		t.Fatal(err)
	}
	if len(files) < 3 {
		t.Fatalf("found only %v: is %s the repository root?", files, root)
	}
	broken, err := Check(files)
	if err != nil {
		t.Fatal(err)
	}
	for _, b := range broken {
		t.Error(b)
	}
}
