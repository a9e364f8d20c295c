package cicheck

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestRecipesThatCallMakeOnlyCallMake: make runs a recipe line that names
// $(MAKE) even under -n (so that -n reaches the sub-makes), and
// TestWorkflowJobs runs make -n on the workflow's targets. A line that
// calls make and also runs a test or a timed stage would run it for real
// there: once, test-brokers did, and the unit suites ran every broker
// package a second time beside the real ones.
func TestRecipesThatCallMakeOnlyCallMake(t *testing.T) {
	b, err := os.ReadFile(filepath.Join(root, "Makefile"))
	if err != nil {
		t.Fatal(err)
	}
	for _, l := range recipeLines(string(b)) {
		if !strings.Contains(l.text, "$(MAKE)") {
			continue
		}
		// verify's line (hack/timed.sh around $(MAKE) and hack/verify.sh)
		// runs its check under make -n too; its make calls then only
		// print, and it changes no file, but it costs the unit stage
		// the check's go list calls: left for its own change.
		for _, real := range []string{"$(GO_TEST_STAGE)", "go-test-stage.sh", "go test"} {
			if strings.Contains(l.text, real) {
				t.Errorf("Makefile:%d: a recipe line that calls $(MAKE) also runs %s, which make -n would run for real: give the tests a target of their own", l.line, real)
			}
		}
	}
}

// TestRecipeLines: continuation lines join into the line they continue,
// numbered where it starts; lines outside recipes are not recipe lines.
func TestRecipeLines(t *testing.T) {
	mk := "a: b\n\t@$(MAKE) x & p=$$!; \\\n\tgo test ./... || rc=1\nVAR = $(MAKE)\n\techo one\n"
	got := recipeLines(mk)
	if len(got) != 2 || got[0].line != 2 || !strings.Contains(got[0].text, "go test") || got[1].line != 5 {
		t.Errorf("recipeLines = %+v", got)
	}
}

type recipeLine struct {
	line int
	text string
}

// recipeLines are the Makefile's recipe lines (those starting with a
// tab), each with its continuations.
func recipeLines(makefile string) []recipeLine {
	var out []recipeLine
	lines := strings.Split(makefile, "\n")
	for i := 0; i < len(lines); i++ {
		if !strings.HasPrefix(lines[i], "\t") {
			continue
		}
		l := recipeLine{line: i + 1, text: lines[i]}
		for strings.HasSuffix(lines[i], "\\") && i+1 < len(lines) {
			i++
			l.text += "\n" + lines[i]
		}
		out = append(out, l)
	}
	return out
}
