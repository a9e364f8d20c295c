package layers

import (
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

const doc = "# title\n\n" + Heading + `

Imports point down this list.

1. **base** (no run): ` + "`api/v1`, `internal/stats`" + `,
   ` + "`internal/p`" + `.
2. **model**: ` + "`internal/durability`" + `
3. **objects**: ` + "`internal/p/...`, `internal/security`" + `

Not a layer: ` + "`internal/nowhere`" + `.

## Next section

1. **other** ` + "`internal/else`" + `
`

func TestParse(t *testing.T) {
	ls, err := Parse(doc)
	if err != nil {
		t.Fatal(err)
	}
	want := Layers{
		{1, "base", []string{"api/v1", "internal/stats", "internal/p"}},
		{2, "model", []string{"internal/durability"}},
		{3, "objects", []string{"internal/p/...", "internal/security"}},
	}
	if !reflect.DeepEqual(ls, want) {
		t.Errorf("Parse =\n%+v, want\n%+v", ls, want)
	}
	for _, tt := range []struct{ name, doc, wantErr string }{
		{"no section", "# t\n", "no section"},
		{"no item", "\n" + Heading + "\n\ntext\n", "lists no layer"},
		{"numbering", "\n" + Heading + "\n\n1. **a** `x`\n3. **b** `y`\n", "numbered 3, want 2"},
		{"empty layer", "\n" + Heading + "\n\n1. **a** nothing\n", "places no package"},
		{"twice", "\n" + Heading + "\n\n1. **a** `x`\n2. **b** `x`\n", "place it once"},
	} {
		if _, err := Parse(tt.doc); err == nil || !strings.Contains(err.Error(), tt.wantErr) {
			t.Errorf("%s: error %v, want one containing %q", tt.name, err, tt.wantErr)
		}
	}
}

func TestPlace(t *testing.T) {
	ls, err := Parse(doc)
	if err != nil {
		t.Fatal(err)
	}
	for pkg, want := range map[string]int{
		"internal/p":          1, // exact before internal/p/...
		"internal/p/strimzi":  3,
		"internal/p/a/b":      3,
		"internal/stats":      1,
		"internal/statsplus":  0, // an exact pattern is not a prefix
		"internal/pulsar":     0, // nor is a tree's base without its slash
		"internal/durability": 2,
	} {
		l, ok := ls.Place(pkg)
		if got := map[bool]int{true: l.Rank}[ok]; got != want {
			t.Errorf("Place(%s) = layer %d, want %d", pkg, got, want)
		}
	}
}

func TestCheck(t *testing.T) {
	ls, err := Parse(doc)
	if err != nil {
		t.Fatal(err)
	}
	got := ls.Check(map[string][]string{
		"internal/security":   {"internal/p/strimzi", "internal/durability", "api/v1"},
		"internal/durability": {"internal/security", "api/v1"},
		"internal/p":          {"api/v1"},
		"internal/new":        {"api/v1"},
	})
	want := []string{
		"internal/durability (layer 2, model) imports internal/security (layer 3, objects), which points up: move what it needs down, or the importer up",
		`internal/new is in no layer: add it to docs/architecture.md's "Layers (checked)"`,
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("Check =\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}

// TestTheModulePointsDown checks the module's own imports (go list, test
// files left out) against docs/architecture.md's layers.
func TestTheModulePointsDown(t *testing.T) {
	root := filepath.Join("..", "..")
	raw, err := os.ReadFile(filepath.Join(root, "docs", "architecture.md"))
	if err != nil {
		t.Fatal(err)
	}
	ls, err := Parse(string(raw))
	if err != nil {
		t.Fatalf("docs/architecture.md: %v", err)
	}
	cmd := exec.Command("go", "list", "-f", "{{.ImportPath}}{{range .Imports}} {{.}}{{end}}", "./...")
	cmd.Dir = root
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	mod, err := exec.Command("go", "list", "-m").Output()
	if err != nil {
		t.Fatalf("go list -m: %v", err)
	}
	prefix := strings.TrimSpace(string(mod)) + "/"
	imports := map[string][]string{}
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		f := strings.Fields(line)
		from, ok := strings.CutPrefix(f[0], prefix)
		if !ok {
			continue
		}
		imports[from] = nil
		for _, to := range f[1:] {
			if rel, ok := strings.CutPrefix(to, prefix); ok {
				imports[from] = append(imports[from], rel)
			}
		}
	}
	if len(imports) < 20 {
		t.Fatalf("go list gave %d of the module's packages: %s", len(imports), out)
	}
	for _, p := range ls.Check(imports) {
		t.Error(p)
	}
}
