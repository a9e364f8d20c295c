// Package admission runs kube-apiserver's own admission of a custom
// resource on create, in-process, on the CRDs the binary embeds
// (config/crd). Local mode has no API server; with this package it still
// accepts, defaults and refuses exactly what `kubectl apply` would, because
// the rules are the CRD's (OpenAPI schema, defaults and CEL), applied by the
// same k8s.io/apiextensions-apiserver functions kube-apiserver calls, in the
// same order:
//
//  1. decode: ObjectMeta coerced, unknown fields pruned and reported (as
//     kubectl's default fieldValidation=Strict makes the server do),
//     non-nullable nulls dropped (customresource_handler.go, unstructuredSchemaCoercer);
//  2. structural defaulting (unstructuredDefaulter);
//  3. PrepareForCreate (status dropped) and generateName (BeforeCreate);
//  4. validation: type meta, ObjectMeta, the OpenAPI schema, embedded
//     resources, list types, then CEL unless a blocking error came first
//     (customresource.customResourceStrategy.Validate).
//
// What the CRD cannot know (files on this disk, what local mode cannot
// reach) is the caller's to check after.
package admission

import (
	"context"
	"encoding/json"
	"fmt"
	"io/fs"
	"sort"
	"strings"
	"sync"

	"k8s.io/apiextensions-apiserver/pkg/apis/apiextensions"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	structuralschema "k8s.io/apiextensions-apiserver/pkg/apiserver/schema"
	"k8s.io/apiextensions-apiserver/pkg/apiserver/schema/cel"
	structuraldefaulting "k8s.io/apiextensions-apiserver/pkg/apiserver/schema/defaulting"
	"k8s.io/apiextensions-apiserver/pkg/apiserver/schema/listtype"
	schemaobjectmeta "k8s.io/apiextensions-apiserver/pkg/apiserver/schema/objectmeta"
	structuralpruning "k8s.io/apiextensions-apiserver/pkg/apiserver/schema/pruning"
	apiservervalidation "k8s.io/apiextensions-apiserver/pkg/apiserver/validation"
	"k8s.io/apimachinery/pkg/api/validation"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	utiljson "k8s.io/apimachinery/pkg/util/json"
	"k8s.io/apimachinery/pkg/util/validation/field"
	celconfig "k8s.io/apiserver/pkg/apis/cel"
	"k8s.io/apiserver/pkg/storage/names"
	"sigs.k8s.io/yaml"

	"github.com/streambench/streambench-operator/api/v1alpha1"
	"github.com/streambench/streambench-operator/config/crd"
)

// Kind admits objects of one custom resource kind, with the schema of the
// served version of its embedded CRD.
type Kind struct {
	gvk        schema.GroupVersionKind
	namespaced bool
	hasStatus  bool
	structural *structuralschema.Structural
	validator  apiservervalidation.SchemaValidator
	cel        *cel.Validator
}

var (
	runKind   = sync.OnceValues(func() (*Kind, error) { return load("streambench.io_benchmarkruns.yaml") })
	suiteKind = sync.OnceValues(func() (*Kind, error) { return load("streambench.io_benchmarksuites.yaml") })
)

// BenchmarkRun is the BenchmarkRun kind of the embedded CRD.
func BenchmarkRun() *Kind { return must(runKind()) }

// BenchmarkSuite is the BenchmarkSuite kind of the embedded CRD.
func BenchmarkSuite() *Kind { return must(suiteKind()) }

// must: the CRDs are part of the binary and tested; one that does not
// load is a build that must not ship.
func must(k *Kind, err error) *Kind {
	if err != nil {
		panic(fmt.Sprintf("the embedded CRD does not load (run make manifests): %v", err))
	}
	return k
}

func load(file string) (*Kind, error) {
	data, err := fs.ReadFile(crd.Bases, "bases/"+file)
	if err != nil {
		return nil, err
	}
	var c apiextensionsv1.CustomResourceDefinition
	if err := yaml.UnmarshalStrict(data, &c); err != nil {
		return nil, fmt.Errorf("%s: %w", file, err)
	}
	for _, v := range c.Spec.Versions {
		if v.Name != v1alpha1.GroupVersion.Version {
			continue
		}
		if v.Schema == nil || v.Schema.OpenAPIV3Schema == nil {
			return nil, fmt.Errorf("%s: version %s has no schema", file, v.Name)
		}
		var internal apiextensions.JSONSchemaProps
		if err := apiextensionsv1.Convert_v1_JSONSchemaProps_To_apiextensions_JSONSchemaProps(v.Schema.OpenAPIV3Schema, &internal, nil); err != nil {
			return nil, fmt.Errorf("%s: %w", file, err)
		}
		ss, err := structuralschema.NewStructural(&internal)
		if err != nil {
			return nil, fmt.Errorf("%s: structural schema: %w", file, err)
		}
		// As the API server serves it: defaults pruned of unknown fields.
		if err := structuraldefaulting.PruneDefaults(ss); err != nil {
			return nil, fmt.Errorf("%s: %w", file, err)
		}
		sv, _, err := apiservervalidation.NewSchemaValidator(&internal)
		if err != nil {
			return nil, fmt.Errorf("%s: schema validator: %w", file, err)
		}
		return &Kind{
			gvk:        schema.GroupVersionKind{Group: c.Spec.Group, Version: v.Name, Kind: c.Spec.Names.Kind},
			namespaced: c.Spec.Scope == apiextensionsv1.NamespaceScoped,
			hasStatus:  v.Subresources != nil && v.Subresources.Status != nil,
			structural: ss,
			validator:  sv,
			cel:        cel.NewValidator(ss, true, celconfig.PerCallLimit),
		}, nil
	}
	return nil, fmt.Errorf("%s: no version %s", file, v1alpha1.GroupVersion.Version)
}

