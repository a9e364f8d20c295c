// Package workload reads, defaults and validates OpenMessaging Benchmark
// (OMB) workload files: v1alpha1.WorkloadSpec, with OMB's field names plus
// streambench's mixed extension.
//
// The CRD markers on v1alpha1.WorkloadSpec are the source of truth in a
// cluster; this package gives local mode (which has no API server) exactly the
// same defaults and the same accept/reject decisions. A spec is used as
// Parse (or ParseFile) -> Default -> Validate (-> CheckPayloadFile), which is
// the order the API server applies: decode, default, then validate.
package workload

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"reflect"
	"sort"
	"strconv"
	"strings"

	"k8s.io/apimachinery/pkg/util/validation/field"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	"sigs.k8s.io/yaml"

	"github.com/streambench/streambench-operator/api/v1alpha1"
)

// Parse reads an OMB workload YAML (or JSON) document unchanged into a
// WorkloadSpec. It does not default or validate (call Default, then Validate).
//
// OMB ignores unknown keys; streambench rejects them, because a typo such as
// "producerRat" would silently turn a fixed-rate test into a max-rate search.
// Every problem found is reported, each naming the field: unknown keys (with
// the closest known key), values of the wrong type, duplicate keys, and the
// few explicit values the Go type cannot tell apart from an absent field
// (e.g. "topics: 0", which the API server rejects but an omitted topics
// defaults to 1).
func Parse(data []byte) (v1alpha1.WorkloadSpec, error) {
	var w v1alpha1.WorkloadSpec

	doc, err := singleDocument(data)
	if err != nil {
		return w, err
	}
	if len(bytes.TrimSpace(doc)) == 0 {
		return w, errors.New("workload is empty: it needs at least messageSize (bytes per message, e.g. messageSize: 1024)")
	}
	// Strict: a key written twice is an error rather than last-one-wins.
	js, err := yaml.YAMLToJSONStrict(doc)
	if err != nil {
		return w, fmt.Errorf("workload is not valid YAML: %w", err)
	}
	raw, err := decodeRaw(js)
	if err != nil {
		return w, err
	}
	obj, ok := raw.(map[string]any)
	if !ok {
		return w, fmt.Errorf("workload must be a YAML mapping of fields (e.g. messageSize: 1024), got %s", describe(raw))
	}

	var errs []error
	checkObject(obj, specSchema, "", &errs)
	if len(errs) == 0 {
		checkExplicitZeros(obj, &errs)
	}
	if len(errs) > 0 {
		return w, errors.Join(errs...)
	}

	normalized, err := json.Marshal(obj)
	if err != nil {
		return w, fmt.Errorf("workload: re-encoding failed: %w", err)
	}
	dec := json.NewDecoder(bytes.NewReader(normalized))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&w); err != nil {
		// checkObject should have caught every problem; this is a safety net.
		return v1alpha1.WorkloadSpec{}, fmt.Errorf("workload: %w", err)
	}
	return w, nil
}

// ParseFile is Parse on a file. A relative payloadFile is looked up where
// OMB looks for it first, the working directory (OMB's FilePayloadReader
// opens new File(payloadFile)), then next to the workload file, so both
// OMB's layout (workloads/ beside payload/, run from the folder above) and a
// workload moved together with its payload work unchanged. When neither has
// it, payloadFile is left as written and LoadFile names both places.
func ParseFile(path string) (v1alpha1.WorkloadSpec, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return v1alpha1.WorkloadSpec{}, fmt.Errorf("reading workload file: %w", err)
	}
	w, err := Parse(data)
	if err != nil {
		return v1alpha1.WorkloadSpec{}, fmt.Errorf("%s: %w", path, err)
	}
	if found, ok := FindPayloadFile(filepath.Dir(path), w.PayloadFile); ok {
		w.PayloadFile = found
	}
	return w, nil
}

