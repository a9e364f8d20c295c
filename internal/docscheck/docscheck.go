// Package docscheck finds the relative links of Markdown files that lead
// nowhere: to a file that does not exist, or to an anchor that no heading
// of the target makes. The README and docs/ are a newcomer's way in (issue
// 63); a link that breaks when a page moves or a heading is reworded should
// fail make test, not the reader.
package docscheck

import (
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"unicode"
)

// Broken is one link that leads nowhere.
type Broken struct {
	File   string // the Markdown file, as given
	Line   int    // 1-based
	Target string // the link as written
	Reason string
}

func (b Broken) String() string {
	return fmt.Sprintf("%s:%d: %s: %s", b.File, b.Line, b.Target, b.Reason)
}

var (
	// inlineLink matches [text](target) and ![alt](target); the target
	// ends at the first space (a title follows) or the closing parenthesis.
	inlineLink = regexp.MustCompile(`!?\[[^\]]*\]\(\s*<?([^)\s>]*)>?(?:\s+"[^"]*")?\s*\)`)
	// refLink matches a reference definition: [label]: target
	refLink = regexp.MustCompile(`^\s{0,3}\[[^\]]+\]:\s*<?(\S+?)>?(?:\s+.*)?$`)
	// htmlAnchor matches <a id="x"> and <a name="x">.
	htmlAnchor = regexp.MustCompile(`<a\s+(?:id|name)="([^"]+)"`)
	codeSpan   = regexp.MustCompile("`+[^`]*`+")
	heading    = regexp.MustCompile(`^\s{0,3}(#{1,6})\s+(.*?)\s*#*\s*$`)
	mdLink     = regexp.MustCompile(`!?\[([^\]]*)\]\([^)]*\)`)
)

// Check reads each Markdown file and returns every relative link of it
// that leads nowhere. Links with a scheme (https:, mailto:) are not
// followed; an anchor is checked only in Markdown targets.
func Check(files []string) ([]Broken, error) {
	anchors := map[string]map[string]bool{} // file → its anchors, read once
	anchorsOf := func(path string) (map[string]bool, error) {
		if a, ok := anchors[path]; ok {
			return a, nil
		}
		raw, err := os.ReadFile(path)
		if err != nil {
			return nil, err
		}
		a := Anchors(string(raw))
		anchors[path] = a
		return a, nil
	}
	var broken []Broken
	for _, file := range files {
		raw, err := os.ReadFile(file)
		if err != nil {
			return nil, err
		}
		for _, l := range Links(string(raw)) {
			if reason := checkLink(file, l.Target, anchorsOf); reason != "" {
				broken = append(broken, Broken{File: file, Line: l.Line, Target: l.Target, Reason: reason})
			}
		}
	}
	return broken, nil
}

func checkLink(file, target string, anchorsOf func(string) (map[string]bool, error)) string {
	if u, err := url.Parse(target); err != nil {
		return "not a URL: " + err.Error()
	} else if u.Scheme != "" || strings.HasPrefix(target, "//") {
		return ""
	}
	path, frag, _ := strings.Cut(target, "#")
	if p, err := url.PathUnescape(path); err == nil {
		path = p
	}
	dest := file
	if path != "" {
		if strings.HasPrefix(path, "/") {
			return "an absolute path: GitHub resolves it against the site, not the repository; write it relative to " + filepath.Dir(file)
		}
		dest = filepath.Join(filepath.Dir(file), filepath.FromSlash(path))
		if _, err := os.Stat(dest); err != nil {
			return "no such file or directory " + dest
		}
	}
	if frag == "" || !strings.HasSuffix(dest, ".md") {
		return ""
	}
	a, err := anchorsOf(dest)
	if err != nil {
		return err.Error()
	}
	if !a[frag] {
		return fmt.Sprintf("%s has no heading whose anchor is #%s", dest, frag)
	}
	return ""
}

// Link is a link target and the line it is on.
type Link struct {
	Line   int
	Target string
}

// Links returns the link targets of a Markdown text, outside fenced code
// blocks and code spans.
func Links(md string) []Link {
	var out []Link
	forEachProseLine(md, func(n int, line string) {
		line = codeSpan.ReplaceAllString(line, "")
		for _, m := range inlineLink.FindAllStringSubmatch(line, -1) {
			if m[1] != "" {
				out = append(out, Link{Line: n, Target: m[1]})
			}
		}
		if m := refLink.FindStringSubmatch(line); m != nil {
			out = append(out, Link{Line: n, Target: m[1]})
		}
	})
	return out
}

// Anchors returns the anchors a Markdown text makes: one per heading, by
// GitHub's rules (Slug; a repeated slug gets -1, -2, ...), and every
// <a id> or <a name>.
func Anchors(md string) map[string]bool {
	out := map[string]bool{}
	seen := map[string]int{}
	forEachProseLine(md, func(_ int, line string) {
		for _, m := range htmlAnchor.FindAllStringSubmatch(line, -1) {
			out[m[1]] = true
		}
		m := heading.FindStringSubmatch(line)
		if m == nil {
			return
		}
		s := Slug(m[2])
		if n := seen[s]; n > 0 {
			out[fmt.Sprintf("%s-%d", s, n)] = true
		} else {
			out[s] = true
		}
		seen[s]++
	})
	return out
}

// Slug is the anchor GitHub gives a heading: the heading's text (links
// and code spans by their text) lowercased, every space a '-', and
// everything but letters, digits, '-' and '_' dropped.
func Slug(text string) string {
	text = mdLink.ReplaceAllString(text, "$1")
	var b strings.Builder
	for _, r := range strings.ToLower(text) {
		switch {
		case r == ' ':
			b.WriteByte('-')
		case r == '-' || r == '_' || unicode.IsLetter(r) || unicode.IsDigit(r) || unicode.Is(unicode.Mn, r):
			b.WriteRune(r)
		}
	}
	return b.String()
}

// forEachProseLine calls f with each line outside fenced code blocks.
func forEachProseLine(md string, f func(n int, line string)) {
	fence := ""
	for i, line := range strings.Split(md, "\n") {
		t := strings.TrimSpace(line)
		if fence != "" {
			if strings.HasPrefix(t, fence) && strings.Trim(t, fence[:1]) == "" {
				fence = ""
			}
			continue
		}
		if strings.HasPrefix(t, "```") || strings.HasPrefix(t, "~~~") {
			fence = t[:3]
			for _, c := range t[3:] {
				if c != rune(t[0]) {
					break
				}
				fence += string(c)
			}
			continue
		}
		f(i+1, line)
	}
}

// RepoFiles returns the Markdown files the check covers: the repository
// root's and every one under docs/.
func RepoFiles(root string) ([]string, error) {
	files, err := filepath.Glob(filepath.Join(root, "*.md"))
	if err != nil {
		return nil, err
	}
	err = filepath.WalkDir(filepath.Join(root, "docs"), func(path string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if !d.IsDir() && strings.HasSuffix(path, ".md") {
			files = append(files, path)
		}
		return nil
	})
	return files, err
}