// Decode reads one object as the API server decodes a request body:
// integers as int64, other numbers as float64. A key written twice is an
// error (as kubectl's strict decoding).
func Decode(data []byte) (map[string]any, error) {
	js, err := yaml.YAMLToJSONStrict(data)
	if err != nil {
		return nil, fmt.Errorf("not valid YAML: %w", err)
	}
	var obj map[string]any
	if err := utiljson.Unmarshal(js, &obj); err != nil || obj == nil {
		return nil, fmt.Errorf("not a YAML mapping of fields (apiVersion, kind, metadata, spec)")
	}
	return obj, nil
}

// Create admits obj (as Decode returns it) as kube-apiserver admits a
// create: obj is changed in place (pruned, defaulted, named), and every
// reason to refuse it is returned, unknown fields first.
func (k *Kind) Create(obj map[string]any) field.ErrorList {
	errs := k.decode(obj)
	k.Default(obj)
	if k.hasStatus {
		delete(obj, "status")
	}
	u := &unstructured.Unstructured{Object: obj}
	if u.GetName() == "" && u.GetGenerateName() != "" {
		u.SetName(names.SimpleNameGenerator.GenerateName(u.GetGenerateName()))
	}
	return append(errs, k.validate(u)...)
}

// Default applies the CRD's structural defaults, as the API server does
// after decoding; for an object built in Go, not read from a file.
func (k *Kind) Default(obj map[string]any) {
	structuraldefaulting.Default(obj, k.structural)
}

// decode is unstructuredSchemaCoercer.apply with unknown field paths
// returned, each as an error naming the field and the closest known one.
func (k *Kind) decode(obj map[string]any) field.ErrorList {
	var unknown []string
	meta, found, metaUnknown, err := schemaobjectmeta.GetObjectMetaWithOptions(obj, schemaobjectmeta.ObjectMetaOptions{ReturnUnknownFieldPaths: true})
	if err != nil {
		return field.ErrorList{field.Invalid(field.NewPath("metadata"), nil, err.Error())}
	}
	unknown = append(unknown, metaUnknown...)
	unknown = append(unknown, structuralpruning.PruneWithOptions(obj, k.structural, true, structuralschema.UnknownFieldPathOptions{TrackUnknownFieldPaths: true})...)
	structuraldefaulting.PruneNonNullableNullsWithoutDefaults(obj, k.structural)
	ferr, paths := schemaobjectmeta.CoerceWithOptions(nil, obj, k.structural, false, schemaobjectmeta.CoerceOptions{ReturnUnknownFieldPaths: true})
	unknown = append(unknown, paths...)
	var errs field.ErrorList
	if ferr != nil {
		errs = append(errs, ferr)
	}
	if found {
		if err := schemaobjectmeta.SetObjectMeta(obj, meta); err != nil {
			errs = append(errs, field.Invalid(field.NewPath("metadata"), nil, err.Error()))
		}
	}
	sort.Strings(unknown)
	for _, p := range unknown {
		errs = append(errs, k.unknownField(p))
	}
	return errs
}

// validate is customResourceStrategy.Validate for a create.
func (k *Kind) validate(u *unstructured.Unstructured) field.ErrorList {
	var errs field.ErrorList
	if u.GetKind() != k.gvk.Kind {
		errs = append(errs, field.Invalid(field.NewPath("kind"), u.GetKind(), "must be "+k.gvk.Kind))
	}
	if gv := k.gvk.GroupVersion().String(); u.GetAPIVersion() != gv {
		errs = append(errs, field.Invalid(field.NewPath("apiVersion"), u.GetAPIVersion(), "must be "+gv))
	}
	if len(errs) > 0 {
		return errs
	}
	// The namespace comes from the request, not the body; a file run
	// locally names none, so it is checked as the default namespace.
	meta := u
	if k.namespaced && u.GetNamespace() == "" {
		meta = u.DeepCopy()
		meta.SetNamespace("default")
	}
	errs = append(errs, validation.ValidateObjectMetaAccessor(meta, k.namespaced, validation.NameIsDNSSubdomain, field.NewPath("metadata"))...)
	errs = append(errs, apiservervalidation.ValidateCustomResource(nil, u.Object, k.validator)...)
	errs = append(errs, schemaobjectmeta.Validate(nil, u.Object, k.structural, false)...)
	errs = append(errs, listtype.ValidateListSetsAndMaps(nil, k.structural, u.Object)...)
	if k.cel != nil {
		if blocking(errs) {
			errs = append(errs, field.Invalid(nil, nil, "some validation rules were not checked because the object was invalid; correct the existing errors to complete validation"))
		} else {
			celErrs, _ := k.cel.Validate(context.Background(), nil, k.structural, u.Object, nil, celconfig.RuntimeCELCostBudget)
			errs = append(errs, celErrs...)
		}
	}
	return errs
}