// PayloadPlaces are the places a payloadFile is looked for, in order: as
// written (relative to the working directory, as OMB), then relative to dir
// (the folder of the file that names it). An absolute path is its own only
// place.
func PayloadPlaces(dir, payloadFile string) []string {
	if payloadFile == "" {
		return nil
	}
	if filepath.IsAbs(payloadFile) {
		return []string{payloadFile}
	}
	places := []string{payloadFile}
	if next := filepath.Join(dir, payloadFile); filepath.Clean(next) != filepath.Clean(payloadFile) {
		places = append(places, next)
	}
	return places
}

// FindPayloadFile returns the first of PayloadPlaces that exists.
func FindPayloadFile(dir, payloadFile string) (string, bool) {
	for _, p := range PayloadPlaces(dir, payloadFile) {
		if _, err := os.Stat(p); err == nil {
			return p, true
		}
	}
	return payloadFile, false
}

// MissingPayloadFile reports a payloadFile found in none of its places,
// naming each (absolute, so the message does not depend on knowing the
// working directory) and the fix; nil when it is found or not set.
func MissingPayloadFile(w v1alpha1.WorkloadSpec, dir string, fldPath *field.Path) *field.Error {
	if !ReadsPayloadFile(w) {
		return nil
	}
	if _, ok := FindPayloadFile(dir, w.PayloadFile); ok {
		return nil
	}
	var where []string
	for i, p := range PayloadPlaces(dir, w.PayloadFile) {
		abs, err := filepath.Abs(p)
		if err != nil {
			abs = p
		}
		what := "relative to the working directory, where OMB looks"
		if i > 0 {
			what = "next to the file that names it"
		} else if filepath.IsAbs(w.PayloadFile) {
			what = "as written"
		}
		where = append(where, fmt.Sprintf("%s (%s)", abs, what))
	}
	return field.Invalid(fldPath.Child("payloadFile"), w.PayloadFile,
		fmt.Sprintf("no such file at %s; run from the folder that holds it (OMB's layout: workloads/ beside payload/), put it next to the workload file, or remove payloadFile for a generated payload",
			strings.Join(where, " nor at ")))
}

// LoadFile is what local mode does with a workload file: ParseFile, Default,
// Validate and CheckPayloadFile, with every problem in one error whose
// lines name fields under fldPath (e.g. "spec.workload.messageSize").
func LoadFile(path string, fldPath *field.Path) (v1alpha1.WorkloadSpec, error) {
	w, err := ParseFile(path)
	if err != nil {
		return v1alpha1.WorkloadSpec{}, err
	}
	Default(&w)
	errs := Validate(w, fldPath)
	if miss := MissingPayloadFile(w, filepath.Dir(path), fldPath); miss != nil {
		errs = append(errs, miss)
	} else {
		errs = append(errs, CheckPayloadFile(w, fldPath)...)
	}
	if len(errs) > 0 {
		msgs := make([]error, len(errs))
		for i, e := range errs {
			msgs[i] = e
		}
		return v1alpha1.WorkloadSpec{}, fmt.Errorf("%s: %w", path, errors.Join(msgs...))
	}
	return w, nil
}

// singleDocument returns the only YAML document in data. A second document
// would otherwise be dropped without a word.
func singleDocument(data []byte) ([]byte, error) {
	docs, err := Documents(data)
	if err != nil {
		return nil, fmt.Errorf("workload is not valid YAML: %w", err)
	}
	switch len(docs) {
	case 0:
		return nil, nil
	case 1:
		return docs[0], nil
	default:
		return nil, fmt.Errorf("workload file holds %d YAML documents (separated by ---); put one workload per file", len(docs))
	}
}

// Documents splits a YAML stream at its --- separators and returns the
// documents that hold more than comments and blank lines. Local mode reads
// one object per file (a workload, a run, a suite) and refuses a second,
// which a YAML decoder would silently drop.
func Documents(data []byte) ([][]byte, error) {
	r := utilyaml.NewYAMLReader(bufio.NewReader(bytes.NewReader(data)))
	var docs [][]byte
	for {
		d, err := r.Read()
		if errors.Is(err, io.EOF) {
			return docs, nil
		}
		if err != nil {
			return nil, err
		}
		if !isBlankYAML(d) {
			docs = append(docs, d)
		}
	}
}

