// Package layers reads the layers of docs/architecture.md (its section
// "Layers (checked)") and says which of the module's imports point up
// them. The list in the document is the rule, so the picture a newcomer
// reads and the check make test runs cannot drift apart (issue 60: three
// imports ran up the layers before anyone wrote the layers down).
package layers

import (
	"fmt"
	"regexp"
	"slices"
	"strconv"
	"strings"
)

// Heading is the section of docs/architecture.md that lists the layers.
const Heading = "## Layers (checked)"

// Layer is one numbered item of the list: its rank (1 is the bottom),
// its name, and the packages it places, module-relative: "a/b" is that
// package, "a/b/..." every package under it too.
type Layer struct {
	Rank     int
	Name     string
	Patterns []string
}

// Layers are the list's items, in rank order.
type Layers []Layer

var (
	item    = regexp.MustCompile(`^(\d+)\. \*\*([^*]+)\*\*`)
	pattern = regexp.MustCompile("`([a-z0-9_./-]+)`")
)

// Parse reads the layers from the document's section Heading: each
// numbered item ("1. **base** ... `pkg`, `pkg/...`"), with its
// continuation lines, up to the next item, blank line or heading.
func Parse(markdown string) (Layers, error) {
	_, section, ok := strings.Cut(markdown, "\n"+Heading+"\n")
	if !ok {
		return nil, fmt.Errorf("no section %q", Heading)
	}
	if end := strings.Index(section, "\n## "); end >= 0 {
		section = section[:end]
	}
	var ls Layers
	var cur *Layer
	for _, line := range strings.Split(section, "\n") {
		line = strings.TrimSpace(line)
		if m := item.FindStringSubmatch(line); m != nil {
			rank, _ := strconv.Atoi(m[1])
			if rank != len(ls)+1 {
				return nil, fmt.Errorf("layer %q is numbered %d, want %d: number the layers from 1, bottom first", m[2], rank, len(ls)+1)
			}
			ls = append(ls, Layer{Rank: rank, Name: m[2]})
			cur = &ls[len(ls)-1]
			line = line[len(m[0]):]
		} else if line == "" || strings.HasPrefix(line, "#") {
			cur = nil
			continue
		}
		if cur == nil {
			continue
		}
		for _, p := range pattern.FindAllStringSubmatch(line, -1) {
			cur.Patterns = append(cur.Patterns, p[1])
		}
	}
	if len(ls) == 0 {
		return nil, fmt.Errorf("section %q lists no layer (\"1. **name** `package`, ...\")", Heading)
	}
	seen := map[string]string{}
	for _, l := range ls {
		if len(l.Patterns) == 0 {
			return nil, fmt.Errorf("layer %d (%s) places no package", l.Rank, l.Name)
		}
		for _, p := range l.Patterns {
			if other, dup := seen[p]; dup {
				return nil, fmt.Errorf("`%s` is in layer %s and in layer %s: place it once", p, other, l.Name)
			}
			seen[p] = l.Name
		}
	}
	return ls, nil
}

// Place is the layer of pkg (module-relative): the one whose pattern
// matches it longest, an exact pattern before "/..." of the same path.
func (ls Layers) Place(pkg string) (Layer, bool) {
	best, score := Layer{}, -1
	for _, l := range ls {
		for _, p := range l.Patterns {
			s := -1
			if base, tree := strings.CutSuffix(p, "/..."); tree {
				if pkg == base || strings.HasPrefix(pkg, base+"/") {
					s = 2 * len(base)
				}
			} else if pkg == p {
				s = 2*len(p) + 1
			}
			if s > score {
				best, score = l, s
			}
		}
	}
	return best, score >= 0
}

// Check says, sorted, each package the layers do not place and each
// import that points up: imports maps a package to what it imports, both
// module-relative (imports from outside the module left out).
func (ls Layers) Check(imports map[string][]string) []string {
	var problems []string
	for from, tos := range imports {
		lf, ok := ls.Place(from)
		if !ok {
			problems = append(problems, fmt.Sprintf("%s is in no layer: add it to docs/architecture.md's %q", from, strings.TrimPrefix(Heading, "## ")))
			continue
		}
		for _, to := range tos {
			lt, ok := ls.Place(to)
			if ok && lt.Rank > lf.Rank {
				problems = append(problems, fmt.Sprintf("%s (layer %d, %s) imports %s (layer %d, %s), which points up: move what it needs down, or the importer up",
					from, lf.Rank, lf.Name, to, lt.Rank, lt.Name))
			}
		}
	}
	slices.Sort(problems)
	return problems
}
