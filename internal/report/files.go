package report

import (
	"bytes"
	"encoding/json"
	"fmt"
	"path"
	"regexp"
	"sort"
	"strings"

	"github.com/streambench/streambench-operator/api/v1alpha1"
	"github.com/streambench/streambench-operator/internal/results"
)

// repeatDir is the name of a repeat's directory (results.RepeatDir).
var repeatDir = regexp.MustCompile(`^repeat-[0-9]+$`)

// ConfigMapFiles lays a results ConfigMap out as the files of a local
// run's results directory, '/'-separated paths to their bytes:
// summary.json, omb-result.json and the histogram logs; a repeated run's
// repeat-<i>.<key> as repeat-<i>/<key>. A run's status.faults, when it has
// any, go beside them as status-faults.json (each repeat's in its
// directory), and every directory gets its report.html, so that the files
// show what `streambench report` shows, wherever they are copied
// (`streambench report`, the archive).
func ConfigMapFiles(data map[string]string, binary map[string][]byte, faults []v1alpha1.FaultStatus) (map[string][]byte, error) {
	if _, ok := data[results.KeySummary]; !ok {
		return nil, fmt.Errorf("the results have no %s: the coordinator wrote none", results.KeySummary)
	}
	files := map[string][]byte{}
	dirs := map[string]bool{".": true}
	put := func(key string, b []byte) error {
		if key == "" || strings.ContainsAny(key, `/\`) || key == "." || key == ".." {
			return fmt.Errorf("results ConfigMap key %q is not a plain file name", key)
		}
		dir, name := ".", key
		if d, rest, ok := strings.Cut(key, "."); ok && repeatDir.MatchString(d) {
			dir, name = d, rest
			dirs[d] = true
		}
		files[path.Join(dir, name)] = b
		return nil
	}
	for k, v := range data {
		if err := put(k, []byte(v)); err != nil {
			return nil, err
		}
	}
	for k, v := range binary {
		if err := put(k, v); err != nil {
			return nil, err
		}
	}
	for d := range dirs {
		var mine []v1alpha1.FaultStatus
		for _, f := range faults {
			if d == "." || fmt.Sprintf("repeat-%d", f.Repeat) == d {
				mine = append(mine, f)
			}
		}
		if len(mine) > 0 {
			b, err := json.MarshalIndent(mine, "", "  ")
			if err != nil {
				return nil, err
			}
			files[path.Join(d, StatusFaultsFile)] = b
		}
	}
	names := make([]string, 0, len(dirs))
	for d := range dirs {
		names = append(names, d)
	}
	sort.Strings(names)
	for _, d := range names {
		if _, ok := files[path.Join(d, results.KeySummary)]; !ok {
			continue
		}
		html, err := renderFiles(files, d)
		if err != nil {
			return nil, fmt.Errorf("the report of %s: %w", d, err)
		}
		files[path.Join(d, FileName)] = html
	}
	return files, nil
}

// renderFiles renders the report of the run whose files are under dir of
// files, as RenderDir does for a directory on disk.
func renderFiles(files map[string][]byte, dir string) ([]byte, error) {
	var s results.Summary
	if err := json.Unmarshal(files[path.Join(dir, results.KeySummary)], &s); err != nil {
		return nil, fmt.Errorf("%s: %w", path.Join(dir, results.KeySummary), err)
	}
	if raw, ok := files[path.Join(dir, StatusFaultsFile)]; ok && len(s.Faults) == 0 {
		if err := json.Unmarshal(raw, &s.Faults); err != nil {
			return nil, fmt.Errorf("%s: %w", path.Join(dir, StatusFaultsFile), err)
		}
	}
	var omb *results.OMBResult
	if raw, ok := files[path.Join(dir, results.KeyOMB)]; ok {
		omb = &results.OMBResult{}
		if err := json.Unmarshal(raw, omb); err != nil {
			return nil, fmt.Errorf("%s: %w", path.Join(dir, results.KeyOMB), err)
		}
	}
	var b bytes.Buffer
	if err := Render(&b, &s, omb); err != nil {
		return nil, err
	}
	return b.Bytes(), nil
}