// isBlankYAML reports whether a document holds only comments, blank lines
// and document markers.
func isBlankYAML(d []byte) bool {
	for _, line := range strings.Split(string(d), "\n") {
		t := strings.TrimSpace(line)
		if t == "" || strings.HasPrefix(t, "#") || t == "---" || t == "..." {
			continue
		}
		return false
	}
	return true
}

func decodeRaw(js []byte) (any, error) {
	dec := json.NewDecoder(bytes.NewReader(js))
	// Numbers stay exact (int64 rates do not pass through float64).
	dec.UseNumber()
	var raw any
	if err := dec.Decode(&raw); err != nil {
		return nil, fmt.Errorf("workload is not valid YAML: %w", err)
	}
	return raw, nil
}

// schema is the set of keys of one JSON object, derived from the Go type's
// json tags so that it cannot drift from v1alpha1.
type schema struct {
	name   string // for messages: "workload", "workload.mixed"
	fields map[string]fieldSchema
	keys   []string // sorted known keys, for suggestions
}

type fieldSchema struct {
	typ    reflect.Type // with pointers removed
	nested *schema      // for struct fields
}

var specSchema = buildSchema(reflect.TypeOf(v1alpha1.WorkloadSpec{}), "workload")

func buildSchema(t reflect.Type, name string) *schema {
	s := &schema{name: name, fields: map[string]fieldSchema{}}
	for i := 0; i < t.NumField(); i++ {
		f := t.Field(i)
		tag := strings.Split(f.Tag.Get("json"), ",")[0]
		if tag == "" || tag == "-" || !f.IsExported() {
			continue
		}
		ft := f.Type
		for ft.Kind() == reflect.Pointer {
			ft = ft.Elem()
		}
		fs := fieldSchema{typ: ft}
		if ft.Kind() == reflect.Struct {
			fs.nested = buildSchema(ft, name+"."+tag)
		}
		s.fields[tag] = fs
		s.keys = append(s.keys, tag)
	}
	sort.Strings(s.keys)
	return s
}

// checkObject reports unknown keys and values of the wrong type; integral
// numbers written as floats (1e6) are rewritten as integers in place, as the
// API server accepts them for integer fields.
func checkObject(obj map[string]any, s *schema, prefix string, errs *[]error) {
	keys := make([]string, 0, len(obj))
	for k := range obj {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		fs, ok := s.fields[k]
		if !ok {
			msg := fmt.Sprintf("unknown field %q in %s", k, s.name)
			if sug := Suggest(k, s.keys); sug != "" {
				msg += fmt.Sprintf("; did you mean %q?", sug)
			} else {
				msg += fmt.Sprintf("; known fields: %s", strings.Join(s.keys, ", "))
			}
			*errs = append(*errs, errors.New(msg))
			continue
		}
		v := obj[k]
		if v == nil {
			// The API server prunes a null and then defaults the field.
			continue
		}
		name := prefix + k
		switch fs.typ.Kind() {
		case reflect.Struct:
			m, ok := v.(map[string]any)
			if !ok {
				*errs = append(*errs, typeError(name, "a mapping of fields", v))
				continue
			}
			checkObject(m, fs.nested, name+".", errs)
		case reflect.Int32, reflect.Int64:
			n, ok := v.(json.Number)
			if !ok {
				*errs = append(*errs, typeError(name, "a whole number", v))
				continue
			}
			bits := fs.typ.Bits()
			i, err := strconv.ParseInt(string(n), 10, bits)
			if err != nil {
				f, ferr := n.Float64()
				lo := int64(-1) << (bits - 1) // the range is [lo, -lo-1]
				switch {
				case ferr != nil || f != math.Trunc(f):
					*errs = append(*errs, fmt.Errorf("workload field %q must be a whole number, got %s", name, n))
					continue
				case f < float64(lo) || f >= -float64(lo):
					*errs = append(*errs, fmt.Errorf("workload field %q must be a whole number between %d and %d, got %s",
						name, lo, -(lo+1), n))
					continue
				}
				i = int64(f)
			}
			obj[k] = json.Number(strconv.FormatInt(i, 10))
		case reflect.Float64:
			if _, ok := v.(json.Number); !ok {
				*errs = append(*errs, typeError(name, "a number", v))
			}
		case reflect.Bool:
			if _, ok := v.(bool); !ok {
				*errs = append(*errs, typeError(name, "true or false", v))
			}
		case reflect.String:
			if _, ok := v.(string); !ok {
				*errs = append(*errs, typeError(name, "a string (quote it)", v))
			}
		default:
			*errs = append(*errs, fmt.Errorf("workload field %q has Go type %s that Parse does not handle; this is a bug in internal/workload", name, fs.typ))
		}
	}
}

