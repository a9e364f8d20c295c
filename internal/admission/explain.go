package admission

import (
	"errors"
	"fmt"
	"strings"

	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/streambench/streambench-operator/internal/workload"
)

// unknownField is the error for a field the schema does not have: the API
// server says only `unknown field "spec.x"`; this names where it is and the
// closest known field, so a typo is a one-line fix.
func (k *Kind) unknownField(path string) *field.Error {
	parent, name := "", path
	if i := strings.LastIndexByte(path, '.'); i >= 0 {
		parent, name = path[:i], path[i+1:]
	}
	where := parent
	if where == "" {
		where = "the top level"
	}
	detail := fmt.Sprintf("unknown field %q in %s", name, where)
	known := k.Known(parent)
	switch s := workload.Suggest(name, known); {
	case s != "":
		detail += fmt.Sprintf("; did you mean %q?", s)
	case len(known) > 0 && len(known) <= 16:
		detail += "; known fields: " + strings.Join(known, ", ")
	default:
		detail += fmt.Sprintf("; remove it (kubectl explain %s.%s lists the fields)", strings.ToLower(k.gvk.Kind), parent)
	}
	return &field.Error{Type: field.ErrorTypeForbidden, Field: path, BadValue: name, Detail: detail}
}

// Hints add a fix to the API server's message for a field, by path.
type Hints map[string]string

// Explain turns the errors of Create into one error, one problem per line,
// each naming its field. The API server's own message is kept; where the
// field has a CRD default, a bad explicit value is told it can be left out,
// a value that must be a string is told to be quoted, and hints add the
// caller's fixes.
func (k *Kind) Explain(errs field.ErrorList, hints Hints) error {
	var out []error
	for _, e := range errs {
		msg := e.Error()
		switch {
		case e.Field == "" || e.Field == "<nil>":
			msg = e.Detail
		case strings.HasPrefix(e.Detail, e.Field):
			// The OpenAPI validator's message names the field; so do
			// the CRD's CEL messages, at the field or above it.
			msg = e.Detail
		case strings.HasPrefix(e.Detail, "unknown field") || strings.HasPrefix(e.Detail, "spec."):
			msg = e.Field + ": " + e.Detail
		}
		msg = plainer.Replace(msg)
		switch {
		case e.Type == field.ErrorTypeTypeInvalid && strings.Contains(e.Detail, "must be of type string"):
			msg += " (quote it)"
		case e.Type == field.ErrorTypeInvalid || e.Type == field.ErrorTypeNotSupported:
			if d := k.DefaultOf(e.Field); d != "" {
				msg += fmt.Sprintf("; remove it for the default (%s)", strings.Trim(d, `"`))
			}
		}
		if h := hints[e.Field]; h != "" {
			msg += "; " + h
		}
		out = append(out, errors.New(msg))
	}
	return errors.Join(out...)
}

// plainer rewrites the OpenAPI validator's bounds in the words the CRD's
// own messages use.
var plainer = strings.NewReplacer(
	"should be greater than or equal to", "must be at least",
	"should be less than or equal to", "must be at most",
	" in body ", " ",
)