// blocking is the API server's hasBlockingErr: after these, CEL rules are
// not run (they could read a value of the wrong type).
func blocking(errs field.ErrorList) bool {
	for _, e := range errs {
		switch e.Type {
		case field.ErrorTypeNotSupported, field.ErrorTypeRequired, field.ErrorTypeTooLong, field.ErrorTypeTooMany, field.ErrorTypeTypeInvalid:
			return true
		}
	}
	return false
}

// CreateTyped admits a Go object (e.g. a suite's child run) as Create
// does and decodes the admitted object back into it.
func CreateTyped[T any](k *Kind, obj *T) field.ErrorList {
	m, err := toMap(obj)
	if err != nil {
		return field.ErrorList{field.InternalError(nil, err)}
	}
	errs := k.Create(m)
	if err := FromObject(m, obj); err != nil {
		errs = append(errs, field.InternalError(nil, err))
	}
	return errs
}

// DefaultTyped applies the CRD's defaults to a Go object.
func DefaultTyped[T any](k *Kind, obj *T) error {
	m, err := toMap(obj)
	if err != nil {
		return err
	}
	k.Default(m)
	return FromObject(m, obj)
}

func toMap(obj any) (map[string]any, error) {
	js, err := json.Marshal(obj)
	if err != nil {
		return nil, err
	}
	var m map[string]any
	return m, utiljson.Unmarshal(js, &m)
}

// FromObject decodes an admitted object into its Go type.
func FromObject[T any](m map[string]any, obj *T) error {
	js, err := json.Marshal(m)
	if err != nil {
		return err
	}
	var out T
	if err := json.Unmarshal(js, &out); err != nil {
		return err
	}
	*obj = out
	return nil
}

// at returns the schema at a field path as the API server prints it
// ("spec.systems[0].cluster", "spec.x[key]"), or nil.
func (k *Kind) at(path string) *structuralschema.Structural {
	s := k.structural
	for _, seg := range splitPath(path) {
		switch {
		case s == nil:
			return nil
		case strings.HasPrefix(seg, "["):
			switch {
			case s.Items != nil:
				s = s.Items
			case s.AdditionalProperties != nil && s.AdditionalProperties.Structural != nil:
				s = s.AdditionalProperties.Structural
			default:
				return nil
			}
		default:
			p, ok := s.Properties[seg]
			if !ok {
				if s.AdditionalProperties != nil && s.AdditionalProperties.Structural != nil {
					s = s.AdditionalProperties.Structural
					continue
				}
				return nil
			}
			s = &p
		}
	}
	return s
}

// splitPath cuts "a.b[0].c" into a, b, [0], c.
func splitPath(path string) []string {
	var out []string
	for _, part := range strings.Split(path, ".") {
		for part != "" {
			i := strings.IndexByte(part[1:], '[')
			if i < 0 {
				out = append(out, part)
				break
			}
			out = append(out, part[:i+1])
			part = part[i+1:]
		}
	}
	return out
}

// DefaultOf returns the CRD's default for the field at path, as JSON
// ("3", "\"Always\""), or "" when it has none.
func (k *Kind) DefaultOf(path string) string {
	s := k.at(path)
	if s == nil || s.Default.Object == nil {
		return ""
	}
	b, err := json.Marshal(s.Default.Object)
	if err != nil {
		return ""
	}
	return string(b)
}

// Known lists the fields the schema allows in the object at path ("" is
// the root).
func (k *Kind) Known(path string) []string {
	var keys []string
	switch path {
	case "":
		// Type meta and ObjectMeta are not in the root's schema.
		keys = []string{"apiVersion", "kind", "metadata"}
	case "metadata":
		return []string{"annotations", "generateName", "labels", "name", "namespace"}
	}
	s := k.at(path)
	if s == nil {
		return nil
	}
	for name := range s.Properties {
		if name != "apiVersion" && name != "kind" && name != "metadata" {
			keys = append(keys, name)
		}
	}
	sort.Strings(keys)
	return keys
}