func typeError(name, want string, got any) error {
	return fmt.Errorf("workload field %q must be %s, got %s", name, want, describe(got))
}

func describe(v any) string {
	switch t := v.(type) {
	case nil:
		return "null"
	case string:
		return fmt.Sprintf("string %q", t)
	case json.Number:
		return "number " + string(t)
	case bool:
		return fmt.Sprintf("boolean %t", t)
	case map[string]any:
		return "a mapping"
	case []any:
		return "a list"
	default:
		return fmt.Sprintf("%v", t)
	}
}

// explicitZero lists the fields whose Go type cannot tell "absent" from the
// zero value while the CRD treats them differently: absent is defaulted to a
// valid value, an explicit zero is rejected (Minimum=1 or the enum). Parse
// rejects the explicit zero so local mode rejects what the API server does.
var explicitZero = []struct {
	path []string
	fix  string
}{
	{[]string{"topics"}, "must be at least 1; remove the line for the default (1)"},
	{[]string{"partitionsPerTopic"}, "must be at least 1; remove the line for the default (1)"},
	{[]string{"producersPerTopic"}, "must be at least 1; remove the line for the default (1)"},
	{[]string{"consumerPerSubscription"}, "must be at least 1; remove the line for the default (1)"},
	{[]string{"keyDistributor"}, "must be one of NO_KEY, KEY_ROUND_ROBIN, RANDOM_NANO; remove the line for the default (NO_KEY)"},
	{[]string{"mixed", "catchUpSubscriptionsPerTopic"}, "must be at least 1; remove the line for the default (1)"},
}

func checkExplicitZeros(obj map[string]any, errs *[]error) {
	for _, z := range explicitZero {
		v, ok := lookup(obj, z.path)
		if !ok {
			continue
		}
		if v == json.Number("0") || v == "" {
			*errs = append(*errs, fmt.Errorf("workload field %q is %s but %s",
				strings.Join(z.path, "."), describeZero(v), z.fix))
		}
	}
}

func describeZero(v any) string {
	if v == "" {
		return "empty"
	}
	return "0"
}

func lookup(obj map[string]any, path []string) (any, bool) {
	var cur any = obj
	for _, p := range path {
		m, ok := cur.(map[string]any)
		if !ok {
			return nil, false
		}
		cur, ok = m[p]
		if !ok {
			return nil, false
		}
	}
	return cur, cur != nil
}

// Suggest returns the known key closest to k, or "" when none is close
// enough to be a likely typo. Local mode uses it for the whole BenchmarkRun.
func Suggest(k string, known []string) string {
	best, bestD := "", math.MaxInt
	lk := strings.ToLower(k)
	for _, c := range known {
		d := levenshtein(lk, strings.ToLower(c))
		if d < bestD {
			best, bestD = c, d
		}
	}
	// Same letters in another case, one or two slips, or about a third of
	// a long name wrong ("consumersPerSubscriptions").
	if bestD <= 2 || bestD*3 <= len(best) {
		return best
	}
	return ""
}

func levenshtein(a, b string) int {
	ra, rb := []rune(a), []rune(b)
	prev := make([]int, len(rb)+1)
	cur := make([]int, len(rb)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(ra); i++ {
		cur[0] = i
		for j := 1; j <= len(rb); j++ {
			cost := 1
			if ra[i-1] == rb[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
		}
		prev, cur = cur, prev
	}
	return prev[len(rb)]
}
